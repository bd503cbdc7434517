/* gemm.h - the achieved rate of one GEMM as a function of its shape, the
 * one model the training and inference engines share (MODEL.md §5).
 */
#ifndef GPUSIZER_ENGINE_GEMM_H
#define GPUSIZER_ENGINE_GEMM_H

#include "hw.h"

/* The smallest dimension at which a GEMM of dtype t runs at half its
 * large-GEMM rate: 128 for 16-bit and wider (one 128-wide tile: tile and
 * wave quantisation), 256 for FP8/INT8/INT4 (the same tiles finish in half
 * the time, so the fixed per-tile cost weighs twice as much). */
double gemm_half_rate_dim(enum eng_dtype t);

/* Fraction of the large-GEMM rate a GEMM of dtype t with smallest
 * dimension min_dim reaches: min_dim / (min_dim + gemm_half_rate_dim(t)).
 * 0 for min_dim <= 0. */
double gemm_shape_factor(double min_dim, enum eng_dtype t);

/* Seconds of flops FLOPs of dtype t at large-GEMM rate rate_flops_s
 * (FLOP/s) and smallest dimension min_dim. For an 8-bit dtype the time is
 * never above that of the same GEMM at the 16-bit rate rate16_flops_s: a
 * GEMM too small to gain from FP8 is as fast as in 16-bit (a recipe keeps
 * such layers in BF16). rate16_flops_s <= 0: no such bound. */
double gemm_time_s(double flops, double min_dim, enum eng_dtype t,
		   double rate_flops_s, double rate16_flops_s);

#endif

/* attention.h - the cost of the attention core by kernel class, shared by
 * the training and inference engines (MODEL.md §4-5).
 */
#ifndef GPUSIZER_ENGINE_ATTENTION_H
#define GPUSIZER_ENGINE_ATTENTION_H

#include <stdbool.h>

#include "hw.h"

/* The attention kernel a stack runs. sdpa-math materialises the s x s
 * scores (PyTorch's math backend, 2021-22 Megatron): the unfused path. */
enum attn_kernel {
	ATTN_SDPA_MATH,
	ATTN_FA1, /* FlashAttention-1, xFormers memory-efficient */
	ATTN_TRITON_FA,
	ATTN_FA2,
	ATTN_FA3,
	ATTN_CUDNN,
	ATTN_KERNEL_COUNT
};
const char *attn_kernel_name(enum attn_kernel k);
int attn_kernel_parse(const char *name, enum attn_kernel *out);

/* True for the kernels that never store the scores (all but sdpa-math). */
bool attn_kernel_fused(enum attn_kernel k);
/* The kernel that runs when a profile names k on GPU type g: FA3 is
 * Hopper's (its kernels are built for sm_90 and later), so on an NVIDIA
 * part below compute capability 9.0 the FA2 it falls back to (review s24a
 * F2); k otherwise (a type without CUDA runs no FA3 at all: trn_runs_on),
 * and k when g is NULL. */
enum attn_kernel attn_kernel_on(enum attn_kernel k, const struct hw_spec *g);

/* Speed of kernel class k relative to FlashAttention-2 on GPU g (forward
 * or backward): FA2 1; FA1 1/2.35 and Triton 1/1.9 (midpoints of the
 * FA2 paper's 1.7-3.0x and 1.3-2.5x); FA3 and cuDNN 1.5 on Hopper (FA3
 * paper: 1.5-2.0x forward, 1.5-1.75x backward; lower ends) and 1 where
 * they do not run (they fall back to FA2-class kernels). sdpa-math: 0
 * (not a fused kernel). */
double attn_kernel_speedup(enum attn_kernel k, const struct hw_spec *g,
			   bool backward);

/* Head-dimension factor of a fused kernel, 1 at d = 128 (where the
 * FlashAttention efficiencies of hw.c are measured): per score the block
 * GEMMs do 4d FLOPs on tensor cores and the online softmax ~5 non-matmul
 * FLOPs at 1/16 of the rate (FA2 paper §3.1: A100 312 vs 19.5 TFLOP/s),
 * so time per FLOP ~ (d + 20)/d: factor = (d/(d+20)) / (128/148). */
double attn_head_dim_factor(double head_dim);

/* Share of its 8K-token rate a fused kernel of class k reaches at
 * sequence length seq_len with the causal mask. Forward: the
 * FlashAttention-3 paper's bars (Shah et al. 2024, arXiv:2407.08608,
 * figure 5(d): H100 SXM5, head dimension 128, 16K tokens per batch, 512 to
 * 16,384 tokens), where the 8K rates of attn_kernel_speedup and hw.c come
 * from. Backward: the paper shows it only without the mask, so the causal
 * curve is our own H100/H200 measurement of FA2 and cuDNN (attention.c
 * says how FA3's is derived). Interpolated in log2(seq_len), held at the
 * end values outside them. FA1/xFormers take FA2's curve, Triton's
 * backward too. sdpa-math: 1. */
double attn_seq_factor(enum attn_kernel k, double seq_len, bool backward);

/* Achieved fused-attention rate (TFLOP/s): hw_attn_tflops x speedup x
 * head-dimension factor. eff_override > 0 replaces the efficiency
 * (fraction of the dense 16-bit peak) before the head-dimension factor. */
double attn_fused_tflops(const struct hw_spec *g, enum attn_kernel k,
			 double head_dim, bool backward, double eff_override);

#endif

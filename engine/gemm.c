/* gemm.c - GEMM shape model (see gemm.h, MODEL.md §5). */
#include "gemm.h"

#include <math.h>

/* Half-rate dimensions: a GEMM's time is its FLOPs at the large rate plus
 * a fixed cost per output tile (prologue, epilogue, the last partial
 * wave). x/(x+128) puts half rate at one 128-wide tile for 16-bit
 * (MODEL.md §5). FP8 tensor cores do a tile's FLOPs in half the time
 * (H100: 1,979 vs 989 TFLOP/s dense) while the fixed cost stays, so the
 * same fixed cost is reached at twice the dimension: 256. */
#define HALF_RATE_16 128.0
#define HALF_RATE_8  256.0

double gemm_half_rate_dim(enum eng_dtype t)
{
	if (t == ENG_FP8 || t == ENG_INT8 || t == ENG_INT4)
		return HALF_RATE_8;
	return HALF_RATE_16;
}

double gemm_shape_factor(double min_dim, enum eng_dtype t)
{
	if (!(min_dim > 0.0))
		return 0.0;
	return min_dim / (min_dim + gemm_half_rate_dim(t));
}

double gemm_time_s(double flops, double min_dim, enum eng_dtype t,
		   double rate_flops_s, double rate16_flops_s)
{
	double f = gemm_shape_factor(min_dim, t);
	double s;

	if (!(flops > 0.0))
		return 0.0;
	s = flops / (rate_flops_s * f);
	if (gemm_half_rate_dim(t) > HALF_RATE_16 && rate16_flops_s > 0.0)
		s = fmin(s, flops / (rate16_flops_s *
				     gemm_shape_factor(min_dim, ENG_BF16)));
	return s;
}

/* Correctness checks of what the probe measures (plain C; the checksum
 * mix is shared with the CUDA code). A throughput figure of a GEMM that
 * computes garbage, or of a copy that moves the wrong bytes, is no
 * figure: the measurement fails instead (gpu-burn and nvbandwidth check
 * their results for the same reason; PROBE.md 8.1.6).
 */
#ifndef GPUSIZER_PROBE_CHECK_H
#define GPUSIZER_PROBE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

#ifdef __CUDACC__
#define PROBE_HD __host__ __device__
#else
#define PROBE_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One 32-bit word's share of a buffer checksum: depends on the word and
 * its position, so a copy that drops, repeats or shifts words changes the
 * sum. The checksum of a buffer is the sum (mod 2^64) over its words, so
 * a GPU can add the shares in any order. */
static inline PROBE_HD uint64_t probe_cksum_word(uint32_t w, uint64_t i)
{
	uint64_t x = (((uint64_t)w << 32) | w) ^ (i * 0x9e3779b97f4a7c15ULL);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

/* Checksum of words 32-bit words at p (host memory). */
uint64_t probe_checksum_u32(const void *p, size_t words);

/* Element formats of GEMM operands and results. */
enum probe_elem {
	PROBE_EL_BF16,
	PROBE_EL_FP16,
	PROBE_EL_E4M3,
	PROBE_EL_F32,
	PROBE_EL_F64,
	PROBE_EL_I8,
	PROBE_EL_I32,
};
size_t probe_elem_size(enum probe_elem t);
/* The value of element i of an array of t (host memory). */
double probe_elem_value(enum probe_elem t, const void *p, size_t i);

/* Operand (A, B) and result (C/D) formats of a probe GEMM dtype. */
enum probe_elem probe_gemm_ab_elem(enum gpu_dtype dt);
enum probe_elem probe_gemm_cd_elem(enum gpu_dtype dt);

struct probe_gemm_check {
	double got; /* the GPU's element */
	double ref; /* the host's dot product, in double */
	double tol; /* allowed |got - ref| */
};

/* Checks one element of D = op(A) B: arow and bcol are the k operands
 * the element is the dot product of (as the GPU holds them), c the GPU's
 * result element. The tolerance is out_eps x |ref| + (in_eps + acc_eps)
 * x sum |a b|: rounding the result to its format, TF32's rounding of FP32
 * inputs, and accumulation error (FP8 tensor cores keep ~14 bits while
 * accumulating, DeepSeek-V3 report section 3.3.2, so its acc_eps is
 * wide). int8 must be exact. Returns 1 when within, 0 when not. */
int probe_gemm_check_one(enum gpu_dtype dt, size_t k, const void *arow,
			 const void *bcol, const void *c,
			 struct probe_gemm_check *out);

/* count distinct (row, column) positions of an m x n result to check:
 * the two corners first, then spread pseudo-randomly from seed. count is
 * capped at m x n. Returns the number written. */
int probe_spot_positions(int m, int n, int count, unsigned seed, int *rows,
			 int *cols);

#ifdef __cplusplus
}
#endif

#endif

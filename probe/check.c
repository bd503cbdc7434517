#include "check.h"

#include <math.h>
#include <string.h>

uint64_t probe_checksum_u32(const void *p, size_t words)
{
	const uint32_t *w = p;
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < words; i++)
		s += probe_cksum_word(w[i], (uint64_t)i);
	return s;
}

size_t probe_elem_size(enum probe_elem t)
{
	switch (t) {
	case PROBE_EL_BF16:
	case PROBE_EL_FP16:
		return 2;
	case PROBE_EL_E4M3:
	case PROBE_EL_I8:
		return 1;
	case PROBE_EL_F32:
	case PROBE_EL_I32:
		return 4;
	case PROBE_EL_F64:
		return 8;
	}
	return 0;
}

static double fp16_value(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v;

	if (exp == 0)
		v = ldexp(man, -24);
	else if (exp == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexp(1024 + man, exp - 25);
	return sign ? -v : v;
}

/* E4M3 as CUDA's __nv_fp8_e4m3 holds it (OCP "FN": no infinities,
 * S.1111.111 is NaN, max 448, bias 7). */
static double e4m3_value(uint8_t b)
{
	int sign = b >> 7, exp = (b >> 3) & 0xf, man = b & 0x7;
	double v;

	if (exp == 15 && man == 7)
		return NAN;
	if (exp == 0)
		v = ldexp(man, -9);
	else
		v = ldexp(8 + man, exp - 10);
	return sign ? -v : v;
}

double probe_elem_value(enum probe_elem t, const void *p, size_t i)
{
	const unsigned char *b =
	    (const unsigned char *)p + i * probe_elem_size(t);
	uint16_t h;
	uint32_t u;
	float f;
	double d;
	int32_t s;

	switch (t) {
	case PROBE_EL_BF16:
		memcpy(&h, b, 2);
		u = (uint32_t)h << 16;
		memcpy(&f, &u, 4);
		return f;
	case PROBE_EL_FP16:
		memcpy(&h, b, 2);
		return fp16_value(h);
	case PROBE_EL_E4M3:
		return e4m3_value(b[0]);
	case PROBE_EL_F32:
		memcpy(&f, b, 4);
		return f;
	case PROBE_EL_F64:
		memcpy(&d, b, 8);
		return d;
	case PROBE_EL_I8:
		return (int8_t)b[0];
	case PROBE_EL_I32:
		memcpy(&s, b, 4);
		return s;
	}
	return NAN;
}

enum probe_elem probe_gemm_ab_elem(enum gpu_dtype dt)
{
	switch (dt) {
	case GPU_DT_BF16:
		return PROBE_EL_BF16;
	case GPU_DT_FP16:
		return PROBE_EL_FP16;
	case GPU_DT_FP8_E4M3:
		return PROBE_EL_E4M3;
	case GPU_DT_TF32:
	case GPU_DT_FP32:
		return PROBE_EL_F32;
	case GPU_DT_FP64:
		return PROBE_EL_F64;
	case GPU_DT_INT8:
		return PROBE_EL_I8;
	}
	return PROBE_EL_F32;
}

enum probe_elem probe_gemm_cd_elem(enum gpu_dtype dt)
{
	switch (dt) {
	case GPU_DT_BF16:
	case GPU_DT_FP8_E4M3: /* FP8 inputs, BF16 output (PROBE.md 6) */
		return PROBE_EL_BF16;
	case GPU_DT_FP16:
		return PROBE_EL_FP16;
	case GPU_DT_TF32:
	case GPU_DT_FP32:
		return PROBE_EL_F32;
	case GPU_DT_FP64:
		return PROBE_EL_F64;
	case GPU_DT_INT8:
		return PROBE_EL_I32;
	}
	return PROBE_EL_F32;
}

int probe_gemm_check_one(enum gpu_dtype dt, size_t k, const void *arow,
			 const void *bcol, const void *c,
			 struct probe_gemm_check *out)
{
	enum probe_elem ab = probe_gemm_ab_elem(dt);
	double ref = 0, mag = 0, out_eps, in_eps = 0, acc_eps;
	size_t i;

	for (i = 0; i < k; i++) {
		double p = probe_elem_value(ab, arow, i) *
			   probe_elem_value(ab, bcol, i);
		ref += p;
		mag += fabs(p);
	}
	out->got = probe_elem_value(probe_gemm_cd_elem(dt), c, 0);
	out->ref = ref;
	switch (dt) {
	case GPU_DT_INT8:
		out->tol = 0;
		return out->got == ref;
	case GPU_DT_FP64:
		out_eps = ldexp(1, -50);
		acc_eps = ldexp(1, -40);
		break;
	case GPU_DT_FP32:
		out_eps = ldexp(1, -22);
		acc_eps = ldexp(1, -18);
		break;
	case GPU_DT_TF32:
		out_eps = ldexp(1, -22);
		in_eps = ldexp(1, -9); /* two inputs rounded to 10 bits */
		acc_eps = ldexp(1, -16);
		break;
	case GPU_DT_FP16:
		out_eps = ldexp(1, -10);
		acc_eps = ldexp(1, -16);
		break;
	case GPU_DT_FP8_E4M3:
		out_eps = ldexp(1, -8);
		acc_eps = ldexp(1, -10);
		break;
	case GPU_DT_BF16:
	default:
		out_eps = ldexp(1, -8);
		acc_eps = ldexp(1, -16);
		break;
	}
	out->tol = out_eps * fabs(ref) + (in_eps + acc_eps) * mag + 1e-30;
	return isfinite(out->got) && fabs(out->got - ref) <= out->tol;
}

int probe_spot_positions(int m, int n, int count, unsigned seed, int *rows,
			 int *cols)
{
	long long cells = (long long)m * n;
	unsigned x = seed ? seed : 1u;
	int got = 0, tries = 0;

	if (m <= 0 || n <= 0 || count <= 0)
		return 0;
	if (count > cells)
		count = (int)cells;
	while (got < count && tries < count * 64) {
		int r, c, dup = 0;
		tries++;
		if (got == 0) {
			r = 0;
			c = 0;
		} else if (got == 1) {
			r = m - 1;
			c = n - 1;
		} else {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			r = (int)(x % (unsigned)m);
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			c = (int)(x % (unsigned)n);
		}
		for (int i = 0; i < got; i++)
			if (rows[i] == r && cols[i] == c)
				dup = 1;
		if (dup)
			continue;
		rows[got] = r;
		cols[got] = c;
		got++;
	}
	return got;
}

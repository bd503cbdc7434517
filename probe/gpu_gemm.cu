// Dense GEMM through cuBLASLt, loaded at run time with dlopen so that a
// node without libcublasLt still reports everything else.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "gpu_common.cuh"

#define STR2(x) #x
#define STR(x)	STR2(x)

namespace
{

struct lt_api {
	void *lib = nullptr;
	int version = -1;
	char why[256] = "";
	decltype(&cublasLtCreate) create;
	decltype(&cublasLtDestroy) destroy;
	decltype(&cublasLtGetVersion) get_version;
	decltype(&cublasLtMatmulDescCreate) desc_create;
	decltype(&cublasLtMatmulDescDestroy) desc_destroy;
	decltype(&cublasLtMatmulDescSetAttribute) desc_set;
	decltype(&cublasLtMatrixLayoutCreate) layout_create;
	decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
	decltype(&cublasLtMatmulPreferenceCreate) pref_create;
	decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
	decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
	decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
	decltype(&cublasLtMatmul) matmul;
};

lt_api lt;
pthread_once_t lt_once = PTHREAD_ONCE_INIT;

template <class T> bool load_sym(T *out, const char *name)
{
	return gpu_dlsym(lt.lib, out, name);
}

void lt_load(void)
{
	const char *names[] = {"libcublasLt.so." STR(CUBLAS_VER_MAJOR),
			       "libcublasLt.so"};
	for (const char *n : names) {
		lt.lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
		if (lt.lib)
			break;
	}
	if (!lt.lib) {
		snprintf(
		    lt.why, sizeof(lt.why),
		    "libcublasLt.so." STR(CUBLAS_VER_MAJOR) " not found (%s)",
		    dlerror());
		return;
	}
	bool ok =
	    load_sym(&lt.create, "cublasLtCreate") &&
	    load_sym(&lt.destroy, "cublasLtDestroy") &&
	    load_sym(&lt.get_version, "cublasLtGetVersion") &&
	    load_sym(&lt.desc_create, "cublasLtMatmulDescCreate") &&
	    load_sym(&lt.desc_destroy, "cublasLtMatmulDescDestroy") &&
	    load_sym(&lt.desc_set, "cublasLtMatmulDescSetAttribute") &&
	    load_sym(&lt.layout_create, "cublasLtMatrixLayoutCreate") &&
	    load_sym(&lt.layout_destroy, "cublasLtMatrixLayoutDestroy") &&
	    load_sym(&lt.pref_create, "cublasLtMatmulPreferenceCreate") &&
	    load_sym(&lt.pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
	    load_sym(&lt.pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
	    load_sym(&lt.heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
	    load_sym(&lt.matmul, "cublasLtMatmul");
	if (!ok) {
		snprintf(lt.why, sizeof(lt.why),
			 "libcublasLt lacks a needed symbol");
		dlclose(lt.lib);
		lt.lib = nullptr;
		return;
	}
	lt.version = (int)lt.get_version();
}

struct dt_cfg {
	cudaDataType_t ab, cd, scale;
	cublasComputeType_t compute;
	int ab_size, cd_size;
	double min_cc; // major*10+minor
	const char *name;
};

dt_cfg cfg_of(enum gpu_dtype dt)
{
	switch (dt) {
	case GPU_DT_BF16:
		return {
		    CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F,
		    2,		 2,	      80,	  "bf16"};
	case GPU_DT_FP16:
		return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			2,	    2,		70,	    "fp16"};
	case GPU_DT_FP8_E4M3:
		return {CUDA_R_8F_E4M3,
			CUDA_R_16BF,
			CUDA_R_32F,
			CUBLAS_COMPUTE_32F,
			1,
			2,
			89,
			"fp8_e4m3"};
	case GPU_DT_TF32:
		return {CUDA_R_32F, CUDA_R_32F,
			CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
			4,	    4,
			80,	    "tf32"};
	case GPU_DT_FP32:
		return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			4,	    4,		0,	    "fp32"};
	case GPU_DT_FP64:
		return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F,
			8,	    8,		0,	    "fp64"};
	case GPU_DT_INT8:
		return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I,
			1,	   4,	       75,	   "int8"};
	}
	return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
		4,	    4,		0,	    "?"};
}

// Uniform values in [-1, 1) written as the element type.
template <class T> __device__ T from_float(float f);
template <> __device__ float from_float<float>(float f)
{
	return f;
}
template <> __device__ double from_float<double>(float f)
{
	return f;
}
template <> __device__ __half from_float<__half>(float f)
{
	return __float2half(f);
}
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float f)
{
	return __float2bfloat16(f);
}
template <> __device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float f)
{
	return __nv_fp8_e4m3(f);
}
template <> __device__ int8_t from_float<int8_t>(float f)
{
	return (int8_t)(f * 127.0f);
}

template <class T> __global__ void fill_typed(T *p, size_t n, unsigned seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		float f = (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
		p[i] = from_float<T>(f);
	}
}

cudaError_t fill(enum gpu_dtype dt, bool ab, void *p, size_t n, unsigned seed,
		 cudaStream_t s)
{
	dim3 g(1024), b(256);
	if (!ab) { // C/D: zero is fine, beta = 0
		dt_cfg c = cfg_of(dt);
		return cudaMemsetAsync(p, 0, n * c.cd_size, s);
	}
	switch (dt) {
	case GPU_DT_BF16:
		fill_typed<<<g, b, 0, s>>>((__nv_bfloat16 *)p, n, seed);
		break;
	case GPU_DT_FP16:
		fill_typed<<<g, b, 0, s>>>((__half *)p, n, seed);
		break;
	case GPU_DT_FP8_E4M3:
		fill_typed<<<g, b, 0, s>>>((__nv_fp8_e4m3 *)p, n, seed);
		break;
	case GPU_DT_TF32:
	case GPU_DT_FP32:
		fill_typed<<<g, b, 0, s>>>((float *)p, n, seed);
		break;
	case GPU_DT_FP64:
		fill_typed<<<g, b, 0, s>>>((double *)p, n, seed);
		break;
	case GPU_DT_INT8:
		fill_typed<<<g, b, 0, s>>>((int8_t *)p, n, seed);
		break;
	}
	return cudaGetLastError();
}

} // namespace

extern "C" int gpu_gemm_load(int *version, char *err, size_t errlen)
{
	pthread_once(&lt_once, lt_load);
	*version = lt.version;
	if (!lt.lib) {
		snprintf(err, errlen, "%s", lt.why);
		return GPU_SKIP;
	}
	return GPU_OK;
}

cudaError_t gpu_preload_gemm_kernels(void)
{
	cudaFuncAttributes a;
	const void *k[] = {
	    (const void *)fill_typed<__nv_bfloat16>,
	    (const void *)fill_typed<__half>,
	    (const void *)fill_typed<__nv_fp8_e4m3>,
	    (const void *)fill_typed<float>,
	    (const void *)fill_typed<double>,
	    (const void *)fill_typed<int8_t>,
	};
	for (const void *f : k) {
		cudaError_t e = cudaFuncGetAttributes(&a, f);
		if (e != cudaSuccess)
			return e;
	}
	return cudaSuccess;
}

extern "C" int gpu_gemm_supported(int dev, enum gpu_dtype dt, char *err,
				  size_t errlen)
{
	dt_cfg c = cfg_of(dt);
	int major = 0, minor = 0, rc = GPU_OK;

	gpu_clear_error();
	GPU_CHECK(cudaDeviceGetAttribute(
	    &major, cudaDevAttrComputeCapabilityMajor, dev));
	GPU_CHECK(cudaDeviceGetAttribute(
	    &minor, cudaDevAttrComputeCapabilityMinor, dev));
	if (major * 10 + minor < c.min_cc) {
		snprintf(err, errlen,
			 "%s GEMM needs compute capability >= %.1f (this GPU "
			 "is %d.%d)",
			 c.name, c.min_cc / 10.0, major, minor);
		return GPU_SKIP;
	}
out:
	return rc;
}

// Entries one cublasLtMatmul may put in the launch queue: the kernel, a
// split-K reduction, a workspace memset.
#define GEMM_LAUNCHES_PER_OP 3
// Result elements compared with the host reference.
#define GEMM_SPOT_CHECKS 8

// Compares GEMM_SPOT_CHECKS elements of C (m x n, ldc = m) with dot
// products of A's rows (k x m, lda = k, used transposed) and B's columns
// (k x n, ldb = k) computed on the host.
static int gemm_spot_check(enum gpu_dtype dt, const void *A, const void *B,
			   const void *C, int m, int n_, int k, char *err,
			   size_t errlen)
{
	size_t ab = probe_elem_size(probe_gemm_ab_elem(dt));
	size_t cd = probe_elem_size(probe_gemm_cd_elem(dt));
	int rows[GEMM_SPOT_CHECKS], cols[GEMM_SPOT_CHECKS], rc = GPU_OK;
	int count =
	    probe_spot_positions(m, n_, GEMM_SPOT_CHECKS, 0x5eedu, rows, cols);
	unsigned char *arow = (unsigned char *)malloc((size_t)k * ab);
	unsigned char *bcol = (unsigned char *)malloc((size_t)k * ab);
	unsigned char celem[8];

	if (arow == nullptr || bcol == nullptr) {
		snprintf(err, errlen, "GEMM check: out of host memory");
		rc = GPU_FAIL;
		goto out;
	}
	for (int i = 0; i < count; i++) {
		struct probe_gemm_check r;
		const char *a0 = (const char *)A + (size_t)rows[i] * k * ab;
		const char *b0 = (const char *)B + (size_t)cols[i] * k * ab;
		const char *c0 = (const char *)C +
				 ((size_t)rows[i] + (size_t)cols[i] * m) * cd;
		GPU_CHECK(cudaMemcpy(arow, a0, (size_t)k * ab,
				     cudaMemcpyDeviceToHost));
		GPU_CHECK(cudaMemcpy(bcol, b0, (size_t)k * ab,
				     cudaMemcpyDeviceToHost));
		GPU_CHECK(cudaMemcpy(celem, c0, cd, cudaMemcpyDeviceToHost));
		if (!probe_gemm_check_one(dt, (size_t)k, arow, bcol, celem,
					  &r)) {
			snprintf(err, errlen,
				 "GEMM result wrong: element (%d, %d) is %.6g, "
				 "the host computes %.6g (tolerance %.3g)",
				 rows[i], cols[i], r.got, r.ref, r.tol);
			rc = GPU_FAIL;
			goto out;
		}
	}
out:
	free(arow);
	free(bcol);
	return rc;
}

#define LT_CHECK(call)                                                         \
	do {                                                                   \
		cublasStatus_t st_ = (call);                                   \
		if (st_ != CUBLAS_STATUS_SUCCESS) {                            \
			snprintf(err, errlen, "%s: cuBLAS status %d", #call,   \
				 (int)st_);                                    \
			rc = GPU_FAIL;                                         \
			goto out;                                              \
		}                                                              \
	} while (0)

extern "C" int gpu_gemm(int dev, enum gpu_dtype dt, int m, int n_, int k,
			int max_algos, const struct gpu_sampling *smp,
			const struct gpu_window *win, double *samples, int *n,
			char *algo_note, size_t notelen, char *err,
			size_t errlen)
{
	const size_t ws_bytes = 64u << 20;
	dt_cfg c = cfg_of(dt);
	int rc = GPU_OK, returned = 0, best = -1, loops = 1, cc = 0;
	cublasLtHandle_t h = nullptr;
	cublasLtMatmulDesc_t op = nullptr;
	cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
	cublasLtMatmulPreference_t pref = nullptr;
	cublasLtMatmulHeuristicResult_t heur[32];
	void *A = nullptr, *B = nullptr, *C = nullptr, *ws = nullptr;
	float *scales = nullptr;
	gpu_timed timed;
	cudaStream_t s = nullptr;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	float alpha_f = 1.0f, beta_f = 0.0f;
	double alpha_d = 1.0, beta_d = 0.0;
	int32_t alpha_i = 1, beta_i = 0;
	const void *alpha = &alpha_f, *beta = &beta_f;
	double best_ms = 1e30;

	*n = 0;
	if (algo_note && notelen)
		algo_note[0] = '\0';
	if (gpu_gemm_load(&cc, err, errlen) != GPU_OK)
		return GPU_SKIP;
	if (max_algos > 32)
		max_algos = 32;
	if (max_algos < 1)
		max_algos = 1;
	gpu_clear_error();
	GPU_CHECK(cudaSetDevice(dev));
	rc = gpu_gemm_supported(dev, dt, err, errlen);
	if (rc != GPU_OK)
		return rc;
	if (c.scale == CUDA_R_64F) {
		alpha = &alpha_d;
		beta = &beta_d;
	} else if (c.scale == CUDA_R_32I) {
		alpha = &alpha_i;
		beta = &beta_i;
	}
	GPU_CHECK(gpu_timed_create(&timed));
	s = timed.s;
	GPU_CHECK(cudaMalloc(&A, (size_t)k * m * c.ab_size));
	GPU_CHECK(cudaMalloc(&B, (size_t)k * n_ * c.ab_size));
	GPU_CHECK(cudaMalloc(&C, (size_t)m * n_ * c.cd_size));
	GPU_CHECK(cudaMalloc(&ws, ws_bytes));
	GPU_CHECK(fill(dt, true, A, (size_t)k * m, 0x1111u, s));
	GPU_CHECK(fill(dt, true, B, (size_t)k * n_, 0x2222u, s));
	GPU_CHECK(fill(dt, false, C, (size_t)m * n_, 0, s));
	GPU_CHECK(cudaStreamSynchronize(s));

	LT_CHECK(lt.create(&h));
	LT_CHECK(lt.desc_create(&op, c.compute, c.scale));
	LT_CHECK(lt.desc_set(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	LT_CHECK(lt.desc_set(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	if (dt == GPU_DT_FP8_E4M3) {
		// Scales are device pointers; 1.0 (PROBE.md section 6). Each
		// is 16-byte aligned: cuBLASLt 13.0 on an H200 refused every
		// algorithm (status 15, NOT_SUPPORTED) when B's scale sat 4
		// bytes after A's (docs/BENCHMARKS.md, 2026-11-26).
		const float ones[8] = {1.0f, 1.0f, 1.0f, 1.0f,
				       1.0f, 1.0f, 1.0f, 1.0f};
		int8_t fast = 0;
		GPU_CHECK(cudaMalloc(&scales, sizeof(ones)));
		GPU_CHECK(cudaMemcpy(scales, ones, sizeof(ones),
				     cudaMemcpyHostToDevice));
		const float *sa = scales, *sb = scales + 4;
		LT_CHECK(lt.desc_set(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
				     &sa, sizeof(sa)));
		LT_CHECK(lt.desc_set(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
				     &sb, sizeof(sb)));
		LT_CHECK(lt.desc_set(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
				     sizeof(fast)));
	}
	// TN: A is k x m (op T), B is k x n, C/D m x n, column major.
	LT_CHECK(lt.layout_create(&la, c.ab, k, m, k));
	LT_CHECK(lt.layout_create(&lb, c.ab, k, n_, k));
	LT_CHECK(lt.layout_create(&lc, c.cd, m, n_, m));
	LT_CHECK(lt.pref_create(&pref));
	LT_CHECK(lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
			     &ws_bytes, sizeof(ws_bytes)));
	{
		cublasStatus_t st = lt.heuristic(h, op, la, lb, lc, lc, pref,
						 max_algos, heur, &returned);
		if (st != CUBLAS_STATUS_SUCCESS || returned == 0) {
			snprintf(err, errlen,
				 "cuBLASLt has no algorithm for %s %dx%dx%d on "
				 "this GPU (status %d)",
				 c.name, m, n_, k, (int)st);
			rc = GPU_SKIP;
			goto out;
		}
	}
	{
		// One GEMM with algorithm algo, enqueued on s.
		auto gemm = [&](int algo) -> cublasStatus_t {
			return lt.matmul(h, op, alpha, A, la, B, lb, beta, C,
					 lc, C, lc, &heur[algo].algo, ws,
					 ws_bytes, s);
		};
		// One batch of l GEMMs with algorithm algo, gated or not
		// (gpu_timed_batch): a gpu_sample_rc, or 1 more
		// (GEMM_REFUSED) when cuBLASLt refused the algorithm.
		const int GEMM_REFUSED = 2;
		// The status of the last refusal, for the message when every
		// candidate was refused.
		cublasStatus_t refused_st = CUBLAS_STATUS_SUCCESS;
		auto batch = [&](int algo, int l, bool gated,
				 float *ms) -> int {
			cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
			int r = gpu_timed_batch(
			    &timed, gated, ms, err, errlen,
			    [&]() -> cudaError_t {
				    for (int i = 0;
					 st == CUBLAS_STATUS_SUCCESS && i < l;
					 i++)
					    st = gemm(algo);
				    return cudaSuccess;
			    });
			if (r == GPU_SAMPLE_ERR)
				return r;
			if (st != CUBLAS_STATUS_SUCCESS) {
				snprintf(err, errlen,
					 "cublasLtMatmul: status %d", (int)st);
				return GEMM_REFUSED;
			}
			return r;
		};
		// The same GEMM outside the gate, waited for: the first launch
		// of a cuBLASLt kernel loads its module, which can synchronise
		// the context (lazy loading, the default since CUDA 12.2);
		// queued behind the spin gate it would wait for the gate's
		// timeout, once per candidate (issue 14, defect 1).
		auto run_ungated = [&](int algo) -> int {
			cublasStatus_t st = gemm(algo);
			cudaError_t e = cudaStreamSynchronize(s);
			if (st != CUBLAS_STATUS_SUCCESS)
				refused_st = st;
			if (e != cudaSuccess)
				return gpu_sample_fail(e, err, errlen);
			return st == CUBLAS_STATUS_SUCCESS ? GPU_SAMPLE_OK
							   : GEMM_REFUSED;
		};
		// Time each heuristic candidate briefly; keep the fastest.
		for (int a = 0; a < returned; a++) {
			float ms = 0;
			if (heur[a].state != CUBLAS_STATUS_SUCCESS)
				continue;
			int r = run_ungated(a);
			if (r == GPU_SAMPLE_ERR) {
				rc = GPU_FAIL;
				goto out;
			}
			if (r != GPU_SAMPLE_OK)
				continue;
			r = batch(a, 5, true, &ms);
			if (r == GPU_SAMPLE_ERR) {
				rc = GPU_FAIL;
				goto out;
			}
			if (r == GPU_SAMPLE_OK && ms / 5 < best_ms) {
				best_ms = ms / 5;
				best = a;
			}
		}
		if (best < 0) {
			snprintf(err, errlen,
				 "cuBLASLt ran none of its %d algorithms for "
				 "%s %dx%dx%d (last refusal: cublasLtMatmul "
				 "status %d)",
				 returned, c.name, m, n_, k, (int)refused_st);
			rc = GPU_SKIP;
			goto out;
		}
		for (int i = 0; i < smp->warmup_ops; i++) {
			if (run_ungated(best) != GPU_SAMPLE_OK) {
				rc = GPU_FAIL;
				goto out;
			}
		}
		loops = probe_batch_ops(best_ms, smp->sample_ms,
					GEMM_LAUNCHES_PER_OP);
		if (algo_note && notelen)
			snprintf(algo_note, notelen,
				 "best of %d cuBLASLt heuristic algorithms "
				 "(#%d)%s; %d element(s) checked against the "
				 "host",
				 returned, best,
				 dt == GPU_DT_FP8_E4M3
				     ? "; scales 1.0, fast_accum 0"
				     : "",
				 GEMM_SPOT_CHECKS);
		// Sustained runs: ungated batches of about sample_ms each,
		// enqueued while the previous ones run; the host blocks in the
		// launch when the queue is full, which without a gate is only
		// back-pressure.
		if (smp->sustained) {
			double l = smp->sample_ms / best_ms;
			loops = l < 1 ? 1 : l > 1e6 ? 1000000 : (int)(l + 0.5);
		}
		rc = gpu_run_samples(
		    smp, win, samples, n, err, errlen, [&](double *v) -> int {
			    float t = 0;
			    int r = batch(best, loops, !smp->sustained, &t);
			    if (r == GEMM_REFUSED)
				    return GPU_SAMPLE_ERR;
			    if (r == GPU_SAMPLE_OK)
				    *v = 2.0 * m * (double)n_ * k * loops /
					 (t * 1e-3) / 1e12;
			    return r;
		    });
		if (rc == GPU_OK)
			rc =
			    gemm_spot_check(dt, A, B, C, m, n_, k, err, errlen);
	}
out:
	gpu_timed_destroy(&timed);
	if (pref)
		lt.pref_destroy(pref);
	if (la)
		lt.layout_destroy(la);
	if (lb)
		lt.layout_destroy(lb);
	if (lc)
		lt.layout_destroy(lc);
	if (op)
		lt.desc_destroy(op);
	if (h)
		lt.destroy(h);
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaFree(ws);
	cudaFree(scales);
	if (rc != GPU_OK)
		gpu_clear_error();
	return rc;
}

// Device memory bandwidth and host <-> device copies (CUDA runtime only).
// Peer copies are gpu_p2p.cu; the gate, fill and checksum gpu_common.cu.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "gpu_common.cuh"
#include "numa.h"

// ---- device memory bandwidth ------------------------------------------

#define UNROLL 8

// The copy is one launch over the whole buffer, one 16-byte vector per
// thread (the layout of PyTorch's vectorised elementwise kernels), not a
// grid-stride loop over a grid sized to the SMs: on an H200 the
// grid-stride copy (8 blocks of 256 per SM, 8 vectors per thread) reached
// 1,928-1,967 GB/s and this one 2,118-2,133 GB/s, against 2,117 for
// PyTorch's kernel and 2,126 for the copy engine; 2 vectors per thread or
// 128 threads per block were within 1 % (docs/BENCHMARKS.md, 2026-11-26).
#define COPY_THREADS 256
__global__ void copy_kernel(const uint4 *__restrict__ src,
			    uint4 *__restrict__ dst, size_t n)
{
	size_t i = (size_t)blockIdx.x * COPY_THREADS + threadIdx.x;

	if (i < n)
		dst[i] = src[i];
}

__global__ void read_kernel(const uint4 *__restrict__ src, size_t n,
			    uint4 *sink)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint4 acc = make_uint4(0, 0, 0, 0);
	for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
		uint4 v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = src[i + u * stride];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			acc.x ^= v[u].x;
			acc.y ^= v[u].y;
			acc.z ^= v[u].z;
			acc.w ^= v[u].w;
		}
	}
	for (; i < n; i += stride) {
		uint4 v = src[i];
		acc.x ^= v.x;
		acc.y ^= v.y;
		acc.z ^= v.z;
		acc.w ^= v.w;
	}
	// Practically never true; keeps the loads alive.
	if (acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u)
		sink[0] = acc;
}

__global__ void write_kernel(uint4 *__restrict__ dst, size_t n, unsigned seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += stride) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		dst[i] = make_uint4(x, x ^ 0x5bd1e995u, x * 0x27d4eb2du, ~x);
	}
}

// The end of a copy's check: e from taking the checksums, then got
// against want, each named in the message.
static int verify_sums(cudaError_t e, const char *what, const char *got_name,
		       unsigned long long got, const char *want_name,
		       unsigned long long want, char *err, size_t errlen)
{
	if (e != cudaSuccess) {
		snprintf(err, errlen, "%s checksum: %s", what,
			 cudaGetErrorString(e));
		gpu_clear_error();
		return GPU_FAIL;
	}
	if (got != want) {
		snprintf(err, errlen,
			 "%s copied wrong data: %s %016llx, %s %016llx", what,
			 got_name, got, want_name, want);
		return GPU_FAIL;
	}
	return GPU_OK;
}

// Copies the checksums of src and dst (words each, on the current
// device) and fails when they differ.
static int verify_copy(const void *src, const void *dst, size_t words,
		       cudaStream_t s, unsigned long long *scratch,
		       const char *what, char *err, size_t errlen)
{
	unsigned long long a = 0, b = 0;
	cudaError_t e = gpu_checksum(src, words, s, scratch, &a);

	if (e == cudaSuccess)
		e = gpu_checksum(dst, words, s, scratch, &b);
	return verify_sums(e, what, "checksum", b, "source", a, err, errlen);
}

extern "C" int gpu_hbm(int dev, enum gpu_hbm_kind kind, size_t bytes,
		       const struct gpu_sampling *smp,
		       const struct gpu_window *win, double *samples, int *n,
		       char *err, size_t errlen)
{
	int rc = GPU_OK, blocks, sms = 0, loops = 1;
	void *a = nullptr, *b = nullptr;
	uint4 *sink = nullptr;
	unsigned long long *scratch = nullptr;
	gpu_timed timed;
	cudaStream_t s = nullptr;
	size_t nvec;
	unsigned copy_blocks;
	float ms = 0;

	*n = 0;
	gpu_clear_error();
	bytes &= ~(size_t)4095;
	nvec = bytes / sizeof(uint4);
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	blocks = sms * 8;
	copy_blocks = (unsigned)((nvec + COPY_THREADS - 1) / COPY_THREADS);
	GPU_CHECK(gpu_timed_create(&timed));
	s = timed.s;
	GPU_CHECK(cudaMalloc(&a, bytes));
	GPU_CHECK(cudaMalloc(&b, bytes));
	GPU_CHECK(cudaMalloc(&sink, sizeof(uint4)));
	GPU_CHECK(cudaMalloc(&scratch, sizeof(*scratch)));
	GPU_CHECK(gpu_fill_random_u32(a, bytes / 4, 0x1234u, s));
	GPU_CHECK(gpu_fill_random_u32(b, bytes / 4, 0x4321u, s));
	GPU_CHECK(cudaStreamSynchronize(s));
	{
		auto op = [&](void) -> cudaError_t {
			switch (kind) {
			case GPU_HBM_COPY_SM:
				copy_kernel<<<copy_blocks, COPY_THREADS, 0,
					      s>>>((const uint4 *)a, (uint4 *)b,
						   nvec);
				return cudaGetLastError();
			case GPU_HBM_READ_SM:
				read_kernel<<<blocks, 256, 0, s>>>(
				    (const uint4 *)a, nvec, sink);
				return cudaGetLastError();
			case GPU_HBM_WRITE_SM:
				write_kernel<<<blocks, 256, 0, s>>>(
				    (uint4 *)b, nvec, 0xabcdu);
				return cudaGetLastError();
			case GPU_HBM_COPY_CE:
				return cudaMemcpyAsync(
				    b, a, bytes, cudaMemcpyDeviceToDevice, s);
			}
			return cudaErrorInvalidValue;
		};
		// One gated batch of l operations.
		auto batch = [&](int l, float *out_ms) -> int {
			return gpu_timed_batch(
			    &timed, true, out_ms, err, errlen,
			    [&]() -> cudaError_t {
				    cudaError_t e = cudaSuccess;
				    for (int i = 0; e == cudaSuccess && i < l;
					 i++)
					    e = op();
				    return e;
			    });
		};
		for (int i = 0; i < smp->warmup_ops; i++)
			GPU_CHECK(op());
		GPU_CHECK(cudaStreamSynchronize(s));
		if (batch(1, &ms) == GPU_SAMPLE_ERR) {
			rc = GPU_FAIL;
			goto out;
		}
		loops = probe_batch_ops(ms, smp->sample_ms, 1);
		rc = gpu_run_samples(
		    smp, win, samples, n, err, errlen, [&](double *v) -> int {
			    float t = 0;
			    int r = batch(loops, &t);
			    if (r == GPU_SAMPLE_OK)
				    *v = (double)bytes * loops / (t * 1e-3) /
					 1e9;
			    return r;
		    });
	}
	if (rc == GPU_OK &&
	    (kind == GPU_HBM_COPY_SM || kind == GPU_HBM_COPY_CE))
		rc = verify_copy(a, b, bytes / 4, s, scratch, "device copy",
				 err, errlen);
out:
	gpu_timed_destroy(&timed);
	cudaFree(a);
	cudaFree(b);
	cudaFree(sink);
	cudaFree(scratch);
	if (rc != GPU_OK)
		gpu_clear_error();
	return rc;
}

// ---- host <-> device ----------------------------------------------------

static void host_fill(void *p, size_t bytes, uint64_t seed)
{
	uint64_t *w = (uint64_t *)p, x = seed | 1;
	for (size_t i = 0; i < bytes / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

// A host buffer on the GPU's NUMA node, pinned (cudaHostRegister) when
// asked: placing the pages first (mbind) and pinning them afterwards is
// what keeps them there.
struct host_buf {
	void *p = nullptr;
	size_t bytes = 0;
	bool registered = false;
	int node = -1;
	char why[160] = "";
};

static cudaError_t host_buf_alloc(host_buf *h, size_t bytes, int node, bool pin)
{
	h->p = probe_host_alloc(bytes, node, &h->node, h->why, sizeof(h->why));
	if (h->p == nullptr)
		return cudaErrorMemoryAllocation;
	h->bytes = bytes;
	if (!pin)
		return cudaSuccess;
	cudaError_t e = cudaHostRegister(h->p, bytes, cudaHostRegisterPortable);
	h->registered = e == cudaSuccess;
	return e;
}

static void host_buf_free(host_buf *h)
{
	if (h->registered)
		cudaHostUnregister(h->p);
	probe_host_free(h->p, h->bytes);
	h->p = nullptr;
	h->registered = false;
}

// Device checksum of d (on the current device) against the host
// checksum of h.
static int verify_host(const void *d, const void *h, size_t bytes,
		       cudaStream_t s, unsigned long long *scratch,
		       const char *what, char *err, size_t errlen)
{
	unsigned long long dv = 0, hv = probe_checksum_u32(h, bytes / 4);
	cudaError_t e = gpu_checksum(d, bytes / 4, s, scratch, &dv);

	return verify_sums(e, what, "device checksum", dv, "host", hv, err,
			   errlen);
}

extern "C" int gpu_host_copy(int dev, enum gpu_host_dir dir, int pinned,
			     size_t bytes, int numa_node,
			     const struct gpu_sampling *smp,
			     const struct gpu_window *win, double *samples,
			     int *n, char *note, size_t notelen, char *err,
			     size_t errlen)
{
	int rc = GPU_OK, loops = 1, r;
	host_buf hb1, hb2;
	void *h1 = nullptr, *h2 = nullptr, *d1 = nullptr, *d2 = nullptr;
	unsigned long long *scratch = nullptr;
	gpu_timed
	    timed; // its stream is s1; s2 and e2 carry the second direction
	cudaStream_t s1 = nullptr, s2 = nullptr;
	cudaEvent_t e2 = nullptr;
	float ms = 0;
	int nbuf = dir == GPU_BIDIR ? 2 : 1;
	double factor = dir == GPU_BIDIR ? 2.0 : 1.0;

	*n = 0;
	if (notelen)
		note[0] = '\0';
	if (!pinned && dir == GPU_BIDIR) {
		snprintf(err, errlen, "pageable bidirectional not measured");
		return GPU_SKIP;
	}
	gpu_clear_error();
	bytes &= ~(size_t)4095;
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(gpu_timed_create(&timed));
	s1 = timed.s;
	GPU_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	GPU_CHECK(cudaEventCreate(&e2));
	GPU_CHECK(cudaMalloc(&d1, bytes));
	GPU_CHECK(cudaMalloc(&scratch, sizeof(*scratch)));
	if (nbuf == 2)
		GPU_CHECK(cudaMalloc(&d2, bytes));
	GPU_CHECK(host_buf_alloc(&hb1, bytes, numa_node, pinned != 0));
	h1 = hb1.p;
	if (nbuf == 2) {
		GPU_CHECK(host_buf_alloc(&hb2, bytes, numa_node, true));
		h2 = hb2.p;
	}
	if (notelen) {
		if (hb1.why[0])
			snprintf(note, notelen,
				 "host buffer not bound to the GPU's NUMA "
				 "node (%s); on node %d",
				 hb1.why, hb1.node);
		else
			snprintf(note, notelen,
				 "host buffer on NUMA node %d (the GPU's: %d)",
				 hb1.node, numa_node);
	}
	host_fill(h1, bytes, 0x9e3779b97f4a7c15ULL);
	if (h2)
		host_fill(h2, bytes, 0xc2b2ae3d27d4eb4fULL);
	GPU_CHECK(gpu_fill_random_u32(d1, bytes / 4, 77u, s1));
	if (d2)
		GPU_CHECK(gpu_fill_random_u32(d2, bytes / 4, 78u, s1));
	GPU_CHECK(cudaStreamSynchronize(s1));
	{
		// l pinned copies, enqueued between the batch's events;
		// bidirectional, s2 starts at e0 and s1 ends after s2.
		auto copies = [&](int l) -> cudaError_t {
			cudaError_t e =
			    dir == GPU_BIDIR
				? cudaStreamWaitEvent(s2, timed.e0, 0)
				: cudaSuccess;
			for (int i = 0; e == cudaSuccess && i < l; i++) {
				if (dir == GPU_H2D || dir == GPU_BIDIR)
					e = cudaMemcpyAsync(
					    d1, h1, bytes,
					    cudaMemcpyHostToDevice, s1);
				else
					e = cudaMemcpyAsync(
					    h1, d1, bytes,
					    cudaMemcpyDeviceToHost, s1);
				if (e == cudaSuccess && dir == GPU_BIDIR)
					e = cudaMemcpyAsync(
					    h2, d2, bytes,
					    cudaMemcpyDeviceToHost, s2);
			}
			if (e == cudaSuccess && dir == GPU_BIDIR) {
				e = cudaEventRecord(e2, s2);
				if (e == cudaSuccess)
					e = cudaStreamWaitEvent(s1, e2, 0);
			}
			return e;
		};
		auto batch = [&](int l, float *out_ms) -> int {
			if (!pinned) {
				double t0 = gpu_now_ms();
				for (int i = 0; i < l; i++) {
					cudaError_t e =
					    dir == GPU_H2D
						? cudaMemcpy(
						      d1, h1, bytes,
						      cudaMemcpyHostToDevice)
						: cudaMemcpy(
						      h1, d1, bytes,
						      cudaMemcpyDeviceToHost);
					if (e != cudaSuccess)
						return gpu_sample_fail(e, err,
								       errlen);
				}
				*out_ms = (float)(gpu_now_ms() - t0);
				return GPU_SAMPLE_OK;
			}
			return gpu_timed_batch(&timed, true, out_ms, err,
					       errlen,
					       [&]() { return copies(l); });
		};
		for (int i = 0; i < smp->warmup_ops; i++) {
			if (batch(1, &ms) == GPU_SAMPLE_ERR) {
				rc = GPU_FAIL;
				goto out;
			}
		}
		r = batch(1, &ms);
		if (r == GPU_SAMPLE_ERR) {
			rc = GPU_FAIL;
			goto out;
		}
		// Two copies per loop when bidirectional.
		loops = probe_batch_ops(ms, smp->sample_ms, nbuf);
		rc = gpu_run_samples(
		    smp, win, samples, n, err, errlen, [&](double *v) -> int {
			    float t = 0;
			    int r2 = batch(loops, &t);
			    if (r2 == GPU_SAMPLE_OK)
				    *v = factor * (double)bytes * loops /
					 (t * 1e-3) / 1e9;
			    return r2;
		    });
	}
	if (rc == GPU_OK)
		rc = verify_host(d1, h1, bytes, s1, scratch,
				 dir == GPU_D2H ? "device to host"
						: "host to device",
				 err, errlen);
	if (rc == GPU_OK && dir == GPU_BIDIR)
		rc = verify_host(d2, h2, bytes, s1, scratch, "device to host",
				 err, errlen);
out:
	gpu_timed_destroy(&timed);
	if (s2)
		cudaStreamSynchronize(s2);
	cudaFree(d1);
	cudaFree(d2);
	cudaFree(scratch);
	host_buf_free(&hb1);
	host_buf_free(&hb2);
	if (e2)
		cudaEventDestroy(e2);
	if (s2)
		cudaStreamDestroy(s2);
	if (rc != GPU_OK)
		gpu_clear_error();
	return rc;
}

// ---- preloading -----------------------------------------------------------

cudaError_t gpu_preload_copy_kernels(void)
{
	cudaError_t e = gpu_preload_kernel(copy_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(read_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(write_kernel);
	return e;
}

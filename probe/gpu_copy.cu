// Copy, memory-bandwidth and latency measurements (CUDA runtime only).
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "gpu_common.cuh"

// ---- gate -------------------------------------------------------------

__global__ void spin_kernel(volatile int *flag, long long timeout_cycles)
{
	long long start = clock64();
	while (*flag == 0) {
		if (clock64() - start > timeout_cycles)
			break;
	}
}

cudaError_t gpu_gate_create(gpu_gate *g)
{
	void *h = nullptr;
	cudaError_t e = cudaHostAlloc(
	    &h, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
		return e;
	g->host = (volatile int *)h;
	*g->host = 0;
	return cudaHostGetDevicePointer((void **)&g->dev, h, 0);
}

void gpu_gate_destroy(gpu_gate *g)
{
	if (g->host)
		cudaFreeHost((void *)g->host);
	g->host = nullptr;
}

cudaError_t gpu_gate_hold(gpu_gate *g, cudaStream_t s)
{
	*g->host = 0;
	__sync_synchronize();
	// ~10 s at 2 GHz: never hang if the host dies between hold/release.
	spin_kernel<<<1, 1, 0, s>>>(g->dev, 20000000000LL);
	return cudaGetLastError();
}

void gpu_gate_release(gpu_gate *g)
{
	__sync_synchronize();
	*g->host = 1;
	__sync_synchronize();
}

// ---- random fill ------------------------------------------------------

__global__ void fill_u32_kernel(uint32_t *p, size_t n, unsigned seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride) {
		uint32_t x =
		    (uint32_t)(i * 2654435761u) ^ seed ^ (uint32_t)(i >> 32);
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = x;
	}
}

cudaError_t gpu_fill_random_u32(void *p, size_t words, unsigned seed,
				cudaStream_t s)
{
	fill_u32_kernel<<<1024, 256, 0, s>>>((uint32_t *)p, words, seed | 1u);
	return cudaGetLastError();
}

// ---- inventory ----------------------------------------------------------

extern "C" int gpu_device_count(int *count, char *errname, size_t namelen,
				char *msg, size_t msglen)
{
	cudaError_t e = cudaGetDeviceCount(count);
	if (e == cudaSuccess && *count > 0)
		return 0;
	if (e == cudaSuccess)
		e = cudaErrorNoDevice;
	snprintf(errname, namelen, "%s", cudaGetErrorName(e));
	snprintf(msg, msglen, "%s", cudaGetErrorString(e));
	*count = 0;
	return -1;
}

extern "C" void gpu_versions(int *driver, int *runtime)
{
	if (cudaDriverGetVersion(driver) != cudaSuccess)
		*driver = -1;
	if (cudaRuntimeGetVersion(runtime) != cudaSuccess)
		*runtime = -1;
}

extern "C" int gpu_get_info(int dev, struct gpu_info *out, char *err,
			    size_t errlen)
{
	cudaDeviceProp p;
	int rc = GPU_OK;
	const unsigned char *u;

	memset(out, 0, sizeof(*out));
	GPU_CHECK(cudaGetDeviceProperties(&p, dev));
	snprintf(out->name, sizeof(out->name), "%s", p.name);
	u = (const unsigned char *)p.uuid.bytes;
	snprintf(out->uuid, sizeof(out->uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
	GPU_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id,
					(int)sizeof(out->pci_bus_id), dev));
	for (char *c = out->pci_bus_id; *c; c++)
		if (*c >= 'A' && *c <= 'F')
			*c = (char)(*c - 'A' + 'a');
	out->cc_major = p.major;
	out->cc_minor = p.minor;
	out->memory_total_bytes = (int64_t)p.totalGlobalMem;
	out->sm_count = p.multiProcessorCount;
	out->l2_bytes = p.l2CacheSize;
out:
	return rc;
}

// ---- device memory bandwidth ------------------------------------------

#define UNROLL 8

__global__ void copy_kernel(const uint4 *__restrict__ src,
			    uint4 *__restrict__ dst, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
		uint4 v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = src[i + u * stride];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			dst[i + u * stride] = v[u];
	}
	for (; i < n; i += stride)
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

extern "C" int gpu_hbm(int dev, enum gpu_hbm_kind kind, size_t bytes,
		       const struct gpu_sampling *smp, double *samples, int *n,
		       char *err, size_t errlen)
{
	int rc = GPU_OK, blocks, sms = 0, loops = 1;
	void *a = nullptr, *b = nullptr;
	uint4 *sink = nullptr;
	cudaStream_t s = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	gpu_gate gate = {nullptr, nullptr};
	size_t nvec;
	float ms = 0;

	*n = 0;
	bytes &= ~(size_t)4095;
	nvec = bytes / sizeof(uint4);
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	blocks = sms * 8;
	GPU_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	GPU_CHECK(cudaEventCreate(&e0));
	GPU_CHECK(cudaEventCreate(&e1));
	GPU_CHECK(gpu_gate_create(&gate));
	GPU_CHECK(cudaMalloc(&a, bytes));
	GPU_CHECK(cudaMalloc(&b, bytes));
	GPU_CHECK(cudaMalloc(&sink, sizeof(uint4)));
	GPU_CHECK(gpu_fill_random_u32(a, bytes / 4, 0x1234u, s));
	GPU_CHECK(gpu_fill_random_u32(b, bytes / 4, 0x4321u, s));
	GPU_CHECK(cudaStreamSynchronize(s));
	{
		auto op = [&](void) -> cudaError_t {
			switch (kind) {
			case GPU_HBM_COPY_SM:
				copy_kernel<<<blocks, 256, 0, s>>>(
				    (const uint4 *)a, (uint4 *)b, nvec);
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
		auto batch = [&](int l, float *out_ms) -> cudaError_t {
			cudaError_t e = gpu_gate_hold(&gate, s);
			if (e == cudaSuccess)
				e = cudaEventRecord(e0, s);
			for (int i = 0; e == cudaSuccess && i < l; i++)
				e = op();
			if (e == cudaSuccess)
				e = cudaEventRecord(e1, s);
			gpu_gate_release(&gate);
			if (e == cudaSuccess)
				e = cudaEventSynchronize(e1);
			if (e == cudaSuccess)
				e = cudaEventElapsedTime(out_ms, e0, e1);
			return e;
		};
		for (int i = 0; i < smp->warmup_ops; i++)
			GPU_CHECK(op());
		GPU_CHECK(cudaStreamSynchronize(s));
		GPU_CHECK(batch(1, &ms));
		loops = gpu_loops_for(ms, smp->sample_ms, 1000);
		rc = gpu_run_samples(smp, samples, n, [&](double *v) -> int {
			float t = 0;
			cudaError_t e = batch(loops, &t);
			if (e != cudaSuccess) {
				snprintf(err, errlen, "%s",
					 cudaGetErrorString(e));
				return -1;
			}
			*v = (double)bytes * loops / (t * 1e-3) / 1e9;
			return 0;
		});
	}
out:
	if (gate.host)
		gpu_gate_release(&gate);
	if (s)
		cudaStreamSynchronize(s);
	cudaFree(a);
	cudaFree(b);
	cudaFree(sink);
	gpu_gate_destroy(&gate);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (s)
		cudaStreamDestroy(s);
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

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

extern "C" int gpu_host_copy(int dev, enum gpu_host_dir dir, int pinned,
			     size_t bytes, const struct gpu_sampling *smp,
			     double *samples, int *n, char *err, size_t errlen)
{
	int rc = GPU_OK, loops = 1;
	void *h1 = nullptr, *h2 = nullptr, *d1 = nullptr, *d2 = nullptr;
	cudaStream_t s1 = nullptr, s2 = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
	gpu_gate gate = {nullptr, nullptr};
	float ms = 0;
	int nbuf = dir == GPU_BIDIR ? 2 : 1;
	double factor = dir == GPU_BIDIR ? 2.0 : 1.0;

	*n = 0;
	if (!pinned && dir == GPU_BIDIR) {
		snprintf(err, errlen, "pageable bidirectional not measured");
		return GPU_SKIP;
	}
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	GPU_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	GPU_CHECK(cudaEventCreate(&e0));
	GPU_CHECK(cudaEventCreate(&e1));
	GPU_CHECK(cudaEventCreate(&e2));
	GPU_CHECK(gpu_gate_create(&gate));
	GPU_CHECK(cudaMalloc(&d1, bytes));
	if (nbuf == 2)
		GPU_CHECK(cudaMalloc(&d2, bytes));
	if (pinned) {
		GPU_CHECK(cudaHostAlloc(&h1, bytes, cudaHostAllocDefault));
		if (nbuf == 2)
			GPU_CHECK(
			    cudaHostAlloc(&h2, bytes, cudaHostAllocDefault));
	} else {
		h1 = malloc(bytes);
		if (h1 == nullptr) {
			snprintf(err, errlen, "out of host memory");
			rc = GPU_FAIL;
			goto out;
		}
	}
	host_fill(h1, bytes, 0x9e3779b97f4a7c15ULL);
	if (h2)
		host_fill(h2, bytes, 0xc2b2ae3d27d4eb4fULL);
	GPU_CHECK(gpu_fill_random_u32(d1, bytes / 4, 77u, s1));
	if (d2)
		GPU_CHECK(gpu_fill_random_u32(d2, bytes / 4, 78u, s1));
	GPU_CHECK(cudaStreamSynchronize(s1));
	{
		auto batch = [&](int l, float *out_ms) -> cudaError_t {
			cudaError_t e;
			if (!pinned) {
				double t0 = now_ms();
				for (int i = 0; i < l; i++) {
					e = dir == GPU_H2D
						? cudaMemcpy(
						      d1, h1, bytes,
						      cudaMemcpyHostToDevice)
						: cudaMemcpy(
						      h1, d1, bytes,
						      cudaMemcpyDeviceToHost);
					if (e != cudaSuccess)
						return e;
				}
				*out_ms = (float)(now_ms() - t0);
				return cudaSuccess;
			}
			e = gpu_gate_hold(&gate, s1);
			if (e == cudaSuccess)
				e = cudaEventRecord(e0, s1);
			if (e == cudaSuccess && dir == GPU_BIDIR)
				e = cudaStreamWaitEvent(s2, e0, 0);
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
			if (e == cudaSuccess)
				e = cudaEventRecord(e1, s1);
			gpu_gate_release(&gate);
			if (e == cudaSuccess)
				e = cudaEventSynchronize(e1);
			if (e == cudaSuccess)
				e = cudaEventElapsedTime(out_ms, e0, e1);
			return e;
		};
		for (int i = 0; i < smp->warmup_ops; i++)
			GPU_CHECK(batch(1, &ms));
		GPU_CHECK(batch(1, &ms));
		loops = gpu_loops_for(ms, smp->sample_ms, 1000);
		rc = gpu_run_samples(smp, samples, n, [&](double *v) -> int {
			float t = 0;
			cudaError_t e = batch(loops, &t);
			if (e != cudaSuccess) {
				snprintf(err, errlen, "%s",
					 cudaGetErrorString(e));
				return -1;
			}
			*v = factor * (double)bytes * loops / (t * 1e-3) / 1e9;
			return 0;
		});
	}
out:
	if (gate.host)
		gpu_gate_release(&gate);
	if (s1)
		cudaStreamSynchronize(s1);
	if (s2)
		cudaStreamSynchronize(s2);
	cudaFree(d1);
	cudaFree(d2);
	if (pinned) {
		cudaFreeHost(h1);
		cudaFreeHost(h2);
	} else {
		free(h1);
	}
	gpu_gate_destroy(&gate);
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	if (e2)
		cudaEventDestroy(e2);
	if (s1)
		cudaStreamDestroy(s1);
	if (s2)
		cudaStreamDestroy(s2);
	return rc;
}

// ---- peer to peer -------------------------------------------------------

extern "C" int gpu_can_access_peer(int src, int dst)
{
	int ok = 0;
	if (cudaDeviceCanAccessPeer(&ok, src, dst) != cudaSuccess)
		return -1;
	return ok ? 1 : 0;
}

extern "C" void gpu_enable_peers(const int *devs, int ndevs)
{
	for (int i = 0; i < ndevs; i++) {
		if (cudaSetDevice(devs[i]) != cudaSuccess)
			continue;
		for (int j = 0; j < ndevs; j++) {
			if (i == j ||
			    gpu_can_access_peer(devs[i], devs[j]) != 1)
				continue;
			cudaError_t e = cudaDeviceEnablePeerAccess(devs[j], 0);
			if (e == cudaErrorPeerAccessAlreadyEnabled)
				cudaGetLastError();
		}
	}
}

struct p2p_bufs {
	void *src_a = nullptr, *dst_a = nullptr; // src -> dst
	void *src_b = nullptr, *dst_b = nullptr; // dst -> src (bidir)
	cudaStream_t ss = nullptr, sd = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
	gpu_gate gate = {nullptr, nullptr};
};

static void p2p_free(p2p_bufs *b, int src, int dst)
{
	if (b->gate.host)
		gpu_gate_release(&b->gate);
	cudaSetDevice(src);
	if (b->ss)
		cudaStreamSynchronize(b->ss);
	cudaSetDevice(dst);
	if (b->sd)
		cudaStreamSynchronize(b->sd);
	cudaFree(b->src_a);
	cudaFree(b->dst_a);
	cudaFree(b->src_b);
	cudaFree(b->dst_b);
	gpu_gate_destroy(&b->gate);
	if (b->e0)
		cudaEventDestroy(b->e0);
	if (b->e1)
		cudaEventDestroy(b->e1);
	if (b->e2)
		cudaEventDestroy(b->e2);
	if (b->ss)
		cudaStreamDestroy(b->ss);
	if (b->sd)
		cudaStreamDestroy(b->sd);
}

// One gated batch: l copies of bytes src->dst (and dst->src when bidir).
static cudaError_t p2p_batch(p2p_bufs *b, int src, int dst, int bidir,
			     size_t bytes, int l, float *ms)
{
	cudaError_t e = cudaSetDevice(src);
	if (e == cudaSuccess)
		e = gpu_gate_hold(&b->gate, b->ss);
	if (e == cudaSuccess)
		e = cudaEventRecord(b->e0, b->ss);
	if (e == cudaSuccess && bidir)
		e = cudaStreamWaitEvent(b->sd, b->e0, 0);
	for (int i = 0; e == cudaSuccess && i < l; i++) {
		e = cudaMemcpyPeerAsync(b->dst_a, dst, b->src_a, src, bytes,
					b->ss);
		if (e == cudaSuccess && bidir)
			e = cudaMemcpyPeerAsync(b->src_b, src, b->dst_b, dst,
						bytes, b->sd);
	}
	if (e == cudaSuccess && bidir) {
		e = cudaEventRecord(b->e2, b->sd);
		if (e == cudaSuccess)
			e = cudaStreamWaitEvent(b->ss, b->e2, 0);
	}
	if (e == cudaSuccess)
		e = cudaEventRecord(b->e1, b->ss);
	gpu_gate_release(&b->gate);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(b->e1);
	if (e == cudaSuccess)
		e = cudaEventElapsedTime(ms, b->e0, b->e1);
	return e;
}

static int p2p_setup(p2p_bufs *b, int src, int dst, int bidir, size_t bytes,
		     char *err, size_t errlen)
{
	int rc = GPU_OK;
	GPU_CHECK(cudaSetDevice(dst));
	GPU_CHECK(cudaStreamCreateWithFlags(&b->sd, cudaStreamNonBlocking));
	GPU_CHECK(cudaMalloc(&b->dst_a, bytes));
	if (bidir) {
		GPU_CHECK(cudaMalloc(&b->dst_b, bytes));
		GPU_CHECK(gpu_fill_random_u32(b->dst_b, bytes / 4, 5u, b->sd));
	}
	GPU_CHECK(cudaStreamSynchronize(b->sd));
	GPU_CHECK(cudaSetDevice(src));
	GPU_CHECK(cudaStreamCreateWithFlags(&b->ss, cudaStreamNonBlocking));
	GPU_CHECK(cudaEventCreate(&b->e0));
	GPU_CHECK(cudaEventCreate(&b->e1));
	GPU_CHECK(cudaEventCreate(&b->e2));
	GPU_CHECK(gpu_gate_create(&b->gate));
	GPU_CHECK(cudaMalloc(&b->src_a, bytes));
	GPU_CHECK(gpu_fill_random_u32(b->src_a, bytes / 4, 3u, b->ss));
	if (bidir)
		GPU_CHECK(cudaMalloc(&b->src_b, bytes));
	GPU_CHECK(cudaStreamSynchronize(b->ss));
out:
	return rc;
}

extern "C" int gpu_p2p_bw(int src, int dst, int bidir, size_t bytes,
			  const struct gpu_sampling *smp, double *samples,
			  int *n, char *err, size_t errlen)
{
	p2p_bufs b;
	int rc, loops;
	float ms = 0;
	double factor = bidir ? 2.0 : 1.0;

	*n = 0;
	rc = p2p_setup(&b, src, dst, bidir, bytes, err, errlen);
	if (rc != GPU_OK)
		goto out;
	for (int i = 0; i < smp->warmup_ops; i++)
		GPU_CHECK(p2p_batch(&b, src, dst, bidir, bytes, 1, &ms));
	GPU_CHECK(p2p_batch(&b, src, dst, bidir, bytes, 1, &ms));
	loops = gpu_loops_for(ms, smp->sample_ms, 1000);
	rc = gpu_run_samples(smp, samples, n, [&](double *v) -> int {
		float t = 0;
		cudaError_t e =
		    p2p_batch(&b, src, dst, bidir, bytes, loops, &t);
		if (e != cudaSuccess) {
			snprintf(err, errlen, "%s", cudaGetErrorString(e));
			return -1;
		}
		*v = factor * (double)bytes * loops / (t * 1e-3) / 1e9;
		return 0;
	});
out:
	p2p_free(&b, src, dst);
	return rc;
}

extern "C" int gpu_p2p_latency(int src, int dst, const struct gpu_sampling *smp,
			       double *samples, int *n, char *err,
			       size_t errlen)
{
	p2p_bufs b;
	int rc;
	float ms = 0;
	const int reps = 100;

	*n = 0;
	rc = p2p_setup(&b, src, dst, 0, 4096, err, errlen);
	if (rc != GPU_OK)
		goto out;
	for (int i = 0; i < smp->warmup_ops; i++)
		GPU_CHECK(p2p_batch(&b, src, dst, 0, 16, reps, &ms));
	rc = gpu_run_samples(smp, samples, n, [&](double *v) -> int {
		float t = 0;
		cudaError_t e = p2p_batch(&b, src, dst, 0, 16, reps, &t);
		if (e != cudaSuccess) {
			snprintf(err, errlen, "%s", cudaGetErrorString(e));
			return -1;
		}
		*v = t * 1e3 / reps;
		return 0;
	});
out:
	p2p_free(&b, src, dst);
	return rc;
}

// ---- warm-up ------------------------------------------------------------

__global__ void burn_kernel(float *out, int iters)
{
	float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
	for (int i = 0; i < iters; i++) {
		a = fmaf(a, b, c);
		b = fmaf(b, c, a * 1e-9f);
	}
	if (a == 12345.678f)
		out[0] = a + b;
}

extern "C" int gpu_warmup(int dev, double seconds, char *err, size_t errlen)
{
	int rc = GPU_OK, sms = 0;
	float *sink = nullptr;
	double t0;

	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	GPU_CHECK(cudaMalloc(&sink, sizeof(float)));
	t0 = now_ms();
	while (now_ms() - t0 < seconds * 1e3) {
		burn_kernel<<<sms * 8, 256>>>(sink, 1 << 16);
		GPU_CHECK(cudaGetLastError());
		GPU_CHECK(cudaDeviceSynchronize());
	}
out:
	cudaFree(sink);
	return rc;
}

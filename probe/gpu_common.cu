// Shared CUDA helpers of the probe (the spin gate, random fill, checksums;
// declared in gpu_common.cuh) and the device-level calls of gpu.h:
// inventory, warm-up, preloading.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "gpu.h"
#include "gpu_common.cuh"

// ---- gate -------------------------------------------------------------

__device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// Waits for flag[0]; after timeout_ns of wall time (the global timer, not
// SM cycles, whose rate follows the clock) sets flag[1] and returns.
__global__ void spin_kernel(volatile int *flag, unsigned long long timeout_ns)
{
	unsigned long long start = global_ns();
	while (flag[0] == 0) {
		if (global_ns() - start > timeout_ns) {
			flag[1] = 1;
			__threadfence_system();
			break;
		}
	}
}

cudaError_t gpu_gate_create(gpu_gate *g)
{
	void *h = nullptr;
	cudaError_t e = cudaHostAlloc(
	    &h, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
		return e;
	g->host = (volatile int *)h;
	g->host[0] = 0;
	g->host[1] = 0;
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
	g->host[0] = 0;
	g->host[1] = 0;
	__sync_synchronize();
	spin_kernel<<<1, 1, 0, s>>>(g->dev, GPU_GATE_TIMEOUT_NS);
	return cudaGetLastError();
}

void gpu_gate_release(gpu_gate *g)
{
	__sync_synchronize();
	g->host[0] = 1;
	__sync_synchronize();
}

int gpu_gate_timed_out(const gpu_gate *g)
{
	__sync_synchronize();
	return g->host[1] != 0;
}

cudaError_t gpu_timed_create(gpu_timed *t)
{
	cudaError_t e = cudaStreamCreateWithFlags(&t->s, cudaStreamNonBlocking);

	if (e == cudaSuccess)
		e = cudaEventCreate(&t->e0);
	if (e == cudaSuccess)
		e = cudaEventCreate(&t->e1);
	if (e == cudaSuccess)
		e = gpu_gate_create(&t->gate);
	return e;
}

void gpu_timed_destroy(gpu_timed *t)
{
	if (t->gate.host)
		gpu_gate_release(&t->gate);
	if (t->s)
		cudaStreamSynchronize(t->s);
	gpu_gate_destroy(&t->gate);
	if (t->e0)
		cudaEventDestroy(t->e0);
	if (t->e1)
		cudaEventDestroy(t->e1);
	if (t->s)
		cudaStreamDestroy(t->s);
	t->s = nullptr;
	t->e0 = t->e1 = nullptr;
}

int gpu_sample_fail(cudaError_t e, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", cudaGetErrorString(e));
	gpu_clear_error();
	return GPU_SAMPLE_ERR;
}

// ---- random fill, checksum ---------------------------------------------

__device__ __forceinline__ uint32_t mix32(size_t i, unsigned seed)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ seed ^ (uint32_t)(i >> 32);
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

__global__ void fill_u32_kernel(uint32_t *p, size_t n, unsigned seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride)
		p[i] = mix32(i, seed);
}

__global__ void fill_f32_kernel(float *p, size_t n, unsigned seed)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride)
		p[i] =
		    (float)(mix32(i, seed) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void checksum_kernel(const uint32_t *p, size_t n,
				unsigned long long *out)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long s = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += stride)
		s += probe_cksum_word(p[i], (uint64_t)i);
	atomicAdd(out, s);
}

// 2 x seed + 1: odd, and distinct for distinct seeds (seed | 1 made 4 and
// 5 one fill, so a bidirectional copy's two buffers started equal and its
// check passed without the copy; review s23c F6).
static unsigned fill_seed(unsigned seed)
{
	return 2u * seed + 1u;
}

cudaError_t gpu_fill_random_u32(void *p, size_t words, unsigned seed,
				cudaStream_t s)
{
	fill_u32_kernel<<<1024, 256, 0, s>>>((uint32_t *)p, words,
					     fill_seed(seed));
	return cudaGetLastError();
}

cudaError_t gpu_fill_random_f32(float *p, size_t n, unsigned seed,
				cudaStream_t s)
{
	fill_f32_kernel<<<1024, 256, 0, s>>>(p, n, fill_seed(seed));
	return cudaGetLastError();
}

cudaError_t gpu_checksum(const void *p, size_t words, cudaStream_t s,
			 unsigned long long *scratch, unsigned long long *out)
{
	cudaError_t e = cudaMemsetAsync(scratch, 0, sizeof(*scratch), s);
	if (e != cudaSuccess)
		return e;
	checksum_kernel<<<1024, 256, 0, s>>>((const uint32_t *)p, words,
					     scratch);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(out, scratch, sizeof(*out),
				    cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	return e;
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

	gpu_clear_error();
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	GPU_CHECK(cudaMalloc(&sink, sizeof(float)));
	t0 = gpu_now_ms();
	while (gpu_now_ms() - t0 < seconds * 1e3) {
		burn_kernel<<<sms * 8, 256>>>(sink, 1 << 16);
		GPU_CHECK(cudaGetLastError());
		GPU_CHECK(cudaDeviceSynchronize());
	}
out:
	cudaFree(sink);
	return rc;
}

// ---- preloading -----------------------------------------------------------

// This file's kernels; gpu_copy.cu's and gpu_gemm.cu's load their own.
static cudaError_t preload_common_kernels(void)
{
	cudaError_t e = gpu_preload_kernel(spin_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(fill_u32_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(fill_f32_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(checksum_kernel);
	if (e == cudaSuccess)
		e = gpu_preload_kernel(burn_kernel);
	return e;
}

extern "C" int gpu_preload(int dev, char *err, size_t errlen)
{
	int rc = GPU_OK;

	gpu_clear_error();
	GPU_CHECK(cudaSetDevice(dev));
	GPU_CHECK(preload_common_kernels());
	GPU_CHECK(gpu_preload_copy_kernels());
	GPU_CHECK(gpu_preload_gemm_kernels());
out:
	return rc;
}

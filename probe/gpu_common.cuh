// Shared helpers of the probe's CUDA code (internal to gpu_*.cu; the
// gate, fill and checksum are defined in gpu_common.cu).
#ifndef GPUSIZER_PROBE_GPU_COMMON_CUH
#define GPUSIZER_PROBE_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "policy.h"
#include "stats.h"
#include "util.h"

// Clears the calling thread's last CUDA error. cudaGetLastError returns
// (and resets) the last error of any earlier call, not only of the launch
// it follows, so a failure handled in one measurement would otherwise be
// reported again by the next one (issue 14, defect 3). Called when each
// measurement starts and after each handled failure. Errors that break
// the context (an illegal address) cannot be cleared; every later call
// then reports them, which is right.
static inline void gpu_clear_error(void)
{
	(void)cudaGetLastError();
}

#define GPU_CHECK(call)                                                        \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			snprintf(err, errlen, "%s: %s (%s)", #call,            \
				 cudaGetErrorName(e_),                         \
				 cudaGetErrorString(e_));                      \
			gpu_clear_error();                                     \
			rc = GPU_FAIL;                                         \
			goto out;                                              \
		}                                                              \
	} while (0)

// A host flag in mapped pinned memory that a spin kernel waits on, so
// everything is enqueued before the timed work starts. The kernel gives
// up after GPU_GATE_TIMEOUT_NS (a host that dies between hold and release
// must not hang the GPU) and then sets timed_out: the batch behind it
// started before it was fully enqueued, so its timing includes enqueue
// cost and the sample is discarded, not kept.
#define GPU_GATE_TIMEOUT_NS 10000000000ULL

struct gpu_gate {
	volatile int *host; // [0] release flag, [1] timed-out flag
	int *dev;
};

cudaError_t gpu_gate_create(gpu_gate *g);
void gpu_gate_destroy(gpu_gate *g);
// Enqueues the spin kernel on s (the current device must own s).
cudaError_t gpu_gate_hold(gpu_gate *g, cudaStream_t s);
void gpu_gate_release(gpu_gate *g);
// After the batch completed: 1 when the gate opened on its timeout.
int gpu_gate_timed_out(const gpu_gate *g);

// What a timed measurement holds on one device: a non-blocking stream,
// the two events that bracket each batch on it, and the gate.
struct gpu_timed {
	cudaStream_t s = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	gpu_gate gate = {nullptr, nullptr};
};

// Creates them on the current device.
cudaError_t gpu_timed_create(gpu_timed *t);
// Opens the gate, waits for the stream and destroys what was created (the
// device current must be the one they were created on). Call it before
// freeing the buffers the batches used: a gate still held would keep them
// busy until its timeout.
void gpu_timed_destroy(gpu_timed *t);

// Records a failed CUDA call of one sample in err: GPU_SAMPLE_ERR.
int gpu_sample_fail(cudaError_t e, char *err, size_t errlen);

// Fills n 32-bit words at p with xorshift values (non-compressible).
cudaError_t gpu_fill_random_u32(void *p, size_t words, unsigned seed,
				cudaStream_t s);
// Fills n floats at p with values in [-1, 1) (finite, non-compressible).
cudaError_t gpu_fill_random_f32(float *p, size_t n, unsigned seed,
				cudaStream_t s);
// Checksum (check.h) of words 32-bit words of device memory p, in *out;
// synchronous on s. scratch: 8 bytes of device memory.
cudaError_t gpu_checksum(const void *p, size_t words, cudaStream_t s,
			 unsigned long long *scratch, unsigned long long *out);
// Loads gpu_copy.cu's and gpu_gemm.cu's kernels on the current device
// (gpu_preload in gpu_common.cu calls them, and loads its own).
cudaError_t gpu_preload_copy_kernels(void);
cudaError_t gpu_preload_gemm_kernels(void);

// cudaFuncGetAttributes loads a kernel's module under lazy loading (CUDA
// Programming Guide, "Lazy Loading": preload kernels that must run
// concurrently with others, e.g. a kernel that waits on another).
template <class K> static cudaError_t gpu_preload_kernel(K kernel)
{
	cudaFuncAttributes a;
	return cudaFuncGetAttributes(&a, (const void *)kernel);
}

// *out = the address of symbol name in lib (a dlopen handle), copied
// (a data pointer to a function pointer); whether lib has it.
template <class T> static bool gpu_dlsym(void *lib, T *out, const char *name)
{
	void *p = dlsym(lib, name);
	memcpy(out, &p, sizeof(p));
	return p != nullptr;
}

// Wall-clock milliseconds (probe_now_s), for what events cannot time.
static inline double gpu_now_ms(void)
{
	return probe_now_s() * 1e3;
}

// What one sample returned: a figure, a discarded (late) sample, or an
// error (err set).
enum gpu_sample_rc {
	GPU_SAMPLE_OK = 0,
	GPU_SAMPLE_LATE = 1,
	GPU_SAMPLE_ERR = -1
};

// One timed batch on t: enqueue() (a cudaError_t) puts the work between
// t's events, and *ms is the time between them. Gated, the batch waits
// behind t's gate until it is all enqueued, so the time holds no launch
// cost, and is GPU_SAMPLE_LATE when the gate opened on its timeout
// instead. Ungated (sustained runs), the launches overlap the running
// work, which is only back-pressure. A failed call: GPU_SAMPLE_ERR, err
// set.
template <class F>
int gpu_timed_batch(gpu_timed *t, bool gated, float *ms, char *err,
		    size_t errlen, F enqueue)
{
	cudaError_t e = gated ? gpu_gate_hold(&t->gate, t->s) : cudaSuccess;

	if (e == cudaSuccess)
		e = cudaEventRecord(t->e0, t->s);
	if (e == cudaSuccess)
		e = enqueue();
	if (e == cudaSuccess)
		e = cudaEventRecord(t->e1, t->s);
	if (gated)
		gpu_gate_release(&t->gate);
	if (e == cudaSuccess)
		e = cudaEventSynchronize(t->e1);
	if (e == cudaSuccess)
		e = cudaEventElapsedTime(ms, t->e0, t->e1);
	if (e != cudaSuccess)
		return gpu_sample_fail(e, err, errlen);
	return gated && gpu_gate_timed_out(&t->gate) ? GPU_SAMPLE_LATE
						     : GPU_SAMPLE_OK;
}

// Late samples tolerated before the measurement fails.
#define GPU_MAX_LATE_SAMPLES 3

// Runs samples: one_sample(double *value) returns a gpu_sample_rc. The
// window's begin/end bracket the samples.
template <class F>
int gpu_run_samples(const gpu_sampling *smp, const gpu_window *win,
		    double *samples, int *n, char *err, size_t errlen,
		    F one_sample)
{
	int late = 0, rc = GPU_OK;
	double t0;

	*n = 0;
	if (win && win->begin)
		win->begin(win->arg);
	// After begin: it may wait for other GPUs (m_gemm_sustained.c).
	t0 = probe_now_s();
	while (*n < smp->max_samples) {
		double v = 0;
		int r = one_sample(&v);
		if (r == GPU_SAMPLE_ERR) {
			rc = GPU_FAIL;
			break;
		}
		if (r == GPU_SAMPLE_LATE) {
			if (++late > GPU_MAX_LATE_SAMPLES) {
				snprintf(err, errlen,
					 "the spin gate timed out %d times "
					 "before the work was enqueued: no "
					 "valid sample",
					 late);
				rc = GPU_FAIL;
				break;
			}
			continue;
		}
		samples[*n] = v;
		*n += 1;
		if (probe_now_s() - t0 >= smp->min_seconds &&
		    probe_samples_enough(
			samples, (size_t)*n, (size_t)smp->min_samples,
			(size_t)smp->max_samples, smp->cv_target))
			break;
	}
	if (win && win->end)
		win->end(win->arg);
	return rc;
}

#endif

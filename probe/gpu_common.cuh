// Shared helpers of the probe's CUDA code (internal to gpu_*.cu).
#ifndef GPUSIZER_PROBE_GPU_COMMON_CUH
#define GPUSIZER_PROBE_GPU_COMMON_CUH

#include <cuda_runtime.h>
#include <stdio.h>

#include "gpu.h"
#include "stats.h"

#define GPU_CHECK(call)                                                        \
	do {                                                                   \
		cudaError_t e_ = (call);                                       \
		if (e_ != cudaSuccess) {                                       \
			snprintf(err, errlen, "%s: %s (%s)", #call,            \
				 cudaGetErrorName(e_),                         \
				 cudaGetErrorString(e_));                      \
			rc = GPU_FAIL;                                         \
			goto out;                                              \
		}                                                              \
	} while (0)

// A host flag in mapped pinned memory that a spin kernel waits on, so
// everything is enqueued before the timed work starts.
struct gpu_gate {
	volatile int *host;
	int *dev;
};

cudaError_t gpu_gate_create(gpu_gate *g);
void gpu_gate_destroy(gpu_gate *g);
// Enqueues the spin kernel on s (the current device must own s).
cudaError_t gpu_gate_hold(gpu_gate *g, cudaStream_t s);
void gpu_gate_release(gpu_gate *g);

// Fills n 32-bit words at p with xorshift values (non-compressible).
cudaError_t gpu_fill_random_u32(void *p, size_t words, unsigned seed,
				cudaStream_t s);

// Runs samples: one_sample(double *value) returns 0 or -1 (err set).
template <class F>
int gpu_run_samples(const gpu_sampling *smp, double *samples, int *n,
		    F one_sample)
{
	*n = 0;
	for (int i = 0; i < smp->max_samples; i++) {
		double v = 0;
		if (one_sample(&v) != 0)
			return GPU_FAIL;
		samples[i] = v;
		*n = i + 1;
		if (probe_samples_enough(
			samples, (size_t)*n, (size_t)smp->min_samples,
			(size_t)smp->max_samples, smp->cv_target))
			break;
	}
	return GPU_OK;
}

// Loops needed so one batch lasts about target_ms, given one op's ms.
static inline int gpu_loops_for(double op_ms, double target_ms, int max_loops)
{
	if (!(op_ms > 0))
		return 1;
	double l = target_ms / op_ms;
	if (l < 1)
		return 1;
	if (l > max_loops)
		return max_loops;
	return (int)(l + 0.5);
}

#endif

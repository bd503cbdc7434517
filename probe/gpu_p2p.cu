// Peer-to-peer copies between two GPUs: bandwidth and latency (CUDA
// runtime only).
#include <cuda_runtime.h>
#include <stdio.h>

#include "gpu.h"
#include "gpu_common.cuh"

// ---- peer to peer -------------------------------------------------------

extern "C" int gpu_can_access_peer(int src, int dst)
{
	int ok = 0;
	if (cudaDeviceCanAccessPeer(&ok, src, dst) != cudaSuccess) {
		gpu_clear_error();
		return -1;
	}
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
			// cudaErrorPeerAccessAlreadyEnabled or a refusal:
			// handled (the copy is staged), not carried on.
			if (cudaDeviceEnablePeerAccess(devs[j], 0) !=
			    cudaSuccess)
				gpu_clear_error();
		}
	}
	gpu_clear_error();
}

// Streams and events live on the device whose work they order:
// timed (its stream, e0, e1 and gate) on src; sd, e2 on dst. cudaEventRecord
// fails when event and stream belong to different devices, while
// cudaStreamWaitEvent and copies work across devices (CUDA Programming Guide,
// "Stream and Event Behavior"); e2 used to be created on src, so every
// bidirectional batch failed (issue 14, defect 2).
struct p2p_bufs {
	void *src_a = nullptr, *dst_a = nullptr; // src -> dst
	void *src_b = nullptr, *dst_b = nullptr; // dst -> src (bidir)
	unsigned long long *scr_s = nullptr, *scr_d = nullptr;
	gpu_timed timed;
	cudaStream_t sd = nullptr;
	cudaEvent_t e2 = nullptr;
};

static void p2p_free(p2p_bufs *b, int src, int dst)
{
	cudaSetDevice(src);
	gpu_timed_destroy(&b->timed);
	cudaSetDevice(dst);
	if (b->sd)
		cudaStreamSynchronize(b->sd);
	cudaFree(b->dst_a);
	cudaFree(b->dst_b);
	cudaFree(b->scr_d);
	if (b->e2)
		cudaEventDestroy(b->e2);
	if (b->sd)
		cudaStreamDestroy(b->sd);
	cudaSetDevice(src);
	cudaFree(b->src_a);
	cudaFree(b->src_b);
	cudaFree(b->scr_s);
	gpu_clear_error();
}

// One gated batch: l copies of bytes src->dst (and dst->src when bidir:
// sd starts at e0 and the source's stream ends after sd).
static int p2p_batch(p2p_bufs *b, int src, int dst, int bidir, size_t bytes,
		     int l, float *ms, char *err, size_t errlen)
{
	cudaStream_t ss = b->timed.s;
	cudaError_t e = cudaSetDevice(src);

	if (e != cudaSuccess)
		return gpu_sample_fail(e, err, errlen);
	return gpu_timed_batch(&b->timed, true, ms, err, errlen, [&]() {
		e = bidir ? cudaStreamWaitEvent(b->sd, b->timed.e0, 0)
			  : cudaSuccess;
		for (int i = 0; e == cudaSuccess && i < l; i++) {
			e = cudaMemcpyPeerAsync(b->dst_a, dst, b->src_a, src,
						bytes, ss);
			if (e == cudaSuccess && bidir)
				e = cudaMemcpyPeerAsync(b->src_b, src, b->dst_b,
							dst, bytes, b->sd);
		}
		if (e == cudaSuccess && bidir) {
			e = cudaSetDevice(dst);
			if (e == cudaSuccess)
				e = cudaEventRecord(b->e2, b->sd);
			if (e == cudaSuccess)
				e = cudaSetDevice(src);
			if (e == cudaSuccess)
				e = cudaStreamWaitEvent(ss, b->e2, 0);
		}
		return e;
	});
}

static int p2p_setup(p2p_bufs *b, int src, int dst, int bidir, size_t bytes,
		     char *err, size_t errlen)
{
	int rc = GPU_OK;
	GPU_CHECK(cudaSetDevice(dst));
	GPU_CHECK(cudaStreamCreateWithFlags(&b->sd, cudaStreamNonBlocking));
	GPU_CHECK(cudaEventCreate(&b->e2));
	GPU_CHECK(cudaMalloc(&b->dst_a, bytes));
	GPU_CHECK(cudaMalloc(&b->scr_d, sizeof(*b->scr_d)));
	GPU_CHECK(gpu_fill_random_u32(b->dst_a, bytes / 4, 6u, b->sd));
	if (bidir) {
		GPU_CHECK(cudaMalloc(&b->dst_b, bytes));
		GPU_CHECK(gpu_fill_random_u32(b->dst_b, bytes / 4, 5u, b->sd));
	}
	GPU_CHECK(cudaStreamSynchronize(b->sd));
	GPU_CHECK(cudaSetDevice(src));
	GPU_CHECK(gpu_timed_create(&b->timed));
	GPU_CHECK(cudaMalloc(&b->src_a, bytes));
	GPU_CHECK(cudaMalloc(&b->scr_s, sizeof(*b->scr_s)));
	GPU_CHECK(gpu_fill_random_u32(b->src_a, bytes / 4, 3u, b->timed.s));
	if (bidir) {
		GPU_CHECK(cudaMalloc(&b->src_b, bytes));
		GPU_CHECK(
		    gpu_fill_random_u32(b->src_b, bytes / 4, 4u, b->timed.s));
	}
	GPU_CHECK(cudaStreamSynchronize(b->timed.s));
out:
	return rc;
}

// Checksum of x on device xd against y on device yd.
static int p2p_verify(const void *x, int xd, unsigned long long *xs,
		      cudaStream_t xstream, const void *y, int yd,
		      unsigned long long *ys, cudaStream_t ystream,
		      size_t bytes, char *err, size_t errlen)
{
	unsigned long long a = 0, b = 0;
	cudaError_t e = cudaSetDevice(xd);

	if (e == cudaSuccess)
		e = gpu_checksum(x, bytes / 4, xstream, xs, &a);
	if (e == cudaSuccess)
		e = cudaSetDevice(yd);
	if (e == cudaSuccess)
		e = gpu_checksum(y, bytes / 4, ystream, ys, &b);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "peer copy checksum: %s",
			 cudaGetErrorString(e));
		gpu_clear_error();
		return GPU_FAIL;
	}
	if (a != b) {
		snprintf(err, errlen,
			 "GPU %d -> GPU %d copied wrong data: checksum "
			 "%016llx, source %016llx",
			 xd, yd, b, a);
		return GPU_FAIL;
	}
	return GPU_OK;
}

extern "C" int gpu_p2p_bw(int src, int dst, int bidir, size_t bytes,
			  const struct gpu_sampling *smp,
			  const struct gpu_window *win, double *samples, int *n,
			  char *err, size_t errlen)
{
	p2p_bufs b;
	int rc, loops;
	float ms = 0;
	double factor = bidir ? 2.0 : 1.0;

	*n = 0;
	gpu_clear_error();
	bytes &= ~(size_t)4095;
	rc = p2p_setup(&b, src, dst, bidir, bytes, err, errlen);
	if (rc != GPU_OK)
		goto out;
	for (int i = 0; i <= smp->warmup_ops; i++) {
		if (p2p_batch(&b, src, dst, bidir, bytes, 1, &ms, err,
			      errlen) == GPU_SAMPLE_ERR) {
			rc = GPU_FAIL;
			goto out;
		}
	}
	loops = probe_batch_ops(ms, smp->sample_ms, bidir ? 2 : 1);
	rc = gpu_run_samples(
	    smp, win, samples, n, err, errlen, [&](double *v) -> int {
		    float t = 0;
		    int r = p2p_batch(&b, src, dst, bidir, bytes, loops, &t,
				      err, errlen);
		    if (r == GPU_SAMPLE_OK)
			    *v = factor * (double)bytes * loops / (t * 1e-3) /
				 1e9;
		    return r;
	    });
	if (rc == GPU_OK)
		rc = p2p_verify(b.src_a, src, b.scr_s, b.timed.s, b.dst_a, dst,
				b.scr_d, b.sd, bytes, err, errlen);
	if (rc == GPU_OK && bidir)
		rc = p2p_verify(b.dst_b, dst, b.scr_d, b.sd, b.src_b, src,
				b.scr_s, b.timed.s, bytes, err, errlen);
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
	gpu_clear_error();
	rc = p2p_setup(&b, src, dst, 0, 4096, err, errlen);
	if (rc != GPU_OK)
		goto out;
	for (int i = 0; i < smp->warmup_ops; i++) {
		if (p2p_batch(&b, src, dst, 0, 16, reps, &ms, err, errlen) ==
		    GPU_SAMPLE_ERR) {
			rc = GPU_FAIL;
			goto out;
		}
	}
	rc = gpu_run_samples(
	    smp, nullptr, samples, n, err, errlen, [&](double *v) -> int {
		    float t = 0;
		    int r =
			p2p_batch(&b, src, dst, 0, 16, reps, &t, err, errlen);
		    if (r == GPU_SAMPLE_OK)
			    *v = t * 1e3 / reps;
		    return r;
	    });
out:
	p2p_free(&b, src, dst);
	return rc;
}

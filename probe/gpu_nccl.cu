// NCCL collectives, loaded at run time (dlopen libnccl.so.2).
// nccl-tests timing: w warm-up operations, then iters back-to-back
// operations timed on the host, mean time per operation. One set of
// communicators and buffers serves every size and collective; every batch
// has a deadline after which the communicators are aborted.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "gpu_common.cuh"
#include "policy.h"
#include "util.h"

namespace
{

struct nccl_api {
	void *lib = nullptr;
	int version = -1;
	char why[256] = "";
	decltype(&ncclGetVersion) get_version;
	decltype(&ncclCommInitAll) init_all;
	decltype(&ncclCommDestroy) destroy;
	decltype(&ncclAllReduce) all_reduce;
	decltype(&ncclGroupStart) group_start;
	decltype(&ncclGroupEnd) group_end;
	decltype(&ncclGetErrorString) error_string;
	decltype(&ncclAllGather) all_gather;
	decltype(&ncclReduceScatter) reduce_scatter;
	decltype(&ncclCommAbort) abort;
	decltype(&ncclCommGetAsyncError) async_error;
};

nccl_api nc;
pthread_once_t nc_once = PTHREAD_ONCE_INIT;

template <class T> bool load_sym(T *out, const char *name)
{
	return gpu_dlsym(nc.lib, out, name);
}

void nc_load(void)
{
	nc.lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!nc.lib) {
		snprintf(nc.why, sizeof(nc.why), "libnccl.so.2 not found (%s)",
			 dlerror());
		return;
	}
	bool ok = load_sym(&nc.get_version, "ncclGetVersion") &&
		  load_sym(&nc.init_all, "ncclCommInitAll") &&
		  load_sym(&nc.destroy, "ncclCommDestroy") &&
		  load_sym(&nc.all_reduce, "ncclAllReduce") &&
		  load_sym(&nc.group_start, "ncclGroupStart") &&
		  load_sym(&nc.group_end, "ncclGroupEnd") &&
		  load_sym(&nc.error_string, "ncclGetErrorString") &&
		  load_sym(&nc.all_gather, "ncclAllGather") &&
		  load_sym(&nc.reduce_scatter, "ncclReduceScatter") &&
		  load_sym(&nc.abort, "ncclCommAbort") &&
		  load_sym(&nc.async_error, "ncclCommGetAsyncError");
	if (!ok) {
		snprintf(nc.why, sizeof(nc.why),
			 "libnccl.so.2 lacks a needed symbol");
		dlclose(nc.lib);
		nc.lib = nullptr;
		return;
	}
	if (nc.get_version(&nc.version) != ncclSuccess)
		nc.version = -1;
}

} // namespace

extern "C" int gpu_nccl_load(int *version, char *err, size_t errlen)
{
	pthread_once(&nc_once, nc_load);
	*version = nc.version;
	if (!nc.lib) {
		snprintf(err, errlen, "%s", nc.why);
		return GPU_SKIP;
	}
	return GPU_OK;
}

#define MAXG 64

struct gpu_nccl {
	int ndevs = 0;
	int devs[MAXG] = {};
	ncclComm_t comms[MAXG] = {};
	cudaStream_t streams[MAXG] = {};
	float *send[MAXG] = {}, *recv[MAXG] = {};
	size_t max_bytes = 0;
	bool have_comms = false;
	bool aborted = false;
};

// Elements of rank r's send buffer checked after the first operation.
#define NCCL_CHECKS 4

extern "C" void gpu_nccl_close(struct gpu_nccl *h)
{
	if (h == nullptr)
		return;
	for (int i = 0; i < h->ndevs; i++) {
		cudaSetDevice(h->devs[i]);
		if (h->streams[i] && !h->aborted)
			cudaStreamSynchronize(h->streams[i]);
		if (h->have_comms && h->comms[i] && !h->aborted)
			nc.destroy(h->comms[i]);
		cudaFree(h->send[i]);
		cudaFree(h->recv[i]);
		if (h->streams[i])
			cudaStreamDestroy(h->streams[i]);
	}
	gpu_clear_error();
	delete h;
}

extern "C" int gpu_nccl_open(const int *devs, int ndevs, size_t max_bytes,
			     struct gpu_nccl **out, char *err, size_t errlen)
{
	int rc = GPU_OK, v = 0;
	size_t count;
	gpu_nccl *h = nullptr;

	*out = nullptr;
	if (gpu_nccl_load(&v, err, errlen) != GPU_OK)
		return GPU_SKIP;
	if (ndevs < 2 || ndevs > MAXG) {
		snprintf(err, errlen, "collectives need 2..%d GPUs (have %d)",
			 MAXG, ndevs);
		return GPU_SKIP;
	}
	gpu_clear_error();
	h = new gpu_nccl;
	h->ndevs = ndevs;
	count = probe_nccl_buffer_floats(max_bytes, ndevs);
	h->max_bytes = count * sizeof(float);
	for (int i = 0; i < ndevs; i++) {
		h->devs[i] = devs[i];
		GPU_CHECK(cudaSetDevice(devs[i]));
		GPU_CHECK(cudaStreamCreateWithFlags(&h->streams[i],
						    cudaStreamNonBlocking));
		GPU_CHECK(cudaMalloc(&h->send[i], h->max_bytes));
		GPU_CHECK(cudaMalloc(&h->recv[i], h->max_bytes));
		// Finite values in [-1, 1): random bits would hold ~0.4 %
		// NaN/Inf, which a reduction spreads (issue 14, defect 9).
		GPU_CHECK(gpu_fill_random_f32(h->send[i], count, 9u + i,
					      h->streams[i]));
		GPU_CHECK(cudaMemsetAsync(h->recv[i], 0, h->max_bytes,
					  h->streams[i]));
		GPU_CHECK(cudaStreamSynchronize(h->streams[i]));
	}
	{
		ncclResult_t r = nc.init_all(h->comms, ndevs, devs);
		if (r != ncclSuccess) {
			snprintf(err, errlen, "ncclCommInitAll: %s",
				 nc.error_string(r));
			rc = GPU_FAIL;
			goto out;
		}
	}
	h->have_comms = true;
out:
	if (rc != GPU_OK) {
		gpu_nccl_close(h);
		return rc;
	}
	*out = h;
	return GPU_OK;
}

// Aborts every communicator (after a deadline or an asynchronous error):
// ncclCommAbort stops the kernels waiting for peers, which a destroy or a
// stream synchronisation would wait for forever.
static void nccl_abort(gpu_nccl *h)
{
	for (int i = 0; i < h->ndevs; i++)
		if (h->comms[i])
			nc.abort(h->comms[i]);
	h->aborted = true;
	gpu_clear_error();
}

// Waits for every stream, polling, until the deadline. -1 with err set
// when it passed (the communicators are then aborted) or an error came.
// The first 10 ms it spins, as nccl-tests does: a sample is timed on the
// host when this returns, and a 0.2 ms sleep between polls had added up
// to ~0.25 ms to batches of 10-40 us collectives (review s23c F7); after
// that it sleeps 0.2 ms between polls, under 0.05 % of such a batch.
static int nccl_wait(gpu_nccl *h, double deadline_s, char *err, size_t errlen)
{
	probe_deadline d;
	double t0 = probe_now_s();

	probe_deadline_start(&d, t0, deadline_s);
	for (;;) {
		int busy = 0;
		for (int i = 0; i < h->ndevs; i++) {
			cudaError_t e;
			ncclResult_t ae = ncclSuccess;
			cudaSetDevice(h->devs[i]);
			e = cudaStreamQuery(h->streams[i]);
			if (e == cudaErrorNotReady) {
				busy = 1;
				gpu_clear_error();
			} else if (e != cudaSuccess) {
				snprintf(err, errlen, "%s",
					 cudaGetErrorString(e));
				nccl_abort(h);
				return -1;
			}
			if (nc.async_error(h->comms[i], &ae) == ncclSuccess &&
			    ae != ncclSuccess && ae != ncclInProgress) {
				snprintf(err, errlen, "NCCL: %s",
					 nc.error_string(ae));
				nccl_abort(h);
				return -1;
			}
		}
		if (!busy)
			return 0;
		if (probe_deadline_passed(&d, probe_now_s())) {
			snprintf(err, errlen,
				 "NCCL did not finish within %.0f s: "
				 "communicators aborted",
				 deadline_s);
			nccl_abort(h);
			return -1;
		}
		if (probe_now_s() - t0 > 0.010) {
			struct timespec ts = {0, 200000}; // 0.2 ms
			nanosleep(&ts, nullptr);
		}
	}
}

// Enqueues l operations of coll on every rank.
static int nccl_enqueue(gpu_nccl *h, enum gpu_coll coll, size_t count_in, int l,
			char *err, size_t errlen)
{
	for (int it = 0; it < l; it++) {
		ncclResult_t r = nc.group_start();
		for (int i = 0; r == ncclSuccess && i < h->ndevs; i++) {
			switch (coll) {
			case GPU_COLL_ALL_REDUCE:
				r = nc.all_reduce(h->send[i], h->recv[i],
						  count_in, ncclFloat, ncclSum,
						  h->comms[i], h->streams[i]);
				break;
			case GPU_COLL_ALL_GATHER:
				r = nc.all_gather(h->send[i], h->recv[i],
						  count_in, ncclFloat,
						  h->comms[i], h->streams[i]);
				break;
			case GPU_COLL_REDUCE_SCATTER:
				r = nc.reduce_scatter(
				    h->send[i], h->recv[i], count_in, ncclFloat,
				    ncclSum, h->comms[i], h->streams[i]);
				break;
			}
		}
		ncclResult_t r2 = nc.group_end();
		if (r == ncclSuccess)
			r = r2;
		if (r != ncclSuccess) {
			snprintf(err, errlen, "NCCL enqueue: %s",
				 nc.error_string(r));
			nccl_abort(h);
			return -1;
		}
	}
	return 0;
}

// One float of rank r's device memory.
static cudaError_t read_float(gpu_nccl *h, int r, const float *p, float *v)
{
	cudaError_t e = cudaSetDevice(h->devs[r]);
	if (e == cudaSuccess)
		e = cudaMemcpy(v, p, sizeof(*v), cudaMemcpyDeviceToHost);
	return e;
}

// After one operation: a few elements of every rank's output against the
// host's result from the inputs (out of place: the inputs are unchanged).
// count is the per-call count (all-reduce: elements per rank; all-gather:
// send count; reduce-scatter: receive count).
static int nccl_verify(gpu_nccl *h, enum gpu_coll coll, size_t count, char *err,
		       size_t errlen)
{
	int n = h->ndevs, rc = GPU_OK;

	for (int c = 0; c < NCCL_CHECKS; c++) {
		size_t idx = (count - 1) * (size_t)c / (NCCL_CHECKS - 1);
		for (int dst = 0; dst < n; dst++) {
			double want = 0, mag = 0;
			float got = 0, v = 0;
			size_t out_i = idx;
			if (coll == GPU_COLL_ALL_GATHER) {
				int from = (c + dst) % n;
				out_i = (size_t)from * count + idx;
				GPU_CHECK(read_float(h, from,
						     h->send[from] + idx, &v));
				want = v;
				mag = fabs(v);
			} else {
				size_t in_i = coll == GPU_COLL_REDUCE_SCATTER
						  ? (size_t)dst * count + idx
						  : idx;
				for (int src = 0; src < n; src++) {
					GPU_CHECK(read_float(
					    h, src, h->send[src] + in_i, &v));
					want += v;
					mag += fabs(v);
				}
			}
			GPU_CHECK(
			    read_float(h, dst, h->recv[dst] + out_i, &got));
			// float sums of n terms, in any order.
			if (!(fabs(got - want) <= 1e-5 * mag + 1e-30)) {
				snprintf(
				    err, errlen,
				    "NCCL result wrong on rank %d: element "
				    "%zu is %.9g, the host computes %.9g",
				    dst, out_i, (double)got, want);
				return GPU_FAIL;
			}
		}
	}
out:
	return rc;
}

extern "C" int gpu_nccl_run(struct gpu_nccl *h, enum gpu_coll coll,
			    size_t bytes, int warmup, int iters,
			    const struct gpu_sampling *smp,
			    const struct gpu_window *win, double *samples_us,
			    int *n, char *err, size_t errlen)
{
	size_t total = bytes / sizeof(float), count;
	double deadline_s;
	int rc;

	*n = 0;
	if (h == nullptr || h->aborted) {
		snprintf(err, errlen,
			 "NCCL communicators were aborted earlier in this run");
		return GPU_FAIL;
	}
	if (bytes > h->max_bytes || iters < 1) {
		snprintf(err, errlen, "NCCL size %zu exceeds the buffers (%zu)",
			 bytes, h->max_bytes);
		return GPU_FAIL;
	}
	gpu_clear_error();
	// count per call (nccl-tests: S = count x n for gather/scatter).
	count = coll == GPU_COLL_ALL_REDUCE ? total : total / (size_t)h->ndevs;
	if (count == 0) {
		snprintf(err, errlen, "NCCL size %zu too small for %d ranks",
			 bytes, h->ndevs);
		return GPU_FAIL;
	}
	// One operation, checked, then the warm-up.
	deadline_s = probe_nccl_deadline_s((double)bytes, 1);
	if (nccl_enqueue(h, coll, count, 1, err, errlen) != 0 ||
	    nccl_wait(h, deadline_s, err, errlen) != 0)
		return GPU_FAIL;
	rc = nccl_verify(h, coll, count, err, errlen);
	if (rc != GPU_OK)
		return rc;
	if (warmup > 0) {
		deadline_s = probe_nccl_deadline_s((double)bytes, warmup);
		if (nccl_enqueue(h, coll, count, warmup, err, errlen) != 0 ||
		    nccl_wait(h, deadline_s, err, errlen) != 0)
			return GPU_FAIL;
	}
	deadline_s = probe_nccl_deadline_s((double)bytes, iters);
	return gpu_run_samples(
	    smp, win, samples_us, n, err, errlen, [&](double *val) -> int {
		    double t0 = probe_now_s();
		    if (nccl_enqueue(h, coll, count, iters, err, errlen) != 0 ||
			nccl_wait(h, deadline_s, err, errlen) != 0)
			    return GPU_SAMPLE_ERR;
		    *val = (probe_now_s() - t0) * 1e6 / iters;
		    return GPU_SAMPLE_OK;
	    });
}

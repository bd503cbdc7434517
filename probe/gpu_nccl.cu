// NCCL all-reduce bus bandwidth, loaded at run time (dlopen libnccl.so.2).
// nccl-tests timing: w warm-up operations, then iters back-to-back
// operations timed on the host, mean time per operation.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpu.h"
#include "gpu_common.cuh"

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
};

nccl_api nc;
pthread_once_t nc_once = PTHREAD_ONCE_INIT;

template <class T> bool load_sym(T *out, const char *name)
{
	void *p = dlsym(nc.lib, name);
	memcpy(out, &p, sizeof(p));
	return p != nullptr;
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
		  load_sym(&nc.error_string, "ncclGetErrorString");
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

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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

#define NC_CHECK(call)                                                         \
	do {                                                                   \
		ncclResult_t r_ = (call);                                      \
		if (r_ != ncclSuccess) {                                       \
			snprintf(err, errlen, "%s: %s", #call,                 \
				 nc.error_string(r_));                         \
			rc = GPU_FAIL;                                         \
			goto out;                                              \
		}                                                              \
	} while (0)

#define MAXG 64

extern "C" int gpu_nccl_allreduce(const int *devs, int ndevs, size_t bytes,
				  int warmup, int iters,
				  const struct gpu_sampling *smp,
				  double *samples_us, int *n, char *err,
				  size_t errlen)
{
	ncclComm_t comms[MAXG] = {};
	cudaStream_t streams[MAXG] = {};
	void *send[MAXG] = {}, *recv[MAXG] = {};
	size_t count = bytes / sizeof(float);
	int rc = GPU_OK, v = 0;
	bool have_comms = false;

	*n = 0;
	if (gpu_nccl_load(&v, err, errlen) != GPU_OK)
		return GPU_SKIP;
	if (ndevs < 2 || ndevs > MAXG) {
		snprintf(err, errlen, "all-reduce needs 2..%d GPUs (have %d)",
			 MAXG, ndevs);
		return GPU_SKIP;
	}
	for (int i = 0; i < ndevs; i++) {
		GPU_CHECK(cudaSetDevice(devs[i]));
		GPU_CHECK(cudaStreamCreateWithFlags(&streams[i],
						    cudaStreamNonBlocking));
		GPU_CHECK(cudaMalloc(&send[i], count * sizeof(float)));
		GPU_CHECK(cudaMalloc(&recv[i], count * sizeof(float)));
		GPU_CHECK(
		    gpu_fill_random_u32(send[i], count, 9u + i, streams[i]));
	}
	NC_CHECK(nc.init_all(comms, ndevs, devs));
	have_comms = true;
	{
		auto ops = [&](int l) -> int {
			for (int it = 0; it < l; it++) {
				ncclResult_t r = nc.group_start();
				for (int i = 0; r == ncclSuccess && i < ndevs;
				     i++)
					r = nc.all_reduce(
					    send[i], recv[i], count, ncclFloat,
					    ncclSum, comms[i], streams[i]);
				ncclResult_t r2 = nc.group_end();
				if (r == ncclSuccess)
					r = r2;
				if (r != ncclSuccess) {
					snprintf(err, errlen,
						 "ncclAllReduce: %s",
						 nc.error_string(r));
					return -1;
				}
			}
			for (int i = 0; i < ndevs; i++) {
				cudaError_t e;
				cudaSetDevice(devs[i]);
				e = cudaStreamSynchronize(streams[i]);
				if (e != cudaSuccess) {
					snprintf(err, errlen, "%s",
						 cudaGetErrorString(e));
					return -1;
				}
			}
			return 0;
		};
		if (ops(warmup > 0 ? warmup : 1) != 0) {
			rc = GPU_FAIL;
			goto out;
		}
		rc = gpu_run_samples(
		    smp, samples_us, n, [&](double *val) -> int {
			    double t0 = now_s();
			    if (ops(iters) != 0)
				    return -1;
			    *val = (now_s() - t0) * 1e6 / iters;
			    return 0;
		    });
	}
out:
	for (int i = 0; i < ndevs && i < MAXG; i++) {
		cudaSetDevice(devs[i]);
		if (streams[i])
			cudaStreamSynchronize(streams[i]);
		if (have_comms && comms[i])
			nc.destroy(comms[i]);
		cudaFree(send[i]);
		cudaFree(recv[i]);
		if (streams[i])
			cudaStreamDestroy(streams[i]);
	}
	return rc;
}

/* The C ABI between the plain-C probe and its CUDA code (gpu_*.cu).
 *
 * Every measurement returns GPU_OK and fills samples (one figure per
 * sample, in the unit named by the function), GPU_SKIP when it cannot run
 * here (not supported, library missing; err says why) or GPU_FAIL (err
 * says why). Timing: CUDA events around a batch of operations enqueued
 * behind a spin kernel, so enqueue cost is excluded (PROBE.md 8.1.3).
 */
#ifndef GPUSIZER_PROBE_GPU_H
#define GPUSIZER_PROBE_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum gpu_rc {
	GPU_OK = 0,
	GPU_SKIP = 1,
	GPU_FAIL = -1,
};

/* How many samples and how long each: at least min_samples, at most
 * max_samples, stop early once cv < cv_target (probe_samples_enough) and
 * min_seconds of samples have been taken. */
struct gpu_sampling {
	int min_samples;
	int max_samples;
	double cv_target;
	double sample_ms; /* target duration of one sample */
	int warmup_ops;
	double min_seconds; /* 0: no minimum duration */
	/* 1: samples run back to back without the spin gate, each about
	 * sample_ms of work timed by events around it (the stream stays
	 * full, no cap from the launch queue): for long loaded runs. */
	int sustained;
};

/* The timed window of a measurement: begin is called right before its
 * first timed sample, end right after its last (not around allocation,
 * algorithm search or verification), so telemetry covers the work that
 * the figures describe. Either may be NULL; the struct may be NULL. */
struct gpu_window {
	void (*begin)(void *arg);
	void (*end)(void *arg);
	void *arg;
};

struct gpu_info {
	char name[256];
	char uuid[96];	     /* "GPU-xxxxxxxx-xxxx-..." */
	char pci_bus_id[32]; /* lower case "0000:5d:00.0" */
	int cc_major, cc_minor;
	int64_t memory_total_bytes;
	int sm_count;
	int l2_bytes;
};

/* cudaGetDeviceCount. On failure returns -1 and writes the CUDA error
 * name (e.g. "cudaErrorNoDevice") and string. */
int gpu_device_count(int *count, char *errname, size_t namelen, char *msg,
		     size_t msglen);
void gpu_versions(int *driver, int *runtime);
int gpu_get_info(int dev, struct gpu_info *out, char *err, size_t errlen);

/* Loads the probe's own kernels on dev now. With lazy module loading
 * (the default since CUDA 12.2) a kernel's first launch loads its module
 * and may synchronise the context; behind the spin gate that waits until
 * the gate times out. nvbandwidth preloads its kernels for this reason. */
int gpu_preload(int dev, char *err, size_t errlen);

/* Device memory bandwidth, GB/s (bytes counted once per copy). Copies
 * are verified: checksums of source and destination must match. */
enum gpu_hbm_kind {
	GPU_HBM_COPY_SM,  /* own kernel, 16-B vector loads/stores */
	GPU_HBM_READ_SM,  /* own read-reduce kernel */
	GPU_HBM_WRITE_SM, /* own streaming-store kernel */
	GPU_HBM_COPY_CE,  /* cudaMemcpyAsync device to device */
};
int gpu_hbm(int dev, enum gpu_hbm_kind kind, size_t bytes,
	    const struct gpu_sampling *smp, const struct gpu_window *win,
	    double *samples, int *n, char *err, size_t errlen);

/* Host <-> device copies, GB/s. BIDIR reports the sum of both directions.
 * pageable: host memory not pinned, cudaMemcpy (synchronous). Host
 * buffers are placed on numa_node (-1: unknown, not bound) and the
 * calling thread should already run on the GPU's CPUs; note says where
 * the buffers ended up. Copies are verified by checksums. */
enum gpu_host_dir { GPU_H2D, GPU_D2H, GPU_BIDIR };
int gpu_host_copy(int dev, enum gpu_host_dir dir, int pinned, size_t bytes,
		  int numa_node, const struct gpu_sampling *smp,
		  const struct gpu_window *win, double *samples, int *n,
		  char *note, size_t notelen, char *err, size_t errlen);

/* Peer access: 1 when src can access dst, 0 when not, -1 on error. */
int gpu_can_access_peer(int src, int dst);
/* Enables peer access between all pairs of devs that support it. */
void gpu_enable_peers(const int *devs, int ndevs);

/* GPU -> GPU copy engine write (cudaMemcpyPeerAsync issued on src), GB/s;
 * bidir: both directions at once, the sum. Verified by checksums. */
int gpu_p2p_bw(int src, int dst, int bidir, size_t bytes,
	       const struct gpu_sampling *smp, const struct gpu_window *win,
	       double *samples, int *n, char *err, size_t errlen);

/* 16-byte cudaMemcpyPeerAsync latency in microseconds, one sample = mean
 * of 100 back-to-back copies. */
int gpu_p2p_latency(int src, int dst, const struct gpu_sampling *smp,
		    double *samples, int *n, char *err, size_t errlen);

/* cuBLASLt, loaded with dlopen. gpu_gemm_load returns GPU_OK with the
 * cuBLASLt version, or GPU_SKIP with the reason. */
int gpu_gemm_load(int *version, char *err, size_t errlen);

enum gpu_dtype {
	GPU_DT_BF16,
	GPU_DT_FP16,
	GPU_DT_FP8_E4M3,
	GPU_DT_TF32,
	GPU_DT_FP32,
	GPU_DT_FP64,
	GPU_DT_INT8,
};
/* GPU_OK when dev can run dt at all (compute capability), else GPU_SKIP
 * with the reason. */
int gpu_gemm_supported(int dev, enum gpu_dtype dt, char *err, size_t errlen);
/* TN GEMM m x n x k, best of up to max_algos heuristic algorithms; each
 * sample = TFLOP/s (TOP/s for int8) of a batch of back-to-back GEMMs.
 * Every candidate runs once outside the gate first (module loading), and
 * the result is spot-checked against a host reference afterwards.
 * algo_note gets a short description of the chosen algorithm. */
int gpu_gemm(int dev, enum gpu_dtype dt, int m, int n_, int k, int max_algos,
	     const struct gpu_sampling *smp, const struct gpu_window *win,
	     double *samples, int *n, char *algo_note, size_t notelen,
	     char *err, size_t errlen);

/* Keeps dev busy with FMA work for seconds (warm-up to steady state). */
int gpu_warmup(int dev, double seconds, char *err, size_t errlen);

/* NCCL, loaded with dlopen("libnccl.so.2"). */
int gpu_nccl_load(int *version, char *err, size_t errlen);

/* One communicator per GPU of devs in this process (ncclCommInitAll) and
 * send/receive buffers of max_bytes each, created once for every size
 * and collective measured on them. */
struct gpu_nccl;
int gpu_nccl_open(const int *devs, int ndevs, size_t max_bytes,
		  struct gpu_nccl **out, char *err, size_t errlen);
void gpu_nccl_close(struct gpu_nccl *h);

enum gpu_coll {
	GPU_COLL_ALL_REDUCE,	 /* in = out = bytes per rank */
	GPU_COLL_ALL_GATHER,	 /* out = bytes, in = bytes / nranks */
	GPU_COLL_REDUCE_SCATTER, /* in = bytes, out = bytes / nranks */
};
/* bytes is nccl-tests' S (PROBE.md 7): the all-reduce buffer, the
 * all-gather output, the reduce-scatter input. float, sum, out of place.
 * Each sample is the mean time per operation in microseconds over iters
 * operations (nccl-tests timing). Every batch has a deadline
 * (probe_nccl_deadline_s): past it the communicators are aborted
 * (ncclCommAbort) and this and every later call on h fail. The first
 * operation's result is checked against the host's sum of the inputs. */
int gpu_nccl_run(struct gpu_nccl *h, enum gpu_coll coll, size_t bytes,
		 int warmup, int iters, const struct gpu_sampling *smp,
		 const struct gpu_window *win, double *samples_us, int *n,
		 char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

/* What the measurements share (plain C): the run's context, result
 * helpers, telemetry windows, and the scheduler that runs the registry.
 * Each measurement lives in its own probe/m_*.c and sees only this.
 */
#ifndef GPUSIZER_PROBE_RUN_H
#define GPUSIZER_PROBE_RUN_H

#include <pthread.h>
#include <stddef.h>

#include "cli.h"
#include "gpu.h"
#include "limits.h"
#include "nvml.h"
#include "registry.h"
#include "report.h"

#define PROBE_MAXG	 PROBE_MAX_DEVICES
#define PROBE_MAXSAMPLES 64
#define PROBE_MiB	 ((size_t)1 << 20)
#define PROBE_GiB	 ((size_t)1 << 30)

struct probe_ctx {
	struct probe_cli cli;
	struct probe_report rep;
	struct probe_nvml *nvml;
	int ndev;
	int node_gpus; /* GPUs CUDA sees on the node, at most PROBE_MAXG */
	int devs[PROBE_MAXG];		  /* CUDA ordinals */
	struct gpu_info info[PROBE_MAXG]; /* by position in devs */
	void *nvdev[PROBE_MAXG];
	const struct probe_datasheet *ds[PROBE_MAXG];
	pthread_mutex_t mu; /* the report and the log */
	struct gpu_sampling smp;
	int gemm_lib_ok, nccl_lib_ok;
	int warmed; /* the all-GPU warm-up ran */
	/* The node's NCCL communicators, opened by the first collective
	 * and shared by every size and collective (m_nccl.c). */
	struct gpu_nccl *nccl;
	int nccl_opened, nccl_open_rc;
	char nccl_open_err[256];
	char gemm_lib_err[256], nccl_lib_err[256];
};

/* "probe: ..." on stderr, one line. */
void probe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A result for GPU position pos (-1: node-wide) with metric and unit. */
void probe_result_for(struct probe_ctx *c, struct probe_result *r, int pos,
		      const char *metric, const char *unit);
/* Sets the peer of a pair result. */
void probe_result_peer(struct probe_ctx *c, struct probe_result *r, int pos);

/* Status from a gpu_* return code (GPU_OK with samples: ok; GPU_SKIP:
 * skipped, not applicable; else failed with err), then stores it. */
void probe_finish(struct probe_ctx *c, struct probe_result *r, int rc,
		  const double *samples, int n, const char *err);
/* Stores a result whose status is set (ownership of its samples moves to
 * the report) and logs it. */
void probe_store(struct probe_ctx *c, struct probe_result *r);
/* Stores r as skipped: partial (the run is partial), lib_missing (a
 * library is absent). */
void probe_skip(struct probe_ctx *c, struct probe_result *r, int partial,
		int lib_missing, const char *reason);

/* 1 when GPU position pos is in MIG mode. */
int probe_mig_on(const struct probe_ctx *c, int pos);

/* Telemetry over a measurement's timed window (struct gpu_window): the
 * NVML sampler starts before its first timed sample and stops after the
 * last, into *out. */
struct probe_tel_window {
	struct probe_ctx *c;
	int pos[PROBE_MAXG];
	int n;
	struct probe_sampler *s;
	struct probe_telemetry *out;
};
struct gpu_window probe_tel_window(struct probe_tel_window *w,
				   struct probe_ctx *c, const int *pos, int n,
				   struct probe_telemetry *out);

/* Runs every measurement of tab selected by the CLI, in order. */
void probe_run_all(struct probe_ctx *c, const struct probe_measurement *tab,
		   size_t n);

/* GEMM limits of GPU pos for r->dtype: the datasheet peak, and the peak
 * at the SM clock in r->telemetry (m_gemm.c). */
void probe_gemm_limits(struct probe_ctx *c, int pos, struct probe_result *r);

/* The measurements (probe/m_*.c). */
void probe_run_gemm(struct probe_ctx *c, int pos);
void probe_run_hbm(struct probe_ctx *c, int pos);
void probe_run_host_copy(struct probe_ctx *c, int pos);
void probe_run_p2p_bw(struct probe_ctx *c, int pos);
void probe_run_p2p_latency(struct probe_ctx *c, int pos);
void probe_run_nccl_allreduce(struct probe_ctx *c, int pos);
void probe_run_nccl_allgather(struct probe_ctx *c, int pos);
void probe_run_nccl_reducescatter(struct probe_ctx *c, int pos);
void probe_run_nccl_latency(struct probe_ctx *c, int pos);
void probe_run_gemm_sustained(struct probe_ctx *c, int pos);

/* Fills the inventory (node and GPUs) of c->rep and c->info, c->nvdev,
 * c->ds for c->devs (inventory.c). */
void probe_inventory(struct probe_ctx *c);

#endif

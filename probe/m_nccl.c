/* nccl_allreduce, nccl_allgather, nccl_reducescatter, nccl_latency: NCCL
 * collectives over the node's GPUs (registry.h). Definitions as
 * nccl-tests (PROBE.md 7): S = the all-reduce buffer, the all-gather
 * output, the reduce-scatter input; algbw = S / t; busbw = algbw x
 * 2(n-1)/n (all-reduce) or (n-1)/n (all-gather, reduce-scatter). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "run.h"
#include "util.h"

/* A node-wide NCCL result. */
static void nccl_result(struct probe_ctx *c, struct probe_result *r,
			const char *metric, const char *unit, int nranks,
			int64_t size)
{
	probe_result_for(c, r, -1, metric, unit);
	probe_strlcpy(r->method, "nccl", sizeof(r->method));
	probe_strlcpy(r->dtype, "fp32", sizeof(r->dtype));
	r->nranks = nranks;
	r->size_bytes = size;
	r->concurrent = 1;
}

/* 1 when the collectives can run; else stores r skipped: the GPU count
 * first (one GPU has no collective to measure, with or without libnccl:
 * issue 14, defect 8), then MIG, then the library. */
static int nccl_applies(struct probe_ctx *c, struct probe_result *r)
{
	int i, any_mig = 0;

	for (i = 0; i < c->ndev; i++)
		any_mig |= probe_mig_on(c, i);
	switch (
	    probe_nccl_plan(c->ndev, c->node_gpus, any_mig, c->nccl_lib_ok)) {
	case PROBE_NCCL_ONE_GPU:
		probe_skip(c, r, 0, 0,
			   "one GPU: no collective to measure (NCCL not "
			   "applicable)");
		return 0;
	case PROBE_NCCL_SUBSET: {
		char why[160];

		snprintf(why, sizeof(why),
			 "--devices selects %d of the node's %d GPUs: the "
			 "node's collectives are measured over all of them "
			 "(run without --devices)",
			 c->ndev, c->node_gpus);
		probe_skip(c, r, 0, 0, why);
		return 0;
	}
	case PROBE_NCCL_MIG:
		probe_skip(c, r, 0, 0, "MIG mode enabled");
		return 0;
	case PROBE_NCCL_NO_LIBRARY:
		probe_skip(c, r, 1, 1, c->nccl_lib_err);
		return 0;
	case PROBE_NCCL_RUN:
		break;
	}
	return 1;
}

/* The largest size the GPUs' memory allows for send + receive buffers
 * (a quarter of the smallest GPU's memory each at most). */
static size_t max_size(const struct probe_ctx *c)
{
	size_t maxb = 8 * PROBE_GiB;
	int i;

	for (i = 0; i < c->ndev; i++)
		if (c->info[i].memory_total_bytes > 0 &&
		    (size_t)c->info[i].memory_total_bytes / 4 < maxb)
			maxb = (size_t)c->info[i].memory_total_bytes / 4;
	return maxb;
}

/* The node's communicators and buffers, opened once for every size and
 * collective (closed by probe_run_all), with buffers for the largest size
 * of the mode. GPU_OK or the open's code with its reason in err. */
static int shared_comms(struct probe_ctx *c, size_t largest, char *err,
			size_t errlen)
{
	if (!c->nccl_opened) {
		c->nccl_opened = 1;
		c->nccl_open_rc =
		    gpu_nccl_open(c->devs, c->ndev, largest, &c->nccl,
				  c->nccl_open_err, sizeof(c->nccl_open_err));
	}
	if (c->nccl_open_rc != GPU_OK)
		snprintf(err, errlen, "%s", c->nccl_open_err);
	return c->nccl_open_rc;
}

static void bus_limit(struct probe_ctx *c, struct probe_result *r)
{
	double lim = INFINITY;
	const char *basis = "nvml_nvlink";
	int i;

	for (i = 0; i < c->ndev; i++) {
		double l = c->rep.gpus[i].nvlink_limit_gbps;
		if (!isfinite(l)) {
			basis = "nvml_pcie";
			break;
		}
		lim = fmin(lim, l);
	}
	if (strcmp(basis, "nvml_pcie") == 0) {
		lim = INFINITY;
		for (i = 0; i < c->ndev; i++)
			lim = fmin(lim, c->rep.gpus[i].pcie_limit_gbps);
	}
	if (!isfinite(lim))
		return;
	r->limit = lim;
	probe_strlcpy(r->limit_basis, basis, sizeof(r->limit_basis));
	snprintf(r->limit_source, sizeof(r->limit_source),
		 "%s per-direction line rate of the slowest GPU (NVLS/CollNet "
		 "can exceed it)",
		 strcmp(basis, "nvml_pcie") ? "NVLink" : "PCIe");
}

/* Bus and algorithm bandwidth of coll against message size over all
 * GPUs. */
static void run_bandwidth(struct probe_ctx *c, enum gpu_coll coll,
			  enum probe_collective kind, const char *busbw_metric,
			  const char *algbw_metric)
{
	size_t sizes[PROBE_NCCL_MAX_SIZES], nsizes, s;
	int all[PROBE_MAXG], i, rc;
	double factor = probe_busbw_factor(kind, c->ndev);
	struct gpu_sampling smp = c->smp;
	struct probe_result rb, ra;
	char err[512] = "";

	nccl_result(c, &rb, busbw_metric, "GB/s", c->ndev, -1);
	if (!nccl_applies(c, &rb))
		return;
	nsizes = probe_nccl_sizes(c->cli.quick, max_size(c), sizes,
				  PROBE_NCCL_MAX_SIZES);
	if (nsizes == 0) {
		probe_skip(c, &rb, 1, 0,
			   "GPU memory too small for the smallest size");
		return;
	}
	rc = shared_comms(c, sizes[nsizes - 1], err, sizeof(err));
	if (rc != GPU_OK) {
		if (rc == GPU_SKIP)
			probe_skip(c, &rb, 1, 0, err);
		else
			probe_finish(c, &rb, rc, NULL, 0, err);
		return;
	}
	for (i = 0; i < c->ndev; i++)
		all[i] = i;
	smp.min_samples = 3;
	smp.max_samples = c->cli.quick ? 3 : 5;
	for (s = 0; s < nsizes; s++) {
		double t_us[PROBE_MAXSAMPLES], algbw[PROBE_MAXSAMPLES];
		double busbw[PROBE_MAXSAMPLES];
		int n = 0, j;
		struct probe_telemetry t;
		struct probe_tel_window tw;
		struct gpu_window win;

		nccl_result(c, &rb, busbw_metric, "GB/s", c->ndev,
			    (int64_t)sizes[s]);
		nccl_result(c, &ra, algbw_metric, "GB/s", c->ndev,
			    (int64_t)sizes[s]);
		bus_limit(c, &rb);
		probe_telemetry_aggregate(NULL, 0, &t);
		win = probe_tel_window(&tw, c, all, c->ndev, &t);
		err[0] = '\0';
		rc = gpu_nccl_run(c->nccl, coll, sizes[s], 5, 20, &smp, &win,
				  t_us, &n, err, sizeof(err));
		for (j = 0; j < n; j++) {
			algbw[j] =
			    probe_algbw_gbps((double)sizes[s], t_us[j] * 1e-6);
			busbw[j] = algbw[j] * factor;
		}
		rb.telemetry = t;
		ra.telemetry = t;
		probe_finish(c, &rb, rc, busbw, n, err);
		probe_finish(c, &ra, rc, algbw, n, err);
		if (rc != GPU_OK)
			break;
	}
}

void probe_run_nccl_allreduce(struct probe_ctx *c, int pos)
{
	(void)pos;
	run_bandwidth(c, GPU_COLL_ALL_REDUCE, PROBE_COLL_ALL_REDUCE,
		      "nccl_allreduce_busbw_gbps", "nccl_allreduce_algbw_gbps");
}

/* What FSDP and ZeRO run: parameters gathered, gradients reduce-scattered. */
void probe_run_nccl_allgather(struct probe_ctx *c, int pos)
{
	(void)pos;
	run_bandwidth(c, GPU_COLL_ALL_GATHER, PROBE_COLL_ALL_GATHER,
		      "nccl_allgather_busbw_gbps", "nccl_allgather_algbw_gbps");
}

void probe_run_nccl_reducescatter(struct probe_ctx *c, int pos)
{
	(void)pos;
	run_bandwidth(c, GPU_COLL_REDUCE_SCATTER, PROBE_COLL_REDUCE_SCATTER,
		      "nccl_reducescatter_busbw_gbps",
		      "nccl_reducescatter_algbw_gbps");
}

/* All-reduce latency: the mean time of an 8-byte all-reduce (nccl-tests'
 * smallest default size) over the first 2, 4, 8 ... GPUs, with
 * communicators of their own. */
void probe_run_nccl_latency(struct probe_ctx *c, int pos)
{
	int ranks[8], nr, k;
	struct gpu_sampling smp = c->smp;
	struct probe_result r;

	(void)pos;
	nccl_result(c, &r, "nccl_allreduce_latency_us", "us", c->ndev,
		    PROBE_NCCL_LATENCY_BYTES);
	if (!nccl_applies(c, &r))
		return;
	nr = probe_nccl_rank_counts(c->ndev, ranks, 8);
	smp.min_samples = 5;
	smp.max_samples = c->cli.quick ? 5 : 10;
	for (k = 0; k < nr; k++) {
		double t_us[PROBE_MAXSAMPLES];
		char err[512] = "";
		int n = 0, rc, all[PROBE_MAXG], i;
		struct gpu_nccl *h = NULL;
		struct probe_tel_window tw;
		struct gpu_window win;

		nccl_result(c, &r, "nccl_allreduce_latency_us", "us", ranks[k],
			    PROBE_NCCL_LATENCY_BYTES);
		snprintf(r.note, sizeof(r.note),
			 "GPUs %d..%d; mean of 100 back-to-back operations",
			 c->devs[0], c->devs[ranks[k] - 1]);
		for (i = 0; i < ranks[k]; i++)
			all[i] = i;
		rc = gpu_nccl_open(c->devs, ranks[k], PROBE_NCCL_LATENCY_BYTES,
				   &h, err, sizeof(err));
		if (rc == GPU_OK) {
			win = probe_tel_window(&tw, c, all, ranks[k],
					       &r.telemetry);
			rc = gpu_nccl_run(
			    h, GPU_COLL_ALL_REDUCE, PROBE_NCCL_LATENCY_BYTES,
			    20, 100, &smp, &win, t_us, &n, err, sizeof(err));
		}
		gpu_nccl_close(h);
		probe_finish(c, &r, rc, t_us, n, err);
	}
}

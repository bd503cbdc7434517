/* nccl_*: NCCL collectives over the node's GPUs (registry.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "run.h"
#include "util.h"

void probe_run_nccl_allreduce(struct probe_ctx *c, int pos)
{
	size_t sizes[16], nsizes = 0, s, maxb = 8 * PROBE_GiB;
	int i, all[PROBE_MAXG], any_mig = 0, rc;
	double factor = probe_busbw_factor(PROBE_COLL_ALL_REDUCE, c->ndev);
	double lim = INFINITY;
	const char *basis = "nvml_nvlink";
	struct gpu_sampling smp = c->smp;
	struct gpu_nccl *h = NULL;
	struct probe_result rb, ra;
	char err[512] = "";

	(void)pos;
	probe_result_for(c, &rb, -1, "nccl_allreduce_busbw_gbps", "GB/s");
	probe_strlcpy(rb.method, "nccl", sizeof(rb.method));
	probe_strlcpy(rb.dtype, "fp32", sizeof(rb.dtype));
	rb.nranks = c->ndev;
	rb.concurrent = 1;
	for (i = 0; i < c->ndev; i++)
		any_mig |= probe_mig_on(c, i);
	/* The GPU count first: one GPU has no collective to measure, with
	 * or without libnccl (issue 14, defect 8). */
	switch (probe_nccl_plan(c->ndev, any_mig, c->nccl_lib_ok)) {
	case PROBE_NCCL_ONE_GPU:
		probe_skip(c, &rb, 0, 0,
			   "one GPU: no collective to measure (NCCL not "
			   "applicable)");
		return;
	case PROBE_NCCL_MIG:
		probe_skip(c, &rb, 0, 0, "MIG mode enabled");
		return;
	case PROBE_NCCL_NO_LIBRARY:
		probe_skip(c, &rb, 1, 1, c->nccl_lib_err);
		return;
	case PROBE_NCCL_RUN:
		break;
	}
	for (i = 0; i < c->ndev; i++) {
		all[i] = i;
		if (c->info[i].memory_total_bytes > 0 &&
		    (size_t)c->info[i].memory_total_bytes / 4 < maxb)
			maxb = (size_t)c->info[i].memory_total_bytes / 4;
	}
	if (c->cli.quick) {
		sizes[nsizes++] = 64 * PROBE_MiB;
		sizes[nsizes++] = 1 * PROBE_GiB;
	} else {
		for (s = 8 * PROBE_MiB; s <= 8 * PROBE_GiB; s *= 2)
			sizes[nsizes++] = s;
	}
	while (nsizes > 0 && sizes[nsizes - 1] > maxb)
		nsizes--;
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
	smp.min_samples = 3;
	smp.max_samples = c->cli.quick ? 3 : 5;
	/* One set of communicators and buffers for every size. */
	rc = nsizes ? gpu_nccl_open(c->devs, c->ndev, sizes[nsizes - 1], &h,
				    err, sizeof(err))
		    : GPU_SKIP;
	if (rc != GPU_OK) {
		if (nsizes == 0)
			snprintf(err, sizeof(err),
				 "GPU memory too small for the smallest size");
		if (rc == GPU_SKIP)
			probe_skip(c, &rb, 1, 0, err);
		else
			probe_finish(c, &rb, rc, NULL, 0, err);
		return;
	}
	for (s = 0; s < nsizes; s++) {
		double t_us[PROBE_MAXSAMPLES], algbw[PROBE_MAXSAMPLES],
		    busbw[PROBE_MAXSAMPLES];
		int n = 0, j, k;
		struct probe_telemetry t;
		struct probe_tel_window tw;
		struct gpu_window win;

		probe_result_for(c, &rb, -1, "nccl_allreduce_busbw_gbps",
				 "GB/s");
		probe_result_for(c, &ra, -1, "nccl_allreduce_algbw_gbps",
				 "GB/s");
		for (k = 0; k < 2; k++) {
			struct probe_result *r = k ? &ra : &rb;
			probe_strlcpy(r->method, "nccl", sizeof(r->method));
			probe_strlcpy(r->dtype, "fp32", sizeof(r->dtype));
			r->size_bytes = (int64_t)sizes[s];
			r->nranks = c->ndev;
			r->concurrent = 1;
		}
		if (isfinite(lim)) {
			rb.limit = lim;
			probe_strlcpy(rb.limit_basis, basis,
				      sizeof(rb.limit_basis));
			snprintf(rb.limit_source, sizeof(rb.limit_source),
				 "%s per-direction line rate of the slowest "
				 "GPU (NVLS/CollNet can exceed it)",
				 strcmp(basis, "nvml_pcie") ? "NVLink"
							    : "PCIe");
		}
		win = probe_tel_window(&tw, c, all, c->ndev, &t);
		probe_telemetry_aggregate(NULL, 0, &t);
		err[0] = '\0';
		rc = gpu_nccl_run(h, GPU_COLL_ALL_REDUCE, sizes[s], 5, 20, &smp,
				  &win, t_us, &n, err, sizeof(err));
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
	gpu_nccl_close(h);
}

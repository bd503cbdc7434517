/* host_copy: host <-> device copies per GPU, one GPU at a time
 * (registry.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numa.h"
#include "policy.h"
#include "run.h"
#include "util.h"

static void pcie_limit(struct probe_ctx *c, int pos, struct probe_result *r,
		       double mult)
{
	const struct probe_gpu *g = &c->rep.gpus[pos];

	if (!isfinite(g->pcie_limit_gbps))
		return;
	r->limit = g->pcie_limit_gbps * mult;
	probe_strlcpy(r->limit_basis, "nvml_pcie", sizeof(r->limit_basis));
	snprintf(r->limit_source, sizeof(r->limit_source),
		 "PCIe Gen%d x%d (NVML max) %.2f GB/s per direction%s",
		 g->pcie_gen_max, g->pcie_width_max, g->pcie_limit_gbps,
		 mult > 1 ? " x 2 directions" : "");
}

void probe_run_host_copy(struct probe_ctx *c, int pos)
{
	static const struct {
		enum gpu_host_dir dir;
		int pinned;
		const char *metric, *conv;
	} kinds[] = {
	    {GPU_H2D, 1, "h2d_pinned_gbps", "once"},
	    {GPU_D2H, 1, "d2h_pinned_gbps", "once"},
	    {GPU_BIDIR, 1, "bidir_pinned_gbps", "sum"},
	    {GPU_H2D, 0, "h2d_pageable_gbps", "once"},
	    {GPU_D2H, 0, "d2h_pageable_gbps", "once"},
	};
	size_t i;

	{
		struct probe_cpuset saved;
		char why[256];
		int bound =
		    probe_thread_bind_near("/sys", c->info[pos].pci_bus_id,
					   &saved, why, sizeof(why)) == 0;

		/* The thread and the host buffers on the GPU's NUMA node,
		 * as nvbandwidth does (issue 14, defect 5). */
		if (!bound)
			probe_log(
			    "gpu %d: host copies not bound to the GPU's CPUs "
			    "(%s)",
			    c->devs[pos], why);
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			double samples[PROBE_MAXSAMPLES];
			char err[512] = "";
			int n = 0, rc;
			struct probe_result r;
			struct probe_tel_window tw;
			struct gpu_window win;
			size_t bytes =
			    kinds[i].pinned
				? (c->cli.quick ? 256 : 512) * PROBE_MiB
				: (c->cli.quick ? 128 : 512) * PROBE_MiB;

			probe_result_for(c, &r, pos, kinds[i].metric, "GB/s");
			probe_strlcpy(r.method, "ce", sizeof(r.method));
			if (!kinds[i].pinned)
				probe_strlcpy(r.method, "memcpy",
					      sizeof(r.method));
			probe_strlcpy(r.bytes_convention, kinds[i].conv,
				      sizeof(r.bytes_convention));
			r.size_bytes = (int64_t)bytes;
			pcie_limit(c, pos, &r,
				   kinds[i].dir == GPU_BIDIR ? 2.0 : 1.0);
			win = probe_tel_window(&tw, c, &pos, 1, &r.telemetry);
			rc = gpu_host_copy(
			    c->devs[pos], kinds[i].dir, kinds[i].pinned, bytes,
			    c->rep.gpus[pos].numa_node, &c->smp, &win, samples,
			    &n, r.note, sizeof(r.note), err, sizeof(err));
			probe_finish(c, &r, rc, samples, n, err);
		}
		if (bound)
			probe_thread_restore(&saved);
	}
}

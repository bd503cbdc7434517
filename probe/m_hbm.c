/* hbm: device memory bandwidth per GPU (registry.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "run.h"
#include "util.h"

void probe_run_hbm(struct probe_ctx *c, int pos)
{
	static const struct {
		enum gpu_hbm_kind kind;
		const char *metric, *method;
		int half;
	} kinds[] = {
	    {GPU_HBM_COPY_SM, "hbm_copy_gbps", "sm", 1},
	    {GPU_HBM_READ_SM, "hbm_read_gbps", "sm", 0},
	    {GPU_HBM_WRITE_SM, "hbm_write_gbps", "sm", 0},
	    {GPU_HBM_COPY_CE, "hbm_copy_ce_gbps", "ce", 1},
	};
	size_t bytes = c->cli.quick ? 512 * PROBE_MiB : 2 * PROBE_GiB;
	size_t i;

	if (c->info[pos].memory_total_bytes > 0 &&
	    bytes > (size_t)c->info[pos].memory_total_bytes / 8)
		bytes = (size_t)c->info[pos].memory_total_bytes / 8;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double samples[PROBE_MAXSAMPLES];
		char err[512] = "";
		int n = 0, rc;
		struct probe_result r;
		struct probe_tel_window tw;
		struct gpu_window win;

		probe_result_for(c, &r, pos, kinds[i].metric, "GB/s");
		probe_strlcpy(r.method, kinds[i].method, sizeof(r.method));
		probe_strlcpy(r.bytes_convention, "once",
			      sizeof(r.bytes_convention));
		r.size_bytes = (int64_t)bytes;
		r.concurrent = !c->cli.isolated && c->ndev > 1;
		if (c->ds[pos] && isfinite(c->ds[pos]->hbm_gbps)) {
			r.limit =
			    c->ds[pos]->hbm_gbps / (kinds[i].half ? 2.0 : 1.0);
			probe_strlcpy(r.limit_basis, "datasheet",
				      sizeof(r.limit_basis));
			snprintf(r.limit_source, sizeof(r.limit_source),
				 "datasheet %s HBM %.0f GB/s%s",
				 c->ds[pos]->name, c->ds[pos]->hbm_gbps,
				 kinds[i].half ? " / 2 (a copy reads and "
						 "writes each byte)"
					       : "");
		}
		win = probe_tel_window(&tw, c, &pos, 1, &r.telemetry);
		rc = gpu_hbm(c->devs[pos], kinds[i].kind, bytes, &c->smp, &win,
			     samples, &n, err, sizeof(err));
		probe_finish(c, &r, rc, samples, n, err);
	}
}

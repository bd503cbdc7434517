/* p2p_bw, p2p_latency: GPU -> GPU copies for every pair (registry.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "run.h"
#include "util.h"

static void p2p_limit(struct probe_ctx *c, int a, int b, int peer_ok,
		      struct probe_result *r, double mult)
{
	const struct probe_gpu *ga = &c->rep.gpus[a], *gb = &c->rep.gpus[b];
	double lim;

	if (peer_ok && isfinite(ga->nvlink_limit_gbps) &&
	    isfinite(gb->nvlink_limit_gbps)) {
		lim = fmin(ga->nvlink_limit_gbps, gb->nvlink_limit_gbps);
		r->limit = lim * mult;
		probe_strlcpy(r->limit_basis, "nvml_nvlink",
			      sizeof(r->limit_basis));
		snprintf(r->limit_source, sizeof(r->limit_source),
			 "NVLink %d active links x %.0f GB/s per direction "
			 "(NVML)%s",
			 ga->nvlink_active_links, ga->nvlink_per_link_gbps,
			 mult > 1 ? " x 2 directions" : "");
		return;
	}
	if (isfinite(ga->pcie_limit_gbps) && isfinite(gb->pcie_limit_gbps)) {
		lim = fmin(ga->pcie_limit_gbps, gb->pcie_limit_gbps);
		r->limit = lim * mult;
		probe_strlcpy(r->limit_basis, "nvml_pcie",
			      sizeof(r->limit_basis));
		snprintf(r->limit_source, sizeof(r->limit_source),
			 "PCIe %.2f GB/s per direction (NVML, slower of the "
			 "pair)%s",
			 lim, mult > 1 ? " x 2 directions" : "");
	}
}

/* 1 when the pair can be measured; else stores r skipped (one GPU: no
 * pair at all is handled by the callers). */
static int pair_ok(struct probe_ctx *c, int a, int b, struct probe_result *r)
{
	if (probe_mig_on(c, a) || probe_mig_on(c, b)) {
		probe_skip(c, r, 0, 0, "MIG mode enabled");
		return 0;
	}
	return 1;
}

static int one_gpu(struct probe_ctx *c, const char *metric, const char *unit)
{
	struct probe_result r;

	if (c->ndev >= 2)
		return 0;
	probe_result_for(c, &r, 0, metric, unit);
	probe_skip(c, &r, 0, 0, "only one GPU: no peer to measure");
	return 1;
}

void probe_run_p2p_bw(struct probe_ctx *c, int pos)
{
	size_t bytes = (c->cli.quick ? 256 : 512) * PROBE_MiB;
	int a, b, bidir;

	(void)pos;
	if (one_gpu(c, "p2p_unidir_gbps", "GB/s"))
		return;
	gpu_enable_peers(c->devs, c->ndev);
	for (a = 0; a < c->ndev; a++) {
		for (b = 0; b < c->ndev; b++) {
			int peer_ok;

			if (a == b)
				continue;
			peer_ok =
			    gpu_can_access_peer(c->devs[a], c->devs[b]) == 1;
			for (bidir = 0; bidir < 2; bidir++) {
				double samples[PROBE_MAXSAMPLES];
				char err[512] = "";
				int n = 0, rc, pp[2] = {a, b};
				struct probe_result r;
				struct probe_tel_window tw;
				struct gpu_window win;

				if (bidir && b < a)
					continue; /* one per unordered pair */
				probe_result_for(c, &r, a,
						 bidir ? "p2p_bidir_gbps"
						       : "p2p_unidir_gbps",
						 "GB/s");
				probe_result_peer(c, &r, b);
				probe_strlcpy(r.method, "ce", sizeof(r.method));
				probe_strlcpy(r.bytes_convention,
					      bidir ? "sum" : "once",
					      sizeof(r.bytes_convention));
				r.size_bytes = (int64_t)bytes;
				if (!peer_ok)
					probe_strlcpy(r.note,
						      "no peer access: staged "
						      "through host memory",
						      sizeof(r.note));
				if (!pair_ok(c, a, b, &r))
					continue;
				p2p_limit(c, a, b, peer_ok, &r,
					  bidir ? 2.0 : 1.0);
				win = probe_tel_window(&tw, c, pp, 2,
						       &r.telemetry);
				rc = gpu_p2p_bw(c->devs[a], c->devs[b], bidir,
						bytes, &c->smp, &win, samples,
						&n, err, sizeof(err));
				probe_finish(c, &r, rc, samples, n, err);
			}
		}
	}
}

void probe_run_p2p_latency(struct probe_ctx *c, int pos)
{
	int a, b;

	(void)pos;
	if (one_gpu(c, "p2p_latency_us", "us"))
		return;
	gpu_enable_peers(c->devs, c->ndev);
	for (a = 0; a < c->ndev; a++) {
		for (b = 0; b < c->ndev; b++) {
			double samples[PROBE_MAXSAMPLES];
			char err[512] = "";
			int n = 0, rc;
			struct probe_result r;

			if (a == b)
				continue;
			probe_result_for(c, &r, a, "p2p_latency_us", "us");
			probe_result_peer(c, &r, b);
			probe_strlcpy(r.method, "ce", sizeof(r.method));
			r.size_bytes = 16;
			if (!pair_ok(c, a, b, &r))
				continue;
			rc = gpu_p2p_latency(c->devs[a], c->devs[b], &c->smp,
					     samples, &n, err, sizeof(err));
			probe_finish(c, &r, rc, samples, n, err);
		}
	}
}

/* gpusizer-probe: measures a GPU node and reports to gpusizer.
 * See docs/PROBE.md (method, report format, CLI, exit codes). */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gpu.h"
#include "limits.h"
#include "numa.h"
#include "nvml.h"
#include "policy.h"
#include "post.h"
#include "report.h"
#include "spool.h"
#include "status.h"
#include "util.h"

#define MAXG	   PROBE_MAX_DEVICES
#define MAXSAMPLES 64
#define MiB	   ((size_t)1 << 20)
#define GiB	   ((size_t)1 << 30)

struct ctx {
	struct probe_cli cli;
	struct probe_report rep;
	struct probe_nvml *nvml;
	int ndev;
	int devs[MAXG];		    /* CUDA ordinals */
	struct gpu_info info[MAXG]; /* by position in devs */
	void *nvdev[MAXG];
	const struct probe_datasheet *ds[MAXG];
	pthread_mutex_t mu;
	struct gpu_sampling smp;
	int gemm_lib_ok, nccl_lib_ok;
	char gemm_lib_err[256], nccl_lib_err[256];
};

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("probe: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void now_rfc3339(char *out, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	probe_rfc3339_utc(&ts, out, len);
}

/* Telemetry over the given GPUs (positions in c->devs) while fn runs. */
static struct probe_sampler *tel_start(struct ctx *c, const int *pos, int n)
{
	void *devs[MAXG];
	int i;

	for (i = 0; i < n; i++)
		devs[i] = c->nvdev[pos[i]];
	return probe_sampler_start(c->nvml, devs, (size_t)n, 100);
}

/* Telemetry over the timed window of a measurement (struct gpu_window):
 * the sampler starts right before the first timed sample and stops after
 * the last, into *out. */
struct tel_window {
	struct ctx *c;
	int pos[MAXG];
	int n;
	struct probe_sampler *s;
	struct probe_telemetry *out;
};

static void tel_begin(void *arg)
{
	struct tel_window *w = arg;

	w->s = tel_start(w->c, w->pos, w->n);
}

static void tel_end(void *arg)
{
	struct tel_window *w = arg;

	probe_sampler_stop(w->s, w->out);
	w->s = NULL;
}

static struct gpu_window tel_window(struct tel_window *w, struct ctx *c,
				    const int *pos, int n,
				    struct probe_telemetry *out)
{
	struct gpu_window g = {tel_begin, tel_end, w};

	memset(w, 0, sizeof(*w));
	w->c = c;
	w->n = n;
	memcpy(w->pos, pos, (size_t)n * sizeof(*pos));
	w->out = out;
	return g;
}

static void result_for_gpu(struct ctx *c, struct probe_result *r, int pos,
			   const char *metric, const char *unit)
{
	probe_result_init(r);
	if (pos >= 0) {
		r->gpu_index = c->devs[pos];
		probe_strlcpy(r->gpu_uuid, c->info[pos].uuid,
			      sizeof(r->gpu_uuid));
	}
	probe_strlcpy(r->metric, metric, sizeof(r->metric));
	probe_strlcpy(r->unit, unit, sizeof(r->unit));
}

static void set_peer(struct ctx *c, struct probe_result *r, int pos)
{
	r->peer_index = c->devs[pos];
	probe_strlcpy(r->peer_uuid, c->info[pos].uuid, sizeof(r->peer_uuid));
}

/* Status from a gpu_* return code; stores the result. Returns its index,
 * or -1. */
static long finish(struct ctx *c, struct probe_result *r, int rc,
		   const double *samples, int n, const char *err)
{
	long idx = -1;

	if (rc == GPU_OK && n > 0) {
		if (probe_result_set_samples(r, samples, (size_t)n) != 0)
			probe_result_fail(r, "could not compute statistics");
	} else if (rc == GPU_SKIP) {
		probe_result_skip(r, 0, "%s", err);
	} else {
		probe_result_fail(r, "%s", err[0] ? err : "measurement failed");
	}
	pthread_mutex_lock(&c->mu);
	if (r->status == PROBE_RESULT_OK) {
		char peer[24] = "";
		if (r->peer_index >= 0)
			snprintf(peer, sizeof(peer), " -> %d", r->peer_index);
		logf_("%s%s%s gpu %d%s: median %.4g %s (n=%d)", r->metric,
		      r->dtype[0] ? " " : "", r->dtype, r->gpu_index, peer,
		      r->stats.median, r->unit, r->stats.n);
	} else
		logf_("%s%s%s gpu %d: %s: %s", r->metric,
		      r->dtype[0] ? " " : "", r->dtype, r->gpu_index,
		      probe_result_status_name(r->status), r->reason);
	if (probe_report_add(&c->rep, r) == NULL)
		logf_("out of memory storing a result");
	else
		idx = (long)c->rep.n_results - 1;
	pthread_mutex_unlock(&c->mu);
	return idx;
}

/* Stores a result whose status is set, and logs it. */
static void finish_result(struct ctx *c, struct probe_result *r)
{
	pthread_mutex_lock(&c->mu);
	if (r->status == PROBE_RESULT_OK)
		logf_("%s%s%s gpu %d: median %.4g %s (n=%d)", r->metric,
		      r->dtype[0] ? " " : "", r->dtype, r->gpu_index,
		      r->stats.median, r->unit, r->stats.n);
	else
		logf_("%s%s%s gpu %d: %s: %s", r->metric,
		      r->dtype[0] ? " " : "", r->dtype, r->gpu_index,
		      probe_result_status_name(r->status), r->reason);
	if (probe_report_add(&c->rep, r) == NULL) {
		logf_("out of memory storing a result");
		free(r->samples);
		r->samples = NULL;
	}
	pthread_mutex_unlock(&c->mu);
}

static void add_skipped(struct ctx *c, struct probe_result *r, int partial,
			int lib_missing, const char *reason)
{
	probe_result_skip(r, partial, "%s", reason);
	r->lib_missing = lib_missing;
	pthread_mutex_lock(&c->mu);
	logf_("%s%s%s gpu %d: skipped: %s", r->metric, r->dtype[0] ? " " : "",
	      r->dtype, r->gpu_index, reason);
	probe_report_add(&c->rep, r);
	pthread_mutex_unlock(&c->mu);
}

/* ---- GEMM ---------------------------------------------------------- */

struct shape {
	int m, n, k;
};

struct dtype_plan {
	enum gpu_dtype dt;
	const char *name;
	const char *unit;
	const struct shape *shapes;
	int nshapes;
};

static const struct shape big_full[] = {
    {8192, 8192, 8192},
    {4096, 4096, 16384},
    {2048, 2048, 13312},
    {16384, 8192, 8192},
};
static const struct shape tf32_full[] = {{8192, 8192, 8192},
					 {4096, 4096, 4096}};
static const struct shape cube8k[] = {{8192, 8192, 8192}};
static const struct shape cube4k[] = {{4096, 4096, 4096}};

static void gemm_plan(int quick, struct dtype_plan *p)
{
	const struct dtype_plan full[7] = {
	    {GPU_DT_BF16, "bf16", "TFLOP/s", big_full, 4},
	    {GPU_DT_FP16, "fp16", "TFLOP/s", big_full, 4},
	    {GPU_DT_FP8_E4M3, "fp8_e4m3", "TFLOP/s", big_full, 4},
	    {GPU_DT_TF32, "tf32", "TFLOP/s", tf32_full, 2},
	    {GPU_DT_FP32, "fp32", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP64, "fp64", "TFLOP/s", cube8k, 1},
	    {GPU_DT_INT8, "int8", "TOP/s", big_full, 4},
	};
	const struct dtype_plan q[7] = {
	    {GPU_DT_BF16, "bf16", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP16, "fp16", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP8_E4M3, "fp8_e4m3", "TFLOP/s", cube8k, 1},
	    {GPU_DT_TF32, "tf32", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP32, "fp32", "TFLOP/s", cube4k, 1},
	    {GPU_DT_FP64, "fp64", "TFLOP/s", cube4k, 1},
	    {GPU_DT_INT8, "int8", "TOP/s", cube8k, 1},
	};
	memcpy(p, quick ? q : full, sizeof(full));
}

static void gemm_limits(struct ctx *c, int pos, struct probe_result *r)
{
	const struct probe_datasheet *d = c->ds[pos];
	double spec = probe_datasheet_gemm(d, r->dtype);

	if (!isfinite(spec))
		return;
	r->limit = spec;
	probe_strlcpy(r->limit_basis, "datasheet", sizeof(r->limit_basis));
	snprintf(r->limit_source, sizeof(r->limit_source),
		 "datasheet %s dense %s at %.0f MHz", d->name, r->dtype,
		 d->spec_clock_mhz);
	if (r->telemetry.valid)
		r->limit_clock_adjusted = probe_clock_adjusted(
		    spec, r->telemetry.sm_clock_mhz, d->spec_clock_mhz);
}

static void run_gemm(struct ctx *c, int pos)
{
	struct dtype_plan plan[7];
	int di, si;
	int max_algos = c->cli.quick ? 4 : 16;

	gemm_plan(c->cli.quick, plan);
	for (di = 0; di < 7; di++) {
		struct probe_result sweep[8], sum, r;
		char err[512] = "";
		int nsweep = 0;

		result_for_gpu(c, &r, pos, "gemm_tflops", plan[di].unit);
		probe_strlcpy(r.dtype, plan[di].name, sizeof(r.dtype));
		probe_strlcpy(r.method, "cublaslt", sizeof(r.method));
		r.concurrent = !c->cli.isolated && c->ndev > 1;
		if (!c->gemm_lib_ok) {
			add_skipped(c, &r, 1, 1, c->gemm_lib_err);
			continue;
		}
		/* Not applicable (compute capability): one summary says so. */
		if (gpu_gemm_supported(c->devs[pos], plan[di].dt, err,
				       sizeof(err)) != GPU_OK) {
			add_skipped(c, &r, 0, 0, err);
			continue;
		}
		for (si = 0; si < plan[di].nshapes; si++) {
			const struct shape *s = &plan[di].shapes[si];
			double samples[MAXSAMPLES];
			char note[160] = "";
			int n = 0, rc;
			struct probe_result *x = &sweep[nsweep++];
			struct tel_window tw;
			struct gpu_window win;

			*x = r;
			probe_strlcpy(x->metric, "gemm_sweep_tflops",
				      sizeof(x->metric));
			x->m = s->m;
			x->n = s->n;
			x->k = s->k;
			win = tel_window(&tw, c, &pos, 1, &x->telemetry);
			err[0] = '\0';
			rc = gpu_gemm(c->devs[pos], plan[di].dt, s->m, s->n,
				      s->k, max_algos, &c->smp, &win, samples,
				      &n, note, sizeof(note), err, sizeof(err));
			probe_strlcpy(x->note, note, sizeof(x->note));
			gemm_limits(c, pos, x);
			if (rc == GPU_OK && n > 0) {
				if (probe_result_set_samples(x, samples,
							     (size_t)n) != 0)
					probe_result_fail(
					    x, "could not compute statistics");
			} else if (rc == GPU_SKIP) {
				/* No algorithm for this shape: the other
				 * shapes still count. */
				probe_result_skip(x, 0, "%s", err);
			} else {
				probe_result_fail(
				    x, "%s",
				    err[0] ? err : "measurement failed");
			}
		}
		/* The summary: the best shape (issue 14, defect 8: a skipped
		 * shape no longer drops it). */
		if (probe_gemm_summary(sweep, (size_t)nsweep, &sum) == 0)
			finish_result(c, &sum);
		/* Every shape as a sweep result when there are several. */
		for (si = 0; si < nsweep; si++) {
			if (plan[di].nshapes > 1)
				finish_result(c, &sweep[si]);
			else
				free(sweep[si].samples);
		}
	}
}

/* ---- HBM ----------------------------------------------------------- */

static void run_hbm(struct ctx *c, int pos)
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
	size_t bytes = c->cli.quick ? 512 * MiB : 2 * GiB;
	size_t i;

	if (c->info[pos].memory_total_bytes > 0 &&
	    bytes > (size_t)c->info[pos].memory_total_bytes / 8)
		bytes = (size_t)c->info[pos].memory_total_bytes / 8;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		double samples[MAXSAMPLES];
		char err[512] = "";
		int n = 0, rc;
		struct probe_result r;
		struct tel_window tw;
		struct gpu_window win;

		result_for_gpu(c, &r, pos, kinds[i].metric, "GB/s");
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
		win = tel_window(&tw, c, &pos, 1, &r.telemetry);
		rc = gpu_hbm(c->devs[pos], kinds[i].kind, bytes, &c->smp, &win,
			     samples, &n, err, sizeof(err));
		finish(c, &r, rc, samples, n, err);
	}
}

struct gpu_thread {
	struct ctx *c;
	int pos;
	int what;
	pthread_t t;
};

static void *gpu_thread_main(void *arg)
{
	struct gpu_thread *g = arg;

	if (g->what & PROBE_ONLY_GEMM)
		run_gemm(g->c, g->pos);
	if (g->what & PROBE_ONLY_HBM)
		run_hbm(g->c, g->pos);
	return NULL;
}

static void *warm_thread_main(void *arg)
{
	struct gpu_thread *g = arg;
	char err[256];

	gpu_warmup(g->c->devs[g->pos], g->c->cli.quick ? 3.0 : 20.0, err,
		   sizeof(err));
	return NULL;
}

static void run_per_gpu(struct ctx *c, int what)
{
	struct gpu_thread th[MAXG];
	int i;

	logf_("warming up %d GPU(s) for %d s", c->ndev, c->cli.quick ? 3 : 20);
	for (i = 0; i < c->ndev; i++) {
		th[i].c = c;
		th[i].pos = i;
		th[i].what = what;
		pthread_create(&th[i].t, NULL, warm_thread_main, &th[i]);
	}
	for (i = 0; i < c->ndev; i++)
		pthread_join(th[i].t, NULL);
	if (c->cli.isolated) {
		for (i = 0; i < c->ndev; i++)
			gpu_thread_main(&th[i]);
		return;
	}
	for (i = 0; i < c->ndev; i++)
		pthread_create(&th[i].t, NULL, gpu_thread_main, &th[i]);
	for (i = 0; i < c->ndev; i++)
		pthread_join(th[i].t, NULL);
}

/* ---- host <-> device ----------------------------------------------- */

static void pcie_limit(struct ctx *c, int pos, struct probe_result *r,
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

static void run_h2d(struct ctx *c)
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
	int pos;
	size_t i;

	for (pos = 0; pos < c->ndev; pos++) {
		struct probe_cpuset saved;
		char why[256];
		int bound =
		    probe_thread_bind_near("/sys", c->info[pos].pci_bus_id,
					   &saved, why, sizeof(why)) == 0;

		/* The thread and the host buffers on the GPU's NUMA node,
		 * as nvbandwidth does (issue 14, defect 5). */
		if (!bound)
			logf_("gpu %d: host copies not bound to the GPU's CPUs "
			      "(%s)",
			      c->devs[pos], why);
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			double samples[MAXSAMPLES];
			char err[512] = "";
			int n = 0, rc;
			struct probe_result r;
			struct tel_window tw;
			struct gpu_window win;
			size_t bytes = kinds[i].pinned
					   ? (c->cli.quick ? 256 : 512) * MiB
					   : (c->cli.quick ? 128 : 512) * MiB;

			result_for_gpu(c, &r, pos, kinds[i].metric, "GB/s");
			probe_strlcpy(r.method, "ce", sizeof(r.method));
			if (!kinds[i].pinned)
				probe_strlcpy(r.method, "memcpy",
					      sizeof(r.method));
			probe_strlcpy(r.bytes_convention, kinds[i].conv,
				      sizeof(r.bytes_convention));
			r.size_bytes = (int64_t)bytes;
			pcie_limit(c, pos, &r,
				   kinds[i].dir == GPU_BIDIR ? 2.0 : 1.0);
			win = tel_window(&tw, c, &pos, 1, &r.telemetry);
			rc = gpu_host_copy(
			    c->devs[pos], kinds[i].dir, kinds[i].pinned, bytes,
			    c->rep.gpus[pos].numa_node, &c->smp, &win, samples,
			    &n, r.note, sizeof(r.note), err, sizeof(err));
			finish(c, &r, rc, samples, n, err);
		}
		if (bound)
			probe_thread_restore(&saved);
	}
}

/* ---- peer to peer -------------------------------------------------- */

static void p2p_limit(struct ctx *c, int a, int b, int peer_ok,
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

static int mig_on(struct ctx *c, int pos)
{
	return c->rep.gpus[pos].mig_mode == 1;
}

static void run_p2p(struct ctx *c)
{
	size_t bytes = (c->cli.quick ? 256 : 512) * MiB;
	int a, b;

	if (c->ndev < 2) {
		struct probe_result r;
		result_for_gpu(c, &r, 0, "p2p_unidir_gbps", "GB/s");
		add_skipped(c, &r, 0, 0, "only one GPU: no peer to measure");
		return;
	}
	gpu_enable_peers(c->devs, c->ndev);
	for (a = 0; a < c->ndev; a++) {
		for (b = 0; b < c->ndev; b++) {
			int bidir;
			int peer_ok;

			if (a == b)
				continue;
			peer_ok =
			    gpu_can_access_peer(c->devs[a], c->devs[b]) == 1;
			for (bidir = 0; bidir < 2; bidir++) {
				double samples[MAXSAMPLES];
				char err[512] = "";
				int n = 0, rc, pp[2] = {a, b};
				struct probe_result r;
				struct tel_window tw;
				struct gpu_window win;

				if (bidir && b < a)
					continue; /* one per unordered pair */
				result_for_gpu(c, &r, a,
					       bidir ? "p2p_bidir_gbps"
						     : "p2p_unidir_gbps",
					       "GB/s");
				set_peer(c, &r, b);
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
				if (mig_on(c, a) || mig_on(c, b)) {
					add_skipped(c, &r, 0, 0,
						    "MIG mode enabled");
					continue;
				}
				p2p_limit(c, a, b, peer_ok, &r,
					  bidir ? 2.0 : 1.0);
				win = tel_window(&tw, c, pp, 2, &r.telemetry);
				rc = gpu_p2p_bw(c->devs[a], c->devs[b], bidir,
						bytes, &c->smp, &win, samples,
						&n, err, sizeof(err));
				finish(c, &r, rc, samples, n, err);
			}
			{
				double samples[MAXSAMPLES];
				char err[512] = "";
				int n = 0, rc;
				struct probe_result r;

				result_for_gpu(c, &r, a, "p2p_latency_us",
					       "us");
				set_peer(c, &r, b);
				probe_strlcpy(r.method, "ce", sizeof(r.method));
				r.size_bytes = 16;
				if (mig_on(c, a) || mig_on(c, b)) {
					add_skipped(c, &r, 0, 0,
						    "MIG mode enabled");
					continue;
				}
				rc = gpu_p2p_latency(c->devs[a], c->devs[b],
						     &c->smp, samples, &n, err,
						     sizeof(err));
				finish(c, &r, rc, samples, n, err);
			}
		}
	}
}

/* ---- NCCL ---------------------------------------------------------- */

static void run_nccl(struct ctx *c)
{
	size_t sizes[16], nsizes = 0, s, maxb = 8 * GiB;
	int i, all[MAXG], any_mig = 0, rc;
	double factor = probe_busbw_factor(PROBE_COLL_ALL_REDUCE, c->ndev);
	double lim = INFINITY;
	const char *basis = "nvml_nvlink";
	struct gpu_sampling smp = c->smp;
	struct gpu_nccl *h = NULL;
	struct probe_result rb, ra;
	char err[512] = "";

	result_for_gpu(c, &rb, -1, "nccl_allreduce_busbw_gbps", "GB/s");
	probe_strlcpy(rb.method, "nccl", sizeof(rb.method));
	probe_strlcpy(rb.dtype, "fp32", sizeof(rb.dtype));
	rb.nranks = c->ndev;
	rb.concurrent = 1;
	for (i = 0; i < c->ndev; i++)
		any_mig |= mig_on(c, i);
	/* The GPU count first: one GPU has no collective to measure, with
	 * or without libnccl (issue 14, defect 8). */
	switch (probe_nccl_plan(c->ndev, any_mig, c->nccl_lib_ok)) {
	case PROBE_NCCL_ONE_GPU:
		add_skipped(c, &rb, 0, 0,
			    "one GPU: no collective to measure (NCCL not "
			    "applicable)");
		return;
	case PROBE_NCCL_MIG:
		add_skipped(c, &rb, 0, 0, "MIG mode enabled");
		return;
	case PROBE_NCCL_NO_LIBRARY:
		add_skipped(c, &rb, 1, 1, c->nccl_lib_err);
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
		sizes[nsizes++] = 64 * MiB;
		sizes[nsizes++] = 1 * GiB;
	} else {
		for (s = 8 * MiB; s <= 8 * GiB; s *= 2)
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
			add_skipped(c, &rb, 1, 0, err);
		else
			finish(c, &rb, rc, NULL, 0, err);
		return;
	}
	for (s = 0; s < nsizes; s++) {
		double t_us[MAXSAMPLES], algbw[MAXSAMPLES], busbw[MAXSAMPLES];
		int n = 0, j, k;
		struct probe_telemetry t;
		struct tel_window tw;
		struct gpu_window win;

		result_for_gpu(c, &rb, -1, "nccl_allreduce_busbw_gbps", "GB/s");
		result_for_gpu(c, &ra, -1, "nccl_allreduce_algbw_gbps", "GB/s");
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
		win = tel_window(&tw, c, all, c->ndev, &t);
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
		finish(c, &rb, rc, busbw, n, err);
		finish(c, &ra, rc, algbw, n, err);
		if (rc != GPU_OK)
			break;
	}
	gpu_nccl_close(h);
}

/* ---- inventory ----------------------------------------------------- */

static void inventory(struct ctx *c)
{
	int i, drv = -1, rt = -1;
	char err[512];

	gethostname(c->rep.node.hostname, sizeof(c->rep.node.hostname) - 1);
	if (c->rep.node.hostname[0] == '\0')
		probe_strlcpy(c->rep.node.hostname, "unknown",
			      sizeof(c->rep.node.hostname));
	probe_cpu_model("/proc/cpuinfo", c->rep.node.cpu_model,
			sizeof(c->rep.node.cpu_model));
	gpu_versions(&drv, &rt);
	c->rep.node.cuda_driver_version = drv;
	c->rep.node.cuda_runtime_version = rt;
	if (!c->cli.no_nvml) {
		c->nvml = probe_nvml_load(err, sizeof(err));
		if (c->nvml == NULL)
			logf_("NVML unavailable (%s): topology fields will be "
			      "null, telemetry off",
			      err);
	}
	c->rep.node.nvml_available = c->nvml != NULL;
	probe_nvml_driver_version(c->nvml, c->rep.node.driver_version,
				  sizeof(c->rep.node.driver_version));
	c->rep.gpus = calloc((size_t)c->ndev, sizeof(*c->rep.gpus));
	c->rep.n_gpus = (size_t)c->ndev;
	c->rep.node.gpu_count = c->ndev;
	for (i = 0; i < c->ndev; i++) {
		struct probe_gpu *g = &c->rep.gpus[i];
		struct gpu_info *in = &c->info[i];
		char devid[16];
		unsigned id = 0;

		probe_gpu_init(g, c->devs[i]);
		if (gpu_get_info(c->devs[i], in, err, sizeof(err)) != GPU_OK) {
			logf_("gpu %d: %s", c->devs[i], err);
			continue;
		}
		probe_strlcpy(g->uuid, in->uuid, sizeof(g->uuid));
		probe_strlcpy(g->name, in->name, sizeof(g->name));
		probe_strlcpy(g->pci_bus_id, in->pci_bus_id,
			      sizeof(g->pci_bus_id));
		snprintf(g->compute_capability, sizeof(g->compute_capability),
			 "%d.%d", in->cc_major, in->cc_minor);
		g->sm_count = in->sm_count;
		g->memory_total_bytes = in->memory_total_bytes;
		probe_sysfs_pci("/sys", in->pci_bus_id, &g->numa_node, devid,
				sizeof(devid));
		if (devid[0]) {
			probe_strlcpy(g->pci_device_id, devid,
				      sizeof(g->pci_device_id));
			id = (unsigned)strtoul(devid, NULL, 16);
		}
		c->ds[i] = probe_datasheet_lookup(id);
		c->nvdev[i] =
		    probe_nvml_device(c->nvml, in->uuid, in->pci_bus_id);
		probe_nvml_fill_gpu(c->nvml, c->nvdev[i], g);
		if (g->compute_processes > 0)
			logf_("gpu %d: %d other compute process(es) running: "
			      "figures may be low",
			      c->devs[i], g->compute_processes);
	}
}

/* ---- delivery ------------------------------------------------------ */

static int post_opts(struct ctx *c, struct probe_post_opts *o, char *token,
		     size_t toklen)
{
	char err[512];

	memset(o, 0, sizeof(*o));
	o->server = c->cli.server;
	o->timeout_ms = c->cli.timeout_ms;
	o->connect_timeout_ms = c->cli.connect_timeout_ms;
	o->retries = c->cli.retries;
	o->backoff_ms = c->cli.backoff_ms;
	o->backoff_max_ms = 30000;
	o->log = stderr;
	if (c->cli.token_file) {
		if (probe_read_token(c->cli.token_file, token, toklen, err,
				     sizeof(err))) {
			logf_("%s", err);
			return -1;
		}
		o->token = token;
	}
	return 0;
}

static int flush_code(const struct probe_flush_counts *fc)
{
	if (fc->unauthorized)
		return PROBE_EXIT_UNAUTHORIZED;
	if (fc->kept || fc->unreadable)
		return PROBE_EXIT_UNDELIVERED;
	if (fc->rejected)
		return PROBE_EXIT_REJECTED;
	return PROBE_EXIT_OK;
}

static int do_flush(struct ctx *c, const struct probe_post_opts *o)
{
	struct probe_flush_counts fc;

	if (probe_flush_spool(o, c->cli.spool_dir, &fc) != 0)
		return PROBE_EXIT_FAILED;
	if (fc.delivered + fc.kept + fc.rejected + fc.unreadable > 0)
		logf_("spool %s: %d delivered, %d kept, %d rejected, %d "
		      "unreadable",
		      c->cli.spool_dir, fc.delivered, fc.kept, fc.rejected,
		      fc.unreadable);
	return flush_code(&fc);
}

static int do_post_file(struct ctx *c, const struct probe_post_opts *o)
{
	size_t len;
	char *text = probe_read_file(c->cli.post_file, &len), err[512];
	json_t *j;
	json_error_t je;
	const char *run_id;
	enum probe_post_outcome out;
	int spool_failed = 0;

	if (text == NULL) {
		logf_("cannot read %s: %s", c->cli.post_file, strerror(errno));
		return PROBE_EXIT_FAILED;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL) {
		logf_("%s: not JSON (line %d: %s)", c->cli.post_file, je.line,
		      je.text);
		free(text);
		return PROBE_EXIT_FAILED;
	}
	if (probe_report_check(j, err, sizeof(err)) != 0) {
		logf_("%s: not a probe report: %s", c->cli.post_file, err);
		json_decref(j);
		free(text);
		return PROBE_EXIT_FAILED;
	}
	run_id = json_string_value(json_object_get(j, "run_id"));
	out = probe_deliver(o, c->cli.spool_dir, run_id, text, len,
			    &spool_failed);
	json_decref(j);
	free(text);
	if (out == PROBE_POST_DELIVERED)
		return PROBE_EXIT_OK;
	if (spool_failed)
		return PROBE_EXIT_FAILED;
	if (out == PROBE_POST_UNAUTHORIZED)
		return PROBE_EXIT_UNAUTHORIZED;
	return out == PROBE_POST_REJECTED ? PROBE_EXIT_REJECTED
					  : PROBE_EXIT_UNDELIVERED;
}

/* ---- main ------------------------------------------------------------ */

static int emit(struct ctx *c)
{
	json_t *j = probe_report_to_json(&c->rep);
	char *pretty, err[512];
	int rc = 0;

	if (j == NULL)
		return -1;
	pretty = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(j);
	if (pretty == NULL)
		return -1;
	if (c->cli.output) {
		if (probe_write_atomic(c->cli.output, pretty, strlen(pretty),
				       err, sizeof(err))) {
			logf_("%s", err);
			rc = -1;
		}
	} else {
		fputs(pretty, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	free(pretty);
	return rc;
}

static enum probe_exit measurement_code(const struct probe_report *r)
{
	size_t i;
	int ok = 0, lib = 0, other = 0;

	for (i = 0; i < r->n_results; i++) {
		const struct probe_result *x = &r->results[i];
		if (x->status == PROBE_RESULT_OK)
			ok++;
		else if (x->lib_missing)
			lib++;
		else if (x->partial)
			other++;
	}
	return probe_exit_for_run(r->status, ok, lib, other);
}

/* libcuda.so.1 present? Distinguishes "no driver" from CUDA errors. */
static int driver_present(char *why, size_t len)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(why, len, "%s", dlerror());
		return 0;
	}
	dlclose(h);
	return 1;
}

int main(int argc, char **argv)
{
	static struct ctx c;
	char err[512], errname[64], msg[512], token[4096] = "";
	struct probe_post_opts po;
	int count = 0, i, have_server, written;
	enum probe_exit code;
	enum probe_delivery delivery = PROBE_DELIVERY_NONE;

	if (probe_cli_parse(argc, argv, getenv("GPUSIZER_SPOOL_DIR"), &c.cli,
			    err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizer-probe: %s\n%s", err, probe_usage());
		return PROBE_EXIT_USAGE;
	}
	if (c.cli.help) {
		fputs(probe_usage(), stdout);
		return PROBE_EXIT_OK;
	}
	if (c.cli.version) {
		printf("gpusizer-probe %s (report schema %d)\n", PROBE_VERSION,
		       PROBE_SCHEMA_VERSION);
		return PROBE_EXIT_OK;
	}
	have_server = c.cli.server != NULL;
	if (have_server) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		if (post_opts(&c, &po, token, sizeof(token)) != 0)
			return PROBE_EXIT_USAGE;
	}
	if (c.cli.post_file || c.cli.flush_spool) {
		int rc = PROBE_EXIT_OK, r2;
		if (c.cli.flush_spool)
			rc = do_flush(&c, &po);
		if (c.cli.post_file) {
			r2 = do_post_file(&c, &po);
			if (r2 != PROBE_EXIT_OK)
				rc = r2;
		}
		curl_global_cleanup();
		return rc;
	}

	pthread_mutex_init(&c.mu, NULL);
	probe_report_init(&c.rep);
	if (probe_uuid_v4(c.rep.run_id) != 0) {
		fprintf(stderr, "gpusizer-probe: FATAL: cannot generate a "
				"run id (no randomness)\n");
		return PROBE_EXIT_FAILED;
	}
	now_rfc3339(c.rep.started_at, sizeof(c.rep.started_at));
	probe_strlcpy(c.rep.sizing, c.cli.quick ? "quick" : "full",
		      sizeof(c.rep.sizing));
	probe_strlcpy(c.rep.mode, c.cli.only_given ? "custom" : c.rep.sizing,
		      sizeof(c.rep.mode));
	if (c.cli.only_given)
		probe_strlcpy(c.rep.only, c.cli.only_text, sizeof(c.rep.only));

	if (!driver_present(msg, sizeof(msg))) {
		probe_strlcpy(c.rep.error_code, "no_driver",
			      sizeof(c.rep.error_code));
		snprintf(c.rep.error_message, sizeof(c.rep.error_message),
			 "NVIDIA driver not found (%.400s)", msg);
	} else if (gpu_device_count(&count, errname, sizeof(errname), msg,
				    sizeof(msg)) != 0) {
		probe_strlcpy(c.rep.error_code, errname,
			      sizeof(c.rep.error_code));
		probe_strlcpy(c.rep.error_message, msg,
			      sizeof(c.rep.error_message));
	}
	if (c.rep.error_code[0]) {
		fprintf(
		    stderr,
		    "gpusizer-probe: FATAL: no usable NVIDIA GPU (%s: %s)\n",
		    c.rep.error_code, c.rep.error_message);
		c.rep.status = PROBE_RUN_NO_DEVICE;
		gethostname(c.rep.node.hostname,
			    sizeof(c.rep.node.hostname) - 1);
		if (!c.rep.node.hostname[0])
			probe_strlcpy(c.rep.node.hostname, "unknown",
				      sizeof(c.rep.node.hostname));
		probe_cpu_model("/proc/cpuinfo", c.rep.node.cpu_model,
				sizeof(c.rep.node.cpu_model));
		{
			int drv = -1, rt = -1;
			gpu_versions(&drv, &rt);
			c.rep.node.cuda_driver_version = drv > 0 ? drv : -1;
			c.rep.node.cuda_runtime_version = rt > 0 ? rt : -1;
		}
		now_rfc3339(c.rep.finished_at, sizeof(c.rep.finished_at));
		code = PROBE_EXIT_NO_DEVICE;
		goto report;
	}

	/* Devices: all, or --devices (each must exist). */
	if (c.cli.n_devices == 0) {
		c.ndev = count < MAXG ? count : MAXG;
		for (i = 0; i < c.ndev; i++)
			c.devs[i] = i;
	} else {
		for (i = 0; i < c.cli.n_devices; i++) {
			if (c.cli.devices[i] >= count) {
				fprintf(stderr,
					"gpusizer-probe: --devices: GPU %d "
					"does not exist (%d found)\n",
					c.cli.devices[i], count);
				return PROBE_EXIT_USAGE;
			}
			c.devs[i] = c.cli.devices[i];
		}
		c.ndev = c.cli.n_devices;
	}
	inventory(&c);
	for (i = 0; i < c.ndev; i++)
		if (gpu_preload(c.devs[i], err, sizeof(err)) != GPU_OK)
			logf_("gpu %d: preloading kernels: %s", c.devs[i], err);
	c.smp.min_samples = 5;
	c.smp.max_samples = c.cli.quick ? 5 : 30;
	c.smp.cv_target = 0.01;
	c.smp.sample_ms = c.cli.quick ? 10 : 50;
	c.smp.warmup_ops = c.cli.quick ? 2 : 4;
	if (c.cli.only_mask & PROBE_ONLY_GEMM) {
		c.gemm_lib_ok =
		    gpu_gemm_load(&c.rep.node.cublaslt_version, c.gemm_lib_err,
				  sizeof(c.gemm_lib_err)) == GPU_OK;
	}
	if (c.cli.only_mask & PROBE_ONLY_NCCL) {
		c.nccl_lib_ok =
		    gpu_nccl_load(&c.rep.node.nccl_version, c.nccl_lib_err,
				  sizeof(c.nccl_lib_err)) == GPU_OK;
	}
	if (c.cli.only_mask & (PROBE_ONLY_GEMM | PROBE_ONLY_HBM))
		run_per_gpu(&c, c.cli.only_mask);
	if (c.cli.only_mask & PROBE_ONLY_H2D)
		run_h2d(&c);
	if (c.cli.only_mask & PROBE_ONLY_P2P)
		run_p2p(&c);
	if (c.cli.only_mask & PROBE_ONLY_NCCL)
		run_nccl(&c);
	now_rfc3339(c.rep.finished_at, sizeof(c.rep.finished_at));
	probe_report_finalize_status(&c.rep);
	code = measurement_code(&c.rep);

report:
	written = emit(&c) == 0;
	if (have_server) {
		char *body = probe_report_dumps(&c.rep);
		int spool_failed = 0;
		enum probe_post_outcome out = PROBE_POST_KEEP;

		if (body) {
			out = probe_deliver(&po, c.cli.spool_dir, c.rep.run_id,
					    body, strlen(body), &spool_failed);
			free(body);
		}
		/* Older spooled reports go once the server answers. */
		if (out == PROBE_POST_DELIVERED)
			do_flush(&c, &po);
		delivery =
		    out == PROBE_POST_DELIVERED	 ? PROBE_DELIVERY_DELIVERED
		    : out == PROBE_POST_REJECTED ? PROBE_DELIVERY_REJECTED
		    : out == PROBE_POST_UNAUTHORIZED
			? PROBE_DELIVERY_UNAUTHORIZED
			: PROBE_DELIVERY_KEPT;
		curl_global_cleanup();
	}
	code = probe_exit_final(code, written, delivery);
	probe_nvml_unload(c.nvml);
	probe_report_free(&c.rep);
	return code;
}

#define _GNU_SOURCE
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void probe_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("probe: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void probe_result_for(struct probe_ctx *c, struct probe_result *r, int pos,
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

void probe_result_peer(struct probe_ctx *c, struct probe_result *r, int pos)
{
	r->peer_index = c->devs[pos];
	probe_strlcpy(r->peer_uuid, c->info[pos].uuid, sizeof(r->peer_uuid));
}

void probe_store(struct probe_ctx *c, struct probe_result *r)
{
	char peer[24] = "", ranks[24] = "";

	if (r->peer_index >= 0)
		snprintf(peer, sizeof(peer), " -> %d", r->peer_index);
	if (r->nranks > 0)
		snprintf(ranks, sizeof(ranks), " %d ranks", r->nranks);
	pthread_mutex_lock(&c->mu);
	if (r->status == PROBE_RESULT_OK)
		probe_log("%s%s%s gpu %d%s%s: median %.4g %s (n=%d)", r->metric,
			  r->dtype[0] ? " " : "", r->dtype, r->gpu_index, peer,
			  ranks, r->stats.median, r->unit, r->stats.n);
	else
		probe_log("%s%s%s gpu %d%s%s: %s: %s", r->metric,
			  r->dtype[0] ? " " : "", r->dtype, r->gpu_index, peer,
			  ranks, probe_result_status_name(r->status),
			  r->reason);
	if (probe_report_add(&c->rep, r) == NULL) {
		probe_log("out of memory storing a result");
		free(r->samples);
		r->samples = NULL;
	}
	pthread_mutex_unlock(&c->mu);
}

void probe_finish(struct probe_ctx *c, struct probe_result *r, int rc,
		  const double *samples, int n, const char *err)
{
	if (rc == GPU_OK && n > 0) {
		if (probe_result_set_samples(r, samples, (size_t)n) != 0)
			probe_result_fail(r, "could not compute statistics");
	} else if (rc == GPU_SKIP) {
		probe_result_skip(r, 0, "%s", err);
	} else {
		probe_result_fail(r, "%s",
				  err && err[0] ? err : "measurement failed");
	}
	probe_store(c, r);
}

void probe_skip(struct probe_ctx *c, struct probe_result *r, int partial,
		int lib_missing, const char *reason)
{
	probe_result_skip(r, partial, "%s", reason);
	r->lib_missing = lib_missing;
	probe_store(c, r);
}

int probe_mig_on(const struct probe_ctx *c, int pos)
{
	return c->rep.gpus[pos].mig_mode == 1;
}

static void tel_begin(void *arg)
{
	struct probe_tel_window *w = arg;
	void *devs[PROBE_MAXG];
	int i;

	for (i = 0; i < w->n; i++)
		devs[i] = w->c->nvdev[w->pos[i]];
	w->s = probe_sampler_start(w->c->nvml, devs, (size_t)w->n, 100);
}

static void tel_end(void *arg)
{
	struct probe_tel_window *w = arg;

	probe_sampler_stop(w->s, w->out);
	w->s = NULL;
}

struct gpu_window probe_tel_window(struct probe_tel_window *w,
				   struct probe_ctx *c, const int *pos, int n,
				   struct probe_telemetry *out)
{
	struct gpu_window g = {tel_begin, tel_end, w};

	memset(w, 0, sizeof(*w));
	w->c = c;
	w->n = n < PROBE_MAXG ? n : PROBE_MAXG;
	memcpy(w->pos, pos, (size_t)w->n * sizeof(*pos));
	w->out = out;
	return g;
}

/* ---- scheduling ------------------------------------------------------ */

struct gpu_job {
	struct probe_ctx *c;
	int pos;
	const struct probe_measurement *const *ms;
	size_t nms;
	pthread_t t;
};

static void *gpu_job_main(void *arg)
{
	struct gpu_job *j = arg;
	size_t i;

	for (i = 0; i < j->nms; i++)
		j->ms[i]->run(j->c, j->pos);
	return NULL;
}

static void *warm_main(void *arg)
{
	struct gpu_job *j = arg;
	char err[256];

	if (gpu_warmup(j->c->devs[j->pos], j->c->cli.quick ? 3.0 : 20.0, err,
		       sizeof(err)) != GPU_OK)
		probe_log("gpu %d: warm-up: %s", j->c->devs[j->pos], err);
	return NULL;
}

/* Per-GPU measurements on every GPU at once (power and thermal coupling
 * as in production), after a warm-up of all GPUs to steady clocks
 * (PROBE.md 8.1.2); --isolated: one GPU after the other, each warmed
 * right before its turn, since a GPU left idle while the others run
 * cools back to burst clocks (review s23c F3: the H200 read 799-818
 * TFLOP/s cold against 701-715 warm on one GEMM). */
static void run_concurrent(struct probe_ctx *c,
			   const struct probe_measurement *const *ms,
			   size_t nms)
{
	struct gpu_job jobs[PROBE_MAXG];
	int i;

	for (i = 0; i < c->ndev; i++) {
		jobs[i].c = c;
		jobs[i].pos = i;
		jobs[i].ms = ms;
		jobs[i].nms = nms;
	}
	if (c->cli.isolated) {
		for (i = 0; i < c->ndev; i++) {
			probe_log("warming up GPU %d for %d s", c->devs[i],
				  c->cli.quick ? 3 : 20);
			warm_main(&jobs[i]);
			gpu_job_main(&jobs[i]);
		}
		return;
	}
	if (!c->warmed) {
		probe_log("warming up %d GPU(s) for %d s", c->ndev,
			  c->cli.quick ? 3 : 20);
		for (i = 0; i < c->ndev; i++)
			pthread_create(&jobs[i].t, NULL, warm_main, &jobs[i]);
		for (i = 0; i < c->ndev; i++)
			pthread_join(jobs[i].t, NULL);
		c->warmed = 1;
	}
	for (i = 0; i < c->ndev; i++)
		pthread_create(&jobs[i].t, NULL, gpu_job_main, &jobs[i]);
	for (i = 0; i < c->ndev; i++)
		pthread_join(jobs[i].t, NULL);
}

void probe_run_all(struct probe_ctx *c, const struct probe_measurement *tab,
		   size_t n)
{
	const struct probe_measurement *sel[64];
	size_t nsel = 0, i, j;
	int pos;

	for (i = 0; i < n && nsel < 64; i++)
		if (probe_measurement_selected(&tab[i], c->cli.only_mask,
					       c->cli.quick))
			sel[nsel++] = &tab[i];
	for (i = 0; i < nsel; i = j) {
		j = i + 1;
		switch (sel[i]->scope) {
		case PROBE_SCOPE_GPU:
			/* Consecutive per-GPU measurements share a thread
			 * per GPU. */
			while (j < nsel && sel[j]->scope == PROBE_SCOPE_GPU)
				j++;
			run_concurrent(c, &sel[i], j - i);
			break;
		case PROBE_SCOPE_GPU_SERIAL:
			for (pos = 0; pos < c->ndev; pos++)
				sel[i]->run(c, pos);
			break;
		case PROBE_SCOPE_PAIR:
		case PROBE_SCOPE_NODE:
			sel[i]->run(c, -1);
			break;
		}
	}
	gpu_nccl_close(c->nccl);
	c->nccl = NULL;
}

/* gemm_sustained: the GEMMs of a training plan, BF16 and FP8, each
 * sustained for --sustain-s seconds (60) on every GPU of the node at once
 * (registry.h; --full only).
 *
 * The short best-shape figures of `gemm` are what mamf-finder reports; a
 * training step runs its own shapes for minutes with every GPU busy, at
 * the clocks the power limit allows. Calibration needs that rate too
 * (issue 14): the retention from best-shape to in-step throughput that
 * the engine's datasheet efficiency assumes (engine/hw.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"
#include "util.h"

/* One transformer layer of Llama-2-70B (hidden 8192, 64 heads of 128,
 * 8 KV heads, SwiGLU FFN 28672) at tensor parallel 8 and 4096 tokens per
 * micro-batch: the plan docs/MODEL.md's examples size. m = output
 * features, n = tokens, k = input features, the TN GEMM PyTorch's
 * linear layer runs. */
static const struct plan_gemm {
	const char *name;
	int m, n, k;
} plan[] = {
    {"qkv", (8192 + 2 * 1024) / 8, 4096, 8192},
    {"attn_out", 8192, 4096, 8192 / 8},
    {"mlp_gate_up", 2 * 28672 / 8, 4096, 8192},
    {"mlp_down", 8192, 4096, 28672 / 8},
};
#define NPLAN	    (sizeof(plan) / sizeof(plan[0]))
#define MAX_SAMPLES 4096
/* How long the GPUs wait for each other at the start line. */
#define START_WAIT_S 300

/* Every GPU's timed window starts together: each arrives at the line
 * when its setup (allocation, algorithm search) is done and waits for
 * the others, at most START_WAIT_S; a GPU whose setup failed arrives
 * without waiting so the others do not wait for it. */
struct start_line {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int expected, arrived;
};

static void line_arrive(struct start_line *l, int wait)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += START_WAIT_S;
	pthread_mutex_lock(&l->mu);
	l->arrived++;
	pthread_cond_broadcast(&l->cv);
	while (wait && l->arrived < l->expected)
		if (pthread_cond_timedwait(&l->cv, &l->mu, &until) != 0)
			break;
	pthread_mutex_unlock(&l->mu);
}

struct job {
	struct probe_ctx *c;
	int pos;
	enum gpu_dtype dt;
	const struct plan_gemm *g;
	struct start_line *line;
	int began;
	struct probe_tel_window tw;
	struct gpu_window tel;
	struct probe_result r;
	double samples[MAX_SAMPLES];
	int n, rc;
	char err[512], note[160];
	pthread_t t;
};

static void job_begin(void *arg)
{
	struct job *j = arg;

	j->began = 1;
	line_arrive(j->line, 1);
	j->tel.begin(j->tel.arg);
}

static void job_end(void *arg)
{
	struct job *j = arg;

	j->tel.end(j->tel.arg);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct probe_ctx *c = j->c;
	struct gpu_sampling smp = c->smp;
	struct gpu_window win = {job_begin, job_end, j};

	/* Back-to-back samples of about a second each until the window has
	 * lasted --sustain-s; the CV never stops it early. */
	smp.min_samples = 5;
	smp.max_samples = MAX_SAMPLES;
	smp.cv_target = INFINITY;
	smp.sample_ms = 1000;
	smp.min_seconds = c->cli.sustain_s;
	smp.sustained = 1;
	j->tel = probe_tel_window(&j->tw, c, &j->pos, 1, &j->r.telemetry);
	j->rc = gpu_gemm(c->devs[j->pos], j->dt, j->g->m, j->g->n, j->g->k, 16,
			 &smp, &win, j->samples, &j->n, j->note,
			 sizeof(j->note), j->err, sizeof(j->err));
	if (!j->began)
		line_arrive(j->line, 0);
	return NULL;
}

static void sustained_result(struct probe_ctx *c, struct probe_result *r,
			     int pos, const char *dtype,
			     const struct plan_gemm *g)
{
	probe_result_for(c, r, pos, "gemm_sustained_tflops", "TFLOP/s");
	probe_strlcpy(r->dtype, dtype, sizeof(r->dtype));
	probe_strlcpy(r->method, "cublaslt", sizeof(r->method));
	if (g) {
		r->m = g->m;
		r->n = g->n;
		r->k = g->k;
	}
	r->concurrent = c->ndev > 1;
}

/* One plan GEMM on the GPUs in use[] at once. */
static void run_shape(struct probe_ctx *c, struct job *jobs, const int *use,
		      enum gpu_dtype dt, const char *dtype,
		      const struct plan_gemm *g)
{
	struct start_line line;
	int i, joinable[PROBE_MAXG] = {0};

	pthread_mutex_init(&line.mu, NULL);
	pthread_cond_init(&line.cv, NULL);
	line.arrived = 0;
	line.expected = 0;
	for (i = 0; i < c->ndev; i++)
		line.expected += use[i];
	for (i = 0; i < c->ndev; i++) {
		struct job *j = &jobs[i];

		if (!use[i])
			continue;
		memset(j, 0, sizeof(*j));
		j->c = c;
		j->pos = i;
		j->dt = dt;
		j->g = g;
		j->line = &line;
		sustained_result(c, &j->r, i, dtype, g);
		if (pthread_create(&j->t, NULL, job_main, j) != 0) {
			j->rc = GPU_FAIL;
			probe_strlcpy(j->err, "cannot start a thread",
				      sizeof(j->err));
			line_arrive(&line, 0);
			continue;
		}
		joinable[i] = 1;
	}
	for (i = 0; i < c->ndev; i++)
		if (joinable[i])
			pthread_join(jobs[i].t, NULL);
	for (i = 0; i < c->ndev; i++) {
		struct job *j = &jobs[i];

		if (!use[i])
			continue;
		snprintf(j->r.note, sizeof(j->r.note),
			 "plan GEMM %s, %d GPU(s) loaded >= %d s; %s", g->name,
			 line.expected, c->cli.sustain_s, j->note);
		probe_gemm_limits(c, i, &j->r);
		probe_finish(c, &j->r, j->rc, j->samples, j->n, j->err);
	}
	pthread_mutex_destroy(&line.mu);
	pthread_cond_destroy(&line.cv);
}

void probe_run_gemm_sustained(struct probe_ctx *c, int pos)
{
	static const struct {
		enum gpu_dtype dt;
		const char *name;
	} dts[] = {{GPU_DT_BF16, "bf16"}, {GPU_DT_FP8_E4M3, "fp8_e4m3"}};
	struct job *jobs;
	size_t d, s;
	int i;

	(void)pos;
	if (!c->gemm_lib_ok) {
		for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
			for (i = 0; i < c->ndev; i++) {
				struct probe_result r;
				sustained_result(c, &r, i, dts[d].name, NULL);
				probe_skip(c, &r, 1, 1, c->gemm_lib_err);
			}
		return;
	}
	jobs = calloc((size_t)c->ndev, sizeof(*jobs));
	if (jobs == NULL) {
		probe_log("gemm_sustained: out of memory");
		return;
	}
	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
		int use[PROBE_MAXG], n_use = 0;

		/* GPUs that cannot run the dtype (FP8 below compute
		 * capability 8.9) get one not-applicable result. */
		for (i = 0; i < c->ndev; i++) {
			char err[256];
			use[i] = gpu_gemm_supported(c->devs[i], dts[d].dt, err,
						    sizeof(err)) == GPU_OK;
			n_use += use[i];
			if (!use[i]) {
				struct probe_result r;
				sustained_result(c, &r, i, dts[d].name, NULL);
				probe_skip(c, &r, 0, 0, err);
			}
		}
		if (n_use == 0)
			continue;
		probe_log("gemm_sustained %s: %zu plan GEMMs, %d s each on %d "
			  "GPU(s) at once",
			  dts[d].name, NPLAN, c->cli.sustain_s, n_use);
		for (s = 0; s < NPLAN; s++)
			run_shape(c, jobs, use, dts[d].dt, dts[d].name,
				  &plan[s]);
	}
	free(jobs);
}

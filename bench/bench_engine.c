#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 199309L
#endif
/* bench_engine.c - median and p99 wall time of the engine's searches on one
 * core. Prints figures; never asserts timings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "inference.h"
#include "tests/unit/engine_fixtures.h"
#include "training.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#define RUNS 41

static void report(const char *what, double *t, int n, const char *extra)
{
	qsort(t, (size_t)n, sizeof(double), cmp_d);
	printf("%-46s median %8.3f ms  p99 %8.3f ms  %s\n", what,
	       t[n / 2] * 1e3, t[(n * 99) / 100] * 1e3, extra);
}

/* RUNS timings of one training search, reported as what. */
static void bench_training(const struct trn_request *rq, const char *what)
{
	static struct trn_result res;
	double t[RUNS];
	char extra[128];
	struct eng_error e;

	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		trn_size(rq, &res, &e);
		t[i] = now_s() - t0;
	}
	snprintf(extra, sizeof(extra), "(%ld layouts)", res.layouts_evaluated);
	report(what, t, RUNS, extra);
}

int main(void)
{
	double t[RUNS];
	struct eng_error e;
	struct trn_request rq;

	trn_request_init(&rq);
	rq.model = fx_llama2_70b();
	rq.seq_len = 4096;
	rq.global_batch_size = 1024;
	rq.train_tokens = 2e12;
	rq.gpu = fx_h100();
	rq.max_gpus = 1024;
	bench_training(&rq, "training search Llama-2-70B, <=1024 H100");

	rq.model = fx_llama(128, 25600, 160, 160, 102400, 51200); /* ~1T */
	rq.model.gated_mlp = false;
	rq.seq_len = 2048;
	rq.global_batch_size = 3072;
	rq.max_gpus = 8192;
	bench_training(&rq, "training search 1T params, <=8192 GPUs");

	{
		struct inf_request iq;
		struct inf_result ir;
		struct cmp_entry ce[15];
		struct cmp_result cr;

		inf_request_init(&iq);
		iq.model = fx_llama(80, 8192, 64, 8, 28672, 128256);
		iq.prompt_tokens = 2048;
		iq.output_tokens = 512;
		iq.load_kind = INF_LOAD_REQUESTS_PER_S;
		iq.load_value = 20;
		iq.tpot_ms = 60;
		for (int i = 0; i < RUNS; i++) {
			double t0 = now_s();
			for (int g = 0; g < 15; g++) {
				iq.gpu = fx_h100();
				iq.gpu.memory_gib = 48 + 8 * g;
				iq.gpu.memory_bandwidth_gbps = 1000 + 300 * g;
				memset(&ce[g], 0, sizeof(ce[g]));
				snprintf(ce[g].name, sizeof(ce[g].name),
					 "gpu%d", g);
				ce[g].ok = inf_size(&iq, &ir, &e) == 0;
				if (ce[g].ok) {
					ce[g].time_s =
					    ir.plans[0].tpot_ms / 1e3;
					ce[g].cost =
					    ir.plans[0]
						.cost_per_million_output_tokens;
				}
			}
			cmp_rank(ce, 15, CMP_INFERENCE, NULL, &cr, &e);
			t[i] = now_s() - t0;
		}
		report("compare 15 GPU types, Llama-3-70B serving", t, RUNS,
		       "");
	}
	return 0;
}

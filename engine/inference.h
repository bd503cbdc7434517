/* inference.h - size a serving deployment (issue 4, SIZING.md §6, §9).
 *
 * Usage: inf_request_init(&rq); fill; inf_size(&rq, &res, &err). Pure, no
 * I/O, no globals, no allocation; thread-safe.
 */
#ifndef GPUSIZER_ENGINE_INFERENCE_H
#define GPUSIZER_ENGINE_INFERENCE_H

#include <stdbool.h>

#include "errors.h"
#include "hw.h"
#include "model.h"
#include "training.h" /* enum eng_binding, ENG_MAX_WARNINGS */

enum inf_load_kind {
	INF_LOAD_NONE, /* one replica, largest batch meeting targets */
	INF_LOAD_REQUESTS_PER_S,
	INF_LOAD_CONCURRENT_SEQUENCES,
	INF_LOAD_OUTPUT_TOKENS_PER_S,
	INF_LOAD_COUNT
};

struct inf_request {
	struct model_arch model;
	enum eng_dtype weight_precision; /* fp32|bf16|fp16|fp8|int8|int4 */
	enum eng_dtype kv_precision;	 /* ENG_DTYPE_COUNT: default (16-bit,
					    fp8 with fp8 weights) */
	long prompt_tokens, output_tokens;
	enum inf_load_kind load_kind;
	double load_value;
	double ttft_ms, tpot_ms;   /* targets; 0 = none */
	double memory_utilization; /* default 0.9 */
	struct hw_spec gpu;
	int gpus_per_node; /* 0: gpu.max_gpus_per_node */
	long max_gpus;	   /* 0: no limit */
	double price_per_gpu_hour;
	long max_batch; /* 0: no limit */
	int tp;		/* 0: searched; else the pinned tensor-parallel
			   degree (a power of two dividing heads) */
	int top;	/* default 5 */
};

struct inf_plan {
	int tp, pp;
	long batch; /* sequences in flight per replica */
	double ttft_ms, tpot_ms;
	double output_tokens_per_s;	  /* per replica */
	double total_output_tokens_per_s; /* all replicas */
	long replicas, gpus;
	double cost_per_hour, cost_per_million_output_tokens;
	double weights_gib, kv_cache_gib, workspace_gib, total_gib,
	    usable_gib;	    /* per GPU */
	long max_batch_fit; /* sequences that fit in memory */
	double mbu;	    /* decode bandwidth utilisation at this batch */
	enum eng_binding binding; /* memory | latency (what limits batch) */
	enum eng_binding decode_bound; /* memory_bandwidth | compute */
	bool meets_targets;
};

#define INF_MAX_TOP 16

struct inf_result {
	struct model_params params;
	double weights_bytes;	      /* whole model, incl. scales */
	double kv_bytes_per_token;    /* whole model (tp = 1) */
	double kv_bytes_per_sequence; /* prompt + output */
	int min_tp;		      /* smallest tp (x pp) that fits */
	int n_plans;
	struct inf_plan plans[INF_MAX_TOP];
	int n_warnings;
	char warnings[ENG_MAX_WARNINGS][ENG_WARNING_LEN];
	struct hw_basis basis;
};

void inf_request_init(struct inf_request *rq);
int inf_size(const struct inf_request *rq, struct inf_result *res,
	     struct eng_error *err);

/* One (tp, pp, batch) point: memory, latencies, throughput (static or
 * continuous batching give the same steady-state formula, MODEL.md §7).
 * Fills *p even when the batch does not fit (p->max_batch_fit says). */
int inf_evaluate(const struct inf_request *rq, int tp, int pp, long batch,
		 struct inf_plan *p, struct eng_error *err);

/* Weight bytes of the whole model at dtype w, incl. quantisation scales;
 * embeddings and LM head stay 16-bit under int8/int4/fp8 (MODEL.md §7). */
double inf_weight_bytes(const struct model_arch *m, enum eng_dtype w);

const char *inf_load_kind_name(enum inf_load_kind k);

#endif

/* sizing_inference.c - POST /v1/sizing/inference (issue 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inference.h"
#include "handlers/api.h"
#include "handlers/calib.h"
#include "handlers/arch.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/sizing_parse.h"

static const char *const top_keys[] = {
    "model",
    "weight_precision",
    "kv_cache_precision",
    "prompt_tokens",
    "output_tokens",
    "requests_per_s",
    "concurrent_sequences",
    "output_tokens_per_s",
    "ttft_ms",
    "tpot_ms",
    "gpu",
    "gpus_per_node",
    "tp",
    "max_gpus",
    "price_per_gpu_hour",
    "memory_utilization",
    "max_batch",
    "serving",
    "max_num_batched_tokens",
    "chunked_prefill",
    "scheduler_steps",
    "max_utilization",
    "kernel_launch_us",
    "kernels_per_layer",
    "workspace_gib",
    "top",
    "calibration",
    "power_limit_w",
    "power_cap_slope",
    "hbm_efficiency",
    "intra_node_efficiency",
    "inter_node_efficiency",
    NULL,
};
static const enum eng_dtype weight_precisions[] = {
    ENG_FP32, ENG_BF16, ENG_FP16, ENG_FP8, ENG_INT8, ENG_INT4, ENG_DTYPE_COUNT};
static const enum eng_dtype kv_precisions[] = {
    ENG_FP32, ENG_BF16, ENG_FP16, ENG_FP8, ENG_INT8, ENG_DTYPE_COUNT};
/* The three ways to state load; at most one. */
static const struct {
	const char *key;
	enum inf_load_kind kind;
	double max;
} loads[] = {
    {"requests_per_s", INF_LOAD_REQUESTS_PER_S, 1e7},
    {"concurrent_sequences", INF_LOAD_CONCURRENT_SEQUENCES, 1e8},
    {"output_tokens_per_s", INF_LOAD_OUTPUT_TOKENS_PER_S, 1e10},
};

json_t *inference_request_json(const json_t *body, const struct inf_request *rq,
			       const struct sizing_job *job)
{
	json_t *r = sizing_request_json(body, job->model_name, job->gpu_name);

	sizing_default(r, "weight_precision",
		       json_string(eng_dtype_name(rq->weight_precision)));
	sizing_default(r, "serving",
		       json_string(inf_serving_name(rq->serving)));
	sizing_default(r, "kv_cache_precision",
		       json_string(eng_dtype_name(inf_kv_dtype(rq))));
	sizing_default(r, "top", json_integer(rq->top));
	sizing_default(r, "calibration",
		       json_string(calib_mode_names[job->calib]));
	return r;
}

int inference_parse(struct app *app, const json_t *b, bool gpu_required,
		    struct inf_request *rq, struct sizing_job *job,
		    struct response *res)
{
	struct jv v = {.res = res};
	long long x;
	double d;
	int e, nload = 0;
	const char *serving_names[INF_SERVING_COUNT + 1];

	inf_request_init(rq);
	sizing_parse_model(app, &v, b, top_keys, &rq->model, job);
	sizing_dtype(&v, b, "weight_precision", weight_precisions,
		     &rq->weight_precision);
	sizing_dtype(&v, b, "kv_cache_precision", kv_precisions,
		     &rq->kv_precision);
	if (jv_int(&v, b, "prompt_tokens", true, 1, INF_MAX_TOKENS, &x) == 0)
		rq->prompt_tokens = (long)x;
	if (jv_int(&v, b, "output_tokens", true, 1, INF_MAX_TOKENS, &x) == 0)
		rq->output_tokens = (long)x;
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		if (!jv_present(b, loads[i].key))
			continue;
		if (++nload > 1) {
			jv_error(&v, loads[i].key,
				 "give one of requests_per_s, "
				 "concurrent_sequences, output_tokens_per_s");
			continue;
		}
		if (jv_num(&v, b, loads[i].key, false, 1e-9, loads[i].max,
			   &d) == 0) {
			rq->load_kind = loads[i].kind;
			rq->load_value = d;
		}
	}
	d = 0;
	if (jv_num(&v, b, "ttft_ms", false, 1e-3, 1e7, &d) == 0)
		rq->ttft_ms = d;
	d = 0;
	if (jv_num(&v, b, "tpot_ms", false, 1e-3, 1e7, &d) == 0)
		rq->tpot_ms = d;
	x = 0;
	if (jv_int(&v, b, "gpus_per_node", false, 1, 1024, &x) == 0 && x)
		rq->gpus_per_node = (int)x;
	x = 0;
	if (jv_int(&v, b, "tp", false, 1, 1024, &x) == 0 && x)
		rq->tp = (int)x;
	x = 0;
	if (jv_int(&v, b, "max_gpus", false, 1, 1 << 20, &x) == 0 && x)
		rq->max_gpus = (long)x;
	d = 0;
	if (jv_num0(&v, b, "price_per_gpu_hour", false, 0, SIZING_MAX_PRICE,
		    SIZING_MIN_PRICE, &d) == 0 &&
	    d)
		rq->price_per_gpu_hour = d;
	d = 0;
	if (jv_num(&v, b, "memory_utilization", false, 0.05, 1, &d) == 0)
		rq->memory_utilization = d;
	x = 0;
	if (jv_int(&v, b, "max_batch", false, 1, 1 << 20, &x) == 0 && x)
		rq->max_batch = (long)x;
	/* The engine's profile names (engine/inference.h), in enum order. */
	for (int i = 0; i < INF_SERVING_COUNT; i++)
		serving_names[i] = inf_serving_name((enum inf_serving_engine)i);
	serving_names[INF_SERVING_COUNT] = NULL;
	e = (int)INF_SERVING_VLLM;
	if (jv_enum(&v, b, "serving", false, serving_names, &e) == 0)
		rq->serving = (enum inf_serving_engine)e;
	x = 0;
	if (jv_int(&v, b, "max_num_batched_tokens", false, 1, 1 << 24, &x) ==
		0 &&
	    x)
		rq->max_num_batched_tokens = (long)x;
	x = 0;
	if (jv_int(&v, b, "scheduler_steps", false, 1, INF_MAX_SCHED_STEPS,
		   &x) == 0 &&
	    x)
		rq->scheduler_steps = (int)x;
	if (jv_present(b, "chunked_prefill")) {
		bool on = false;
		if (jv_bool(&v, b, "chunked_prefill", &on) == 0)
			rq->chunked_prefill = on ? 1 : 0;
	}
	d = 0;
	if (jv_num(&v, b, "max_utilization", false, 0.05, 1, &d) == 0)
		rq->max_utilization = d;
	/* the step model's defaults (review s18b F2: shown nowhere, set by
	 * nothing); 0 says none, stored as < 0 (inference.h) */
	{
		/* the step model's overridable defaults (engine/inference.h) */
		const struct {
			const char *key;
			double max;
			double *dst;
		} overheads[] = {
		    {"kernel_launch_us", 1000, &rq->kernel_launch_us},
		    {"kernels_per_layer", 10000, &rq->kernels_per_layer},
		    {"workspace_gib", 1024, &rq->workspace_gib},
		};

		for (size_t k = 0; k < sizeof(overheads) / sizeof(overheads[0]);
		     k++) {
			d = 0;
			if (jv_present(b, overheads[k].key) &&
			    jv_num(&v, b, overheads[k].key, false, 0,
				   overheads[k].max, &d) == 0)
				*overheads[k].dst = d > 0 ? d : -1.0;
		}
	}
	x = rq->top;
	if (jv_int(&v, b, "top", false, 1, INF_MAX_TOP, &x) == 0)
		rq->top = (int)x;
	return sizing_parse_end(app, &v, b, gpu_required, job);
}

int inference_check_gpu(const struct inf_request *rq, const char *field,
			struct response *res)
{
	int gpn =
	    rq->gpus_per_node ? rq->gpus_per_node : rq->gpu.max_gpus_per_node;

	if (rq->tp > gpn) {
		problem_field(res, field,
			      "tp %d is more than the %d GPUs per node of %s: "
			      "tensor parallelism stays inside a node",
			      rq->tp, gpn, rq->gpu.name);
		return -1;
	}
	return 0;
}

static json_t *point_json(const struct inf_point *pt)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "requests_per_s",
			 sizing_real(pt->requests_per_s, 4), "batch",
			 sizing_real(pt->batch, 4), "output_tokens_per_s",
			 sizing_real(pt->output_tokens_per_s, 4), "ttft_ms",
			 sizing_real(pt->ttft_ms, 4), "tpot_ms",
			 sizing_real(pt->tpot_ms, 4),
			 "cost_per_million_output_tokens",
			 sizing_real(pt->cost_per_million_output_tokens, 4));
}

static json_t *plan_json(const struct inf_plan *p)
{
	json_t *o = json_pack(
	    "{s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, "
	    "s:o, s:o}",
	    "tp", p->tp, "pp", p->pp, "batch", sizing_real(p->batch, 4),
	    "decode_batch", sizing_real(p->decode_batch, 4), "requests_per_s",
	    sizing_real(p->requests_per_s, 4), "utilization",
	    sizing_real(p->utilization, 3), "ttft_ms",
	    sizing_real(p->ttft_ms, 4), "tpot_ms", sizing_real(p->tpot_ms, 4),
	    "output_tokens_per_s", sizing_real(p->output_tokens_per_s, 4),
	    "total_output_tokens_per_s",
	    sizing_real(p->total_output_tokens_per_s, 4), "replicas",
	    (json_int_t)p->replicas, "gpus", (json_int_t)p->gpus,
	    "cost_per_hour", sizing_real(p->cost_per_hour, 4),
	    "cost_per_million_output_tokens",
	    sizing_real(p->cost_per_million_output_tokens, 4));
	json_t *cap = point_json(&p->capacity);

	json_object_set_new(cap, "limited_by",
			    json_string(inf_limit_name(p->capacity_limit)));
	json_object_set_new(o, "capacity", cap);
	json_object_set_new(
	    o, "memory_gib",
	    json_pack("{s:o, s:o, s:o, s:o, s:o}", "weights",
		      sizing_real(p->weights_gib, 4), "kv_cache",
		      sizing_real(p->kv_cache_gib, 4), "workspace",
		      sizing_real(p->workspace_gib, 4), "total",
		      sizing_real(p->total_gib, 4), "usable",
		      sizing_real(p->usable_gib, 4)));
	json_object_set_new(o, "max_batch_fit", json_integer(p->max_batch_fit));
	json_object_set_new(o, "mbu", sizing_real(p->mbu, 3));
	json_object_set_new(o, "binding",
			    json_string(eng_binding_name(p->binding)));
	json_object_set_new(o, "decode_bound",
			    json_string(eng_binding_name(p->decode_bound)));
	json_object_set_new(o, "meets_targets", json_boolean(p->meets_targets));
	json_object_set_new(o, "latency_alone_ms",
			    sizing_real(p->latency_alone_ms, 4));
	return o;
}

json_t *inference_serving_json(const struct inf_serving *sv)
{
	json_t *o = json_pack(
	    "{s:s, s:s, s:o, s:s, s:b, s:s}", "engine",
	    inf_serving_name(sv->engine), "kv_reserve",
	    inf_kv_reserve_name(sv->kv_reserve), "memory_fraction",
	    sizing_real(sv->memory_fraction, 4), "kv_per_sequence",
	    sv->kv_full_output ? "prompt + output (reserved at admission)"
			       : "prompt + half the output (blocks on demand)",
	    "chunked_prefill", sv->chunked_prefill, "source",
	    inf_serving_source(sv->engine));

	json_object_set_new(o, "max_num_seqs",
			    sv->max_num_seqs > 0
				? json_integer(sv->max_num_seqs)
				: json_null());
	json_object_set_new(o, "max_num_batched_tokens",
			    sv->max_num_batched_tokens > 0
				? json_integer(sv->max_num_batched_tokens)
				: json_null());
	json_object_set_new(o, "scheduler_steps",
			    json_integer(sv->scheduler_steps));
	/* the step model's defaults or the request's (inference.h) */
	json_object_set_new(o, "kernel_launch_us",
			    sizing_real(sv->kernel_launch_us, 4));
	json_object_set_new(o, "kernels_per_layer",
			    sizing_real(sv->kernels_per_layer, 4));
	json_object_set_new(o, "workspace_gib",
			    sizing_real(sv->workspace_gib, 4));
	json_object_set_new(
	    o, "overheads_source",
	    json_string(sv->overheads_given ? "request" : "default"));
	return o;
}

/* Plain words for the trade-off between the best plan and each other. */
static json_t *tradeoff(const struct inf_plan *best, const struct inf_plan *p,
			bool at_load)
{
	char s[400], lp[16] = "", lb[16] = "";
	double cap_p = p->capacity.output_tokens_per_s / (p->tp * p->pp);
	double cap_b =
	    best->capacity.output_tokens_per_s / (best->tp * best->pp);

	/* a replica is tp x pp GPUs: both named, or two plans on different
	 * GPU counts read as one layout (review s14) */
	if (p->pp > 1)
		snprintf(lp, sizeof(lp), " PP %d", p->pp);
	if (best->pp > 1)
		snprintf(lb, sizeof(lb), " PP %d", best->pp);
	snprintf(s, sizeof(s),
		 "TP %d%s x %ld replica%s vs TP %d%s x %ld: %ld vs %ld GPUs "
		 "($%.2f vs $%.2f per hour), tpot %.1f vs %.1f ms, ttft %.0f "
		 "vs %.0f ms %s; %.2fx the capacity per GPU",
		 p->tp, lp, p->replicas, p->replicas == 1 ? "" : "s", best->tp,
		 lb, best->replicas, p->gpus, best->gpus, p->cost_per_hour,
		 best->cost_per_hour, p->tpot_ms, best->tpot_ms, p->ttft_ms,
		 best->ttft_ms, at_load ? "at this load" : "at capacity",
		 cap_b > 0 ? cap_p / cap_b : 0.0);
	return json_string(s);
}

json_t *inference_result_json(const struct inf_request *rq,
			      const struct inf_result *r,
			      const struct sizing_job *job)
{
	json_t *plans = json_array();
	json_t *warnings = sizing_warnings_json(r->warnings, r->n_warnings);
	json_t *model = sizing_model_json(job->model_name, &r->params);

	sizing_calib_warnings(warnings, &job->ci);
	for (int i = 0; i < r->n_plans; i++) {
		json_t *p = plan_json(&r->plans[i]);
		if (i > 0)
			json_object_set_new(
			    p, "tradeoff",
			    tradeoff(&r->plans[0], &r->plans[i],
				     rq->load_kind != INF_LOAD_NONE));
		json_array_append_new(plans, p);
	}
	/* Byte counts are exact integers (tests/unit/test_engine.c test_78_kv
	 * pins them). */
	json_t *mem = json_pack(
	    "{s:I, s:o, s:I, s:I, s:i}", "weights_bytes",
	    (json_int_t)(r->weights_bytes + 0.5), "weights_gib",
	    sizing_real(r->weights_bytes / 1073741824.0, 5),
	    "kv_cache_bytes_per_token",
	    (json_int_t)(r->kv_bytes_per_token + 0.5),
	    "kv_cache_bytes_per_sequence",
	    (json_int_t)(r->kv_bytes_per_sequence + 0.5), "min_tp", r->min_tp);
	json_t *assumptions = json_pack(
	    "{s:s, s:s, s:o, s:o, s:s, s:s, s:s}", "weight_precision",
	    eng_dtype_name(rq->weight_precision), "load",
	    inf_load_kind_name(rq->load_kind), "load_value",
	    rq->load_kind != INF_LOAD_NONE ? sizing_real(rq->load_value, 6)
					   : json_null(),
	    "max_utilization", sizing_real(r->max_utilization, 3), "batching",
	    "continuous batching at steady state: Poisson arrivals; sequences "
	    "in flight = requests_per_s x (ttft + (output - 1) x tpot) "
	    "(Little's law); decode steps stretch by the prefill share",
	    "ttft",
	    "GPU time: prefill + half the running iteration + M/D/1 queueing "
	    "for the prefill; the request path (HTTP, tokenisation, "
	    "scheduling) adds a cost set by the server version, host and "
	    "client that no engine documents: published HTTP-served TTFTs "
	    "sit 2-75 ms above this (docs/VALIDATION.md)",
	    "operating_point",
	    rq->load_kind != INF_LOAD_NONE
		? "plans are sized at the stated load: replicas are added "
		  "until each runs at or below max_utilization of its capacity"
		: "no load given: the operating point is capacity, the most "
		  "one replica sustains within the targets");
	json_t *basis = sizing_basis_json(&r->basis, &job->ci);

	json_object_set_new(basis, "serving",
			    r->n_plans > 0
				? inference_serving_json(&r->plans[0].serving)
				: json_null());
	/* the attention rate, half of TTFT at long prompts (review s16a F8) */
	json_object_set_new(
	    basis, "attention_tflops",
	    json_pack("{s:o, s:s, s:o, s:s}", "value",
		      sizing_real(r->attn_tflops, 4), "kernel", "fa2",
		      "efficiency_of_16bit_peak",
		      sizing_real(r->attn_efficiency, 3), "source",
		      "FlashAttention-2-class forward rate at the model's "
		      "head dimension, prefill and decode attention "
		      "(docs/MODEL.md §5, §7)"));
	return json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:o}", "model", model,
			 "gpu", job->gpu_name, "memory", mem, "plans", plans,
			 "warnings", warnings, "basis", basis, "assumptions",
			 assumptions);
}

void h_sizing_inference(struct app *app, const struct request *req,
			struct response *res)
{
	struct inf_request rq;
	struct inf_result *r = NULL;
	struct eng_error err;
	struct sizing_job job;
	json_t *body;

	body = jv_parse_body(req, res);
	if (!body)
		return;
	if (inference_parse(app, body, true, &rq, &job, res) != 0 ||
	    sizing_job_gpu(app, &job, &rq.gpu, res) != 0 ||
	    inference_check_gpu(&rq, "tp", res) != 0 ||
	    calib_require_gemm(&job.ci, &rq.gpu, inf_compute_dtype(&rq),
			       job.gpu_row.name, "calibration", res) != 0 ||
	    !(r = sizing_alloc(sizeof(*r), res)))
		goto out;
	if (inf_size(&rq, r, &err) != 0) {
		sizing_engine_problem(res, &err, NULL);
		goto out;
	}
	{
		const struct inf_plan *p = &r->plans[0];
		json_t *summary = json_pack(
		    "{s:i, s:i, s:I, s:I, s:o, s:o, s:o, s:o}", "tp", p->tp,
		    "pp", p->pp, "replicas", (json_int_t)p->replicas, "gpus",
		    (json_int_t)p->gpus, "tpot_ms", sizing_real(p->tpot_ms, 4),
		    "total_output_tokens_per_s",
		    sizing_real(p->total_output_tokens_per_s, 4),
		    "cost_per_million_output_tokens",
		    sizing_real(p->cost_per_million_output_tokens, 4),
		    "cost_per_hour", sizing_real(p->cost_per_hour, 4));
		sizing_persist(
		    app, req, "inference", job.model_name, job.gpu_name,
		    inference_request_json(body, &rq, &job),
		    inference_result_json(&rq, r, &job), summary, res);
	}
out:
	free(r);
	json_decref(body);
}

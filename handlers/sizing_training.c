/* sizing_training.c - POST /v1/sizing/training (issue 3). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "engine/gemm.h"
#include "engine/training.h"
#include "handlers/api.h"
#include "handlers/calib.h"
#include "handlers/arch.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/sizing_parse.h"
#include "handlers/stacks.h"

static const char *const top_keys[] = {
    "model",
    "seq_len",
    "train_tokens",
    "global_batch_size",
    "global_batch_tokens",
    "precision",
    "optimizer",
    "gradient_precision",
    "method",
    "lora_rank",
    "dropout",
    "memory_headroom_fraction",
    "memory_fixed_overhead_gib",
    "memory_fragmentation_fraction",
    "host_link_gbps",
    "host_link_efficiency",
    "cpu_optimizer_gbps",
    "gpu",
    "gpus_per_node",
    "gpus",
    "max_gpus",
    "deadline_days",
    "price_per_gpu_hour",
    "inter_node_gbps",
    "failures_per_gpu_hour",
    "checkpoint_gbps_per_gpu",
    "restart_minutes",
    "max_days",
    "strategies",
    "top",
    "objective",
    "calibration",
    "stack",
    "power_limit_w",
    "power_cap_slope",
    "hbm_efficiency",
    "intra_node_efficiency",
    "inter_node_efficiency",
    NULL,
};
static const char *const strategy_keys[] = {
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "vp",
    "zero",
    "recompute",
    "sequence_parallel",
    "flash_attention",
    "micro_batch",
    "offload",
    "stage_rebalance",
    NULL,
};
static const enum eng_dtype precisions[] = {
    ENG_FP32, ENG_TF32, ENG_FP16, ENG_BF16, ENG_FP8, ENG_DTYPE_COUNT};
static const enum eng_dtype grad_precisions[] = {ENG_BF16, ENG_FP32,
						 ENG_DTYPE_COUNT};

/* A list of strings from choices, or booleans, into c. */
static void enum_list(struct jv *v, const json_t *o, const char *key,
		      const char *const *choices, struct trn_choices *c)
{
	const json_t *arr = json_object_get(o, key), *x;
	size_t i;

	if (!arr || json_is_null(arr))
		return;
	if (!json_is_array(arr))
		arr = json_pack("[O]", arr); /* one value pins it */
	else
		json_incref((json_t *)arr);
	if (json_array_size(arr) == 0 ||
	    json_array_size(arr) > TRN_MAX_CHOICES) {
		jv_error(v, key, "must be a non-empty list of allowed values");
		goto out;
	}
	json_array_foreach(arr, i, x)
	{
		int found = -1;
		if (!choices && json_is_boolean(x))
			found = json_is_true(x);
		for (int k = 0; choices && choices[k] && json_is_string(x); k++)
			if (!strcmp(json_string_value(x), choices[k]))
				found = k;
		if (found < 0) {
			if (choices) {
				/* every choice (review s21c F5: the first
				 * three had been printed, and recompute has
				 * four) */
				char list[256];
				size_t at = 0;

				list[0] = '\0';
				for (int k = 0; choices[k] && at < sizeof(list);
				     k++)
					at += (size_t)snprintf(
					    list + at, sizeof(list) - at,
					    "%s%s", k ? ", " : "", choices[k]);
				jv_error(v, key, "values must be among: %s",
					 list);
			} else
				jv_error(v, key,
					 "values must be true or false");
			goto out;
		}
		c->n = sizing_set_add(c->v, c->n, found);
	}
out:
	json_decref((json_t *)arr);
}

static void parse_strategies(const json_t *s, struct trn_strategies *st,
			     struct response *res)
{
	struct jv v = {.res = res, .prefix = "strategies."};

	if (!s || json_is_null(s))
		return;
	if (!json_is_object(s)) {
		problem_field(res, "strategies",
			      "must be an object of allowed-value lists");
		return;
	}
	jv_reject_unknown(&v, s, strategy_keys);
	for (size_t i = 0; i < TRN_INT_LISTS; i++) {
		const struct trn_int_list *l = &trn_int_lists[i];
		struct trn_choices *c =
		    (struct trn_choices *)((char *)st + l->offset);
		int n = sizing_int_list(&v, s, l->key, l->min, l->max, c->v,
					TRN_MAX_CHOICES);
		c->n = n > 0 ? n : 0;
	}
	enum_list(&v, s, "recompute", eng_recompute_names, &st->recompute);
	enum_list(&v, s, "offload", stack_offload_names, &st->offload);
	enum_list(&v, s, "sequence_parallel", NULL, &st->sequence_parallel);
	enum_list(&v, s, "flash_attention", NULL, &st->flash_attention);
	enum_list(&v, s, "stage_rebalance", NULL, &st->stage_rebalance);
}

/* Request JSON -> engine request. Field errors accumulate in res. */
int training_parse(struct app *app, const json_t *b, bool gpu_required,
		   struct trn_request *rq, struct sizing_job *job,
		   struct response *res)
{
	struct jv v = {.res = res};
	long long x;
	double d;
	int e;

	trn_request_init(rq);
	sizing_parse_model(app, &v, b, top_keys, &rq->model, job);
	/* the software-stack profile (issue 13); field errors accumulate.
	 * Without one, QLoRA gets the stack QLoRA runs on (stack.h). */
	{
		const char *method =
		    json_string_value(json_object_get(b, "method"));
		const char *def = method && !strcmp(method, "qlora")
				      ? STACK_QLORA_DEFAULT_NAME
				  : rq->model.moe.experts > 0
				      ? STACK_MOE_DEFAULT_NAME
				      : STACK_DEFAULT_NAME;
		const json_t *st = json_object_get(b, "stack");
		if (stack_resolve(app, st, def, &rq->stack, res) != 0)
			sizing_defer(res, job);
		job->stack_named =
		    json_is_string(st) ||
		    (json_is_object(st) && json_object_get(st, "name") &&
		     !json_is_null(json_object_get(st, "name")));
		job->stack_overrides_default =
		    json_is_object(st) && !job->stack_named;
	}
	if (jv_int(&v, b, "seq_len", true, 1, TRN_SEQ_LEN_MAX, &x) == 0 && x)
		rq->seq_len = (long)x;
	d = 0;
	/* Below one token there is no job: 0 stands for "not given". */
	if (jv_num0(&v, b, "train_tokens", false, 0, 1e18, 1, &d) == 0)
		rq->train_tokens = d;
	if (jv_present(b, "global_batch_size") &&
	    jv_present(b, "global_batch_tokens"))
		jv_error(&v, "global_batch_tokens",
			 "give global_batch_size or global_batch_tokens, not "
			 "both");
	x = 0;
	if (jv_int(&v, b, "global_batch_size", false, 1, 1 << 26, &x) == 0 && x)
		rq->global_batch_size = (long)x;
	d = 0;
	if (jv_num(&v, b, "global_batch_tokens", false, 1, 1e12, &d) == 0 && d)
		rq->global_batch_tokens = d;
	sizing_dtype(&v, b, "precision", precisions, &rq->precision);
	sizing_dtype(&v, b, "gradient_precision", grad_precisions,
		     &rq->gradient_precision);
	e = 0;
	if (jv_enum(&v, b, "optimizer", false, trn_optimizer_names, &e) == 0)
		rq->optimizer = (enum trn_optimizer)e;
	e = 0;
	if (jv_enum(&v, b, "method", false, trn_method_names, &e) == 0)
		rq->method = (enum trn_method)e;
	x = rq->lora_rank;
	if (jv_int(&v, b, "lora_rank", false, 1, 65536, &x) == 0)
		rq->lora_rank = (long)x;
	job->lora_rank_unused =
	    rq->method == TRN_FULL && jv_present(b, "lora_rank");
	if (jv_present(b, "dropout")) {
		bool on = false;
		if (jv_bool(&v, b, "dropout", &on) == 0)
			rq->dropout = on;
	}
	d = 0;
	if (jv_num0(&v, b, "memory_headroom_fraction", false, 0,
		    TRN_HEADROOM_MAX, 0.001, &d) == 0)
		rq->memory_headroom_fraction = d;
	d = rq->memory_fixed_overhead_gib;
	if (jv_num0(&v, b, "memory_fixed_overhead_gib", false, 0,
		    TRN_FIXED_OVERHEAD_MAX_GIB, 0.001, &d) == 0)
		rq->memory_fixed_overhead_gib = d;
	d = rq->memory_fragmentation_fraction;
	if (jv_num0(&v, b, "memory_fragmentation_fraction", false, 0,
		    TRN_FRAGMENTATION_MAX, 0.0001, &d) == 0)
		rq->memory_fragmentation_fraction = d;
	d = 0;
	if (jv_num(&v, b, "host_link_gbps", false, 0.1, TRN_HOST_RATE_MAX_GBPS,
		   &d) == 0 &&
	    d)
		rq->host_link_gbps = d;
	d = 0;
	if (jv_num(&v, b, "host_link_efficiency", false, SIZING_EFFICIENCY_MIN,
		   1, &d) == 0 &&
	    d)
		rq->host_link_efficiency = d;
	d = 0;
	if (jv_num(&v, b, "cpu_optimizer_gbps", false, 0.01,
		   TRN_HOST_RATE_MAX_GBPS, &d) == 0 &&
	    d)
		rq->cpu_optimizer_gbps = d;
	x = 0;
	if (jv_int(&v, b, "gpus_per_node", false, 1, TRN_GPUS_PER_NODE_MAX,
		   &x) == 0 &&
	    x)
		rq->gpus_per_node = (int)x;
	if (jv_present(b, "gpus") && jv_present(b, "max_gpus"))
		jv_error(&v, "max_gpus", "give gpus or max_gpus, not both");
	x = 0;
	if (jv_int(&v, b, "gpus", false, 1, TRN_GPUS_MAX, &x) == 0 && x)
		rq->gpus = (long)x;
	x = 0;
	if (jv_int(&v, b, "max_gpus", false, 1, TRN_GPUS_MAX, &x) == 0 && x)
		rq->max_gpus = (long)x;
	if (!rq->gpus && !rq->max_gpus)
		rq->max_gpus = 1024; /* stated in the answer's assumptions */
	d = 0;
	if (jv_num(&v, b, "deadline_days", false, 1e-6, 1e6, &d) == 0 && d)
		rq->deadline_days = d;
	d = 0;
	if (jv_num0(&v, b, "price_per_gpu_hour", false, 0, SIZING_MAX_PRICE,
		    SIZING_MIN_PRICE, &d) == 0 &&
	    d)
		rq->price_per_gpu_hour = d;
	d = 0;
	if (jv_num(&v, b, "inter_node_gbps", false, 1e-3, 1e6, &d) == 0 && d)
		rq->inter_node_gbps = d;
	/* Goodput inputs and max_days (engine/training.h ranges; the
	 * request keeps trn_request_init's defaults when absent). */
	d = rq->failures_per_gpu_hour;
	if (jv_num0(&v, b, "failures_per_gpu_hour", false, 0,
		    TRN_FAILURES_PER_GPU_HOUR_MAX, 1e-15, &d) == 0)
		rq->failures_per_gpu_hour = d;
	d = rq->checkpoint_gbps_per_gpu;
	if (jv_num(&v, b, "checkpoint_gbps_per_gpu", false,
		   TRN_CHECKPOINT_GBPS_MIN, TRN_CHECKPOINT_GBPS_MAX, &d) == 0)
		rq->checkpoint_gbps_per_gpu = d;
	d = rq->restart_minutes;
	if (jv_num0(&v, b, "restart_minutes", false, 0, TRN_RESTART_MINUTES_MAX,
		    1e-6, &d) == 0)
		rq->restart_minutes = d;
	d = rq->max_days;
	if (jv_num(&v, b, "max_days", false, TRN_MAX_DAYS_MIN, TRN_MAX_DAYS_MAX,
		   &d) == 0)
		rq->max_days = d;
	if (rq->deadline_days > 0 && rq->train_tokens <= 0)
		jv_error(&v, "train_tokens",
			 "is required with deadline_days: the job's length "
			 "decides whether a plan meets it");
	parse_strategies(json_object_get(b, "strategies"), &rq->strategies,
			 res);
	x = rq->top;
	if (jv_int(&v, b, "top", false, 1, TRN_MAX_TOP, &x) == 0)
		rq->top = (int)x;
	/* With a deadline and no objective, the plan a user wants is the
	 * cheapest that meets it (issue 16); the answer's assumptions say so.
	 */
	e = jv_present(b, "objective") || rq->deadline_days <= 0 ? TRN_OBJ_TIME
								 : TRN_OBJ_COST;
	if (jv_enum(&v, b, "objective", false, trn_objective_names, &e) == 0)
		rq->objective = (enum trn_objective)e;
	return sizing_parse_end(app, &v, b, gpu_required, job);
}

json_t *training_request_json(const json_t *body, const struct trn_request *rq,
			      const struct sizing_job *job)
{
	json_t *r = sizing_request_json(body, job->model_name, job->gpu_name);

	sizing_default(r, "precision",
		       json_string(eng_dtype_name(rq->precision)));
	sizing_default(r, "gradient_precision",
		       json_string(eng_dtype_name(rq->gradient_precision)));
	sizing_default(r, "optimizer",
		       json_string(trn_optimizer_name(rq->optimizer)));
	sizing_default(r, "method", json_string(trn_method_name(rq->method)));
	if (rq->method != TRN_FULL)
		sizing_default(r, "lora_rank", json_integer(rq->lora_rank));
	sizing_default(r, "objective",
		       json_string(trn_objective_name(rq->objective)));
	sizing_default(r, "top", json_integer(rq->top));
	sizing_default(r, "calibration",
		       json_string(calib_mode_names[job->calib]));
	/* the profile's own name, as for the model and GPU, in an object of
	 * overrides too (review s21c F4: an object's forgiven name had been
	 * echoed as typed, and the stored request stopped replaying once a
	 * second profile matched it) */
	{
		json_t *st = json_object_get(r, "stack");

		if (json_is_string(st))
			json_object_set_new(r, "stack",
					    json_string(rq->stack.name));
		else if (json_is_string(json_object_get(st, "name")))
			json_object_set_new(st, "name",
					    json_string(rq->stack.name));
	}
	sizing_default(r, "stack", json_string(rq->stack.name));
	if (!rq->gpus)
		sizing_default(r, "max_gpus", json_integer(rq->max_gpus));
	sizing_default(r, "train_tokens", json_real(rq->train_tokens));
	/* exact, not rounded: the stored request must replay to the same
	 * plans (a rounded storage rate moves the checkpoint interval) */
	sizing_default(r, "failures_per_gpu_hour",
		       json_real(rq->failures_per_gpu_hour));
	sizing_default(r, "checkpoint_gbps_per_gpu",
		       json_real(rq->checkpoint_gbps_per_gpu));
	sizing_default(r, "restart_minutes", json_real(rq->restart_minutes));
	sizing_default(r, "max_days", json_real(rq->max_days));
	return r;
}

static json_t *plan_json(const struct trn_request *rq, const struct trn_plan *p,
			 double r_max_days)
{
	const struct trn_layout *l = &p->layout;
	json_t *o = json_pack(
	    "{s:I, s:I, s:i, s:i, s:i, s:i, s:s, s:b, s:b, s:i, s:I, s:I}",
	    "gpus", (json_int_t)p->gpus, "nodes", (json_int_t)p->nodes, "tp",
	    l->tp, "pp", l->pp, "dp", l->dp, "zero", l->zero, "recompute",
	    eng_recompute_name(l->recompute), "sequence_parallel",
	    l->sequence_parallel, "flash_attention", l->flash_attention,
	    "micro_batch", l->micro_batch, "grad_accum",
	    (json_int_t)p->grad_accum, "global_batch_size",
	    (json_int_t)p->global_batch_size);

	if (l->ep > 1)
		json_object_set_new(o, "ep", json_integer(l->ep));
	if (l->cp > 1)
		json_object_set_new(o, "cp", json_integer(l->cp));
	if (l->vp > 1)
		json_object_set_new(o, "vp", json_integer(l->vp));
	if (l->recompute == ENG_RC_PARTIAL)
		json_object_set_new(o, "recompute_layers",
				    json_integer(l->recompute_layers));
	json_object_set_new(o, "offload",
			    json_string(trn_offload_name(l->offload)));
	if (l->stage_rebalance)
		json_object_set_new(o, "stage_rebalance", json_true());
	if (p->uneven_stages) {
		json_object_set_new(o, "uneven_stages", json_true());
		json_object_set_new(o, "layers_per_stage_max",
				    json_integer(p->layers_per_stage_max));
	}
	json_t *mem =
	    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "weights",
		      sizing_real(p->memory.weights_gib, 4), "gradients",
		      sizing_real(p->memory.gradients_gib, 4), "optimizer",
		      sizing_real(p->memory.optimizer_gib, 4), "activations",
		      sizing_real(p->memory.activations_gib, 4), "overhead",
		      sizing_real(p->memory.overhead_gib, 4), "total",
		      sizing_real(p->memory.total_gib, 4), "capacity",
		      sizing_real(p->memory.capacity_gib, 4));
	if (p->memory.usable_gib < p->memory.capacity_gib)
		json_object_set_new(mem, "usable",
				    sizing_real(p->memory.usable_gib, 4));
	if (l->offload != TRN_OFFLOAD_NONE)
		json_object_set_new(mem, "host",
				    sizing_real(p->memory.host_gib, 4));
	json_object_set_new(o, "memory_gib", mem);
	json_t *t =
	    json_pack("{s:o, s:o, s:o, s:o, s:o}", "compute",
		      sizing_real(p->time.compute_s, 4), "tp_comm",
		      sizing_real(p->time.tp_comm_s, 4), "pp_bubble",
		      sizing_real(p->time.pp_bubble_s, 4), "dp_comm_exposed",
		      sizing_real(p->time.dp_comm_exposed_s, 4), "step",
		      sizing_real(p->time.step_s, 4));
	/* Parts shown only when the plan has them (parts of compute, or
	 * communication of a parallelism the plan uses).
	 */
	const struct {
		const char *key;
		double value;
	} optional_times[] = {
	    {"compute_attention", p->time.attention_s},
	    {"compute_memory_bound", p->time.memory_bound_s},
	    {"pp_p2p", p->time.pp_p2p_s},
	    {"ep_comm", p->time.ep_comm_s},
	    {"cp_comm_exposed", p->time.cp_comm_exposed_s},
	    {"optimizer", p->time.optimizer_s},
	    {"host_link_exposed", p->time.host_link_exposed_s},
	};
	for (size_t i = 0;
	     i < sizeof(optional_times) / sizeof(optional_times[0]); i++)
		if (optional_times[i].value > 0)
			json_object_set_new(
			    t, optional_times[i].key,
			    sizing_real(optional_times[i].value, 4));
	json_object_set_new(o, "time_s", t);
	json_object_set_new(o, "tokens_per_s", sizing_real(p->tokens_per_s, 4));
	json_object_set_new(o, "tokens_per_s_per_gpu",
			    sizing_real(p->tokens_per_s_per_gpu, 4));
	json_object_set_new(o, "mfu", sizing_real(p->mfu, 3));
	json_object_set_new(o, "hfu", sizing_real(p->hfu, 3));
	json_object_set_new(o, "days", sizing_real(p->days, 4));
	json_object_set_new(o, "gpu_hours", sizing_real(p->gpu_hours, 4));
	json_object_set_new(o, "cost", sizing_real(p->cost, 4));
	/* days, gpu_hours and cost include goodput; the steady state
	 * (no interruptions, no checkpoints) beside them (MODEL.md §4) */
	json_object_set_new(o, "steady_state_days",
			    sizing_real(p->steady_days, 4));
	json_object_set_new(o, "steady_state_gpu_hours",
			    sizing_real(p->steady_gpu_hours, 4));
	json_object_set_new(o, "steady_state_cost",
			    sizing_real(p->steady_cost, 4));
	json_object_set_new(o, "goodput_fraction",
			    sizing_real(p->goodput.fraction, 4));
	json_object_set_new(
	    o, "goodput",
	    json_pack("{s:o, s:o, s:o, s:o}", "expected_interruptions",
		      sizing_real(p->goodput.interruptions, 4), "mtbi_hours",
		      sizing_real(p->goodput.mtbi_hours, 4),
		      "checkpoint_write_s",
		      sizing_real(p->goodput.checkpoint_write_s, 4),
		      "checkpoint_interval_s",
		      sizing_real(p->goodput.checkpoint_interval_s, 4)));
	if (r_max_days > 0)
		json_object_set_new(o, "within_max_days",
				    json_boolean(p->within_max_days));
	if (rq->deadline_days > 0) /* absent without a deadline */
		json_object_set_new(o, "meets_deadline",
				    json_boolean(p->meets_deadline));
	json_object_set_new(o, "binding",
			    json_string(eng_binding_name(p->binding)));
	return o;
}

/* The default profiles (stacks.h) and why a request without "stack" gets
 * them: assumptions.stack says so when the profile is one of them; the
 * first row naming the profile, the request's method (or any, -1) and
 * whether the model is MoE (or either, -1) answers. */
static const struct {
	const char *name;
	int method; /* enum trn_method, or -1: any */
	int moe;    /* 1: MoE models only, -1: any */
	const char *why;
} stack_defaults[] = {
    {STACK_MOE_DEFAULT_NAME, -1, 1,
     "the default for mixture-of-experts models when the request names no "
     "stack: Megatron-LM 2021-23 has no MoE layers; basis.stack lists its "
     "values"},
    {STACK_DEFAULT_NAME, TRN_LORA, -1,
     "the default when the request names no stack: the Megatron-LM 2021-22 "
     "runs the engine is calibrated on; basis.stack lists its values. LoRA "
     "through Hugging Face PEFT runs on hf-peft-bnb4: our seven H200 PEFT "
     "steps took 1.19-1.40x this profile's estimate (docs/VALIDATION.md)"},
    {STACK_DEFAULT_NAME, -1, -1,
     "the default when the request names no stack: the Megatron-LM 2021-22 "
     "runs the engine is calibrated on; basis.stack lists its values"},
    {STACK_QLORA_DEFAULT_NAME, TRN_QLORA, -1,
     "the default for method qlora when the request names no stack: "
     "Hugging Face PEFT + bitsandbytes, the stack QLoRA runs on; "
     "basis.stack lists its values"},
};

/* basis.stack.lora_adapters: what the adapters cost (MODEL.md §4a "LoRA
 * adapters"). */
static json_t *lora_adapters_json(const struct trn_request *rq)
{
	struct trn_adapter_bytes b;

	trn_adapter_bytes_of(rq, &b);
	return json_pack(
	    "{s:I, s:o, s:b, s:{s:o, s:o}, s:{s:o, s:o}, s:o, s:s}", "rank",
	    (json_int_t)rq->lora_rank, "gemm_shape_factor",
	    sizing_real(gemm_shape_factor((double)rq->lora_rank, ENG_BF16), 4),
	    "fp32_adapters", b.fp32_cast, "bytes_per_output_value", "forward",
	    sizing_real(b.out_fwd, 4), "backward", sizing_real(b.out_bwd, 4),
	    "bytes_per_input_value", "forward", sizing_real(b.in_fwd, 4),
	    "backward", sizing_real(b.in_bwd, 4), "saved_bytes_per_input_value",
	    sizing_real(b.in_saved, 4), "note",
	    "adapter GEMMs at the rank as smallest dimension, 3 passes; "
	    "scale and add per output value, the input gradients' sum per "
	    "input value; fp32 adapters (PEFT's default) also cast their "
	    "input and save a 16-bit copy of it");
}

static json_t *stack_assumption(const struct trn_request *rq,
				const struct sizing_job *job)
{
	if (job->stack_named) /* the request's choice: no default's reason */
		return json_string(rq->stack.name);
	for (size_t i = 0; i < sizeof(stack_defaults) / sizeof(*stack_defaults);
	     i++)
		if (!strcmp(rq->stack.name, stack_defaults[i].name) &&
		    (stack_defaults[i].method < 0 ||
		     stack_defaults[i].method == (int)rq->method) &&
		    (stack_defaults[i].moe < 0 ||
		     (rq->model.moe.experts > 0) ==
			 (stack_defaults[i].moe > 0)))
			return json_sprintf("%s (%s)%s", rq->stack.name,
					    stack_defaults[i].why,
					    job->stack_overrides_default
						? "; with the request's values"
						: "");
	return json_string(rq->stack.name);
}

/* The engine result as the API's JSON (without id/kind/created_at). */
json_t *training_result_json(const struct trn_request *rq,
			     const struct trn_result *r,
			     const struct sizing_job *job)
{
	json_t *plans = json_array();
	json_t *warnings = sizing_warnings_json(r->warnings, r->n_warnings);
	json_t *model = sizing_model_json(job->model_name, &r->params);

	sizing_calib_warnings(warnings, &job->ci);
	if (job->lora_rank_unused)
		json_array_append_new(
		    warnings, json_string("lora_rank is not used: method is "
					  "full (a rank applies to method lora "
					  "or qlora)"));
	for (int i = 0; i < r->n_plans; i++)
		json_array_append_new(plans,
				      plan_json(rq, &r->plans[i], r->max_days));
	json_t *flops = json_pack(
	    "{s:o, s:o, s:o, s:o, s:s}", "model_per_token",
	    sizing_real(r->model_flops_per_token, 5), "model_total",
	    sizing_real(r->model_flops_total, 5), "hardware_per_token",
	    sizing_real(r->hardware_flops_per_token, 5), "hardware_total",
	    sizing_real(r->hardware_flops_total, 5), "convention",
	    rq->method == TRN_FULL
		? "model = 6·N_active + 12·L·h·s per token (attention "
		  "without causal halving; PaLM/Megatron MFU accounting); "
		  "hardware adds recomputation of the best plan"
		: "model = 4·N_active + 6·N_adapters + 12·L·h·s per token "
		  "(the frozen base has no weight gradients; attention "
		  "without causal halving; PaLM/Megatron MFU accounting); "
		  "hardware adds recomputation of the best plan");
	json_t *checks = json_pack(
	    "{s:{s:o, s:o, s:o, s:s, s:i, s:b}, s:s, s:o}", "tensor_parallel",
	    "t_max", sizing_real(r->t_max.t_max, 3), "peak_tflops",
	    sizing_real(r->t_max.peak_tflops, 4), "link_gbps_one_direction",
	    sizing_real(r->t_max.link_gbps, 4), "rate", r->t_max.rate_name,
	    "tp_of_best_plan", r->t_max.tp_of_best_plan, "ok", r->t_max.ok,
	    "binding", eng_binding_name(r->binding), "warnings", warnings);
	json_t *assumptions =
	    json_pack("{s:s, s:s, s:s, s:I, s:I}", "precision",
		      eng_dtype_name(rq->precision), "gradient_precision",
		      eng_dtype_name(rq->gradient_precision), "optimizer",
		      trn_optimizer_name(rq->optimizer), "max_gpus",
		      (json_int_t)(rq->gpus ? rq->gpus : rq->max_gpus),
		      "seq_len", (json_int_t)rq->seq_len);
	json_object_set_new(assumptions, "method",
			    json_string(trn_method_name(rq->method)));
	json_object_set_new(assumptions, "objective",
			    json_string(trn_objective_name(rq->objective)));
	if (rq->global_batch_size <= 0 && rq->global_batch_tokens <= 0 &&
	    rq->train_tokens > 0 &&
	    rq->train_tokens < trn_default_batch_tokens(rq))
		json_object_set_new(
		    assumptions, "global_batch",
		    json_sprintf("%ld sequences: train_tokens is less than the "
				 "default batch, so a step is the most of the "
				 "run's sequences a multiple of 64 (a power of "
				 "two below 64) holds",
				 r->global_batch_size));
	else if (rq->global_batch_size <= 0 && rq->global_batch_tokens <= 0)
		json_object_set_new(
		    assumptions, "global_batch",
		    rq->method == TRN_FULL
			? json_sprintf(
			      "%ld sequence%s (%.0f tokens): nearest 4M tokens "
			      "(4,194,304) in a multiple of 64 sequences (a "
			      "power of two below 64), the pre-training "
			      "default, so that data-parallel ranks split it",
			      r->global_batch_size,
			      r->global_batch_size == 1 ? "" : "s",
			      (double)r->global_batch_size *
				  (double)rq->seq_len)
			: json_string("16 sequences, the fine-tuning default "
				      "(the QLoRA authors' recipes)"));
	else if (rq->global_batch_size <= 0 &&
		 fmod(rq->global_batch_tokens, (double)rq->seq_len) != 0.0)
		json_object_set_new(
		    assumptions, "global_batch",
		    json_sprintf("%ld sequences: global_batch_tokens / seq_len "
				 "is not whole; the multiple of 64 sequences "
				 "nearest it (a power of two below 64), which "
				 "data-parallel ranks split (%.0f tokens a "
				 "step)",
				 r->global_batch_size,
				 (double)r->global_batch_size *
				     (double)rq->seq_len));
	if (rq->deadline_days > 0) {
		/* plans that miss it rank by time whatever the objective
		 * (training_search.c plan_key): when none meets it the
		 * sentence says so (review s16a F7) */
		bool any_meets = false;
		for (int i = 0; i < r->n_plans; i++)
			any_meets |= r->plans[i].meets_deadline;
		json_object_set_new(
		    assumptions, "deadline",
		    json_pack("{s:o, s:s}", "days",
			      sizing_real(rq->deadline_days, 6), "ranking",
			      !any_meets
				  ? "no plan meets the deadline: the fastest "
				    "first"
			      : rq->objective == TRN_OBJ_COST
				  ? "plans that meet the deadline first, the "
				    "cheapest first (objective cost, the "
				    "default with a deadline); those that miss "
				    "it after, the fastest first"
				  : "plans that meet the deadline first, then "
				    "by the objective; those that miss it "
				    "after, the fastest first"));
	}
	if (r->max_days > 0)
		json_object_set_new(
		    assumptions, "max_days",
		    json_pack("{s:o, s:s}", "days", sizing_real(r->max_days, 6),
			      "ranking",
			      "no deadline: plans that end within max_days "
			      "first, by the objective; longer ones after, "
			      "the fastest first (default 90 days, a "
			      "quarter: docs/MODEL.md §6)"));
	json_object_set_new(
	    assumptions, "goodput",
	    json_pack("{s:o, s:o, s:o, s:o, s:s}", "failures_per_gpu_hour",
		      sizing_real(rq->failures_per_gpu_hour, 5),
		      "checkpoint_gbps_per_gpu",
		      sizing_real(rq->checkpoint_gbps_per_gpu, 5),
		      "restart_minutes", sizing_real(rq->restart_minutes, 5),
		      "checkpoint_gib", sizing_real(r->checkpoint_gib, 4),
		      "model",
		      "days, gpu_hours and cost include interruptions, "
		      "checkpoints at Daly's optimum interval and restarts "
		      "(Daly 2006); defaults from Llama 3 (466 "
		      "interruptions in 54 days on 16,384 GPUs; 2 TB/s "
		      "storage); steady_state_* exclude them"));
	json_object_set_new(assumptions, "memory_units",
			    json_string("GiB (2^30 B)"));
	json_object_set_new(assumptions, "stack", stack_assumption(rq, job));
	json_t *basis = sizing_basis_json(&r->basis, &job->ci);
	{
		const struct model_arch *m = &rq->model;
		double hd = m->mla.kv_lora_rank > 0
				? (double)(m->mla.qk_nope_head_dim +
					   m->mla.qk_rope_head_dim)
				: (double)model_head_dim(m);
		json_t *sb =
		    stack_basis_json(&rq->stack, &rq->gpu, hd,
				     (double)rq->seq_len, rq->precision);
		if (rq->method == TRN_QLORA)
			json_object_set_new(
			    sb, "qlora_dequant_bytes_per_param",
			    sizing_real(trn_dequant_bytes_per_param(rq->method),
					4));
		if (rq->method != TRN_FULL)
			json_object_set_new(sb, "lora_adapters",
					    lora_adapters_json(rq));
		{
			struct trn_amp_extra amp;
			trn_amp_extra_of(rq, &amp);
			/* the time term beside the memory one (MODEL.md §4) */
			if (amp.weight_cast_bytes > 0.0)
				json_object_set_new(
				    sb, "autocast_weight_cast_bytes_per_param",
				    sizing_real(amp.weight_cast_bytes, 4));
			if (amp.h_bytes > 0.0)
				json_object_set_new(
				    sb, "autocast_saved_bytes",
				    json_pack(
					"{s:o, s:o, s:s}", "per_token_layer",
					sizing_real(amp.h_bytes + amp.f_bytes,
						    6),
					"stored_input_full_recompute",
					sizing_real(amp.input_bytes, 6), "note",
					"beyond the fused count: fp32 norm "
					"input and output, one 16-bit copy "
					"per consumer of each norm, the "
					"silu output (18h + 2f; 16h without "
					"a gated MLP); the fp32 residual "
					"stored under full recompute (2h)"));
		}
		json_object_set_new(basis, "stack", sb);
	}
	json_object_set_new(assumptions, "dropout", json_boolean(r->dropout));
	if (!rq->strategies.cp.n)
		json_object_set_new(
		    assumptions, "context_parallel",
		    json_sprintf(
			"searched at cp 1 to 16 while each rank keeps "
			"at least %d tokens of the sequence (up to cp "
			"%ld here; the smallest chunk of published runs "
			"that chose CP); strategies.cp searches others",
			TRN_CP_MIN_RANK_TOKENS,
			trn_cp_max_default(rq->seq_len)));
	/* MODEL.md §3: the share of memory no plan uses, beyond the
	 * modelled overheads; 0 by default. */
	json_object_set_new(
	    basis, "memory_headroom",
	    json_pack("{s:o, s:s, s:s, s:s}", "value",
		      sizing_real(r->memory_headroom_fraction, 4), "unit",
		      "fraction of GPU memory", "source",
		      r->memory_headroom_fraction > 0 ? "request" : "default",
		      "note",
		      "kept free beyond the modelled overheads "
		      "(basis.memory_overheads); default 0: published layouts "
		      "land at 84-93 % of 80 GB in this model (docs/MODEL.md "
		      "section 3)"));
	/* MODEL.md §3: the overhead line of memory_gib, each term the
	 * request's or its default */
	json_object_set_new(
	    basis, "memory_overheads",
	    json_pack(
		"{s:{s:o, s:s, s:s, s:s}, s:{s:o, s:s, s:s, s:s}}", "fixed_gib",
		"value", sizing_real(rq->memory_fixed_overhead_gib, 4), "unit",
		"GiB per GPU", "source",
		rq->memory_fixed_overhead_gib == TRN_DEFAULT_FIXED_OVERHEAD_GIB
		    ? "default"
		    : "request",
		"note",
		"memory_fixed_overhead_gib: CUDA context and cuBLAS "
		"workspaces 1 GiB + NCCL buffers 0.5 GiB by default",
		"fragmentation", "value",
		sizing_real(rq->memory_fragmentation_fraction, 4), "unit",
		"fraction of weights, gradients, optimizer state and "
		"activations",
		"source",
		rq->memory_fragmentation_fraction == TRN_DEFAULT_FRAGMENTATION
		    ? "default"
		    : "request",
		"note",
		"memory_fragmentation_fraction: PyTorch's caching "
		"allocator; default 0.05, the low end of what GMLake "
		"(arXiv:2401.08156: 15 % average) and arXiv:2507.16274 "
		"measured; lower with expandable_segments"));
	/* MODEL.md §4: what an offloading plan's transfers and CPU optimizer
	 * step run at */
	json_object_set_new(
	    basis, "host_offload",
	    json_pack(
		"{s:{s:o, s:o, s:o, s:s, s:s, s:s}, s:{s:o, s:s, s:s, s:s}}",
		"host_link_gbps", "value",
		sizing_real(
		    trn_host_link_gbps(rq) * trn_host_link_efficiency(rq), 4),
		"datasheet", sizing_real(trn_host_link_gbps(rq), 4),
		"efficiency", sizing_real(trn_host_link_efficiency(rq), 4),
		"efficiency_source",
		rq->host_link_efficiency > 0 ? "request" : "default", "source",
		rq->host_link_gbps > 0	     ? "request"
		: rq->gpu.host_link_gbps > 0 ? "datasheet"
					     : "default",
		"note",
		"per GPU and direction: host_link_gbps, else the GPU's PCIe "
		"generation and width, else 25 (PCIe 4.0 x16); offloaded "
		"gradients down, weights up each step; offloaded weights "
		"up twice a micro-batch (under ZeRO-3 the rank's shard)",
		"cpu_optimizer_gbps", "value",
		sizing_real(rq->cpu_optimizer_gbps, 4), "unit",
		"GB/s of optimizer state per GPU", "source",
		rq->cpu_optimizer_gbps == TRN_DEFAULT_CPU_OPTIMIZER_GBPS
		    ? "default"
		    : "request",
		"note",
		"cpu_optimizer_gbps: ZeRO-Offload's CPU Adam reading and "
		"writing the optimizer state (2 x its bytes) on the host; "
		"default 10, an assumption (no published per-GPU figure "
		"was found): set it from the host"));
	return json_pack(
	    "{s:o, s:s, s:I, s:o, s:I, s:I, s:I, s:o, s:o, s:o, "
	    "s:o}",
	    "model", model, "gpu", job->gpu_name, "global_batch_size",
	    (json_int_t)r->global_batch_size, "flops", flops, "min_gpus",
	    (json_int_t)r->min_gpus, "min_gpus_no_offload",
	    (json_int_t)r->min_gpus_no_offload, "layouts_evaluated",
	    (json_int_t)r->layouts_evaluated, "plans", plans, "checks", checks,
	    "basis", basis, "assumptions", assumptions);
}

void h_sizing_training(struct app *app, const struct request *req,
		       struct response *res)
{
	struct trn_request rq;
	struct trn_result *r = NULL;
	struct eng_error err;
	struct sizing_job job;
	struct sizing_budget budget = {.admitted = false};
	int rc;
	json_t *body;

	body = jv_parse_body(req, res);
	if (!body)
		return;
	if (training_parse(app, body, true, &rq, &job, res) != 0 ||
	    sizing_job_gpu(app, &job, &rq.gpu, res) != 0 ||
	    calib_require_gemm(&job.ci, &rq.gpu, rq.precision, job.gpu_row.name,
			       "calibration", res) != 0 ||
	    !(r = sizing_alloc(sizeof(*r), res)))
		goto out;
	sizing_budget_init(&budget, app, req);
	rq.budget = &budget.eng;
	if (sizing_admit(&budget, res) != 0)
		goto out;
	rc = trn_size(&rq, r, &err);
	sizing_budget_end(&budget); /* storing the answer needs no slot */
	if (rc != 0) {
		sizing_engine_problem(res, &err, &budget);
		goto out;
	}
	{
		/* trn_size succeeds only with at least one plan. */
		const struct trn_plan *p = &r->plans[0];
		json_t *summary = json_pack(
		    "{s:I, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o}", "gpus",
		    (json_int_t)p->gpus, "tp", p->layout.tp, "pp", p->layout.pp,
		    "dp", p->layout.dp, "cp", p->layout.cp, "ep", p->layout.ep,
		    "days", sizing_real(p->days, 4), "cost",
		    sizing_real(p->cost, 4), "mfu", sizing_real(p->mfu, 3));
		sizing_persist(
		    app, req, "training", job.model_name, job.gpu_name,
		    training_request_json(body, &rq, &job),
		    training_result_json(&rq, r, &job), summary, res);
	}
out:
	sizing_budget_end(&budget);
	free(r);
	json_decref(body);
}

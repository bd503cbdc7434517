/* stacks.c - GET/PUT /v1/stacks[/{name}] and the request's "stack" (see
 * stacks.h; migrations/0015_stacks.sql; docs/MODEL.md §4a). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gemm.h"
#include "handlers/api.h"
#include "handlers/jsonv.h"
#include "handlers/names.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/stacks.h"
#include "handlers/util.h"
#include "storage/catalog.h"

/* attn_kernel names, with xFormers' as an alias of fa1 */
static const char *const kernel_choices[] = {
    "sdpa-math", "fa1", "xformers", "triton-fa", "fa2", "fa3", "cudnn", NULL};

/* The tunable fields: PUT bodies and a request's overrides share them.
 * Overlaps, launch gaps and kernel counts may be 0 (JV_NUM0 with a floor
 * far from the subnormals, issue 15). */
#define STACK_VALUE_RULES(req)                                                   \
	{"attn_kernel", JV_ENUM, req, 0, 0, kernel_choices, false},              \
	    {"attn_fwd_efficiency", JV_NUM, false, 0.01, 1, NULL, true},         \
	    {"attn_bwd_efficiency", JV_NUM, false, 0.01, 1, NULL, true},         \
	    {"tp_comm_overlap", JV_NUM0, req, 1e-6, 1, NULL, false},             \
	    {"dp_overlap", JV_NUM0, req, 1e-6, 1, NULL, false},                  \
	    {"param_gather_overlap", JV_NUM0, false, 1e-6, 1, NULL, false},      \
	    {"cp_overlap", JV_NUM0, false, 1e-6, 1, NULL, false},                \
	    {"offload_overlap", JV_NUM0, false, 1e-6, 1, NULL, false},           \
	    {"ep_overlap", JV_NUM0, false, 1e-6, 1, NULL, false},                \
	    {"ep_dispatcher",	   JV_ENUM, false, 0, 0,                         \
	     moe_dispatcher_names, false},                                       \
	    {"ep_dispatch_fp8", JV_BOOL, false, 0, 0, NULL, false},              \
	    {"reduce_dtype", JV_ENUM, false, 0, 0, stack_reduce_names, false},   \
	    {"fp8_recipe", JV_ENUM, false, 0, 0, stack_fp8_recipe_names, false}, \
	    {"fp8_weight_cache", JV_BOOL, false, 0, 0, NULL, false},             \
	    {"fp8_param_all_gather", JV_BOOL, false, 0, 0, NULL, false},         \
	    {"lora_fp32_adapters", JV_BOOL, false, 0, 0, NULL, false},           \
	    {"autocast_fp32_params", JV_BOOL, false, 0, 0, NULL, false},         \
	    {"grads_in_backward", JV_BOOL, false, 0, 0, NULL, false},            \
	    {"expert_parallel", JV_BOOL, false, 0, 0, NULL, false},              \
	    {"pipeline_parallel", JV_BOOL, false, 0, 0, NULL, false},            \
	    {"tensor_parallel", JV_BOOL, false, 0, 0, NULL, false},              \
	    {"nf4_base_weights", JV_BOOL, false, 0, 0, NULL, false},             \
	    {"partial_recompute", JV_BOOL, false, 0, 0, NULL, false},            \
	    {"selective_recompute", JV_ENUM, false, 0, 0,                        \
	     stack_sac_names,	    false},                                      \
	    {"gemm_clock_derate", JV_NUM, false, 0.1, 1, NULL, false},           \
	    {"kernel_launch_us", JV_NUM0, false, 1e-6, 1000, NULL, false},       \
	    {"kernels_per_layer", JV_NUM0, false, 1e-6, 1e5, NULL, false},       \
	    {"elementwise_bytes_factor", JV_NUM, false, 1, 100, NULL, false},    \
	    {"loss_logit_bytes", JV_NUM, false, 2, 32, NULL, false},             \
	    {"loss_pass_bytes", JV_NUM, false, 8, 128, NULL, false},             \
	    {"max_zero_stage", JV_INT, false, 0, 3, NULL, false},                \
	    {"max_offload", JV_ENUM, false, 0, 0, stack_offload_names, false},   \
	{                                                                        \
		"max_zero_stage_pp", JV_INT, false, 0, 2, NULL, false            \
	}

static const struct jv_rule put_rules[] = {
    {"name", JV_STR, false, 0, 64, NULL, false},
    {"display_name", JV_STR, true, 0, 128, NULL, false},
    STACK_VALUE_RULES(true),
    {"source", JV_STR, true, 0, 1000, NULL, false},
    {"notes", JV_STR0, false, 0, 4000, NULL, true},
    /* read-only fields a client may echo back from a GET */
    {"created_at", JV_STR, false, 0, 64, NULL, true},
    {"updated_at", JV_STR, false, 0, 64, NULL, true},
};

/* name null is name left out, the default profile (review s19b F9c: a
 * 400, though null counts as not given everywhere) */
static const struct jv_rule override_rules[] = {
    {"name", JV_STR, false, 0, 64, NULL, true},
    STACK_VALUE_RULES(false),
};

#define N_RULES(r) ((int)(sizeof(r) / sizeof((r)[0])))

/* The index in names (NULL-terminated) of o's string member key; -1 when
 * it is absent, not a string or none of them. */
static int name_index(const json_t *o, const char *key,
		      const char *const *names)
{
	const json_t *x = json_object_get(o, key);

	for (int i = 0; json_is_string(x) && names[i]; i++)
		if (!strcmp(json_string_value(x), names[i]))
			return i;
	return -1;
}

/* The members of o that are present and valid (checked by the rules)
 * onto *s. */
static void apply_fields(const json_t *o, struct eng_stack *s)
{
	const json_t *x;
	int named;
	const struct {
		const char *key;
		double *dst;
	} nums[] = {
	    {"attn_fwd_efficiency", &s->attn_fwd_efficiency},
	    {"attn_bwd_efficiency", &s->attn_bwd_efficiency},
	    {"tp_comm_overlap", &s->tp_comm_overlap},
	    {"dp_overlap", &s->dp_overlap},
	    {"param_gather_overlap", &s->param_gather_overlap},
	    {"cp_overlap", &s->cp_overlap},
	    {"offload_overlap", &s->offload_overlap},
	    {"ep_overlap", &s->ep_overlap},
	    {"gemm_clock_derate", &s->gemm_clock_derate},
	    {"kernel_launch_us", &s->kernel_launch_us},
	    {"kernels_per_layer", &s->kernels_per_layer},
	    {"elementwise_bytes_factor", &s->elementwise_bytes_factor},
	    {"loss_logit_bytes", &s->loss_logit_bytes},
	    {"loss_pass_bytes", &s->loss_pass_bytes},
	};
	const struct {
		const char *key;
		bool *dst;
	} flags[] = {
	    {"ep_dispatch_fp8", &s->ep_dispatch_fp8},
	    {"fp8_weight_cache", &s->fp8_weight_cache},
	    {"fp8_param_all_gather", &s->fp8_param_all_gather},
	    {"lora_fp32_adapters", &s->lora_fp32_adapters},
	    {"autocast_fp32_params", &s->autocast_fp32_params},
	    {"grads_in_backward", &s->grads_in_backward},
	    {"expert_parallel", &s->expert_parallel},
	    {"pipeline_parallel", &s->pipeline_parallel},
	    {"tensor_parallel", &s->tensor_parallel},
	    {"nf4_base_weights", &s->nf4_base_weights},
	    {"partial_recompute", &s->partial_recompute},
	};
	const struct {
		const char *key;
		int *dst;
	} ints[] = {
	    {"max_zero_stage", &s->max_zero_stage},
	    {"max_zero_stage_pp", &s->max_zero_stage_pp},
	};

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		x = json_object_get(o, nums[i].key);
		if (json_is_number(x))
			*nums[i].dst = json_number_value(x);
		else if (json_is_null(x))
			*nums[i].dst = 0.0; /* efficiencies: the class's */
	}
	x = json_object_get(o, "attn_kernel");
	if (json_is_string(x))
		attn_kernel_parse(json_string_value(x), &s->attn_kernel);
	if ((named = name_index(o, "reduce_dtype", stack_reduce_names)) >= 0)
		s->reduce_dtype = (enum stack_reduce)named;
	if ((named = name_index(o, "fp8_recipe", stack_fp8_recipe_names)) >= 0)
		s->fp8_recipe = (enum stack_fp8_recipe)named;
	if ((named = name_index(o, "ep_dispatcher", moe_dispatcher_names)) >= 0)
		s->ep_dispatcher = (enum moe_dispatcher)named;
	if ((named = name_index(o, "max_offload", stack_offload_names)) >= 0)
		s->max_offload = (enum stack_offload)named;
	if ((named = name_index(o, "selective_recompute", stack_sac_names)) >=
	    0)
		s->selective_recompute = (enum stack_sac)named;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		x = json_object_get(o, flags[i].key);
		if (json_is_boolean(x))
			*flags[i].dst = json_is_true(x);
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		x = json_object_get(o, ints[i].key);
		if (json_is_number(x))
			*ints[i].dst = (int)json_number_value(x);
	}
}

/* A catalog row by name, forgiving (names.h): 0 with *row, or -1 with a
 * problem in res naming field (404 for the endpoint, 400/422 field error
 * for a request). */
static int get_forgiving(struct app *app, const char *asked, const char *field,
			 bool endpoint, json_t **row, struct response *res)
{
	struct store_err e;
	char suggest[3][80];
	int n = 0;

	if (names_get(app, NAMES_STACK, asked, row, &e, suggest, &n) == 0)
		return 0;
	if (e.status != STORE_NOT_FOUND) {
		problem_store(res, &e, "stack");
		return -1;
	}
	if (endpoint) {
		problem(res, 404, "not-found", "Not found",
			"no stack named \"%.64s\"; GET /v1/stacks lists them",
			asked);
		json_object_set_new(
		    res->json, "errors",
		    json_pack("[{s:s, s:s}]", "field", field, "message",
			      json_string_value(
				  json_object_get(res->json, "detail"))));
	} else {
		problem_field(res, field,
			      "unknown stack \"%.64s\"; GET /v1/stacks lists "
			      "the profiles",
			      asked);
	}
	names_suggest(res, suggest, n);
	return -1;
}

int stack_resolve(struct app *app, const json_t *value,
		  const char *default_name, struct eng_stack *out,
		  struct response *res)
{
	const char *name = default_name;
	const json_t *over = NULL;
	json_t *row = NULL;
	int rc = -1;

	stack_builtin_or_default(default_name, out);
	if (value && !json_is_null(value)) {
		if (json_is_string(value)) {
			name = json_string_value(value);
		} else if (json_is_object(value)) {
			struct jv v = {.res = res, .prefix = "stack."};
			if (jv_check_rules(&v, value, override_rules,
					   N_RULES(override_rules)) > 0)
				return -1;
			over = value;
			if (json_is_string(json_object_get(value, "name")))
				name = json_string_value(
				    json_object_get(value, "name"));
		} else {
			problem_field(res, "stack",
				      "must be a stack name (GET /v1/stacks) "
				      "or an object {\"name\": ..., field: "
				      "value} overriding its values");
			return -1;
		}
	}
	if (!value || json_is_null(value)) {
		/* the default profile: the catalog's, else the built-in */
		struct store_err e;
		if (store_stack_get(app->db, name, &row, &e) == STORE_OK)
			apply_fields(row, out);
		else if (e.status != STORE_NOT_FOUND) {
			problem_store(res, &e, "stack");
			return -1;
		}
	} else if (get_forgiving(app, name, over ? "stack.name" : "stack",
				 false, &row, res) != 0) {
		return -1;
	} else {
		const char *canon =
		    json_string_value(json_object_get(row, "name"));
		snprintf(out->name, sizeof(out->name), "%s",
			 canon ? canon : name);
		apply_fields(row, out);
	}
	if (over)
		apply_fields(over, out);
	{
		const char *bad = NULL;
		if (stack_check(out, &bad) != 0) {
			problem_field(res, "stack", "%s is out of range", bad);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(row);
	return rc;
}

json_t *stack_basis_json(const struct eng_stack *s, const struct hw_spec *g,
			 double head_dim, double seq_len, enum eng_dtype p)
{
	double p16 = g->peak_tflops[ENG_BF16] > 0.0 ? g->peak_tflops[ENG_BF16]
						    : g->peak_tflops[ENG_FP16];
	bool fused = attn_kernel_fused(s->attn_kernel);
	json_t *o = json_pack(
	    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o}", "name",
	    s->name, "attn_kernel", attn_kernel_name(s->attn_kernel),
	    "tp_comm_overlap", sizing_real(s->tp_comm_overlap, 4), "dp_overlap",
	    sizing_real(s->dp_overlap, 4), "param_gather_overlap",
	    sizing_real(s->param_gather_overlap, 4), "cp_overlap",
	    sizing_real(s->cp_overlap, 4), "offload_overlap",
	    sizing_real(s->offload_overlap, 4), "ep_overlap",
	    sizing_real(s->ep_overlap, 4), "reduce_dtype",
	    stack_reduce_names[s->reduce_dtype], "gemm_clock_derate",
	    sizing_real(g->cc_major >= 9 ? s->gemm_clock_derate : 1.0, 4),
	    "gemm_half_rate_dim", sizing_real(gemm_half_rate_dim(p), 4));

	if (fused && p16 > 0.0) {
		json_object_set_new(
		    o, "attn_fwd_efficiency",
		    sizing_real(attn_fused_tflops(g, s->attn_kernel, head_dim,
						  false,
						  s->attn_fwd_efficiency) /
				    p16,
				4));
		json_object_set_new(
		    o, "attn_bwd_efficiency",
		    sizing_real(attn_fused_tflops(g, s->attn_kernel, head_dim,
						  true,
						  s->attn_bwd_efficiency) /
				    p16,
				4));
		json_object_set_new(
		    o, "attn_head_dim_factor",
		    sizing_real(attn_head_dim_factor(head_dim), 4));
		if (s->attn_fwd_efficiency <= 0.0 ||
		    s->attn_bwd_efficiency <= 0.0)
			json_object_set_new(
			    o, "attn_in_step_retention",
			    sizing_real(hw_gemm_in_step_retention(ENG_BF16),
					4));
		/* the kernel's rate at this length against its 8K rate
		 * (stack.h stack_attn_seq_factor) */
		json_object_set_new(
		    o, "attn_seq_factor",
		    json_pack(
			"{s:I, s:o, s:o}", "seq_len",
			(json_int_t)llround(seq_len), "forward",
			sizing_real(stack_attn_seq_factor(s, g, seq_len, false),
				    4),
			"backward",
			sizing_real(stack_attn_seq_factor(s, g, seq_len, true),
				    4)));
	}
	if (s->kernels_per_layer > 0.0 && s->kernel_launch_us > 0.0)
		json_object_set_new(
		    o, "kernel_launch",
		    json_pack("{s:o, s:o}", "us",
			      sizing_real(s->kernel_launch_us, 4),
			      "kernels_per_layer",
			      sizing_real(s->kernels_per_layer, 4)));
	json_object_set_new(
	    o, "ep_dispatcher",
	    json_string(moe_dispatcher_names[s->ep_dispatcher]));
	json_object_set_new(o, "ep_dispatch_fp8",
			    json_boolean(s->ep_dispatch_fp8));
	if (s->ep_dispatch_fp8) /* the dispatch's bytes a value (moe_dispatch.h)
				 */
		json_object_set_new(o, "ep_dispatch_bytes_per_value",
				    sizing_real(MOE_FP8_DISPATCH_BYTES, 4));
	json_object_set_new(o, "elementwise_bytes_factor",
			    sizing_real(s->elementwise_bytes_factor, 4));
	json_object_set_new(o, "loss_logit_bytes",
			    sizing_real(s->loss_logit_bytes, 4));
	json_object_set_new(o, "loss_pass_bytes",
			    sizing_real(s->loss_pass_bytes, 4));
	json_object_set_new(o, "max_zero_stage",
			    json_integer(s->max_zero_stage));
	json_object_set_new(o, "max_zero_stage_pp",
			    json_integer(s->max_zero_stage_pp));
	json_object_set_new(o, "max_offload",
			    json_string(stack_offload_names[s->max_offload]));
	json_object_set_new(o, "expert_parallel",
			    json_boolean(s->expert_parallel));
	json_object_set_new(o, "pipeline_parallel",
			    json_boolean(s->pipeline_parallel));
	json_object_set_new(o, "tensor_parallel",
			    json_boolean(s->tensor_parallel));
	json_object_set_new(o, "nf4_base_weights",
			    json_boolean(s->nf4_base_weights));
	json_object_set_new(o, "partial_recompute",
			    json_boolean(s->partial_recompute));
	json_object_set_new(o, "autocast_fp32_params",
			    json_boolean(s->autocast_fp32_params));
	json_object_set_new(o, "grads_in_backward",
			    json_boolean(s->grads_in_backward));
	json_object_set_new(
	    o, "selective_recompute",
	    json_string(stack_sac_names[s->selective_recompute]));
	if (p == ENG_FP8)
		json_object_set_new(
		    o, "fp8",
		    json_pack(
			"{s:s, s:o, s:o, s:b, s:b}", "recipe",
			stack_fp8_recipe_name(s->fp8_recipe),
			"cast_bytes_per_value",
			sizing_real(stack_fp8_cast_bytes(s->fp8_recipe), 4),
			"weight_cast_bytes_per_value",
			sizing_real(stack_fp8_weight_cast_bytes(s->fp8_recipe),
				    4),
			"weights_cast_once_per_step", s->fp8_weight_cache,
			"weights_all_gathered_in_fp8",
			s->fp8_param_all_gather));
	return o;
}

void h_stacks_list(struct app *app, const struct request *req,
		   struct response *res)
{
	struct store_err e;
	json_t *items;

	(void)req;
	if (store_stack_list(app->db, &items, &e) != STORE_OK) {
		problem_store(res, &e, "stacks");
		return;
	}
	res_json(res, 200, json_pack("{s:o}", "items", items));
}

void h_stack_get(struct app *app, const struct request *req,
		 struct response *res)
{
	json_t *row;

	if (get_forgiving(app, req->params[0], "name", true, &row, res) == 0) {
		record_get_answer(req, res, row);
	}
}

void h_stack_put(struct app *app, const struct request *req,
		 struct response *res)
{
	const char *name = req->params[0];
	struct jv v = {.res = res};
	struct store_err e;
	json_t *body, *stored = NULL, *given;
	int created = 0;
	char version[512];
	const char *cond;      /* If-Match: NULL, "*" or version */
	json_t *shared = NULL; /* names_shared's warnings */

	if (!names_valid_slug(name)) {
		problem_field(res, "name",
			      "must be a lowercase slug of 1 to 64 "
			      "characters [a-z0-9._-]");
		return;
	}
	if (record_if_match(req, version, sizeof(version), &cond, res) != 0)
		return;
	body = jv_parse_body(req, res);
	if (!body)
		return;
	/* a PUT's answer echoed back: its warnings are not a field */
	json_object_del(body, "warnings");
	{
		/* an empty notes (a GET's echo) is no notes */
		const char *nt =
		    json_string_value(json_object_get(body, "notes"));
		if (nt && !nt[0])
			json_object_del(body, "notes");
	}
	jv_check_rules(&v, body, put_rules, N_RULES(put_rules));
	given = json_object_get(body, "name");
	if (json_is_string(given) && strcmp(json_string_value(given), name))
		jv_error(&v, "name", "must match the name in the path");
	names_check_new(app, NAMES_STACK, name, &v);
	/* before it exists: what the new name takes from other entries */
	shared = problem_field_count(res)
		     ? NULL
		     : names_shared(app, NAMES_STACK, name);
	if (problem_field_count(res) > 0)
		goto out;
	{
		/* xFormers' kernel is stored as its class, fa1 */
		const char *k =
		    json_string_value(json_object_get(body, "attn_kernel"));
		if (k && !strcmp(k, "xformers"))
			json_object_set_new(body, "attn_kernel",
					    json_string("fa1"));
	}
	/* 1.0 passed validation as a whole number: store it as 1. */
	jv_ints_as_integers(body, put_rules, N_RULES(put_rules));
	json_object_del(body, "created_at");
	json_object_del(body, "updated_at");
	if (store_stack_put(app->db, name, body, cond, &created, &stored, &e) !=
	    STORE_OK) {
		problem_store(res, &e, "stack");
		goto out;
	}
	record_answer(res, stored, shared, created, "stacks", name);
out:
	json_decref(shared);
	json_decref(body);
}

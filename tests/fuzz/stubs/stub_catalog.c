/* stub_catalog.c - stands in for storage/catalog.c in the fuzz harnesses:
 * GPU and model lookups answer from the seeded catalog snapshot
 * (catalog_rows.h), unknown names are NOT_FOUND, PUT succeeds.
 */
#include <string.h>

#include "engine/stack.h"
#include "storage/catalog.h"
#include "tests/fuzz/stubs/catalog_rows.h"
#include "tests/fuzz/stubs/stub_common.h"

static enum store_status find(const char *const *rows, const char *name,
			      json_t **out, struct store_err *e)
{
	*out = NULL;
	for (int i = 0; rows[i]; i++) {
		json_t *row = json_loads(rows[i], 0, NULL);
		const char *n = json_string_value(json_object_get(row, "name"));
		if (n && !strcmp(n, name)) {
			*out = row;
			return stub_ok(e);
		}
		json_decref(row);
	}
	return stub_fail(e, STORE_NOT_FOUND, "not found");
}

static enum store_status list(const char *const *rows, json_t **out,
			      struct store_err *e)
{
	*out = json_array();
	for (int i = 0; rows[i]; i++)
		json_array_append_new(*out, json_loads(rows[i], 0, NULL));
	return stub_ok(e);
}

enum store_status store_gpu_list(struct db_pool *pool, json_t **out,
				 struct store_err *e)
{
	(void)pool;
	return list(fuzz_gpu_rows, out, e);
}

enum store_status store_gpu_list_text(struct db_pool *pool, char **text,
				      struct store_err *e)
{
	json_t *items = NULL;

	(void)pool;
	list(fuzz_gpu_rows, &items, e);
	*text = json_dumps(items, JSON_COMPACT);
	json_decref(items);
	return *text ? stub_ok(e) : stub_fail(e, STORE_ERROR, "out of memory");
}

enum store_status store_gpu_get(struct db_pool *pool, const char *name,
				json_t **out, struct store_err *e)
{
	(void)pool;
	return find(fuzz_gpu_rows, name, out, e);
}

enum store_status store_gpu_put(struct db_pool *pool, const char *name,
				const json_t *gpu, const char *if_match,
				int *created, json_t **out, struct store_err *e)
{
	(void)pool;
	(void)if_match;
	*created = 1;
	*out = json_deep_copy(gpu);
	json_object_set_new(*out, "name", json_string(name));
	return stub_ok(e);
}

enum store_status store_model_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	(void)pool;
	return list(fuzz_model_rows, out, e);
}

enum store_status store_model_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e)
{
	(void)pool;
	return find(fuzz_model_rows, name, out, e);
}

/* Stacks: the engine's built-in table stands in for migrations/0015's
 * seed (test_engine_stack checks they are equal). */
static json_t *stack_row(const struct eng_stack *s)
{
	json_t *o = json_pack(
	    "{s:s, s:s, s:s, s:n, s:n, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:s, "
	    "s:b, "
	    "s:b, s:s, s:f, "
	    "s:f, s:f, s:f, s:b, s:b, s:b, s:s, s:s}",
	    "name", s->name, "display_name", s->name, "attn_kernel",
	    attn_kernel_name(s->attn_kernel), "attn_fwd_efficiency",
	    "attn_bwd_efficiency", "tp_comm_overlap", s->tp_comm_overlap,
	    "dp_overlap", s->dp_overlap, "param_gather_overlap",
	    s->param_gather_overlap, "cp_overlap", s->cp_overlap,
	    "offload_overlap", s->offload_overlap, "ep_overlap", s->ep_overlap,
	    "reduce_dtype", stack_reduce_names[s->reduce_dtype], "fp8_recipe",
	    stack_fp8_recipe_name(s->fp8_recipe), "fp8_weight_cache",
	    s->fp8_weight_cache, "fp8_param_all_gather",
	    s->fp8_param_all_gather, "selective_recompute",
	    stack_sac_names[s->selective_recompute], "gemm_clock_derate",
	    s->gemm_clock_derate, "kernel_launch_us", s->kernel_launch_us,
	    "kernels_per_layer", s->kernels_per_layer,
	    "elementwise_bytes_factor", s->elementwise_bytes_factor,
	    "lora_fp32_adapters", s->lora_fp32_adapters, "autocast_fp32_params",
	    s->autocast_fp32_params, "grads_in_backward", s->grads_in_backward,
	    "source", "engine/stack.c", "notes", "");
	json_object_set_new(
	    o, "ep_dispatcher",
	    json_string(moe_dispatcher_names[s->ep_dispatcher]));
	json_object_set_new(o, "ep_dispatch_fp8",
			    json_boolean(s->ep_dispatch_fp8));
	return o;
}

enum store_status store_stack_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	(void)pool;
	*out = json_array();
	for (int i = 0; i < STACK_BUILTIN_COUNT; i++)
		json_array_append_new(*out, stack_row(&stack_builtin[i]));
	return stub_ok(e);
}

enum store_status store_stack_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e)
{
	const struct eng_stack *s = stack_builtin_find(name);

	(void)pool;
	*out = NULL;
	if (!s)
		return stub_fail(e, STORE_NOT_FOUND, "not found");
	*out = stack_row(s);
	return stub_ok(e);
}

enum store_status store_stack_put(struct db_pool *pool, const char *name,
				  const json_t *stack, const char *if_match,
				  int *created, json_t **out,
				  struct store_err *e)
{
	(void)pool;
	(void)if_match;
	*created = 1;
	*out = json_deep_copy(stack);
	json_object_set_new(*out, "name", json_string(name));
	return stub_ok(e);
}

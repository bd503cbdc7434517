/* catalog.c - GPU catalog and model preset queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/catalog.h"
#include "storage/pgconn.h"
#include "lib/ttl_cache.h"

/* The API's GPU fields, in one place for SELECT and RETURNING. */
#define GPU_FIELDS                                                             \
	"name, display_name, vendor, architecture, compute_capability, "       \
	"memory_gib, memory_type, memory_bandwidth_gbps, fp64_tflops, "        \
	"fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, "     \
	"int8_tops, intra_node_link, intra_node_gbps, max_gpus_per_node, "     \
	"inter_node_gbps, pcie_gen, pcie_width, power_w, "                     \
	"price_per_gpu_hour, gemm_peak_fraction, efficiency_basis, "           \
	"efficiency_source, source, notes, created_at, updated_at"

#define MODEL_FIELDS "name, display_name, family, arch, source, notes"

/* The API's stack fields (migrations/0015_stacks.sql, 0019, 0023, 0027,
 * 0028, 0029, 0031, 0032, 0033, 0034, 0035, 0036, 0039, 0040, 0041,
 * 0042). */
#define STACK_FIELDS                                                           \
	"name, display_name, attn_kernel, attn_fwd_efficiency, "               \
	"attn_bwd_efficiency, tp_comm_overlap, dp_overlap, "                   \
	"param_gather_overlap, cp_overlap, offload_overlap, ep_overlap, "      \
	"ep_dispatcher, ep_dispatch_fp8, "                                     \
	"reduce_dtype, fp8_recipe, fp8_weight_cache, "                         \
	"fp8_param_all_gather, selective_recompute, gemm_clock_derate, "       \
	"kernel_launch_us, "                                                   \
	"kernels_per_layer, elementwise_bytes_factor, loss_logit_bytes, "      \
	"loss_pass_bytes, max_zero_stage, max_zero_stage_pp, max_offload, "    \
	"expert_parallel, pipeline_parallel, tensor_parallel, "                \
	"nf4_base_weights, partial_recompute, "                                \
	"lora_fp32_adapters, autocast_fp32_params, grads_in_backward, "        \
	"source, notes, created_at, updated_at"

/* A read-through cache of catalog JSON text. The catalog changes by hand
 * and rarely, while every sizing request reads a GPU and a model from it:
 * entries live 2 s, a PUT through this process clears them at
 * once, and other replicas see a change within the TTL (docs/OPERATIONS.md).
 */
TTL_CACHE(catalog_cache, 128, 2000);

/* Runs a read returning one JSON value as text (caller frees), through
 * the cache under key.
 */
static enum store_status query_text(struct db_pool *pool, const char *key,
				    const char *sql, int n,
				    const char *const *params, char **text,
				    struct store_err *e)
{
	PGresult *r = NULL;
	/* read before the query: a PUT that commits and clears the cache
	 * while it runs keeps its old answer out (review s19a F2) */
	unsigned long gen = ttl_cache_generation(&catalog_cache);

	store_err_clear(e);
	{
		size_t len;
		*text = ttl_cache_get(&catalog_cache, key, &len);
		if (*text)
			return STORE_OK;
	}
	if (db_exec(pool, sql, n, params, 1, &r, e) != STORE_OK)
		return e->status;
	if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "not found");
	} else {
		ttl_cache_put(&catalog_cache, gen, key, PQgetvalue(r, 0, 0),
			      (size_t)PQgetlength(r, 0, 0) + 1);
		*text = strdup(PQgetvalue(r, 0, 0));
		if (!*text) {
			e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "out of memory");
		}
	}
	PQclear(r);
	return e->status;
}

/* The same, parsed (caller decrefs). */
static enum store_status query_json(struct db_pool *pool, const char *key,
				    const char *sql, int n,
				    const char *const *params, json_t **out,
				    struct store_err *e)
{
	char *text = NULL;
	json_error_t jerr;

	*out = NULL;
	if (query_text(pool, key, sql, n, params, &text, e) != STORE_OK)
		return e->status;
	*out = json_loads(text, 0, &jerr);
	free(text);
	if (!*out) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "database returned invalid JSON: %s", jerr.text);
	}
	return e->status;
}

/* clang-format off */
#define GPU_LIST_SQL                                                           \
	"SELECT coalesce(json_agg(g ORDER BY g.name), '[]')"                   \
	" FROM (SELECT " GPU_FIELDS " FROM gpus) g"
/* clang-format on */

enum store_status store_gpu_list_text(struct db_pool *pool, char **text,
				      struct store_err *e)
{
	return query_text(pool, "gpus", GPU_LIST_SQL, 0, NULL, text, e);
}

enum store_status store_gpu_list(struct db_pool *pool, json_t **out,
				 struct store_err *e)
{
	return query_json(pool, "gpus", GPU_LIST_SQL, 0, NULL, out, e);
}

enum store_status store_gpu_get(struct db_pool *pool, const char *name,
				json_t **out, struct store_err *e)
{
	const char *params[1] = {name};
	char key[96];

	snprintf(key, sizeof(key), "gpu:%s", name);
	return query_json(pool, key,
			  /* clang-format off */
			  "SELECT row_to_json(g) FROM (SELECT " GPU_FIELDS
			  " FROM gpus WHERE name = $1) g",
			  /* clang-format on */
			  1, params, out, e);
}

/* A conditional PUT (catalog.h): $3 of the upsert says which condition
 * - none; any existing row (If-Match: *); the row at one of the versions
 * of $4, updated_at values comma-separated (If-Match: tags), compared
 * as the text the ETag carries (to_json's rendering), byte for byte: RFC
 * 9110's strong comparison, as If-None-Match's on GET (review s16c F6:
 * the same instant written with Z matched); no row
 * (If-None-Match: *, given as
 * "!") - so the statement inserts only when none or absent and updates
 * only when the condition holds. */
static const char *match_mode(const char *cond)
{
	return !cond		    ? "none"
	       : !strcmp(cond, "*") ? "any"
	       : !strcmp(cond, "!") ? "absent"
				    : "version";
}

static const char *match_version(const char *cond)
{
	return cond && strcmp(cond, "*") && strcmp(cond, "!") ? cond : NULL;
}

/* The statement changed nothing: its condition did not hold. */
static void precondition_failed(struct store_err *e, const char *cond,
				const char *what, const char *name)
{
	e->status = STORE_PRECONDITION;
	if (!strcmp(cond, "!"))
		snprintf(e->message, sizeof(e->message),
			 "If-None-Match: the %s \"%.64s\" exists already: "
			 "GET it and send If-Match to replace it",
			 what, name);
	else
		snprintf(e->message, sizeof(e->message),
			 "If-Match: the %s \"%.64s\" is not at that version "
			 "(or does not exist): GET it again and resend your "
			 "change",
			 what, name);
}

enum store_status store_gpu_put(struct db_pool *pool, const char *name,
				const json_t *gpu, const char *if_match,
				int *created, json_t **out, struct store_err *e)
{
	PGresult *r = NULL;
	char *body = json_dumps(gpu, JSON_COMPACT);
	const char *params[4] = {name, body, match_mode(if_match),
				 match_version(if_match)};
	json_error_t jerr;

	*out = NULL;
	*created = 0;
	if (!body) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
		return e->status;
	}
	if (db_exec(
		pool,
		/* clang-format off */
		"WITH r AS (SELECT * FROM jsonb_populate_record("
		"  NULL::gpus, $2::jsonb)),"
		" up AS (INSERT INTO gpus AS g (name, display_name, vendor,"
		"  architecture, compute_capability, memory_gib, memory_type,"
		"  memory_bandwidth_gbps, fp64_tflops, fp32_tflops,"
		"  tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops,"
		"  int8_tops, intra_node_link, intra_node_gbps,"
		"  max_gpus_per_node, inter_node_gbps, pcie_gen, pcie_width,"
		"  power_w, price_per_gpu_hour, gemm_peak_fraction,"
		"  efficiency_basis, efficiency_source, source, notes)"
		" SELECT $1, display_name, vendor, architecture,"
		"  compute_capability, memory_gib, memory_type,"
		"  memory_bandwidth_gbps, fp64_tflops, fp32_tflops,"
		"  tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops,"
		"  int8_tops, intra_node_link, intra_node_gbps,"
		"  coalesce(max_gpus_per_node, 8),"
		"  coalesce(inter_node_gbps, 50), pcie_gen, pcie_width,"
		"  power_w, price_per_gpu_hour, gemm_peak_fraction,"
		"  coalesce(efficiency_basis, 'datasheet_only'),"
		"  coalesce(efficiency_source, ''), source, coalesce(notes, '')"
		"  FROM r WHERE $3 IN ('none', 'absent')"
		"  OR EXISTS (SELECT 1 FROM gpus WHERE name = $1)"
		" ON CONFLICT (name) DO UPDATE SET"
		"  display_name = EXCLUDED.display_name,"
		"  vendor = EXCLUDED.vendor,"
		"  architecture = EXCLUDED.architecture,"
		"  compute_capability = EXCLUDED.compute_capability,"
		"  memory_gib = EXCLUDED.memory_gib,"
		"  memory_type = EXCLUDED.memory_type,"
		"  memory_bandwidth_gbps = EXCLUDED.memory_bandwidth_gbps,"
		"  fp64_tflops = EXCLUDED.fp64_tflops,"
		"  fp32_tflops = EXCLUDED.fp32_tflops,"
		"  tf32_tflops = EXCLUDED.tf32_tflops,"
		"  fp16_tflops = EXCLUDED.fp16_tflops,"
		"  bf16_tflops = EXCLUDED.bf16_tflops,"
		"  fp8_tflops = EXCLUDED.fp8_tflops,"
		"  int8_tops = EXCLUDED.int8_tops,"
		"  intra_node_link = EXCLUDED.intra_node_link,"
		"  intra_node_gbps = EXCLUDED.intra_node_gbps,"
		"  max_gpus_per_node = EXCLUDED.max_gpus_per_node,"
		"  inter_node_gbps = EXCLUDED.inter_node_gbps,"
		"  pcie_gen = EXCLUDED.pcie_gen,"
		"  pcie_width = EXCLUDED.pcie_width,"
		"  power_w = EXCLUDED.power_w,"
		"  price_per_gpu_hour = EXCLUDED.price_per_gpu_hour,"
		"  gemm_peak_fraction = EXCLUDED.gemm_peak_fraction,"
		"  efficiency_basis = EXCLUDED.efficiency_basis,"
		"  efficiency_source = EXCLUDED.efficiency_source,"
		"  source = EXCLUDED.source, notes = EXCLUDED.notes,"
		"  updated_at = now()"
		" WHERE $3 IN ('none', 'any')"
		"  OR ($3 = 'version' AND to_json(g.updated_at) #>> '{}' ="
		"   ANY(string_to_array($4, ',')))"
		" RETURNING (xmax = 0) AS created, " GPU_FIELDS ")"
		" SELECT created, (SELECT row_to_json(x) FROM "
		"(SELECT " GPU_FIELDS "  ) x) FROM up",
		/* clang-format on */
		4, params, 0, &r, e) != STORE_OK)
		goto out;
	if (PQntuples(r) == 0) {
		precondition_failed(e, if_match, "GPU", name);
		goto out;
	}
	ttl_cache_clear(&catalog_cache);
	*created = PQgetvalue(r, 0, 0)[0] == 't';
	*out = json_loads(PQgetvalue(r, 0, 1), 0, &jerr);
	if (!*out) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "invalid JSON: %s",
			 jerr.text);
	}
out:
	PQclear(r);
	free(body);
	return e->status;
}

enum store_status store_model_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	return query_json(pool, "models",
			  /* clang-format off */
			  "SELECT coalesce(json_agg(m ORDER BY m.name), '[]')"
			  " FROM (SELECT " MODEL_FIELDS " FROM models) m",
			  /* clang-format on */
			  0, NULL, out, e);
}

enum store_status store_model_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e)
{
	const char *params[1] = {name};
	char key[96];

	snprintf(key, sizeof(key), "model:%s", name);
	return query_json(pool, key,
			  /* clang-format off */
			  "SELECT row_to_json(m) FROM (SELECT " MODEL_FIELDS
			  " FROM models WHERE name = $1) m",
			  /* clang-format on */
			  1, params, out, e);
}

enum store_status store_stack_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	return query_json(pool, "stacks",
			  /* clang-format off */
			  "SELECT coalesce(json_agg(s ORDER BY s.name), '[]')"
			  " FROM (SELECT " STACK_FIELDS " FROM stacks) s",
			  /* clang-format on */
			  0, NULL, out, e);
}

enum store_status store_stack_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e)
{
	const char *params[1] = {name};
	char key[96];

	snprintf(key, sizeof(key), "stack:%s", name);
	return query_json(pool, key,
			  /* clang-format off */
			  "SELECT row_to_json(s) FROM (SELECT " STACK_FIELDS
			  " FROM stacks WHERE name = $1) s",
			  /* clang-format on */
			  1, params, out, e);
}

enum store_status store_stack_put(struct db_pool *pool, const char *name,
				  const json_t *stack, const char *if_match,
				  int *created, json_t **out,
				  struct store_err *e)
{
	PGresult *r = NULL;
	char *body = json_dumps(stack, JSON_COMPACT);
	const char *params[4] = {name, body, match_mode(if_match),
				 match_version(if_match)};
	json_error_t jerr;

	*out = NULL;
	*created = 0;
	if (!body) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
		return e->status;
	}
	if (db_exec(
		pool,
		/* clang-format off */
		"WITH r AS (SELECT * FROM jsonb_populate_record("
		"  NULL::stacks, $2::jsonb)),"
		" up AS (INSERT INTO stacks AS s (name, display_name,"
		"  attn_kernel, attn_fwd_efficiency, attn_bwd_efficiency,"
		"  tp_comm_overlap, dp_overlap, param_gather_overlap,"
		"  cp_overlap, offload_overlap, ep_overlap, ep_dispatcher,"
		"  ep_dispatch_fp8,"
		"  reduce_dtype, fp8_recipe, fp8_weight_cache,"
		"  fp8_param_all_gather, selective_recompute, gemm_clock_derate,"
		"  kernel_launch_us,"
		"  kernels_per_layer, elementwise_bytes_factor, loss_logit_bytes,"
		"  loss_pass_bytes, max_zero_stage, max_zero_stage_pp, max_offload,"
		"  expert_parallel, pipeline_parallel, tensor_parallel, nf4_base_weights, partial_recompute, lora_fp32_adapters, autocast_fp32_params, grads_in_backward,"
		"  source, notes)"
		" SELECT $1, display_name, attn_kernel, attn_fwd_efficiency,"
		"  attn_bwd_efficiency, tp_comm_overlap, dp_overlap,"
		"  coalesce(param_gather_overlap, 0),"
		"  coalesce(cp_overlap, 0.8), coalesce(offload_overlap, 0.8),"
		"  coalesce(ep_overlap, 0),"
		"  coalesce(ep_dispatcher, 'alltoall'),"
		"  coalesce(ep_dispatch_fp8, false),"
		"  coalesce(reduce_dtype, 'grad'),"
		"  coalesce(fp8_recipe, 'delayed'),"
		"  coalesce(fp8_weight_cache, true),"
		"  coalesce(fp8_param_all_gather, false),"
		"  coalesce(selective_recompute, 'attention'),"
		"  coalesce(gemm_clock_derate, 1),"
		"  coalesce(kernel_launch_us, 0), coalesce(kernels_per_layer, 0),"
		"  coalesce(elementwise_bytes_factor, 1),"
		"  coalesce(loss_logit_bytes, 4),"
		"  coalesce(loss_pass_bytes, 16),"
		"  coalesce(max_zero_stage, 3), coalesce(max_zero_stage_pp, 2),"
		"  coalesce(max_offload, 'optimizer+weights'),"
		"  coalesce(expert_parallel, true),"
		"  coalesce(pipeline_parallel, true),"
		"  coalesce(tensor_parallel, true),"
		"  coalesce(nf4_base_weights, false),"
		"  coalesce(partial_recompute, false),"
		"  coalesce(lora_fp32_adapters, false),"
		"  coalesce(autocast_fp32_params, false),"
		"  coalesce(grads_in_backward, false), source,"
		"  coalesce(notes, '') FROM r WHERE $3 IN ('none', 'absent')"
		"  OR EXISTS (SELECT 1 FROM stacks WHERE name = $1)"
		" ON CONFLICT (name) DO UPDATE SET"
		"  display_name = EXCLUDED.display_name,"
		"  attn_kernel = EXCLUDED.attn_kernel,"
		"  attn_fwd_efficiency = EXCLUDED.attn_fwd_efficiency,"
		"  attn_bwd_efficiency = EXCLUDED.attn_bwd_efficiency,"
		"  tp_comm_overlap = EXCLUDED.tp_comm_overlap,"
		"  dp_overlap = EXCLUDED.dp_overlap,"
		"  param_gather_overlap = EXCLUDED.param_gather_overlap,"
		"  cp_overlap = EXCLUDED.cp_overlap,"
		"  offload_overlap = EXCLUDED.offload_overlap,"
		"  ep_overlap = EXCLUDED.ep_overlap,"
		"  ep_dispatcher = EXCLUDED.ep_dispatcher,"
		"  ep_dispatch_fp8 = EXCLUDED.ep_dispatch_fp8,"
		"  reduce_dtype = EXCLUDED.reduce_dtype,"
		"  fp8_recipe = EXCLUDED.fp8_recipe,"
		"  fp8_weight_cache = EXCLUDED.fp8_weight_cache,"
		"  fp8_param_all_gather = EXCLUDED.fp8_param_all_gather,"
		"  selective_recompute = EXCLUDED.selective_recompute,"
		"  gemm_clock_derate = EXCLUDED.gemm_clock_derate,"
		"  kernel_launch_us = EXCLUDED.kernel_launch_us,"
		"  kernels_per_layer = EXCLUDED.kernels_per_layer,"
		"  elementwise_bytes_factor = EXCLUDED.elementwise_bytes_factor,"
		"  loss_logit_bytes = EXCLUDED.loss_logit_bytes,"
		"  loss_pass_bytes = EXCLUDED.loss_pass_bytes,"
		"  max_zero_stage = EXCLUDED.max_zero_stage,"
		"  max_zero_stage_pp = EXCLUDED.max_zero_stage_pp,"
		"  max_offload = EXCLUDED.max_offload,"
		"  expert_parallel = EXCLUDED.expert_parallel,"
		"  pipeline_parallel = EXCLUDED.pipeline_parallel,"
		"  tensor_parallel = EXCLUDED.tensor_parallel,"
		"  nf4_base_weights = EXCLUDED.nf4_base_weights,"
		"  partial_recompute = EXCLUDED.partial_recompute,"
		"  lora_fp32_adapters = EXCLUDED.lora_fp32_adapters,"
		"  autocast_fp32_params = EXCLUDED.autocast_fp32_params,"
		"  grads_in_backward = EXCLUDED.grads_in_backward,"
		"  source = EXCLUDED.source, notes = EXCLUDED.notes,"
		"  updated_at = now()"
		" WHERE $3 IN ('none', 'any')"
		"  OR ($3 = 'version' AND to_json(s.updated_at) #>> '{}' ="
		"   ANY(string_to_array($4, ',')))"
		" RETURNING (xmax = 0) AS created, " STACK_FIELDS ")"
		" SELECT created, (SELECT row_to_json(x) FROM "
		"(SELECT " STACK_FIELDS "  ) x) FROM up",
		/* clang-format on */
		4, params, 0, &r, e) != STORE_OK)
		goto out;
	if (PQntuples(r) == 0) {
		precondition_failed(e, if_match, "stack", name);
		goto out;
	}
	ttl_cache_clear(&catalog_cache);
	*created = PQgetvalue(r, 0, 0)[0] == 't';
	*out = json_loads(PQgetvalue(r, 0, 1), 0, &jerr);
	if (!*out) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "invalid JSON: %s",
			 jerr.text);
	}
out:
	PQclear(r);
	free(body);
	return e->status;
}

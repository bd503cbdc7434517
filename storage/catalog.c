/* catalog.c - GPU catalog and model preset queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/catalog.h"
#include "storage/pgconn.h"

/* The API's GPU fields, in one place for SELECT and RETURNING. */
#define GPU_FIELDS                                                             \
	"name, display_name, vendor, architecture, compute_capability, "       \
	"memory_gib, memory_type, memory_bandwidth_gbps, fp64_tflops, "        \
	"fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops, "     \
	"int8_tops, intra_node_link, intra_node_gbps, max_gpus_per_node, "     \
	"inter_node_gbps, pcie_gen, pcie_width, power_w, "                     \
	"price_per_gpu_hour, source, notes, created_at, updated_at"

#define MODEL_FIELDS "name, display_name, family, arch, source, notes"

/* Parses the single json value a query returned in row 0, column 0. */
static enum store_status take_json(PGresult *r, json_t **out,
				   struct store_err *e)
{
	json_error_t jerr;

	if (PQntuples(r) == 0 || PQgetisnull(r, 0, 0)) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "not found");
		return e->status;
	}
	*out = json_loads(PQgetvalue(r, 0, 0), 0, &jerr);
	if (!*out) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "database returned invalid JSON: %s", jerr.text);
	}
	return e->status;
}

static enum store_status query_json(struct db_pool *pool, const char *sql,
				    int n, const char *const *params,
				    int idempotent, json_t **out,
				    struct store_err *e)
{
	PGresult *r = NULL;

	*out = NULL;
	if (db_exec(pool, sql, n, params, idempotent, &r, e) != STORE_OK)
		return e->status;
	take_json(r, out, e);
	PQclear(r);
	return e->status;
}

enum store_status store_gpu_list(struct db_pool *pool, json_t **out,
				 struct store_err *e)
{
	return query_json(pool,
			  "SELECT coalesce(json_agg(g ORDER BY g.name), '[]')"
			  " FROM (SELECT " GPU_FIELDS " FROM gpus) g",
			  0, NULL, 1, out, e);
}

enum store_status store_gpu_get(struct db_pool *pool, const char *name,
				json_t **out, struct store_err *e)
{
	const char *params[1] = {name};

	return query_json(pool,
			  "SELECT row_to_json(g) FROM (SELECT " GPU_FIELDS
			  " FROM gpus WHERE name = $1) g",
			  1, params, 1, out, e);
}

enum store_status store_gpu_put(struct db_pool *pool, const char *name,
				const json_t *gpu, int *created, json_t **out,
				struct store_err *e)
{
	PGresult *r = NULL;
	char *body = json_dumps(gpu, JSON_COMPACT);
	const char *params[2] = {name, body};
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
		"WITH r AS (SELECT * FROM jsonb_populate_record("
		"  NULL::gpus, $2::jsonb)),"
		" up AS (INSERT INTO gpus AS g (name, display_name, vendor,"
		"  architecture, compute_capability, memory_gib, memory_type,"
		"  memory_bandwidth_gbps, fp64_tflops, fp32_tflops,"
		"  tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops,"
		"  int8_tops, intra_node_link, intra_node_gbps,"
		"  max_gpus_per_node, inter_node_gbps, pcie_gen, pcie_width,"
		"  power_w, price_per_gpu_hour, source, notes)"
		" SELECT $1, display_name, vendor, architecture,"
		"  compute_capability, memory_gib, memory_type,"
		"  memory_bandwidth_gbps, fp64_tflops, fp32_tflops,"
		"  tf32_tflops, fp16_tflops, bf16_tflops, fp8_tflops,"
		"  int8_tops, intra_node_link, intra_node_gbps,"
		"  coalesce(max_gpus_per_node, 8),"
		"  coalesce(inter_node_gbps, 50), pcie_gen, pcie_width,"
		"  power_w, price_per_gpu_hour, source, coalesce(notes, '')"
		"  FROM r"
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
		"  source = EXCLUDED.source, notes = EXCLUDED.notes,"
		"  updated_at = now()"
		" RETURNING (xmax = 0) AS created, " GPU_FIELDS ")"
		" SELECT created, (SELECT row_to_json(x) FROM "
		"(SELECT " GPU_FIELDS "  ) x) FROM up",
		2, params, 0, &r, e) != STORE_OK)
		goto out;
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
	return query_json(pool,
			  "SELECT coalesce(json_agg(m ORDER BY m.name), '[]')"
			  " FROM (SELECT " MODEL_FIELDS " FROM models) m",
			  0, NULL, 1, out, e);
}

enum store_status store_model_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e)
{
	const char *params[1] = {name};

	return query_json(pool,
			  "SELECT row_to_json(m) FROM (SELECT " MODEL_FIELDS
			  " FROM models WHERE name = $1) m",
			  1, params, 1, out, e);
}

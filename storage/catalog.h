/* catalog.h - the GPU catalog and model presets.
 *
 * Rows come back as jansson objects whose keys are the API's field names
 * (the columns are named for the API). Reads go through a 2-second cache
 * (every sizing request reads a GPU and a model); store_gpu_put clears it.
 * Caller owns every json_t returned through an out pointer and releases it with
 * json_decref().
 */
#ifndef GPUSIZER_STORAGE_CATALOG_H
#define GPUSIZER_STORAGE_CATALOG_H

#include <jansson.h>

#include "storage/db.h"

/* Every GPU, ordered by name: *out is an array. */
enum store_status store_gpu_list(struct db_pool *pool, json_t **out,
				 struct store_err *e);
/* The same list as JSON text, as cheap as the cache makes it: the read
 * path of GET /v1/gpus (caller frees).
 */
enum store_status store_gpu_list_text(struct db_pool *pool, char **text,
				      struct store_err *e);
/* One GPU by name: STORE_NOT_FOUND when absent. */
enum store_status store_gpu_get(struct db_pool *pool, const char *name,
				json_t **out, struct store_err *e);
/* One catalog GPU as the typed figures sizing reads (the columns of
 * migrations/0001_schema.sql named alike): 0 where a number is NULL, ""
 * where a text is. */
struct store_gpu {
	char name[65]; /* the entry's own name (an alias resolves to it) */
	char compute_capability[16]; /* "9.0"; "" when not NVIDIA */
	char intra_node_link[24];    /* "nvlink", "infinity_fabric", "pcie" */
	char efficiency_basis[32];
	double memory_gib, memory_bandwidth_gbps;
	double fp64_tflops, fp32_tflops, tf32_tflops, fp16_tflops, bf16_tflops,
	    fp8_tflops, int8_tops;
	double intra_node_gbps, inter_node_gbps; /* one direction */
	double price_per_gpu_hour, gemm_peak_fraction;
	double power_w; /* board power */
	int max_gpus_per_node, pcie_gen, pcie_width;
};
/* One GPU by name as a struct store_gpu (read through the same cache as
 * store_gpu_get): STORE_NOT_FOUND when absent. */
enum store_status store_gpu_get_spec(struct db_pool *pool, const char *name,
				     struct store_gpu *out,
				     struct store_err *e);
/* Creates or fully replaces GPU name from the fields of gpu (validated by
 * the caller; absent optional fields take their defaults). *created says
 * which happened; *out is the stored row. if_match: NULL, or "*" (only
 * replace an existing row), or "!" (only create: If-None-Match: *), or
 * updated_at values as the row gives them, comma-separated (only replace
 * the row at one of those versions):
 * else STORE_PRECONDITION, nothing written.
 */
enum store_status store_gpu_put(struct db_pool *pool, const char *name,
				const json_t *gpu, const char *if_match,
				int *created, json_t **out,
				struct store_err *e);

/* Every model preset (name, display_name, family, arch, source, notes). */
enum store_status store_model_list(struct db_pool *pool, json_t **out,
				   struct store_err *e);
enum store_status store_model_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e);

/* Software-stack profiles (migrations/0015_stacks.sql), read through the
 * same cache: every stack ordered by name (*out an array), one by name
 * (STORE_NOT_FOUND when absent), create or fully replace one (validated
 * by the caller; *created says which; if_match as store_gpu_put's). */
enum store_status store_stack_list(struct db_pool *pool, json_t **out,
				   struct store_err *e);
enum store_status store_stack_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e);
enum store_status store_stack_put(struct db_pool *pool, const char *name,
				  const json_t *stack, const char *if_match,
				  int *created, json_t **out,
				  struct store_err *e);

#endif

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
/* Creates or fully replaces GPU name from the fields of gpu (validated by
 * the caller; absent optional fields take their defaults). *created says
 * which happened; *out is the stored row.
 */
enum store_status store_gpu_put(struct db_pool *pool, const char *name,
				const json_t *gpu, int *created, json_t **out,
				struct store_err *e);

/* Every model preset (name, display_name, family, arch, source, notes). */
enum store_status store_model_list(struct db_pool *pool, json_t **out,
				   struct store_err *e);
enum store_status store_model_get(struct db_pool *pool, const char *name,
				  json_t **out, struct store_err *e);

#endif

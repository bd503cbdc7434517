/* stub_catalog.c - stands in for storage/catalog.c in the fuzz harnesses:
 * GPU and model lookups answer from the seeded catalog snapshot
 * (catalog_rows.h), unknown names are NOT_FOUND, PUT succeeds.
 */
#include <string.h>

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
				const json_t *gpu, int *created, json_t **out,
				struct store_err *e)
{
	(void)pool;
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

/* stub_recs.c - stands in for storage/recs.c in the fuzz harnesses:
 * persisting a recommendation succeeds (its response text is kept for the
 * harness to check), reads are NOT_FOUND or empty.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/recs.h"
#include "tests/fuzz/stubs/stub_common.h"

/* The response text of the last recommendation stored (owned here; the
 * harness may free it and set it to NULL).
 */
char *stub_last_rec_response;

enum store_status store_rec_insert(struct db_pool *pool,
				   const struct rec_new *rec,
				   struct store_err *e)
{
	(void)pool;
	if (!rec->id || !rec->kind || !rec->response || !rec->summary)
		abort();
	free(stub_last_rec_response);
	stub_last_rec_response = strdup(rec->response);
	return stub_ok(e);
}

enum store_status store_rec_get(struct db_pool *pool, const char *id,
				char **response, struct store_err *e)
{
	(void)pool;
	(void)id;
	*response = NULL;
	return stub_fail(e, STORE_NOT_FOUND, "not found");
}

enum store_status store_rec_list(struct db_pool *pool,
				 const struct rec_filter *f, json_t **items,
				 char next[REC_CURSOR_MAX], struct store_err *e)
{
	(void)pool;
	(void)f;
	*items = json_array();
	next[0] = '\0';
	return stub_ok(e);
}

/* stub_recs.c - stands in for storage/recs.c in the fuzz harnesses:
 * persisting a recommendation succeeds, reads are NOT_FOUND or empty.
 */
#include "storage/recs.h"
#include "tests/fuzz/stubs/stub_common.h"

enum store_status store_rec_insert(struct db_pool *pool,
				   const struct rec_new *rec,
				   struct store_err *e)
{
	(void)pool;
	(void)rec;
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

/* stub_db.c - stands in for storage/db.c and storage/migrate.c: the pool
 * reports itself empty, every statement finds the database unavailable
 * (so a harness that includes a real storage file, such as fuzz_cursor
 * with storage/recs.c, exercises everything before the query and the
 * unavailable path after it), and no migration is pending.
 */
#include <string.h>

#include "storage/migrate.h"
#include "storage/pgconn.h"
#include "tests/fuzz/stubs/stub_common.h"

void store_err_clear(struct store_err *e)
{
	e->status = STORE_OK;
	e->message[0] = '\0';
}

const char *store_status_name(enum store_status s)
{
	return s == STORE_OK ? "ok" : "error";
}

/* No pool to fail fast on: a request's brackets do nothing here. */
void db_request_begin(void)
{
}

void db_request_end(void)
{
}

void db_pool_stats(struct db_pool *pool, struct db_stats *out)
{
	(void)pool;
	memset(out, 0, sizeof(*out));
}

enum store_status db_exec(struct db_pool *pool, const char *sql, int n,
			  const char *const *params, int idempotent,
			  PGresult **out, struct store_err *e)
{
	(void)pool;
	(void)sql;
	(void)idempotent;
	/* Touch every parameter: a dangling pointer handed to libpq would
	 * show up here under ASan, as it would in the real db_exec.
	 */
	for (int i = 0; i < n; i++)
		if (params[i])
			(void)strlen(params[i]);
	*out = NULL;
	return stub_fail(e, STORE_UNAVAILABLE,
			 "database unavailable: fuzz stub");
}

enum store_status migrate_writable(struct db_pool *pool, bool *writable,
				   struct store_err *e)
{
	(void)pool;
	*writable = true;
	return stub_ok(e);
}

enum store_status migrate_pending(struct db_pool *pool,
				  const struct migration_set *set, int *pending,
				  struct store_err *e)
{
	(void)pool;
	(void)set;
	*pending = 0;
	return stub_ok(e);
}

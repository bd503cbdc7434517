/* migrate.h - versioned SQL migrations (migrations/NNNN_name.sql).
 *
 * Applied in version order, each once, each in its own transaction together
 * with its schema_migrations row (version, name, sha256, applied_at,
 * duration_ms), under an advisory lock held for that transaction, on a
 * dedicated connection, so that replicas starting together apply each file
 * exactly once, directly or through a transaction pooler. An applied
 * file whose SHA-256 changed since is refused: the daemon will not start.
 * A file whose first line is "-- gpusizer:no-transaction" runs outside a
 * transaction (for CREATE INDEX CONCURRENTLY), under a session lock: such a
 * file needs a direct connection.
 */
#ifndef GPUSIZER_STORAGE_MIGRATE_H
#define GPUSIZER_STORAGE_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "storage/db.h"

struct migration {
	int version;	 /* NNNN of the file name */
	char *name;	 /* file name, e.g. "0001_schema.sql" */
	char *sql;	 /* file contents */
	char sha256[65]; /* hex digest of the contents */
};

struct migration_set {
	struct migration *items; /* sorted by version */
	int n;
};

/* Reads every NNNN_*.sql file of dir. Returns 0, or -1 with err filled
 * (unreadable directory, duplicate version). Caller frees with
 * migration_set_free().
 */
int migration_set_load(const char *dir, struct migration_set **out, char *err,
		       size_t errlen);
void migration_set_free(struct migration_set *set);

/* Applies what is pending on a dedicated connection to conninfo. Sets
 * *applied to the number of files applied now. Returns 0; -1 with err on
 * any failure (checksum mismatch, SQL error, database unreachable); *fatal
 * is set to 1 when retrying cannot help (edited file, SQL error, unknown
 * applied version).
 */
int migrate_apply(const char *conninfo, const struct migration_set *set,
		  int *applied, int *fatal, char *err, size_t errlen);

/* For /readyz: *pending = files not yet applied (or -1 when the migrations
 * table does not exist yet). Returns STORE_OK or why the database could
 * not be asked.
 */
enum store_status migrate_pending(struct db_pool *pool,
				  const struct migration_set *set, int *pending,
				  struct store_err *e);

/* For /readyz: *writable = whether the database takes writes (not a hot
 * standby, not read-only by default_transaction_read_only): a daemon on
 * one answers every write 503 (review s19a F1). Returns STORE_OK or why
 * the database could not be asked. */
enum store_status migrate_writable(struct db_pool *pool, bool *writable,
				   struct store_err *e);

#endif

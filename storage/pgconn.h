/* pgconn.h - internal to storage/: running statements on the pool.
 *
 * Every statement is parameterised (PQexecParams: one statement per call,
 * so a stray ';' in a parameter can never start a second one).
 */
#ifndef GPUSIZER_STORAGE_PGCONN_H
#define GPUSIZER_STORAGE_PGCONN_H

#include <jansson.h>
#include <libpq-fe.h>

#include "storage/db.h"

/* Runs sql with n text parameters (NULL entries are SQL NULL) on a pooled
 * connection. On success returns STORE_OK and *out holds a result of status
 * PGRES_TUPLES_OK or PGRES_COMMAND_OK (caller PQclear()s it). Otherwise
 * *out is NULL and e says why. idempotent: the statement may be retried
 * once on a fresh connection when the old one turned out to be dead.
 */
enum store_status db_exec(struct db_pool *pool, const char *sql, int n,
			  const char *const *params, int idempotent,
			  PGresult **out, struct store_err *e);

/* A statement run often enough that parsing and planning it each time shows
 * (POST /v1/benchmarks). Define it static; db_exec_stmt() prepares it once
 * per pooled connection, and again after a reconnect.
 */
struct db_stmt {
	const char *sql;
	_Atomic int id; /* 1-based slot in each connection's prepared set */
	char name[24];	/* "gsz_" + hash of sql, set with id */
};

/* db_exec() for a prepared statement (PQprepare once per connection, then
 * PQexecPrepared). Plans are cached by the server: use it for statements
 * whose best plan does not depend on which optional parameters are NULL.
 * lengths and formats as PQexecParams takes them (NULL: all text; a
 * parameter in binary format, 1, has its length in lengths).
 */
enum store_status db_exec_stmt(struct db_pool *pool, struct db_stmt *stmt,
			       int n, const char *const *params,
			       const int *lengths, const int *formats,
			       int idempotent, PGresult **out,
			       struct store_err *e);

/* A number no other pool of this process has had: what a cache of one
 * database's rows keys on (a pool's address can be reused). */
unsigned long long db_pool_serial(const struct db_pool *pool);

struct sbuf;
/* Appends one element of a PostgreSQL array literal to b, which holds
 * "{" and the elements before: a comma when one came before, then NULL
 * (v NULL) or v double-quoted, '"' and backslash escaped (array input syntax).
 * The caller closes it with "}". */
void db_array_elem(struct sbuf *b, const char *v);

/* The single json value in row 0 column 0 of r into *out (a new
 * reference): STORE_NOT_FOUND when there is no row or it is NULL,
 * STORE_ERROR when it is not JSON. Clears r. */
enum store_status db_one_json(PGresult *r, json_t **out, struct store_err *e);

#endif

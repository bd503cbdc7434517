/* db.h - the PostgreSQL connection pool shared by the HTTP worker threads.
 *
 * Only storage/ includes libpq; other modules see an opaque pool, a status
 * and a message. A fixed set of connections guarded by a mutex and condvar
 * (libpq: "no two threads manipulate the same PGconn at the same time");
 * acquisition waits at most acquire_timeout_ms, then fails as unavailable.
 * A lost connection is reset on its next use, so the daemon recovers from a
 * database restart without restarting itself (libpq docs, PQreset; the
 * t_dbrestart API test).
 *
 * Server settings (statement_timeout, lock_timeout, TimeZone) are set for
 * each statement's own transaction, in the same round trip, so that they
 * hold behind a transaction pooler such as PgBouncer (storage/db.c,
 * docs/OPERATIONS.md "Connection poolers").
 */
#ifndef GPUSIZER_STORAGE_DB_H
#define GPUSIZER_STORAGE_DB_H

#include <stdbool.h>
#include <stddef.h>

/* What went wrong, in the terms handlers map to HTTP statuses. */
enum store_status {
	STORE_OK = 0,
	STORE_NOT_FOUND,    /* no such row */
	STORE_CONFLICT,	    /* unique violation (23505) */
	STORE_INVALID,	    /* data rejected by a constraint (22xxx, 23xxx) */
	STORE_UNAVAILABLE,  /* database down, pool exhausted, timeout */
	STORE_ERROR,	    /* anything else: a bug, logged */
	STORE_PRECONDITION, /* a conditional write's condition failed */
};

struct store_err {
	enum store_status status;
	char message[256]; /* user-safe description, never SQL parameters */
};

struct db_config {
	const char *conninfo;	  /* libpq conninfo or URI; copied */
	int size;		  /* connections in the pool, >= 1 */
	int acquire_timeout_ms;	  /* wait for a free connection at most this */
	int statement_timeout_ms; /* server-side statement_timeout */
	/* Called (from any thread) with what failed, libpq's message, and how
	 * many errors with that message went unlogged since it was last
	 * logged: the same message comes at most once per 10 s. NULL: not
	 * logged, still counted in db_stats.connection_errors.
	 */
	void (*log_error)(const char *what, const char *libpq_message,
			  long long unlogged);
};

struct db_stats {
	int size;		     /* connections configured */
	int in_use;		     /* connections lent out now */
	int waiting;		     /* threads waiting for one now */
	int connected;		     /* connections currently CONNECTION_OK */
	long long acquire_timeouts;  /* acquisitions that gave up, total */
	long long reconnects;	     /* successful resets after a loss, total */
	long long connection_errors; /* failed connects and lost connections */
};

struct db_pool;

/* Creates a pool; connections are opened lazily, so this succeeds while the
 * database is down. Returns 0, or -1 with err filled. Caller frees with
 * db_pool_free().
 */
int db_pool_new(const struct db_config *cfg, struct db_pool **out, char *err,
		size_t errlen);
void db_pool_free(struct db_pool *pool);
void db_pool_stats(struct db_pool *pool, struct db_stats *out);

/* Brackets one HTTP request on the calling thread: between them, once a
 * statement finds the database unavailable (no answer in time, no
 * connection), every later one fails at once with the same error instead
 * of waiting again, so a request answers its 503 within the documented
 * bound (docs/RELIABILITY.md; review s15: a sizing request waited 10 s
 * for its first statement and 5 s more reconnecting for its next).
 * Threads outside a request (mirrors, maintenance) are not affected. */
void db_request_begin(void);
void db_request_end(void);

/* Writes conninfo (a libpq keyword/value string or a postgresql:// URI)
 * to out (len bytes, truncated) as libpq reads it (PQconninfoParse):
 * keyword=value pairs of the options it sets, the last of a repeated
 * keyword, and every password-like value (password, sslpassword: libpq's
 * "*" display flag) as ***, wherever it was (password = x, a quoted value,
 * a URI's user:password@ or ?password=). A string libpq cannot parse is
 * not shown at all: out says so.
 */
void db_conninfo_redacted(const char *conninfo, char *out, size_t len);

/* true when libpq parses conninfo (a URI or key=value pairs). A conninfo
 * that does not can never connect, and libpq's message about it quotes
 * it whole, password included: callers refuse it with
 * DB_CONNINFO_UNPARSABLE, which shows nothing of it. */
bool db_conninfo_parses(const char *conninfo);
#define DB_CONNINFO_UNPARSABLE                                                 \
	"database: the conninfo (--database-url / DATABASE_URL) is not a "     \
	"valid PostgreSQL URI or key=value string; check its syntax (it is "   \
	"not shown: it may hold a password)"

/* Sets *e to OK with an empty message. */
void store_err_clear(struct store_err *e);
/* Human name of a status ("unavailable", ...). Static string. */
const char *store_status_name(enum store_status s);

#endif

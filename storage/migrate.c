/* migrate.c - the migration runner (design: docs/OPERATIONS.md "Migrations").
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/migrate.h"
#include "storage/pgconn.h"
#include "lib/sha256.h"

/* Arbitrary constant naming our advisory lock; the same in every replica. */
#define MIGRATE_LOCK_KEY "7268253401"
#define NO_TX_MARKER	 "-- gpusizer:no-transaction"

static int by_version(const void *a, const void *b)
{
	const struct migration *x = a, *y = b;
	return (x->version > y->version) - (x->version < y->version);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	buf = malloc((size_t)size + 1);
	if (!buf)
		goto out;
	if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[size] = '\0';
	*len = (size_t)size;
out:
	fclose(f);
	return buf;
}

static int is_migration_name(const char *n, int *version)
{
	size_t len = strlen(n);

	if (len < 9 || strcmp(n + len - 4, ".sql") != 0)
		return 0;
	for (int i = 0; i < 4; i++)
		if (n[i] < '0' || n[i] > '9')
			return 0;
	if (n[4] != '_')
		return 0;
	*version = atoi(n);
	return *version > 0;
}

void migration_set_free(struct migration_set *set)
{
	if (!set)
		return;
	for (int i = 0; i < set->n; i++) {
		free(set->items[i].name);
		free(set->items[i].sql);
	}
	free(set->items);
	free(set);
}

int migration_set_load(const char *dir, struct migration_set **out, char *err,
		       size_t errlen)
{
	struct migration_set *set = calloc(1, sizeof(*set));
	DIR *d = NULL;
	struct dirent *ent;
	int cap = 0, rc = -1;

	*out = NULL;
	if (!set) {
		snprintf(err, errlen, "migrations: out of memory");
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "migrations: cannot open \"%s\": %s", dir,
			 strerror(errno));
		goto out;
	}
	while ((ent = readdir(d))) {
		int version;
		char path[4096];
		size_t len = 0;
		struct migration *m;

		if (!is_migration_name(ent->d_name, &version))
			continue;
		if (set->n == cap) {
			int ncap = cap ? cap * 2 : 16;
			void *p =
			    realloc(set->items, (size_t)ncap * sizeof(*m));
			if (!p) {
				snprintf(err, errlen,
					 "migrations: out of memory");
				goto out;
			}
			set->items = p;
			cap = ncap;
		}
		m = &set->items[set->n];
		memset(m, 0, sizeof(*m));
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		m->version = version;
		m->name = strdup(ent->d_name);
		m->sql = read_file(path, &len);
		set->n++;
		if (!m->name || !m->sql) {
			snprintf(err, errlen, "migrations: cannot read \"%s\"",
				 path);
			goto out;
		}
		sha256_hex(m->sql, len, m->sha256);
	}
	if (set->n == 0) {
		snprintf(err, errlen, "migrations: no NNNN_name.sql in \"%s\"",
			 dir);
		goto out;
	}
	qsort(set->items, (size_t)set->n, sizeof(set->items[0]), by_version);
	for (int i = 1; i < set->n; i++)
		if (set->items[i].version == set->items[i - 1].version) {
			snprintf(
			    err, errlen,
			    "migrations: \"%s\" and \"%s\" share version %d",
			    set->items[i - 1].name, set->items[i].name,
			    set->items[i].version);
			goto out;
		}
	rc = 0;
	*out = set;
	set = NULL;
out:
	if (d)
		closedir(d);
	migration_set_free(set);
	return rc;
}

/* Runs a trusted statement string (migration files hold several statements,
 * which only the simple protocol accepts: libpq docs, PQexecParams "allows
 * at most one SQL command").
 */
static int run(PGconn *c, const char *sql, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;

	if (!ok)
		snprintf(err, errlen, "%s", PQerrorMessage(c));
	PQclear(r);
	return ok ? 0 : -1;
}

static const char create_table_sql[] =
    /* clang-format off */
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY,"
    " name text NOT NULL,"
    " sha256 text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now(),"
    " duration_ms integer NOT NULL)";
/* clang-format on */

static const struct migration *find(const struct migration_set *set, int v)
{
	for (int i = 0; i < set->n; i++)
		if (set->items[i].version == v)
			return &set->items[i];
	return NULL;
}

static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Every runner takes the lock MIGRATE_LOCK_KEY for one transaction
 * (pg_advisory_xact_lock), so COMMIT or ROLLBACK releases it on the server
 * connection that took it. Behind a transaction pooler (PgBouncer's
 * pool_mode = transaction) each transaction may run on another server
 * connection: a session lock taken on one and released on another would
 * stay behind and stop every later start. lock_timeout is set for the
 * transaction only, for the same reason.
 */
/* clang-format off */
#define BEGIN_LOCKED                                                           \
	"BEGIN; SET LOCAL lock_timeout = '60s';"                               \
	" SELECT pg_advisory_xact_lock(" MIGRATE_LOCK_KEY ")"
/* clang-format on */
/* A no-transaction file (CREATE INDEX CONCURRENTLY) cannot run inside one:
 * it runs under the session lock, which needs a direct connection.
 */
/* clang-format off */
#define LOCK_SESSION                                                           \
	"SET lock_timeout = '60s'; SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY  \
	")"
/* clang-format on */

/* Releases the lock without committing: ROLLBACK of the transaction, or
 * the session unlock.
 */
static void end_locked(PGconn *c, int in_tx)
{
	PGresult *r;

	if (PQstatus(c) != CONNECTION_OK)
		return;
	if (in_tx)
		r = PQexec(c, "ROLLBACK");
	else
		r = PQexec(c,
			   "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")");
	PQclear(r);
}

/* Applies m under the lock unless another runner applied it since the
 * check (*now says whether this one did). Returns 0, or -1 with err and
 * *fatal (an SQL error in the file: retrying cannot help; a lock timeout
 * or a lost connection: it can).
 */
static int apply_one(PGconn *c, const struct migration *m, int *now, int *fatal,
		     char *err, size_t errlen)
{
	struct timespec t0, t1;
	char version[16], ms[16], msg[512];
	const char *params[4] = {version};
	int in_tx = strncmp(m->sql, NO_TX_MARKER, strlen(NO_TX_MARKER)) != 0;
	PGresult *r;

	*now = 0;
	*fatal = 0;
	snprintf(version, sizeof(version), "%d", m->version);
	if ((in_tx ? run(c, BEGIN_LOCKED, msg, sizeof(msg))
		   : run(c, LOCK_SESSION, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen,
			 "migrations: cannot take the lock for \"%s\": %s",
			 m->name, msg);
		end_locked(c, in_tx);
		return -1;
	}
	r = PQexecParams(c,
			 /* clang-format off */
			 "SELECT 1 FROM schema_migrations WHERE version ="
			 " $1::int",
			 /* clang-format on */
			 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		snprintf(msg, sizeof(msg), "%s", PQerrorMessage(c));
		PQclear(r);
		goto fail;
	}
	if (PQntuples(r) > 0) { /* applied by another runner meanwhile */
		PQclear(r);
		end_locked(c, in_tx);
		return 0;
	}
	PQclear(r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (run(c, m->sql, msg, sizeof(msg)) != 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(ms, sizeof(ms), "%ld",
		 (long)((t1.tv_sec - t0.tv_sec) * 1000 +
			(t1.tv_nsec - t0.tv_nsec) / 1000000));
	params[1] = m->name;
	params[2] = m->sha256;
	params[3] = ms;
	r = PQexecParams(c,
			 /* clang-format off */
			 "INSERT INTO schema_migrations (version, name, sha256,"
			 " duration_ms) VALUES ($1::int, $2, $3, $4::int)",
			 /* clang-format on */
			 4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		snprintf(msg, sizeof(msg), "%s", PQerrorMessage(c));
		PQclear(r);
		goto fail;
	}
	PQclear(r);
	if (in_tx && run(c, "COMMIT", msg, sizeof(msg)) != 0)
		goto fail;
	if (!in_tx)
		end_locked(c, in_tx);
	*now = 1;
	return 0;
fail:
	*fatal = PQstatus(c) == CONNECTION_OK;
	end_locked(c, in_tx);
	snprintf(err, errlen, "migration \"%s\" failed: %s", m->name, msg);
	return -1;
}

int migrate_apply(const char *conninfo, const struct migration_set *set,
		  int *applied, int *fatal, char *err, size_t errlen)
{
	PGconn *c = NULL;
	PGresult *r = NULL;
	char msg[512];
	int rc = -1, now;
	unsigned char *done = calloc((size_t)set->n, 1);

	*applied = 0;
	*fatal = 0;
	if (!db_conninfo_parses(conninfo)) {
		/* never connects: no retry, and no libpq text (it quotes the
		 * conninfo, password included) */
		snprintf(err, errlen, "%s", DB_CONNINFO_UNPARSABLE);
		*fatal = 1;
		goto out;
	}
	c = PQconnectdb(conninfo);
	if (!done) {
		snprintf(err, errlen, "migrations: out of memory");
		goto out;
	}
	if (PQstatus(c) != CONNECTION_OK) {
		snprintf(err, errlen, "migrations: cannot connect: %s",
			 PQerrorMessage(c));
		goto out;
	}
	/* NOTICEs ("already exists, skipping") are not news: keep stderr
	 * for our JSON log lines.
	 */
	PQsetNoticeProcessor(c, quiet_notice, NULL);
	/* What is applied, checked under the lock in one transaction. */
	if (run(c, BEGIN_LOCKED, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "migrations: cannot take the lock: %s",
			 msg);
		goto out;
	}
	if (run(c, create_table_sql, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "migrations: %s", msg);
		goto out;
	}
	r = PQexec(c, "SELECT version, name, sha256 FROM schema_migrations"
		      " ORDER BY version");
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		snprintf(err, errlen, "migrations: %s", PQerrorMessage(c));
		goto out;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		int v = atoi(PQgetvalue(r, i, 0));
		const struct migration *m = find(set, v);

		if (!m) {
			snprintf(err, errlen,
				 "migrations: the database has version %d "
				 "(\"%s\") that is not in the migrations "
				 "directory; is this binary older than the "
				 "database?",
				 v, PQgetvalue(r, i, 1));
			*fatal = 1;
			goto out;
		}
		if (strcmp(m->sha256, PQgetvalue(r, i, 2)) != 0) {
			snprintf(err, errlen,
				 "migrations: \"%s\" was edited after it was "
				 "applied (sha256 %.12s... in the database, "
				 "%.12s... on disk); restore it and put the "
				 "change in a new migration",
				 m->name, PQgetvalue(r, i, 2), m->sha256);
			*fatal = 1;
			goto out;
		}
		done[m - set->items] = 1;
	}
	if (run(c, "COMMIT", msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "migrations: %s", msg);
		goto out;
	}
	for (int i = 0; i < set->n; i++) {
		if (done[i])
			continue;
		if (apply_one(c, &set->items[i], &now, fatal, err, errlen) != 0)
			goto out;
		*applied += now;
	}
	rc = 0;
out:
	PQclear(r);
	if (PQtransactionStatus(c) == PQTRANS_INTRANS ||
	    PQtransactionStatus(c) == PQTRANS_INERROR)
		end_locked(c, 1);
	PQfinish(c);
	free(done);
	return rc;
}

enum store_status migrate_pending(struct db_pool *pool,
				  const struct migration_set *set, int *pending,
				  struct store_err *e)
{
	PGresult *r = NULL;
	char versions[4096];
	size_t off = 0;
	const char *params[1] = {versions};

	*pending = -1;
	versions[off++] = '{';
	for (int i = 0; i < set->n && off < sizeof(versions) - 16; i++)
		off += (size_t)snprintf(versions + off, sizeof(versions) - off,
					"%s%d", i ? "," : "",
					set->items[i].version);
	snprintf(versions + off, sizeof(versions) - off, "}");
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT count(*) FROM schema_migrations"
		    " WHERE version = ANY($1::int[])",
		    /* clang-format on */
		    1, params, 1, &r, e) != STORE_OK) {
		/* 42P01: no migrations table yet, so everything is pending. */
		if (e->status == STORE_ERROR && strstr(e->message, "42P01")) {
			store_err_clear(e);
			*pending = set->n;
		}
		return e->status;
	}
	*pending = set->n - atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return STORE_OK;
}

enum store_status migrate_writable(struct db_pool *pool, bool *writable,
				   struct store_err *e)
{
	PGresult *r = NULL;

	*writable = false;
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT NOT pg_is_in_recovery()"
		    " AND current_setting('transaction_read_only') = 'off'",
		    /* clang-format on */
		    0, NULL, 1, &r, e) != STORE_OK)
		return e->status;
	*writable = !strcmp(PQgetvalue(r, 0, 0), "t");
	PQclear(r);
	return STORE_OK;
}

/* test_db.c - prepared statements on the connection pool (storage/db.c)
 * against a real PostgreSQL: DATABASE_URL (tests/api/t_db.sh runs this
 * binary with the suite's private server; without DATABASE_URL it says it
 * skipped, with the reason).
 *
 * One connection per pool, so the calls on a pool share a server session:
 * a prepared statement that vanishes under it (DEALLOCATE, as a pooler's
 * DISCARD ALL does) is prepared again; one found already prepared under
 * its name is used. The pool's settings (statement_timeout, lock_timeout,
 * TimeZone) hold for each statement whatever the session carries.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/catalog.h"
#include "storage/pgconn.h"
#include "tests/unit/testlib.h"

static struct db_pool *pool;

static struct db_stmt add_one = {.sql = "SELECT $1::int + 1"};

/* add_one($x) as an int, or -1 (status in *st). */
static int run_add_one(const char *x, enum store_status *st)
{
	const char *params[1] = {x};
	struct store_err e;
	PGresult *r = NULL;
	int v = -1;

	*st = db_exec_stmt(pool, &add_one, 1, params, NULL, NULL, 1, &r, &e);
	if (*st == STORE_OK)
		v = atoi(PQgetvalue(r, 0, 0));
	else
		printf("# %s\n", e.message);
	PQclear(r);
	return v;
}

/* Runs sql unprepared on the pool's connection. */
static enum store_status exec_plain(const char *sql)
{
	struct store_err e;
	PGresult *r = NULL;
	enum store_status st = db_exec(pool, sql, 0, NULL, 0, &r, &e);

	if (st != STORE_OK)
		printf("# %s: %s\n", sql, e.message);
	PQclear(r);
	return st;
}

/* How many statements the session has prepared under add_one's name. */
static int prepared_here(void)
{
	const char *params[1] = {add_one.name};
	struct store_err e;
	PGresult *r = NULL;
	int n = -1;

	if (db_exec(pool,
		    "SELECT count(*) FROM pg_prepared_statements"
		    " WHERE name = $1",
		    1, params, 0, &r, &e) == STORE_OK)
		n = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return n;
}

static void test_prepared_once(void)
{
	enum store_status st;

	CHECK(run_add_one("41", &st) == 42 && st == STORE_OK);
	CHECK(strncmp(add_one.name, "gsz_", 4) == 0 &&
	      strlen(add_one.name) == 20);
	CHECK(prepared_here() == 1);
	CHECK(run_add_one("1", &st) == 2 && st == STORE_OK);
	CHECK(prepared_here() == 1);
}

static void test_vanished_statement(void)
{
	enum store_status st;

	CHECK(exec_plain("DEALLOCATE ALL") == STORE_OK);
	CHECK(prepared_here() == 0);
	/* The execution fails with 26000 inside; the caller sees none. */
	CHECK(run_add_one("9", &st) == 10 && st == STORE_OK);
	CHECK(prepared_here() == 1);
}

static void test_found_prepared(void)
{
	struct db_config cfg = {.size = 1,
				.acquire_timeout_ms = 5000,
				.statement_timeout_ms = 5000};
	struct db_pool *first = pool;
	char sql[128], err[256];
	enum store_status st;

	/* A second pool's connection, where the statement is already
	 * prepared under its name (as another client of a pooler's server
	 * connection would leave it): the prepare meets 42P05 and the
	 * statement found is used.
	 */
	cfg.conninfo = getenv("DATABASE_URL");
	CHECK(db_pool_new(&cfg, &pool, err, sizeof(err)) == 0);
	if (pool == NULL) {
		pool = first;
		return;
	}
	snprintf(sql, sizeof(sql), "PREPARE %s (int) AS %s", add_one.name,
		 add_one.sql);
	CHECK(exec_plain(sql) == STORE_OK);
	CHECK(run_add_one("99", &st) == 100 && st == STORE_OK);
	CHECK(prepared_here() == 1);
	db_pool_free(pool);
	pool = first;
}

static void test_errors_still_errors(void)
{
	enum store_status st;

	/* A bad parameter is the caller's error, not a vanished statement. */
	CHECK(run_add_one("not a number", &st) == -1 && st == STORE_INVALID);
	CHECK(run_add_one("2", &st) == 3 && st == STORE_OK);
}

/* current_setting(name) on the pool's connection, into out. */
static void setting(const char *name, char *out, size_t len)
{
	const char *params[1] = {name};
	struct store_err e;
	PGresult *r = NULL;

	snprintf(out, len, "?");
	if (db_exec(pool, "SELECT current_setting($1)", 1, params, 1, &r, &e) ==
	    STORE_OK)
		snprintf(out, len, "%s", PQgetvalue(r, 0, 0));
	else
		printf("# %s\n", e.message);
	PQclear(r);
}

static void test_settings_per_statement(void)
{
	char v[64];

	/* What a transaction pooler's server connection may carry from
	 * another client (or a server default): the pool's settings still
	 * apply to each of its statements, prepared or not.
	 */
	CHECK(exec_plain("SET statement_timeout = 0") == STORE_OK);
	CHECK(exec_plain("SET lock_timeout = '1h'") == STORE_OK);
	CHECK(exec_plain("SET TimeZone = 'Asia/Tokyo'") == STORE_OK);
	setting("statement_timeout", v, sizeof(v));
	CHECK(strcmp(v, "5s") == 0);
	setting("lock_timeout", v, sizeof(v));
	CHECK(strcmp(v, "2s") == 0);
	setting("TimeZone", v, sizeof(v));
	CHECK(strcmp(v, "UTC") == 0);
	/* ... for that statement's transaction only. */
	CHECK(exec_plain("DEALLOCATE ALL") == STORE_OK);
	setting("TimeZone", v, sizeof(v));
	CHECK(strcmp(v, "UTC") == 0);
	exec_plain("RESET ALL");
}

static void test_statement_timeout(void)
{
	struct db_config cfg = {
	    .size = 1, .acquire_timeout_ms = 5000, .statement_timeout_ms = 100};
	struct db_pool *first = pool;
	char err[256];
	struct store_err e;
	PGresult *r = NULL;

	cfg.conninfo = getenv("DATABASE_URL");
	CHECK(db_pool_new(&cfg, &pool, err, sizeof(err)) == 0);
	if (pool == NULL) {
		pool = first;
		return;
	}
	CHECK(exec_plain("SET statement_timeout = 0") == STORE_OK);
	CHECK(db_exec(pool, "SELECT pg_sleep(2)", 0, NULL, 1, &r, &e) ==
	      STORE_UNAVAILABLE);
	CHECK(strstr(e.message, "57014") != NULL);
	PQclear(r);
	/* The connection serves the next statement. */
	CHECK(exec_plain("SELECT 1") == STORE_OK);
	db_pool_free(pool);
	pool = first;
}

/* The catalog row as typed figures (store_gpu_get_spec): the H100 SXM5 row
 * of migrations/0002_gpu_catalog.sql and 0009 (t_db.sh migrates first);
 * an unknown name is STORE_NOT_FOUND. */
static void test_gpu_spec(void)
{
	struct store_gpu g;
	struct store_err e;

	CHECK(store_gpu_get_spec(pool, "h100-sxm5-80gb", &g, &e) == STORE_OK);
	CHECK(strcmp(g.name, "h100-sxm5-80gb") == 0);
	CHECK(strcmp(g.compute_capability, "9.0") == 0);
	CHECK(strcmp(g.intra_node_link, "nvlink") == 0);
	CHECK(strcmp(g.efficiency_basis, "measured") == 0);
	CHECK(g.memory_gib == 80 && g.memory_bandwidth_gbps == 3350);
	CHECK(g.bf16_tflops == 989.4 && g.fp8_tflops == 1978.9 &&
	      g.tf32_tflops == 494.7 && g.fp64_tflops == 67);
	CHECK(g.intra_node_gbps == 450 && g.inter_node_gbps == 400 &&
	      g.max_gpus_per_node == 8);
	CHECK(g.pcie_gen == 5 && g.pcie_width == 16);
	CHECK(g.gemm_peak_fraction == 0.803);
	CHECK(store_gpu_get_spec(pool, "no-such-gpu-v17", &g, &e) ==
	      STORE_NOT_FOUND);
	CHECK(g.name[0] == '\0');
}

int main(void)
{
	const char *url = getenv("DATABASE_URL");
	struct db_config cfg = {.size = 1,
				.acquire_timeout_ms = 5000,
				.statement_timeout_ms = 5000};
	char err[256];

	if (!url || !*url) {
		printf("ok - test_db # SKIP no DATABASE_URL: tests/api/t_db.sh "
		       "runs it against the suite's PostgreSQL\n");
		return 0;
	}
	cfg.conninfo = url;
	if (db_pool_new(&cfg, &pool, err, sizeof(err)) != 0) {
		printf("not ok - pool: %s\n", err);
		return 1;
	}
	RUN(test_prepared_once);
	RUN(test_vanished_statement);
	RUN(test_found_prepared);
	RUN(test_errors_still_errors);
	RUN(test_settings_per_statement);
	RUN(test_statement_timeout);
	RUN(test_gpu_spec);
	db_pool_free(pool);
	return testlib_finish();
}

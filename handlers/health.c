/* health.c - liveness, readiness and the OpenAPI document. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "handlers/api.h"
#include "handlers/problem.h"
#include "storage/migrate.h"

void h_healthz(struct app *app, const struct request *req, struct response *res)
{
	(void)app;
	(void)req;
	res_json(res, 200, json_pack("{s:s}", "status", "ok"));
}

/* Ready = not draining, database reachable, every migration applied. */
void h_readyz(struct app *app, const struct request *req, struct response *res)
{
	struct store_err e;
	int pending = -1;

	(void)req;
	if (atomic_load(&app->draining)) {
		problem(res, 503, "unavailable", "Service unavailable",
			"shutting down");
		return;
	}
	if (!atomic_load(&app->ready)) {
		/* a database the start cannot reach says so here, not only
		 * in the log (review s14: "starting" forever) */
		if (migrate_pending(app->db, app->migrations, &pending, &e) ==
		    STORE_UNAVAILABLE)
			problem(res, 503, "unavailable", "Service unavailable",
				"starting: database unreachable: %s",
				e.message);
		else
			problem(res, 503, "unavailable", "Service unavailable",
				"starting: the database schema is not verified "
				"yet");
		res->retry_after_s = 2;
		return;
	}
	if (migrate_pending(app->db, app->migrations, &pending, &e) !=
	    STORE_OK) {
		problem(res, 503, "unavailable", "Service unavailable",
			"database unreachable: %s", e.message);
		res->retry_after_s = 2;
		return;
	}
	if (pending != 0) {
		problem(res, 503, "unavailable", "Service unavailable",
			"%d migration(s) pending", pending);
		res->retry_after_s = 2;
		return;
	}
	/* a standby or a read-only database answers every write 503: not
	 * ready for a load balancer (review s19a F1) */
	{
		bool writable = false;

		if (migrate_writable(app->db, &writable, &e) != STORE_OK) {
			problem(res, 503, "unavailable", "Service unavailable",
				"database unreachable: %s", e.message);
			res->retry_after_s = 2;
			return;
		}
		if (!writable) {
			problem(res, 503, "unavailable", "Service unavailable",
				"database read-only (a standby, or "
				"default_transaction_read_only): writes are "
				"refused");
			res->retry_after_s = 2;
			return;
		}
	}
	res_json(res, 200,
		 json_pack("{s:s, s:s, s:i}", "status", "ready", "database",
			   "ok", "migrations", app->migrations->n));
}

void h_openapi(struct app *app, const struct request *req, struct response *res)
{
	FILE *f = fopen(app->openapi_file, "rb");
	char *buf = NULL;
	long n;
	struct stat st;

	(void)req;
	/* a directory opens, then fails every read: not installed either */
	if (f && (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))) {
		fclose(f);
		f = NULL;
	}
	if (!f) {
		problem(res, 404, "not-found", "Not found",
			"openapi.yaml is not installed with this daemon");
		return;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n < 16L * 1024 * 1024 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n)
		res_text(res, 200, "application/yaml", buf, (size_t)n);
	else
		problem(res, 500, "internal", "Internal error",
			"cannot read openapi.yaml");
	free(buf);
	fclose(f);
}

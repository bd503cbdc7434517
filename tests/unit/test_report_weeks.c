/* test_report_weeks.c - the capacity report's weekly table as the daemon
 * reduces it (storage/week_mirror.c week_mirror_weeks()), printed for
 * tests/api/t_report_mirror.sh to compare with the statement it replaced
 * (tests/api/sql/report_rollup.sql) at thresholds and windows the API
 * does not expose (the report's threshold is fixed at 0.10; synthetic
 * runs follow a daemon option).
 *
 *   DATABASE_URL=... test_report_weeks DAYS:THRESHOLD:SYN...
 *
 * prints, per case in order, "# DAYS THRESHOLD SYN" and then one line
 * "week_start,gpu_type,seen_gpus,healthy_gpus" per week and type. The
 * cases run in one process, so every case after the first reads the copy
 * the earlier ones loaded (a wider window loads it again). Without
 * arguments (the unit suite) it says it skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/db.h"
#include "storage/week_mirror.h"

/* The elements of an array literal made by db_array_elem() ({"a","b"}),
 * unquoted in place into el; the count, or -1. */
static int split(char *s, char **el, int max)
{
	int n = 0;
	char *r = s + 1, *w;

	if (*s != '{')
		return -1;
	while (*r == '"' && n < max) {
		el[n++] = w = ++r;
		while (*r && *r != '"') {
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r++;
		}
		if (!*r)
			return -1;
		*w = '\0';
		r++;
		if (*r == ',')
			r++;
	}
	return *r == '}' ? n : -1;
}

enum { MAX_ROWS = 4096 };

static int run_case(struct db_pool *pool, const char *c)
{
	int days = 0, n = -1, rc = 1;
	double thr = 0;
	char syn[8] = "", *lits[4] = {NULL};
	static char *el[4][MAX_ROWS];
	struct store_err e;

	if (sscanf(c, "%d:%lf:%7s", &days, &thr, syn) != 3) {
		fprintf(stderr, "a case is DAYS:THRESHOLD:true|false: %s\n", c);
		return 1;
	}
	printf("# %d %g %s\n", days, thr, syn);
	if (week_mirror_weeks(pool, days, thr, !strcmp(syn, "true"), lits,
			      &e) != STORE_OK) {
		fprintf(stderr, "week_mirror_weeks: %s\n", e.message);
		goto out;
	}
	for (int i = 0; i < 4; i++) {
		int k = split(lits[i], el[i], MAX_ROWS);
		if (k < 0 || (i && k != n)) {
			fprintf(stderr, "unexpected array: %s\n", lits[i]);
			goto out;
		}
		n = k;
	}
	for (int j = 0; j < n; j++)
		printf("%s,%s,%s,%s\n", el[0][j], el[1][j], el[2][j], el[3][j]);
	rc = 0;
out:
	for (int i = 0; i < 4; i++)
		free(lits[i]);
	return rc;
}

int main(int argc, char **argv)
{
	const char *url = getenv("DATABASE_URL");
	struct db_config cfg = {.size = 1,
				.acquire_timeout_ms = 5000,
				.statement_timeout_ms = 30000};
	struct db_pool *pool = NULL;
	char err[256];
	int rc = 0;

	if (argc < 2 || !url || !*url) {
		printf("ok - test_report_weeks # SKIP tests/api/"
		       "t_report_mirror.sh runs it with cases\n");
		return 0;
	}
	cfg.conninfo = url;
	if (db_pool_new(&cfg, &pool, err, sizeof(err)) != 0) {
		fprintf(stderr, "pool: %s\n", err);
		return 1;
	}
	for (int i = 1; i < argc && !rc; i++)
		rc = run_case(pool, argv[i]);
	db_pool_free(pool);
	return rc;
}

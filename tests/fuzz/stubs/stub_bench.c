/* stub_bench.c - stands in for storage/bench.c in the fuzz harnesses: no
 * fleet measurements (sizing falls back to datasheet x efficiency), every
 * report ingests as new, lists are empty, lookups are NOT_FOUND.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "storage/bench.h"
#include "tests/fuzz/stubs/stub_common.h"

enum store_status
store_fleet_medians(struct db_pool *pool, const char *gpu_type, int window_days,
		    bool with_synthetic, const struct fleet_bands *bands,
		    struct fleet_medians *out, struct store_err *e)
{
	(void)with_synthetic;
	(void)bands;
	(void)pool;
	(void)gpu_type;
	(void)window_days;
	memset(out, 0, sizeof(*out));
	return stub_ok(e);
}

/* No catalog: no gpu_type contradicts a GPU's name. */
enum store_status store_bench_type_conflict(struct db_pool *pool,
					    const char *gpus_json,
					    struct bench_type_conflict *out,
					    struct store_err *e)
{
	(void)pool;
	(void)gpus_json;
	memset(out, 0, sizeof(*out));
	stub_ok(e);
	e->status = STORE_NOT_FOUND;
	return e->status;
}

/* Results of the last report stored, for the harness to compare. */
int stub_last_n_results = -1;

/* Every report the handler passes on must be complete: what the SQL
 * needs NOT NULL is there, every result has its metric and unit.
 */
enum store_status store_bench_ingest(struct db_pool *pool,
				     const struct bench_report *rep,
				     struct bench_ingest *out,
				     struct store_err *e)
{
	(void)pool;
	if (!rep->text || !rep->run_id || !rep->hostname || !rep->status ||
	    !rep->node_json || rep->n_results < 0 ||
	    (rep->n_results > 0 && !rep->results))
		abort();
	for (int i = 0; i < rep->n_results; i++) {
		const struct bench_result *x = &rep->results[i];
		const double stats[] = {x->median, x->max,	 x->mean,
					x->p10,	   x->p90,	 x->cv,
					x->limit,  x->efficiency};
		if (!x->metric || !x->unit)
			abort();
		/* A statistic reaches storage absent (NaN), 0, or within
		 * the bounds the fleet reads assume (issue 15).
		 */
		for (size_t k = 0; k < sizeof(stats) / sizeof(stats[0]); k++)
			if (!isnan(stats[k]) && stats[k] != 0 &&
			    !(fabs(stats[k]) >= BENCH_STAT_MIN &&
			      fabs(stats[k]) <= BENCH_STAT_MAX))
				abort();
		for (int k = 0; k < x->n_clock_event_reasons; k++)
			(void)strlen(x->clock_event_reasons[k]
					 ? x->clock_event_reasons[k]
					 : "");
	}
	stub_last_n_results = rep->n_results;
	memset(out, 0, sizeof(*out));
	out->created = 1;
	out->same_report = 1;
	snprintf(out->hostname, sizeof(out->hostname), "stub-host");
	snprintf(out->status, sizeof(out->status), "ok");
	snprintf(out->received_at, sizeof(out->received_at),
		 "2026-01-01T00:00:00.000000Z");
	return stub_ok(e);
}

enum store_status store_bench_get(struct db_pool *pool, const char *run_id,
				  json_t **out, struct store_err *e)
{
	(void)pool;
	(void)run_id;
	*out = NULL;
	return stub_fail(e, STORE_NOT_FOUND, "not found");
}

enum store_status store_bench_list(struct db_pool *pool,
				   const struct bench_filter *f,
				   long long before_id, int rows_max,
				   json_t **items, struct store_err *e)
{
	(void)pool;
	(void)f;
	(void)before_id;
	(void)rows_max;
	*items = json_array();
	return stub_ok(e);
}

enum store_status store_bench_runs_each(struct db_pool *pool,
					const struct bench_filter *f,
					long long before_id, int runs_max,
					bench_run_fn fn, void *ctx,
					long long *last_id, int *runs,
					struct store_err *e)
{
	(void)pool;
	(void)f;
	(void)before_id;
	(void)runs_max;
	(void)fn;
	(void)ctx;
	(void)last_id;
	*runs = 0;
	return stub_ok(e);
}

enum store_status store_nodes_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	(void)pool;
	*out = json_pack("{s:[]}", "items");
	return stub_ok(e);
}

enum store_status store_node_get(struct db_pool *pool, const char *hostname,
				 json_t **out, struct store_err *e)
{
	(void)pool;
	(void)hostname;
	*out = NULL;
	return stub_fail(e, STORE_NOT_FOUND, "not found");
}

enum store_status store_fleet(struct db_pool *pool, int window_days,
			      double threshold, bool with_synthetic,
			      json_t **out, struct store_err *e)
{
	(void)with_synthetic;
	(void)pool;
	(void)window_days;
	(void)threshold;
	*out = json_pack("{s:[]}", "items");
	return stub_ok(e);
}

/* report.c - the capacity report's data in SQL (see report.h). */
#include <stdio.h>
#include <string.h>

#include "storage/bench.h"
#include "storage/pgconn.h"
#include "storage/report.h"

/* Node freshness, demand and catalog names in one statement. Ages are in
 * hours from the database's clock (nodes.last_seen is set by it too), so
 * a skewed probe clock cannot make a node look fresh.
 */
static const char report_sql[] =
    "WITH w AS (SELECT now() - make_interval(days => $1::int) AS t0),"
    " nd AS (SELECT n.hostname, n.last_seen, r.status AS last_status,"
    "  greatest(0, extract(epoch FROM now() - n.last_seen) / 3600)"
    "   AS age_h"
    "  FROM nodes n LEFT JOIN benchmark_runs r ON r.run_id = n.last_run_id),"
    " ndc AS (SELECT nd.*, CASE WHEN age_h < 36 THEN 'fresh'"
    "  WHEN age_h < 168 THEN 'stale' ELSE 'silent' END AS class FROM nd),"
    " ages AS (SELECT * FROM (VALUES (1, '< 1 h', 0::float8, 1::float8),"
    "  (2, '1-6 h', 1, 6), (3, '6-24 h', 6, 24), (4, '24-36 h', 24, 36),"
    "  (5, '36 h-7 d', 36, 168), (6, '7-30 d', 168, 720),"
    "  (7, '> 30 d', 720, 'infinity')) AS a (i, label, lo, hi)),"
    " rec AS (SELECT date_trunc($2::text, r.created_at AT TIME ZONE 'UTC')"
    "   AS p, r.kind, g AS gpu,"
    "  CASE WHEN r.kind <> 'compare'"
    "   AND json_typeof(r.summary->'gpus') = 'number'"
    "   THEN (r.summary->>'gpus')::numeric END AS n"
    "  FROM recommendations r CROSS JOIN w"
    "  CROSS JOIN LATERAL unnest(string_to_array(r.gpu, ',')) g"
    "  WHERE r.created_at >= w.t0 AND g <> '')"
    " SELECT json_build_object("
    " 'generated_at', to_char(now() AT TIME ZONE 'UTC',"
    "  'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    " 'window_days', $1::int, 'bucket', $2::text,"
    " 'catalog', (SELECT coalesce(json_object_agg(name, display_name"
    "  ORDER BY name), '{}') FROM gpus),"
    " 'runs', (SELECT json_build_object('in_window', count(*),"
    "  'nodes_reporting', count(DISTINCT b.hostname))"
    "  FROM benchmark_runs b, w WHERE b.received_at >= w.t0),"
    " 'nodes', json_build_object("
    "  'total', (SELECT count(*) FROM ndc),"
    "  'fresh', (SELECT count(*) FROM ndc WHERE class = 'fresh'),"
    "  'stale', (SELECT count(*) FROM ndc WHERE class = 'stale'),"
    "  'silent', (SELECT count(*) FROM ndc WHERE class = 'silent'),"
    "  'listed', (SELECT least(count(*), $3::int) FROM ndc),"
    "  'ages', (SELECT json_agg(json_build_object('label', a.label,"
    "   'class', CASE WHEN a.hi <= 36 THEN 'fresh' WHEN a.hi <= 168"
    "   THEN 'stale' ELSE 'silent' END, 'nodes', (SELECT count(*)"
    "   FROM ndc WHERE ndc.age_h >= a.lo AND ndc.age_h < a.hi))"
    "   ORDER BY a.i) FROM ages a),"
    "  'items', coalesce((SELECT json_agg(json_build_object("
    "   'hostname', x.hostname,"
    "   'gpus', (SELECT count(*) FROM node_gpus g"
    "    WHERE g.hostname = x.hostname),"
    "   'gpu_types', (SELECT coalesce(json_agg(DISTINCT"
    "    coalesce(g.gpu_type, g.name)), '[]') FROM node_gpus g"
    "    WHERE g.hostname = x.hostname),"
    "   'last_seen', to_char(x.last_seen AT TIME ZONE 'UTC',"
    "    'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "   'age_hours', round(x.age_h::numeric, 2), 'class', x.class,"
    "   'last_status', x.last_status,"
    "   'runs_in_window', (SELECT count(*) FROM benchmark_runs b, w"
    "    WHERE b.hostname = x.hostname AND b.received_at >= w.t0))"
    "   ORDER BY x.last_seen, x.hostname)"
    "   FROM (SELECT * FROM ndc ORDER BY last_seen, hostname"
    "    LIMIT $3::int) x), '[]')),"
    " 'demand', json_build_object("
    "  'requests', (SELECT count(*) FROM recommendations r, w"
    "   WHERE r.created_at >= w.t0),"
    "  'periods', (SELECT json_agg(to_char(s, 'YYYY-MM-DD') ORDER BY s)"
    "   FROM w, generate_series(date_trunc($2::text, w.t0 AT TIME ZONE"
    "   'UTC'), date_trunc($2::text, now() AT TIME ZONE 'UTC'),"
    "   ('1 ' || $2::text)::interval) s),"
    "  'series', coalesce((SELECT json_agg(json_build_object('period',"
    "   to_char(p, 'YYYY-MM-DD'), 'gpu', gpu, 'kind', kind, 'requests', c,"
    "   'gpus', s) ORDER BY p, gpu, kind) FROM (SELECT p, gpu, kind,"
    "   count(*) AS c, sum(n) AS s FROM rec GROUP BY 1, 2, 3) t), '[]'),"
    "  'totals', coalesce((SELECT json_agg(json_build_object('gpu', gpu,"
    "   'requests', c, 'training', tr, 'inference', inf, 'compare', cmp,"
    "   'gpus', s) ORDER BY c DESC, gpu) FROM (SELECT gpu, count(*) AS c,"
    "   count(*) FILTER (WHERE kind = 'training') AS tr,"
    "   count(*) FILTER (WHERE kind = 'inference') AS inf,"
    "   count(*) FILTER (WHERE kind = 'compare') AS cmp,"
    "   sum(n) AS s FROM rec GROUP BY gpu) t), '[]')))::text";

enum store_status store_report_capacity(struct db_pool *pool,
					const struct report_query *q,
					json_t **out, struct store_err *e)
{
	char days[16], max_nodes[16];
	const char *params[3] = {days, q->bucket, max_nodes};
	PGresult *r = NULL;
	json_t *fleet = NULL;
	json_error_t jerr;

	*out = NULL;
	store_err_clear(e);
	if (strcmp(q->bucket, "day") != 0 && strcmp(q->bucket, "week") != 0 &&
	    strcmp(q->bucket, "month") != 0) {
		e->status = STORE_INVALID;
		snprintf(e->message, sizeof(e->message),
			 "bucket must be day, week or month");
		return e->status;
	}
	snprintf(days, sizeof(days), "%d", q->window_days);
	snprintf(max_nodes, sizeof(max_nodes), "%d",
		 q->max_nodes > 0 ? q->max_nodes : 1);
	/* The fleet part is exactly GET /v1/fleet's, so the two agree. */
	if (store_fleet(pool, q->window_days, q->degraded_threshold, &fleet,
			e) != STORE_OK)
		return e->status;
	if (db_exec(pool, report_sql, 3, params, 1, &r, e) != STORE_OK) {
		json_decref(fleet);
		return e->status;
	}
	if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "the report query returned no row");
	} else if (!(*out = json_loads(PQgetvalue(r, 0, 0), 0, &jerr))) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "the report query returned invalid JSON: %s",
			 jerr.text);
	} else {
		json_object_set_new(*out, "fleet", fleet); /* steals */
		fleet = NULL;
	}
	json_decref(fleet);
	PQclear(r);
	return e->status;
}

/* report.c - the capacity report's data in SQL (see report.h). */
#include <stdio.h>
#include <string.h>

#include "storage/bench.h"
#include "storage/pgconn.h"
#include "storage/report.h"

/* Node freshness, demand, the weekly capacity table and catalog names in
 * one statement. Ages are in hours from the database's clock
 * (nodes.last_seen is set by it too), so a skewed probe clock cannot make
 * a node look fresh.
 *
 * A job is a distinct request text (md5(request::text)) of a kind: the
 * sizing endpoints store the normalised request (canonical names, nulls
 * dropped, defaults explicit, sorted keys), so the same job asked again
 * is one job however it was spelt (a request stored as posted collapses
 * only with an identical body); demand counts each job once, at its
 * latest answer in the window (lj). summary holds the top plan's gpus
 * and days (handlers/sizing_*.c), so the big response is not read.
 *
 * Capacity, per GPU type and ISO week (weeks start on Monday, UTC):
 *  - asked: a training job adds its latest answer's top plan GPUs x days
 *    in the week of that answer (no train_tokens: no days, nothing);
 *    an inference job adds its top plan's GPUs x 7 for every week it was
 *    asked in, from its latest answer of that week: serving is assumed
 *    to run around the clock. Compare requests weigh alternatives and add
 *    nothing.
 *  - healthy: the distinct GPUs of the type that a probe measured that
 *    week (in its node's latest run of the week, received that week:
 *    the database's clock) and that are not degraded, x 7. Degraded is
 *    GET /v1/fleet's rule (storage/bench.c store_fleet()) applied to that
 *    run: a metric more than $4 under its type's median of that week
 *    (over, for latencies; two or more GPUs of the type), a hardware or
 *    thermal clock slowdown while measured, or a PCIe link below its
 *    maximum (the node's latest inventory: PCIe state is known as of the
 *    last report only); medians outside 0 and [BENCH_STAT_MIN,
 *    BENCH_STAT_MAX] are skipped, as there (both reduced when the run was
 *    stored: migrations/0014_fleet_rollups.sql).
 */
static const char report_sql[] =
    /* clang-format off */
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
    /* clang-format on */
    /* every answer in the window, and the latest answer of each job */
    /* clang-format off */
    " rq AS (SELECT r.kind, r.gpu, r.created_at, r.summary,"
    "  md5(r.request::text) AS job"
    "  FROM recommendations r, w WHERE r.created_at >= w.t0),"
    " lj AS (SELECT DISTINCT ON (kind, job) kind, job, gpu, created_at,"
    "  summary, CASE WHEN kind <> 'compare'"
    "   AND json_typeof(summary->'gpus') = 'number'"
    "   THEN (summary->>'gpus')::numeric END AS n"
    "  FROM rq ORDER BY kind, job, created_at DESC),"
    /* clang-format on */
    /* a compare job counts once for every GPU type it compared */
    /* clang-format off */
    " jg AS (SELECT lj.kind, g AS gpu, lj.n FROM lj"
    "  CROSS JOIN LATERAL unnest(string_to_array(lj.gpu, ',')) g"
    "  WHERE g <> ''),"
    " rg AS (SELECT g AS gpu, count(*) AS c FROM rq"
    "  CROSS JOIN LATERAL unnest(string_to_array(rq.gpu, ',')) g"
    "  WHERE g <> '' GROUP BY g),"
    /* clang-format on */
    /* the chart: jobs per period, kind and GPU type (a compare job's
     * gpu is the list it compared: one job, so the stacks add up to the
     * jobs counted) */
    /* clang-format off */
    " sr AS (SELECT date_trunc($2::text, created_at AT TIME ZONE 'UTC')"
    "   AS p, gpu, kind, count(*) AS c, max(n) AS mx FROM lj"
    "  GROUP BY 1, 2, 3),"
    " ta AS (SELECT date_trunc('week', created_at AT TIME ZONE 'UTC') AS wk,"
    "  gpu, count(*) AS jobs, sum(CASE WHEN"
    "   json_typeof(summary->'days') = 'number'"
    "   THEN n * (summary->>'days')::numeric END) AS gd"
    "  FROM lj WHERE kind = 'training' GROUP BY 1, 2),"
    " ia AS (SELECT wk, gpu, count(*) AS jobs, sum(n) * 7 AS gd"
    "  FROM (SELECT DISTINCT ON (job, wk) date_trunc('week',"
    "   created_at AT TIME ZONE 'UTC') AS wk, gpu, CASE WHEN"
    "   json_typeof(summary->'gpus') = 'number'"
    "   THEN (summary->>'gpus')::numeric END AS n"
    "   FROM rq WHERE kind = 'inference'"
    "   ORDER BY job, wk, created_at DESC) x GROUP BY 1, 2),"
    /* clang-format on */
    /* healthy GPUs per week: store_fleet()'s rules, week by week, on
     * each node's latest run of the week that measured something, from
     * the run's rollup (rollup_gpu_values, migrations/0014 and 0020:
     * each GPU's median per metric and dtype at the largest size it
     * measured, v_week; the slowdowns seen) */
    /* clang-format off */
    " gk AS (SELECT uuid, coalesce(gpu_type, 'nvml:' || name) AS k, info"
    "  FROM node_gpus),"
    " lw AS (SELECT DISTINCT ON (wk, r.hostname) date_trunc('week',"
    "   r.received_at AT TIME ZONE 'UTC') AS wk, r.run_id"
    "  FROM benchmark_runs r, w WHERE r.received_at >= w.t0"
    "  AND r.status IN ('ok', 'partial') AND ($5::boolean OR NOT r.synthetic)"
    "  ORDER BY wk, r.hostname, r.received_at DESC),"
    " ws AS (SELECT l.wk, x.gpu_uuid, g.k, x.metrics, x.dtypes, x.v_week,"
    "  x.slowdowns FROM lw l JOIN rollup_gpu_values x ON x.run_id = l.run_id"
    "  JOIN gk g ON g.uuid = x.gpu_uuid),"
    " wg AS (SELECT ws.wk, ws.gpu_uuid, ws.k, m.metric, m.dtype, m.v"
    "  FROM ws, unnest(ws.metrics, ws.dtypes, ws.v_week)"
    "  AS m (metric, dtype, v) WHERE m.v IS NOT NULL),"
    " wt AS (SELECT wk, k, metric, dtype,"
    "  percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS med,"
    "  count(*) AS n FROM wg GROUP BY 1, 2, 3, 4),"
    " seen AS (SELECT DISTINCT wk, gpu_uuid, k FROM ws),"
    " wbad AS (SELECT p.wk, p.gpu_uuid FROM wg p"
    "  JOIN wt t USING (wk, k, metric, dtype)"
    "  WHERE t.n >= 2 AND t.med > 0 AND CASE WHEN p.metric LIKE"
    "   '%latency%' THEN p.v > (1 + $4::float8) * t.med"
    "   ELSE p.v < (1 - $4::float8) * t.med END"
    "  UNION SELECT s.wk, s.gpu_uuid FROM seen s JOIN gk g"
    "  ON g.uuid = s.gpu_uuid"
    "  WHERE (g.info->'pcie'->>'gen_current')::int"
    "   < (g.info->'pcie'->>'gen_max')::int"
    "   OR (g.info->'pcie'->>'width_current')::int"
    "   < (g.info->'pcie'->>'width_max')::int"
    "  UNION SELECT wk, gpu_uuid FROM ws WHERE cardinality(slowdowns) > 0),"
    " hl AS (SELECT s.wk, s.k, count(*) AS seen,"
    "  count(*) FILTER (WHERE x.gpu_uuid IS NULL) AS healthy"
    "  FROM seen s LEFT JOIN wbad x USING (wk, gpu_uuid) GROUP BY 1, 2),"
    " ck AS (SELECT wk, gpu FROM ta UNION SELECT wk, gpu FROM ia"
    "  UNION SELECT wk, k FROM hl)"
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
    "  'requests', (SELECT count(*) FROM rq),"
    "  'jobs', (SELECT count(*) FROM lj),"
    "  'jobs_by_kind', (SELECT json_build_object("
    "   'training', count(*) FILTER (WHERE kind = 'training'),"
    "   'inference', count(*) FILTER (WHERE kind = 'inference'),"
    "   'compare', count(*) FILTER (WHERE kind = 'compare')) FROM lj),"
    "  'periods', (SELECT json_agg(to_char(s, 'YYYY-MM-DD') ORDER BY s)"
    "   FROM w, generate_series(date_trunc($2::text, w.t0 AT TIME ZONE"
    "   'UTC'), date_trunc($2::text, now() AT TIME ZONE 'UTC'),"
    "   ('1 ' || $2::text)::interval) s),"
    "  'series', coalesce((SELECT json_agg(json_build_object('period',"
    "   to_char(p, 'YYYY-MM-DD'), 'gpu', gpu, 'kind', kind, 'jobs', c,"
    "   'largest_plan_gpus', mx) ORDER BY p, kind = 'compare', gpu, kind)"
    "   FROM sr), '[]'),"
    "  'totals', coalesce((SELECT json_agg(json_build_object('gpu',"
    "   t.gpu, 'jobs', t.c, 'training', t.tr, 'inference', t.inf,"
    "   'compare', t.cmp, 'requests', coalesce(rg.c, 0),"
    "   'largest_plan_gpus', t.mx) ORDER BY t.c DESC, t.gpu)"
    "   FROM (SELECT gpu, count(*) AS c,"
    "   count(*) FILTER (WHERE kind = 'training') AS tr,"
    "   count(*) FILTER (WHERE kind = 'inference') AS inf,"
    "   count(*) FILTER (WHERE kind = 'compare') AS cmp,"
    "   max(n) AS mx FROM jg GROUP BY gpu) t"
    "   LEFT JOIN rg USING (gpu)), '[]')),"
    " 'capacity', json_build_object("
    "  'weeks', (SELECT json_agg(json_build_object('week',"
    "   to_char(s, 'IYYY-\"W\"IW'), 'start', to_char(s, 'YYYY-MM-DD'))"
    "   ORDER BY s) FROM w, generate_series(date_trunc('week', w.t0"
    "   AT TIME ZONE 'UTC'), date_trunc('week', now() AT TIME ZONE"
    "   'UTC'), interval '1 week') s),"
    "  'items', coalesce((SELECT json_agg(json_build_object("
    "   'week', to_char(ck.wk, 'IYYY-\"W\"IW'),"
    "   'week_start', to_char(ck.wk, 'YYYY-MM-DD'), 'gpu_type', ck.gpu,"
    "   'training_jobs', coalesce(ta.jobs, 0),"
    "   'training_gpu_days', round(coalesce(ta.gd, 0), 1),"
    "   'inference_jobs', coalesce(ia.jobs, 0),"
    "   'inference_gpu_days', round(coalesce(ia.gd, 0), 1),"
    "   'asked_gpu_days', round(coalesce(ta.gd, 0) + coalesce(ia.gd, 0),"
    "    1),"
    "   'seen_gpus', coalesce(hl.seen, 0),"
    "   'healthy_gpus', coalesce(hl.healthy, 0),"
    "   'healthy_gpu_days', coalesce(hl.healthy, 0) * 7)"
    "   ORDER BY ck.wk, ck.gpu) FROM ck"
    "   LEFT JOIN ta ON ta.wk = ck.wk AND ta.gpu = ck.gpu"
    "   LEFT JOIN ia ON ia.wk = ck.wk AND ia.gpu = ck.gpu"
    "   LEFT JOIN hl ON hl.wk = ck.wk AND hl.k = ck.gpu), '[]')))::text";
/* clang-format on */

enum store_status store_report_capacity(struct db_pool *pool,
					const struct report_query *q,
					json_t **out, struct store_err *e)
{
	char days[16], max_nodes[16], thr[32];
	const char *params[5] = {days, q->bucket, max_nodes, thr,
				 q->with_synthetic ? "true" : "false"};
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
	snprintf(thr, sizeof(thr), "%.6f", q->degraded_threshold);
	/* The fleet part is exactly GET /v1/fleet's, so the two agree. */
	if (store_fleet(pool, q->window_days, q->degraded_threshold,
			q->with_synthetic, &fleet, e) != STORE_OK)
		return e->status;
	if (db_exec(pool, report_sql, 5, params, 1, &r, e) != STORE_OK) {
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

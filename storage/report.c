/* report.c - the capacity report's data in SQL (see report.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/bench.h"
#include "storage/week_mirror.h"
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
 *    run: a metric more than the threshold under its type's median of that week
 *    (over, for latencies; two or more GPUs of the type), the median of
 *    the week's nodes' medians as the fleet's is (storage/mirror.c
 *    mirror_node_median; review s23d F1), a hardware or
 *    thermal clock slowdown while measured, or a PCIe link below its
 *    maximum (the node's latest inventory: PCIe state is known as of the
 *    last report only); medians outside 0 and [BENCH_STAT_MIN,
 *    BENCH_STAT_MAX] are skipped, as there (both reduced when the run was
 *    stored: migrations/0014_fleet_rollups.sql). The medians are per
 *    week, type, metric and dtype over those runs' GPUs' v_week values
 *    (each GPU's median at the largest size it measured). This part is
 *    reduced in the daemon from its copy of each node's latest runs of
 *    each week (storage/week_mirror.c week_mirror_weeks(),
 *    migrations/0021_week_mirror.sql): in SQL it unnested and sorted
 *    every GPU-week's values on every read, ~58 us a GPU-week, 1.95 s at
 *    16,000 GPUs (docs/BENCHMARKS.md); the statement takes its figures
 *    as arrays ($4-$7) and shapes the answer as before
 *    (tests/api/sql/report_rollup.sql is the statement as it was).
 */
static const char report_sql[] =
    /* clang-format off */
    "WITH w AS (SELECT now() - make_interval(days => $1::int) AS t0),"
    /* each node's last run by its id and its received_at, read from
     * benchmark_run_ids first: with the partition key known the lookup
     * probes one monthly partition, where by id alone it probed every
     * month kept (a join before that read every run: 0.2 s at half a
     * year of 16,000 GPUs). A run whose received_at was changed in place
     * (benchmark_run_ids keeps the first) is found by its id alone. */
    " nd AS (SELECT n.hostname, n.last_seen, coalesce((SELECT r.status"
    "  FROM benchmark_runs r WHERE r.run_id = n.last_run_id"
    "  AND r.received_at = (SELECT i.received_at FROM benchmark_run_ids i"
    "   WHERE i.run_id = n.last_run_id)), (SELECT r.status"
    "  FROM benchmark_runs r WHERE r.run_id = n.last_run_id)) AS last_status,"
    "  greatest(0, extract(epoch FROM now() - n.last_seen) / 3600)"
    "   AS age_h"
    "  FROM nodes n),"
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
    /* healthy GPUs per week and type ($4-$7): reduced in the daemon
     * (storage/week_mirror.c week_mirror_weeks(), see above) */
    /* clang-format off */
    " hl AS (SELECT * FROM unnest($4::timestamp[], $5::text[],"
    "  $6::bigint[], $7::bigint[]) AS h (wk, k, seen, healthy)),"
    /* runs in the window per node, in one pass: the run count, the
     * nodes reporting and each listed node's count */
    " rw AS (SELECT b.hostname, count(*) AS n FROM benchmark_runs b, w"
    "  WHERE b.received_at >= w.t0 GROUP BY 1),"
    " ck AS (SELECT wk, gpu FROM ta UNION SELECT wk, gpu FROM ia"
    "  UNION SELECT wk, k FROM hl)"
    " SELECT json_build_object("
    " 'generated_at', to_char(now() AT TIME ZONE 'UTC',"
    "  'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    " 'window_days', $1::int, 'bucket', $2::text,"
    " 'catalog', (SELECT coalesce(json_object_agg(name, display_name"
    "  ORDER BY name), '{}') FROM gpus),"
    " 'runs', (SELECT json_build_object('in_window', coalesce(sum(n), 0),"
    "  'nodes_reporting', count(*)) FROM rw),"
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
    "    WHERE g.hostname = x.hostname AND g.removed_at IS NULL),"
    "   'gpu_types', (SELECT coalesce(json_agg(DISTINCT"
    "    coalesce(g.gpu_type, g.name)), '[]') FROM node_gpus g"
    "    WHERE g.hostname = x.hostname AND g.removed_at IS NULL),"
    "   'last_seen', to_char(x.last_seen AT TIME ZONE 'UTC',"
    "    'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "   'age_hours', round(x.age_h::numeric, 2), 'class', x.class,"
    "   'last_status', x.last_status,"
    "   'runs_in_window', x.runs_in_window)"
    "   ORDER BY x.last_seen, x.hostname)"
    "   FROM (SELECT ndc.*, coalesce(rw.n, 0) AS runs_in_window"
    "    FROM ndc LEFT JOIN rw USING (hostname)"
    "    ORDER BY last_seen, hostname LIMIT $3::int) x), '[]')),"
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
	char *weeks[4] = {NULL};
	const char *params[7] = {days, q->bucket, max_nodes};
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
	/* the threshold as the statement took it: six decimals */
	snprintf(thr, sizeof(thr), "%.6f", q->degraded_threshold);
	/* The fleet part is exactly GET /v1/fleet's, so the two agree. */
	if (store_fleet(pool, q->window_days, q->degraded_threshold,
			q->with_synthetic, &fleet, e) != STORE_OK)
		return e->status;
	if (week_mirror_weeks(pool, q->window_days, strtod(thr, NULL),
			      q->with_synthetic, weeks, e) != STORE_OK)
		goto out;
	for (int i = 0; i < 4; i++)
		params[3 + i] = weeks[i];
	if (db_exec(pool, report_sql, 7, params, 1, &r, e) != STORE_OK)
		goto out;
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
out:
	for (int i = 0; i < 4; i++)
		free(weeks[i]);
	json_decref(fleet);
	PQclear(r);
	return e->status;
}

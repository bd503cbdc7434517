-- 0014_fleet_rollups.sql - what the fleet view, the capacity report and
-- calibration read, reduced once per run instead of per read (issue 18).
--
-- Those reads reduced raw result rows on every call: each GPU's latest
-- run's rows (GET /v1/fleet, 0.8-0.9 s at 317k results with a long
-- window), a week of each node's rows (the capacity report) and a GPU
-- type's window (calibration, ~0.3 s at 550k rows). The reductions they
-- make are per run, so they are made once, when a run's results are
-- written, into two rollups:
--
--  rollup_gpu_runs   one row per run and GPU (per node, per day: a node
--                    probes daily): for each metric and dtype the GPU's
--                    value as GET /v1/fleet reduces it (v: the median of
--                    its ok results in [BENCH_STAT_MIN, BENCH_STAT_MAX] or
--                    0, at the largest size among those; lim: the largest
--                    such limit) and as the capacity report does (v_week:
--                    the same median at the largest size among all the
--                    GPU's rows), and the clock slowdowns seen;
--  rollup_type_runs  one row per run and GPU type (per type, metric,
--                    dtype and day): the run's value per metric and dtype
--                    as calibration reduces it (the median over the run's
--                    ok results in bounds at the largest size), for the
--                    four metrics calibration reads.
--
-- The reads then take medians over these values (storage/bench.c,
-- storage/report.c): the same numbers as before for the same rows
-- (tests/api/t_rollups.sh compares them with the raw computation). Values
-- are arrays per row (a few hundred bytes a GPU) rather than a row per
-- metric: fewer rows to store and to read.
--
-- They are kept current by statement triggers on benchmark_results: an
-- ingestion statement's rows are reduced from its transition table (no
-- re-read); any other change to results (an operator's UPDATE, a DELETE)
-- recomputes the runs it touched from the table. Both rollups are
-- partitioned by month like the results (0013) and dropped with them by
-- gpusizer_maintain(). The bounds 1e-9 and 1e15 are BENCH_STAT_MIN and
-- BENCH_STAT_MAX (storage/bench.h): keep them in step.
--
-- With the reads off the raw rows, the two result indexes only they used
-- go: (gpu_type, measured_at) (0007) and (gpu_uuid, measured_at) (0010),
-- two b-tree entries less per result row.

SET lock_timeout = '5s';

CREATE TABLE rollup_gpu_runs (
    measured_at timestamptz NOT NULL,
    gpu_uuid    text NOT NULL,
    run_id      uuid NOT NULL,
    synthetic   boolean NOT NULL,
    metrics     text[] NOT NULL,
    dtypes      text[] NOT NULL,     -- '' for none
    units       text[] NOT NULL,
    v           float8[] NOT NULL,
    lim         float8[] NOT NULL,
    v_week      float8[] NOT NULL,   -- NULL elements: none at that size
    slowdowns   text[] NOT NULL      -- distinct, sorted
) PARTITION BY RANGE (measured_at);
CREATE INDEX rollup_gpu_runs_gpu ON rollup_gpu_runs (gpu_uuid, measured_at DESC);
CREATE INDEX rollup_gpu_runs_run ON rollup_gpu_runs (run_id);

CREATE TABLE rollup_type_runs (
    measured_at timestamptz NOT NULL,
    gpu_type    text NOT NULL,
    run_id      uuid NOT NULL,
    synthetic   boolean NOT NULL,
    metrics     text[] NOT NULL,
    dtypes      text[] NOT NULL,     -- fp8_e4m3 reads as fp8
    v           float8[] NOT NULL
) PARTITION BY RANGE (measured_at);
CREATE INDEX rollup_type_runs_type ON rollup_type_runs (gpu_type, measured_at DESC);
CREATE INDEX rollup_type_runs_run ON rollup_type_runs (run_id);

CREATE TABLE rollup_gpu_runs_default PARTITION OF rollup_gpu_runs DEFAULT;
CREATE TABLE rollup_type_runs_default PARTITION OF rollup_type_runs DEFAULT;

-- Reduces result rows (whole runs) into both rollups. (Row aliases here
-- avoid "n", a column of benchmark_results.)
-- PL/pgSQL, not SQL: its statement's plan is kept per connection, where an
-- SQL function's would be planned again on every ingestion.
CREATE FUNCTION gpusizer_rollup(rs benchmark_results[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH s AS (SELECT * FROM unnest(rs)),
    syn AS (SELECT r.run_id, coalesce(bool_or(b.synthetic), false) AS syn
            FROM (SELECT DISTINCT run_id FROM s) r
            LEFT JOIN benchmark_runs b ON b.run_id = r.run_id
            GROUP BY r.run_id),
    g AS (SELECT run_id, gpu_uuid, metric, coalesce(dtype, '') AS dtype,
                 unit, status, median, limit_value,
                 clock_event_reasons, measured_at,
                 status = 'ok' AND (median = 0
                     OR median BETWEEN 1e-9::float8 AND 1e15::float8) AS good,
                 coalesce(size_bytes, 0) AS sz,
                 max(coalesce(size_bytes, 0)) OVER (PARTITION BY run_id,
                     gpu_uuid, metric, coalesce(dtype, '')) AS mx_all
          FROM s WHERE gpu_uuid IS NOT NULL),
    f AS (SELECT g.*, max(sz) OVER (PARTITION BY run_id, gpu_uuid, metric,
                                    dtype) AS mx_good
          FROM g WHERE good),
    fv AS (SELECT run_id, gpu_uuid, metric, dtype, max(unit) AS unit,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v,
                  max(CASE WHEN limit_value BETWEEN 1e-9::float8
                      AND 1e15::float8 THEN limit_value END) AS lim
           FROM f WHERE sz = mx_good GROUP BY 1, 2, 3, 4),
    wv AS (SELECT run_id, gpu_uuid, metric, dtype,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v
           FROM g WHERE sz = mx_all AND good GROUP BY 1, 2, 3, 4),
    sl AS (SELECT run_id, gpu_uuid,
                  array_agg(DISTINCT reason ORDER BY reason) AS reasons
           FROM f, unnest(clock_event_reasons) reason
           WHERE reason IN ('hw_slowdown', 'hw_thermal_slowdown',
                            'sw_thermal_slowdown', 'hw_power_brake_slowdown')
           GROUP BY 1, 2),
    gr AS (SELECT DISTINCT run_id, gpu_uuid, measured_at FROM g),
    ins1 AS (
        INSERT INTO rollup_gpu_runs
        SELECT gr.measured_at, gr.gpu_uuid, gr.run_id, syn.syn,
               coalesce(x.metrics, '{}'), coalesce(x.dtypes, '{}'),
               coalesce(x.units, '{}'), coalesce(x.v, '{}'),
               coalesce(x.lim, '{}'), coalesce(x.v_week, '{}'),
               coalesce(sl.reasons, '{}')
        FROM gr JOIN syn USING (run_id)
        LEFT JOIN sl USING (run_id, gpu_uuid)
        LEFT JOIN LATERAL (
            SELECT array_agg(fv.metric ORDER BY fv.metric, fv.dtype) AS metrics,
                   array_agg(fv.dtype ORDER BY fv.metric, fv.dtype) AS dtypes,
                   array_agg(fv.unit ORDER BY fv.metric, fv.dtype) AS units,
                   array_agg(fv.v ORDER BY fv.metric, fv.dtype) AS v,
                   array_agg(fv.lim ORDER BY fv.metric, fv.dtype) AS lim,
                   array_agg(wv.v ORDER BY fv.metric, fv.dtype) AS v_week
            FROM fv LEFT JOIN wv USING (run_id, gpu_uuid, metric, dtype)
            WHERE fv.run_id = gr.run_id AND fv.gpu_uuid = gr.gpu_uuid) x
            ON true
        RETURNING 1),
    c AS (SELECT run_id, gpu_type, metric, coalesce(dtype, '') AS dtype,
                 median, measured_at, coalesce(size_bytes, 0) AS sz,
                 max(coalesce(size_bytes, 0)) OVER (PARTITION BY run_id,
                     gpu_type, metric, coalesce(dtype, '')) AS mx
          FROM s
          WHERE gpu_type IS NOT NULL AND status = 'ok'
            AND median BETWEEN 1e-9::float8 AND 1e15::float8
            AND metric IN ('gemm_tflops', 'hbm_read_gbps',
                           'nccl_allreduce_busbw_gbps', 'p2p_unidir_gbps')),
    cv AS (SELECT run_id, gpu_type, max(measured_at) AS measured_at, metric,
                  CASE dtype WHEN 'fp8_e4m3' THEN 'fp8' ELSE dtype END
                      AS dtype,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v
           FROM c WHERE sz = mx GROUP BY run_id, gpu_type, metric, 5)
    INSERT INTO rollup_type_runs
    SELECT max(cv.measured_at), cv.gpu_type, cv.run_id, syn.syn,
           array_agg(cv.metric ORDER BY cv.metric, cv.dtype),
           array_agg(cv.dtype ORDER BY cv.metric, cv.dtype),
           array_agg(cv.v ORDER BY cv.metric, cv.dtype)
    FROM cv JOIN syn USING (run_id)
    GROUP BY cv.gpu_type, cv.run_id, syn.syn;
END
$$;

-- Recomputes the rollups of runs from the stored results.
CREATE FUNCTION gpusizer_rollup_recompute(runs uuid[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM rollup_gpu_runs WHERE run_id = ANY (runs);
    DELETE FROM rollup_type_runs WHERE run_id = ANY (runs);
    -- a run's results are its block of ids (0007): read by primary key
    SELECT gpusizer_rollup(coalesce(array_agg(b), '{}'))
    FROM benchmark_runs r JOIN benchmark_results b
      ON b.id >= r.first_result_id AND b.id < r.first_result_id + 32768
     AND b.run_id = r.run_id
    WHERE r.run_id = ANY (runs);
$$;

CREATE FUNCTION gpusizer_rollup_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    runs uuid[];
BEGIN
    SELECT array_agg(DISTINCT run_id) INTO runs FROM new_rows;
    IF runs IS NULL THEN
        RETURN NULL;
    END IF;
    -- An ingestion statement writes whole runs: reduce them as written.
    -- Rows added to a run already rolled up: recompute it.
    IF EXISTS (SELECT 1 FROM rollup_gpu_runs WHERE run_id = ANY (runs))
       OR EXISTS (SELECT 1 FROM rollup_type_runs WHERE run_id = ANY (runs))
    THEN
        PERFORM gpusizer_rollup_recompute(runs);
    ELSE
        PERFORM gpusizer_rollup(ARRAY(SELECT w::benchmark_results FROM new_rows w));
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION gpusizer_rollup_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    runs uuid[];
BEGIN
    IF TG_OP = 'UPDATE' THEN
        SELECT array_agg(DISTINCT run_id) INTO runs
        FROM (SELECT run_id FROM old_rows UNION SELECT run_id FROM new_rows) x;
    ELSE
        SELECT array_agg(DISTINCT run_id) INTO runs FROM old_rows;
    END IF;
    IF runs IS NOT NULL THEN
        PERFORM gpusizer_rollup_recompute(runs);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER benchmark_results_rollup_ins AFTER INSERT ON benchmark_results
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_rollup_inserted();
CREATE TRIGGER benchmark_results_rollup_upd AFTER UPDATE ON benchmark_results
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_rollup_changed();
CREATE TRIGGER benchmark_results_rollup_del AFTER DELETE ON benchmark_results
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_rollup_changed();

-- The runs stored so far, a run at a time (each read by its id block).
SELECT gpusizer_rollup_recompute(ARRAY[run_id]) FROM benchmark_runs;

DROP INDEX benchmark_results_type_time_p;
DROP INDEX benchmark_results_gpu_time_p;

SELECT gpusizer_maintain(0, 0, 2);

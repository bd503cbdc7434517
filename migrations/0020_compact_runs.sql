-- 0020_compact_runs.sql - a run stored once, compressed, instead of its
-- report text beside a row per result (issue 18: bytes per GPU-year).
--
-- Where an 8-GPU run's ~138 KB went (docs/BENCHMARKS.md, "Fleet history"):
-- 290 result rows of ~255 bytes (heap) and their primary key, 83 KB; the
-- report text, 34 KB after PostgreSQL's lz4; the rollups, 12 KB. The rows
-- repeat what the report holds (each result's fields, as ingestion took
-- them apart), and lz4 leaves the report at a seventh of its size where
-- zstd takes it to a fourteenth. So a run is now stored as:
--  * report_zstd: the report as posted, zstd-compressed by the daemon
--    (storage/bench.c); PostgreSQL keeps it as it is (STORAGE EXTERNAL: no
--    second compression attempt);
--  * what the reads need without opening it: result_count, and the GPU
--    types its results were stored under (gpu_uuids[i] had gpu_types[i];
--    node_type for results of no GPU), the distinct metrics and dtypes of
--    its results (GET /v1/benchmarks filters runs by them before opening
--    any);
--  * its rollups (0014), computed by the ingestion statement from the
--    results it was given (gpusizer_rollup(rs, run_synthetic) below), no
--    longer by a trigger on result rows. A GPU's rollup row held the names
--    of its metrics, dtypes and units, ~720 of its ~1,350 bytes and the
--    same for every run of a probe version: they are now kept once, in
--    rollup_shapes, which a new row names (its three arrays NULL), and
--    v_week is NULL where it equals v (every size measured ok). Readers
--    read the view rollup_gpu_values: rollup_gpu_runs' columns as before.
-- GET /v1/benchmarks lists such a run's results by opening its report and
-- taking it apart with the same validation that stored it
-- (handlers/benchmarks.c), so each result reads as its row did.
--
-- Online: nothing is rewritten. Runs stored before keep their report text
-- and result rows (report_zstd NULL), read as before until retention drops
-- their month; a daemon of the previous release keeps writing that way
-- during a rolling upgrade, and both kinds are listed together, by id.
-- Deleting runs deletes their rollups as well as any result rows.

SET lock_timeout = '5s';

ALTER TABLE benchmark_runs
    ALTER COLUMN report DROP NOT NULL,
    ADD COLUMN report_zstd bytea,
    ADD COLUMN result_count int,
    ADD COLUMN gpu_uuids text[],
    ADD COLUMN gpu_types text[],
    ADD COLUMN node_type text,
    ADD COLUMN metrics text[],
    ADD COLUMN dtypes text[];
ALTER TABLE benchmark_runs ALTER COLUMN report_zstd SET STORAGE EXTERNAL;

CREATE TABLE rollup_shapes (
    shape   int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    metrics text[] NOT NULL,
    dtypes  text[] NOT NULL,
    units   text[] NOT NULL,
    UNIQUE (metrics, dtypes, units)
);
ALTER TABLE rollup_gpu_runs
    ADD COLUMN shape int,
    ALTER COLUMN metrics DROP NOT NULL,
    ALTER COLUMN dtypes DROP NOT NULL,
    ALTER COLUMN units DROP NOT NULL,
    ALTER COLUMN v_week DROP NOT NULL;

-- The shape of those names, made the first time it is seen (two
-- ingestions making one wait on each other's insert, then read it).
CREATE FUNCTION gpusizer_shape(m text[], d text[], u text[]) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    s int;
BEGIN
    SELECT shape INTO s FROM rollup_shapes
     WHERE metrics = m AND dtypes = d AND units = u;
    IF NOT FOUND THEN
        INSERT INTO rollup_shapes (metrics, dtypes, units) VALUES (m, d, u)
            ON CONFLICT DO NOTHING RETURNING shape INTO s;
        IF s IS NULL THEN
            SELECT shape INTO s FROM rollup_shapes
             WHERE metrics = m AND dtypes = d AND units = u;
        END IF;
    END IF;
    RETURN s;
END
$$;

-- rollup_gpu_runs as its readers know it (0014's columns, whole).
CREATE VIEW rollup_gpu_values AS
SELECT r.measured_at, r.gpu_uuid, r.run_id, r.synthetic,
       coalesce(r.metrics, s.metrics) AS metrics,
       coalesce(r.dtypes, s.dtypes) AS dtypes,
       coalesce(r.units, s.units) AS units,
       r.v, r.lim, coalesce(r.v_week, r.v) AS v_week, r.slowdowns
FROM rollup_gpu_runs r LEFT JOIN rollup_shapes s ON s.shape = r.shape;

-- Each GPU's latest row (0016) from the rows as stored.
CREATE OR REPLACE FUNCTION gpusizer_latest_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rollup_gpu_latest AS l
    SELECT DISTINCT ON (n.gpu_uuid, w.ws) n.gpu_uuid, w.ws, n.measured_at,
           n.run_id, n.synthetic, coalesce(n.metrics, s.metrics),
           coalesce(n.dtypes, s.dtypes), coalesce(n.units, s.units), n.v,
           n.lim, coalesce(n.v_week, n.v), n.slowdowns
    FROM new_rows n LEFT JOIN rollup_shapes s ON s.shape = n.shape,
         (VALUES (true), (false)) w (ws)
    WHERE w.ws OR NOT n.synthetic
    ORDER BY n.gpu_uuid, w.ws, n.measured_at DESC
    ON CONFLICT (gpu_uuid, with_synthetic) DO UPDATE
        SET measured_at = excluded.measured_at, run_id = excluded.run_id,
            synthetic = excluded.synthetic, metrics = excluded.metrics,
            dtypes = excluded.dtypes, units = excluded.units,
            v = excluded.v, lim = excluded.lim, v_week = excluded.v_week,
            slowdowns = excluded.slowdowns
        WHERE excluded.measured_at >= l.measured_at;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION gpusizer_latest_refresh(gpus text[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM rollup_gpu_latest WHERE gpu_uuid = ANY (gpus);
    INSERT INTO rollup_gpu_latest
    SELECT g.u, w.ws, x.measured_at, x.run_id, x.synthetic, x.metrics,
           x.dtypes, x.units, x.v, x.lim, x.v_week, x.slowdowns
    FROM (SELECT DISTINCT unnest(gpus) AS u) g,
         (VALUES (true), (false)) w (ws),
         LATERAL (SELECT * FROM rollup_gpu_values r
                  WHERE r.gpu_uuid = g.u AND (w.ws OR NOT r.synthetic)
                  ORDER BY r.measured_at DESC LIMIT 1) x;
$$;

-- The rollups of runs given their results, as 0014's, with the runs'
-- synthetic flag given (the ingestion statement cannot see the run row it
-- inserts) or, when NULL, read from benchmark_runs.
DROP FUNCTION gpusizer_rollup(benchmark_results[]);
CREATE FUNCTION gpusizer_rollup(rs benchmark_results[],
                                run_synthetic boolean DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    WITH s AS (SELECT * FROM unnest(rs)),
    syn AS (SELECT r.run_id,
                   coalesce(run_synthetic, bool_or(b.synthetic), false) AS syn
            FROM (SELECT DISTINCT run_id FROM s) r
            LEFT JOIN benchmark_runs b
              ON b.run_id = r.run_id AND run_synthetic IS NULL
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
        INSERT INTO rollup_gpu_runs (measured_at, gpu_uuid, run_id,
                                     synthetic, shape, v, lim, v_week,
                                     slowdowns)
        SELECT gr.measured_at, gr.gpu_uuid, gr.run_id, syn.syn,
               gpusizer_shape(coalesce(x.metrics, '{}'),
                              coalesce(x.dtypes, '{}'),
                              coalesce(x.units, '{}')),
               coalesce(x.v, '{}'), coalesce(x.lim, '{}'),
               CASE WHEN coalesce(x.v_week, '{}') = coalesce(x.v, '{}')
                    THEN NULL ELSE coalesce(x.v_week, '{}') END,
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

-- Deleting runs deletes their results (0007) and now their rollups, which
-- no result row stands behind for a compact run.
CREATE OR REPLACE FUNCTION benchmark_runs_delete_results() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM benchmark_results b USING gone g
     WHERE b.id >= g.first_result_id AND b.id < g.first_result_id + 32768;
    DELETE FROM rollup_gpu_runs x USING gone g WHERE x.run_id = g.run_id;
    DELETE FROM rollup_type_runs x USING gone g WHERE x.run_id = g.run_id;
    RETURN NULL;
END
$$;

-- GET /v1/benchmarks walks compact runs newest first (handlers/
-- benchmarks.c): by this index, past the runs stored as rows.
CREATE INDEX benchmark_runs_compact ON benchmark_runs (first_result_id DESC)
    WHERE report_zstd IS NOT NULL;

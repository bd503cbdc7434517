-- 0038_calibration_by_machine.sql - calibration knows a node by its host
-- name and its GPUs (review s19c F5, s19d F1; docs/MODEL.md §5, "One
-- broken node").
--
-- 0037 gave calibration each run's host name, and a node counts once. But
-- the same GPUs posted under other host names (a node re-imaged under a
-- new name, or a report re-sent with another one) counted as more nodes:
-- three copies of one inflated node outvoted a healthy one 3 to 1, while
-- the fleet view, which moves each GPU uuid to its latest host, knew they
-- were one node. Each row now also keeps a key of its GPUs: the smallest
-- uuid among the results it files under the GPU type (node_key
-- 'gpu:<uuid>'; NULL for a run of node-level results alone, NCCL's). The
-- daemon joins runs that share a host name or a GPU key into one node
-- (storage/calib_mirror.c, union-find): a renamed host keeps its GPUs, and
-- a run on some of a host's GPUs, or of NCCL alone, keeps its host name.
--
-- Rows stored before this migration keep node_key NULL: they are their
-- host's, which the rows after it join by the same host name.
--
-- The function is 0037's with the node key carried to rollup_type_runs.

SET lock_timeout = '5s';

ALTER TABLE rollup_type_runs ADD COLUMN node_key text;

CREATE OR REPLACE FUNCTION gpusizer_rollup(rs benchmark_results[],
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
    c AS (SELECT run_id, hostname, gpu_uuid, gpu_type, metric,
                 coalesce(dtype, '') AS dtype,
                 median, measured_at, coalesce(size_bytes, 0) AS sz,
                 max(coalesce(size_bytes, 0)) OVER (PARTITION BY run_id,
                     gpu_type, metric, coalesce(dtype, '')) AS mx
          FROM s
          WHERE gpu_type IS NOT NULL AND status = 'ok'
            AND median BETWEEN 1e-9::float8 AND 1e15::float8
            AND metric IN ('gemm_tflops', 'gemm_sustained_tflops',
                           'hbm_read_gbps', 'nccl_allreduce_busbw_gbps',
                           'p2p_unidir_gbps')),
    cv AS (SELECT run_id, max(hostname) AS hostname,
                  min(gpu_uuid) AS first_uuid, gpu_type,
                  max(measured_at) AS measured_at, metric,
                  CASE dtype WHEN 'fp8_e4m3' THEN 'fp8' ELSE dtype END
                      AS dtype,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v
           FROM c WHERE sz = mx GROUP BY run_id, gpu_type, metric, 7)
    INSERT INTO rollup_type_runs (measured_at, gpu_type, run_id, synthetic,
                                  metrics, dtypes, v, hostname, node_key)
    SELECT max(cv.measured_at), cv.gpu_type, cv.run_id, syn.syn,
           array_agg(cv.metric ORDER BY cv.metric, cv.dtype),
           array_agg(cv.dtype ORDER BY cv.metric, cv.dtype),
           array_agg(cv.v ORDER BY cv.metric, cv.dtype),
           max(cv.hostname), 'gpu:' || min(cv.first_uuid)
    FROM cv JOIN syn USING (run_id)
    GROUP BY cv.gpu_type, cv.run_id, syn.syn;
END
$$;

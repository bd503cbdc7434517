-- medians_raw.sql: the raw-row query of calibration (storage/bench.c store_fleet_medians) before migrations/0014_fleet_rollups.sql
-- (commit a189a9a), kept as the reference tests/api/t_rollups.sh compares
-- the rollup-based answers with, with the sustained plan GEMMs that
-- migrations/0022 added to calibration, and the statistic of review s17c
-- F2 (storage/bench.c fleet_calib_value; migrations/0037; the daemon also
-- joins host names that share GPUs, 0038, which these fixtures never do):
-- each node's runs
-- give one value, their median; nodes more than :thr under the median of
-- the nodes are left out; the value is the median of the rest, over the
-- runs of the nodes kept. (Not the datasheet band: the runs compared are
-- plausible.) psql variables: see t_rollups.sh.
WITH rows AS ( SELECT metric, coalesce(dtype, '') AS dtype, run_id, hostname, median,  coalesce(size_bytes, 0) AS sz, max(coalesce(size_bytes, 0))  OVER (PARTITION BY run_id, metric, coalesce(dtype, ''))  AS mx FROM benchmark_results WHERE gpu_type = :'gpu' AND status = 'ok'  AND median BETWEEN :lo::float8 AND :hi::float8  AND measured_at > now() - make_interval(days => :days::int)  AND metric IN ('gemm_tflops', 'gemm_sustained_tflops', 'hbm_read_gbps',   'nccl_allreduce_busbw_gbps', 'p2p_unidir_gbps')  AND (:syn::boolean OR NOT EXISTS (SELECT 1 FROM benchmark_runs   s WHERE s.run_id = benchmark_results.run_id   AND s.synthetic))), per_run AS ( SELECT metric, CASE dtype WHEN 'fp8_e4m3' THEN 'fp8'  ELSE dtype END AS dtype, run_id, max(hostname) AS hostname,  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v FROM rows WHERE sz = mx GROUP BY 1, 2, 3),
per_node AS (SELECT metric, dtype, hostname, count(*) AS runs,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS v
             FROM per_run GROUP BY 1, 2, 3),
m AS (SELECT metric, dtype, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS m
      FROM per_node GROUP BY 1, 2),
kept AS (SELECT n.* FROM per_node n JOIN m USING (metric, dtype)
         WHERE n.v >= (1 - :thr::float8) * m.m)
SELECT metric, dtype, percentile_cont(0.5) WITHIN GROUP (ORDER BY v),
       sum(runs), (SELECT count(DISTINCT run_id) FROM per_run)
FROM kept GROUP BY 1, 2 ORDER BY 1, 2;

-- medians_rollup.sql: calibration's statement (storage/bench.c
-- store_fleet_medians) over rollup_type_runs before
-- migrations/0018_calibration_mirror.sql (commit cd23f96), kept as the
-- reference tests/api/t_fleet_mirror.sh compares the daemon's copy with,
-- with the statistic of review s17c F1, F2 (storage/bench.c
-- fleet_calib_value, handlers/calib.c calib_bands): a run outside
-- [0.1, 1.1] x its datasheet figure (the all-reduce: [0.1, 2] x the link)
-- is left out; each node's runs (migrations/0037: a row without a host
-- name is a node of its own; the daemon also joins host names that share
-- GPUs, 0038, which these fixtures never do) give their median; a node more than :thr
-- under the median of the nodes is left out; the median of the rest, over
-- their runs.
-- psql variables: gpu, days, syn, lo, hi, thr. Rows: metric|dtype|median|count|runs.
WITH per_run AS (
 SELECT r.run_id, coalesce(r.hostname, r.run_id::text) AS node, m.metric,
  m.dtype, m.v
 FROM rollup_type_runs r,
  unnest(r.metrics, r.dtypes, r.v) AS m (metric, dtype, v)
 WHERE r.gpu_type = :'gpu'
  AND r.measured_at > now() - make_interval(days => :days::int)
  AND (:syn::boolean OR NOT r.synthetic)
  AND m.v BETWEEN :lo::float8 AND :hi::float8),
band AS (
 SELECT p.*, CASE WHEN p.metric LIKE 'gemm%' THEN
   CASE p.dtype WHEN 'fp64' THEN g.fp64_tflops WHEN 'fp32' THEN g.fp32_tflops
    WHEN 'tf32' THEN g.tf32_tflops WHEN 'fp16' THEN g.fp16_tflops
    WHEN 'bf16' THEN g.bf16_tflops WHEN 'fp8' THEN g.fp8_tflops
    WHEN 'int8' THEN g.int8_tops END
  WHEN p.metric = 'hbm_read_gbps' THEN g.memory_bandwidth_gbps
  WHEN p.metric = 'nccl_allreduce_busbw_gbps' THEN g.intra_node_gbps END AS ds,
  CASE WHEN p.metric = 'nccl_allreduce_busbw_gbps' THEN 2.0 ELSE 1.1 END
   AS hi_ratio
 FROM per_run p LEFT JOIN gpus g ON g.name = :'gpu'),
plausible AS (
 SELECT * FROM band
 WHERE ds IS NULL OR v BETWEEN 0.1 * ds AND hi_ratio * ds),
per_node AS (
 SELECT metric, dtype, node, count(*) AS runs,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS v
 FROM plausible GROUP BY 1, 2, 3),
m AS (
 SELECT metric, dtype, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS m
 FROM per_node GROUP BY 1, 2),
kept AS (
 SELECT n.* FROM per_node n JOIN m USING (metric, dtype)
 WHERE n.v >= (1 - :thr::float8) * m.m)
SELECT metric, dtype,
 percentile_cont(0.5) WITHIN GROUP (ORDER BY v),
 sum(runs), (SELECT count(DISTINCT run_id) FROM per_run)
FROM kept GROUP BY 1, 2 ORDER BY 1, 2;

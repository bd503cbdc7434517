-- medians_rollup.sql: calibration's statement (storage/bench.c
-- store_fleet_medians) over rollup_type_runs before
-- migrations/0018_calibration_mirror.sql (commit cd23f96), kept as the
-- reference tests/api/t_fleet_mirror.sh compares the daemon's copy with.
-- psql variables: gpu, days, syn, lo, hi. Rows: metric|dtype|median|count|runs.
WITH per_run AS (
 SELECT r.run_id, m.metric, m.dtype, m.v
 FROM rollup_type_runs r,
  unnest(r.metrics, r.dtypes, r.v) AS m (metric, dtype, v)
 WHERE r.gpu_type = :'gpu'
  AND r.measured_at > now() - make_interval(days => :days::int)
  AND (:syn::boolean OR NOT r.synthetic)
  AND m.v BETWEEN :lo::float8 AND :hi::float8)
SELECT metric, dtype,
 percentile_cont(0.5) WITHIN GROUP (ORDER BY v),
 count(*), (SELECT count(DISTINCT run_id) FROM per_run)
FROM per_run GROUP BY 1, 2 ORDER BY 1, 2;

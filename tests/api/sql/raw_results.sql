-- raw_results.sql: every stored result as a row, as benchmark_results held
-- them before migrations/0020_compact_runs.sql: a compact run's from its
-- report (raw_reports, filled by tests/api/fleet_lib.sh raw_refresh from
-- report_zstd, decompressed by the zstd tool, not by the daemon), taken
-- apart here as ingestion took it apart (storage/bench.c, handlers/
-- benchmarks.c); a run stored as rows, its rows. The reference queries
-- (fleet_raw.sql, medians_raw.sql, report_raw.sql) read it in place of
-- benchmark_results.
SET client_min_messages = warning;
DROP TABLE IF EXISTS raw_results;
CREATE TABLE raw_results AS
SELECT r.first_result_id + x.ord - 1 AS id, r.run_id, r.hostname,
       x.e->>'gpu_uuid' AS gpu_uuid,
       CASE WHEN x.e->>'gpu_uuid' IS NULL THEN r.node_type
            ELSE r.gpu_types[array_position(r.gpu_uuids, x.e->>'gpu_uuid')]
       END AS gpu_type,
       x.e->>'metric' AS metric, x.e->>'dtype' AS dtype,
       x.e->>'method' AS method, (x.e->>'peer_index')::numeric::int AS peer_index,
       (x.e->>'size_bytes')::numeric::bigint AS size_bytes,
       x.e->>'unit' AS unit, coalesce(x.e->>'status', 'ok') AS status,
       (x.e->>'median')::float8 AS median, (x.e->>'max')::float8 AS max,
       (x.e->>'mean')::float8 AS mean, (x.e->>'p10')::float8 AS p10,
       (x.e->>'p90')::float8 AS p90, (x.e->>'cv')::float8 AS cv,
       (x.e->>'n')::numeric::int AS n,
       (x.e->>'limit')::float8 AS limit_value,
       (x.e->>'efficiency')::float8 AS efficiency,
       coalesce(r.finished_at, r.received_at) AS measured_at,
       CASE WHEN jsonb_typeof(x.e->'telemetry'->'clock_event_reasons') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(
                 x.e->'telemetry'->'clock_event_reasons')) END
           AS clock_event_reasons
FROM benchmark_runs r JOIN raw_reports p USING (run_id),
     jsonb_array_elements(p.report->'results') WITH ORDINALITY x (e, ord)
WHERE r.report_zstd IS NOT NULL
UNION ALL
SELECT id, run_id, hostname, gpu_uuid, gpu_type, metric, dtype, method,
       peer_index, size_bytes, unit, status, median, max, mean, p10, p90, cv,
       n, limit_value, efficiency, measured_at, clock_event_reasons
FROM benchmark_results;

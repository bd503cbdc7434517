-- 0006_lean_ingestion.sql - cheaper storage of probe reports.
--
-- Ingestion (POST /v1/benchmarks) spent most of its time in PostgreSQL
-- turning each ~250 KB report into jsonb twice (the stored report, and one
-- `detail` document per result row) and compressing it with pglz. The
-- daemon now validates the report and sends the rows' fields as arrays
-- (storage/bench.c), so:
--  * the report is kept as `json` (the text as posted, checked but not
--    converted; operators still work, and a replay is compared as jsonb
--    only when one happens), compressed with lz4 where the server has it;
--  * the one field of `detail` any query read, the clock event reasons
--    seen while a result was measured (GET /v1/fleet), becomes a text[]
--    column; the rest of each result stays in the stored report.
ALTER TABLE benchmark_runs ALTER COLUMN report TYPE json USING report::json;

-- lz4 compresses ~5x faster than pglz at a similar ratio on these reports.
-- A server built without lz4 keeps its default (pglz): nothing else
-- depends on it.
DO $$
BEGIN
    ALTER TABLE benchmark_runs ALTER COLUMN report SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'lz4 unavailable, reports keep the default compression';
END $$;

ALTER TABLE benchmark_results ADD COLUMN clock_event_reasons text[];
UPDATE benchmark_results
   SET clock_event_reasons = ARRAY(
       SELECT jsonb_array_elements_text(detail->'telemetry'->'clock_event_reasons'))
 WHERE jsonb_typeof(detail->'telemetry'->'clock_event_reasons') = 'array';
ALTER TABLE benchmark_results DROP COLUMN detail;

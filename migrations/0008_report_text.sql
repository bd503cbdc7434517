-- 0008_report_text.sql - the stored report is text, checked by the daemon.
--
-- Every report is parsed and validated by gpusizerd before it is stored
-- (handlers/jtape.c, a strict RFC 8259 parser differentially fuzzed
-- against jansson; handlers/benchmarks.c). Storing it as `json` made
-- PostgreSQL lex the ~250 KB again on every insert: 10 % of its time per
-- 8-GPU report, 7 % of the ingestion rate, measured side by side
-- (docs/BENCHMARKS.md). The column keeps the text as posted; readers cast
-- it (`report::json`, `report::jsonb`), as storage/bench.c does.
ALTER TABLE benchmark_runs ALTER COLUMN report TYPE text;

-- A type change resets the column's compression to the default: lz4
-- again where the server has it (see 0006). The node inventory documents,
-- rewritten on every report of their node, get lz4 too (pglz compressing
-- them was ~1 % of ingestion's CPU).
DO $$
BEGIN
    ALTER TABLE benchmark_runs ALTER COLUMN report SET COMPRESSION lz4;
    ALTER TABLE nodes ALTER COLUMN inventory SET COMPRESSION lz4;
    ALTER TABLE node_gpus ALTER COLUMN info SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'lz4 unavailable, documents keep the default compression';
END $$;

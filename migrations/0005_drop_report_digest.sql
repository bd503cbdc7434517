-- 0005_drop_report_digest.sql - replays are compared as JSON, not by digest.
--
-- POST /v1/benchmarks used to store a SHA-256 of each report's canonical
-- form to tell a replay (same report again: same answer) from a different
-- report reusing a run_id (409). Computing that form cost the daemon more
-- CPU than any other step of ingestion; the check is now `report = $1::jsonb`
-- on the rare replay only (storage/bench.c), so the column goes.
ALTER TABLE benchmark_runs DROP COLUMN report_sha256;

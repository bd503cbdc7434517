-- 0012_synthetic_runs.sql - synthetic reports stay out of fleet figures.
--
-- A report says "synthetic": true when it was not measured on a GPU (the
-- probe's test fixtures, `make demo`). Until now such runs fed the fleet
-- medians, calibration and the capacity report's healthy GPUs like real
-- measurements (issue 14). The flag is stored on the run; those reads
-- leave flagged runs out unless the daemon runs with --fleet-synthetic
-- (tests and demos). Existing runs are flagged from their stored report:
-- the text is searched first, and only candidates are parsed.
ALTER TABLE benchmark_runs
    ADD COLUMN synthetic boolean NOT NULL DEFAULT false;

UPDATE benchmark_runs SET synthetic = true
WHERE position('"synthetic"' IN report) > 0
  AND (report::jsonb ->> 'synthetic') = 'true';

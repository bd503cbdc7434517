-- 0007_result_blocks.sql - a run's results in one block of ids; leaner
-- result indexes.
--
-- Ingestion (POST /v1/benchmarks) writes a few hundred result rows per
-- report, and PostgreSQL's cost per row set the ingestion rate. Three
-- per-row costs go:
--  * the foreign key to benchmark_runs: its check ran once per row (a
--    lookup and a row lock on the run inserted by the same statement);
--  * the index on run_id: one more b-tree insert per row. Instead each run
--    owns the ids [first_result_id, first_result_id + 32768) (a report
--    carries at most 20,000 results, handlers/benchmarks.c), taken from a
--    sequence of blocks: the primary key finds a run's results as one
--    range, and ids still grow with arrival, so "newest first" paging by
--    id (GET /v1/benchmarks) is unchanged;
--  * the four-column index (gpu_type, metric, dtype, measured_at): every
--    report shares a few such prefixes, so each insert compared up to
--    three text keys per b-tree level. Its one user, the calibration query
--    (fleet medians of a GPU type in a window, storage/bench.c, cached
--    30 s per type), reads the type's recent rows from (gpu_type,
--    measured_at) and filters the four metrics it wants.
-- Measured side by side: ingestion 13 % faster without the four-column
-- index, 6 % with its replacement; docs/BENCHMARKS.md has the steps.
--
-- Results are written only by the ingestion statement, in the same
-- statement as their run (storage/bench.c), so none can exist without it;
-- deleting runs deletes their results (a statement trigger, below), as
-- ON DELETE CASCADE did. Existing rows are renumbered into their runs'
-- blocks, in their order.
CREATE SEQUENCE benchmark_result_block_seq;

ALTER TABLE benchmark_runs ADD COLUMN first_result_id bigint;
WITH b AS (
    SELECT run_id, row_number() OVER (ORDER BY received_at, run_id) AS blk
    FROM benchmark_runs)
UPDATE benchmark_runs r SET first_result_id = b.blk * 32768
  FROM b WHERE b.run_id = r.run_id;
SELECT setval('benchmark_result_block_seq',
              coalesce(max(first_result_id) / 32768, 0) + 1, false)
  FROM benchmark_runs;
ALTER TABLE benchmark_runs
    ALTER COLUMN first_result_id
        SET DEFAULT nextval('benchmark_result_block_seq') * 32768,
    ALTER COLUMN first_result_id SET NOT NULL,
    ADD CONSTRAINT benchmark_runs_first_result_id_key UNIQUE (first_result_id),
    ADD CONSTRAINT benchmark_runs_first_result_id_block
        CHECK (first_result_id > 0 AND first_result_id % 32768 = 0);

ALTER TABLE benchmark_results
    DROP CONSTRAINT benchmark_results_run_id_fkey,
    DROP CONSTRAINT benchmark_results_pkey,
    ALTER COLUMN id DROP DEFAULT;
DROP SEQUENCE benchmark_results_id_seq;
DROP INDEX benchmark_results_run;
DROP INDEX benchmark_results_type_metric;
CREATE INDEX benchmark_results_type_time
    ON benchmark_results (gpu_type, measured_at DESC);
WITH n AS (
    SELECT b.ctid AS row_ctid,
           r.first_result_id
             + row_number() OVER (PARTITION BY b.run_id ORDER BY b.id) - 1
             AS new_id
    FROM benchmark_results b JOIN benchmark_runs r USING (run_id))
UPDATE benchmark_results b SET id = n.new_id
  FROM n WHERE b.ctid = n.row_ctid;
ALTER TABLE benchmark_results ADD PRIMARY KEY (id);

CREATE FUNCTION benchmark_runs_delete_results() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM benchmark_results b USING gone g
     WHERE b.id >= g.first_result_id AND b.id < g.first_result_id + 32768;
    RETURN NULL;
END
$$;
CREATE TRIGGER benchmark_runs_delete_results AFTER DELETE ON benchmark_runs
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION benchmark_runs_delete_results();

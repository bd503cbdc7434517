-- 0010_result_gpu_index.sql - the fleet view reads each GPU's latest run
-- from an index.
--
-- GET /v1/fleet and GET /v1/reports/capacity (storage/bench.c store_fleet)
-- look for each GPU's latest run in the window. Without an index on the
-- GPU they sorted every result row of the window (DISTINCT ON gpu_uuid)
-- and joined the whole table back: 0.8 to 0.9 s at 317k results with a
-- ten-year window (issue 15), ~0.4 s for 319k results on the 2-core
-- development machine. With this index each GPU's latest run is one index
-- probe and its results one index range: the same query took 0.2 s there
-- (EXPLAIN ANALYZE; the rest is aggregating the 37k rows of the latest
-- runs, which grows with the GPUs in the window, not with history).
--
-- Node-wide results (NCCL: gpu_uuid NULL) are not indexed. The index costs
-- ingestion one more b-tree insert per GPU result (docs/OPERATIONS.md
-- "Sizing the service itself" has the measured rate). Built in the
-- migration's transaction: it holds off result inserts while it builds
-- (0.2 s for 319k rows there; probes retry a 503 from their spool).
CREATE INDEX benchmark_results_gpu_time
    ON benchmark_results (gpu_uuid, measured_at DESC)
    WHERE gpu_uuid IS NOT NULL;

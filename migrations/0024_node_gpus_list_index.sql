-- 0024_node_gpus_list_index.sql - GET /v1/nodes counts each node's GPUs
-- and lists their types in one pass over node_gpus (storage/bench.c
-- store_nodes_list). node_gpus rows are wide (~850 B: the GPU's static
-- details) and every run rewrites its GPUs' rows, so that pass read the
-- whole heap: at the full-year fleet of bench/fleet.sh (2,208 nodes, 17,664
-- GPUs, 28 MB of heap after a year of updates) 9 ms of sequential scan
-- plus a 7 ms sort of a 30.9 ms statement. The columns it needs, in
-- hostname order, as an index: an index-only scan (1.7-2.2 ms) with no
-- sort; the statement 15 ms (docs/BENCHMARKS.md, 2026-11-26).
CREATE INDEX IF NOT EXISTS node_gpus_host_types
    ON node_gpus (hostname) INCLUDE (gpu_type, name);
-- It serves every lookup by hostname that node_gpus_host (0001) served,
-- so that one goes: one index updated per GPU row rewrite, as before.
DROP INDEX IF EXISTS node_gpus_host;

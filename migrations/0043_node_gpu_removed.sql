-- 0043_node_gpu_removed.sql - a GPU that left its node stops being counted
-- (review s24c F1). A node's GPUs had been every GPU UUID its reports ever
-- named: an RMA'd or pulled GPU stayed in /v1/fleet and the capacity
-- report's fleet table until its last results left the window, and in
-- /v1/nodes for good. The probe now reports the node's whole inventory,
-- node.gpu_uuids (every GPU NVML enumerates, measured or not: a --devices
-- run lists only what it measured in gpus[]). storage/bench.c ingest_sql
-- marks the node's GPUs missing from it removed, when the report is the
-- node's newest inventory (a spooled older report neither removes nor
-- brings back a GPU), and clears the mark when a newer report names the
-- GPU again.
--  node_gpus.removed_at: when a newer inventory stopped listing the GPU
--   (NULL: present). The row stays: the capacity report's weekly table
--   (week_mirror.c) still counts it in the weeks it was measured.
--  nodes.inventory_at: the started_at (received time when none) of the
--   newest report that carried node.gpu_uuids.
ALTER TABLE node_gpus ADD COLUMN IF NOT EXISTS removed_at timestamptz;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS inventory_at timestamptz;
-- GET /v1/nodes counts the present GPUs in an index-only scan (0024).
CREATE INDEX IF NOT EXISTS node_gpus_host_present
    ON node_gpus (hostname) INCLUDE (gpu_type, name, removed_at);
DROP INDEX IF EXISTS node_gpus_host_types;

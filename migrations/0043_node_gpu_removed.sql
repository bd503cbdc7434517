-- 0043_node_gpu_removed.sql - a GPU that left its node stops being counted
-- (review s24c F1). A node's GPUs had been every GPU UUID its reports ever
-- named: an RMA'd or pulled GPU stayed in /v1/fleet and the capacity
-- report's fleet table until its last results left the window, and in
-- /v1/nodes for good. The probe now reports the node's whole inventory,
-- node.gpu_uuids (every GPU NVML enumerates, measured or not: a --devices
-- run lists only what it measured in gpus[]).
--
-- storage/bench.c keeps the node's newest inventory (by the report's
-- started_at, never later than its arrival) and, after each report,
-- reconciles the node's GPUs with it in a statement of its own (a fresh
-- snapshot, so reports of one node that race end as if sent one after the
-- other; review s25a F1, F2): a GPU the newest inventory leaves out is
-- removed, unless a real report measured it after that inventory.
-- Synthetic reports neither take nor change an inventory (s25a F4), and a
-- report older than what a row or node holds does not overwrite it: a GPU
-- stays on the node that reported it last (s25a F5), and the node's facts
-- are its newest report's (s25a F9).
--  node_gpus.removed_at: when the newest inventory stopped listing the GPU
--   (NULL: present). The row stays: the capacity report's weekly table
--   (week_mirror.c) still counts it in the weeks it was measured.
--  node_gpus.reported_at: the time of the newest real report that measured
--   the GPU (its started_at, at most its arrival).
--  nodes.inventory_at, inventory_uuids: the newest inventory's time and
--   list; nodes.reported_at: the time of the newest real report.
ALTER TABLE node_gpus ADD COLUMN IF NOT EXISTS removed_at timestamptz,
    ADD COLUMN IF NOT EXISTS reported_at timestamptz;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS inventory_at timestamptz,
    ADD COLUMN IF NOT EXISTS inventory_uuids text[],
    ADD COLUMN IF NOT EXISTS reported_at timestamptz;
-- GET /v1/nodes counts the present GPUs in an index-only scan (0024).
CREATE INDEX IF NOT EXISTS node_gpus_host_present
    ON node_gpus (hostname) INCLUDE (gpu_type, name, removed_at);
DROP INDEX IF EXISTS node_gpus_host_types;

-- 0017_fleet_mirror.sql - what the daemon needs to keep a copy of each
-- GPU's inventory and latest rollup row in memory, current at every read
-- (issue 18: GET /v1/fleet at 16,000 GPUs in under 50 ms).
--
-- GET /v1/fleet is defined on every GPU seen in the window: the type's
-- median over its GPUs' latest values, and each GPU against it. Reduced
-- in SQL on every read, that costs ~40 us a GPU here (unnest, sort,
-- percentile_cont: docs/BENCHMARKS.md), 0.7 s at 16,000 GPUs. The daemon
-- instead keeps node_gpus and rollup_gpu_latest (0016) in memory
-- (storage/fleet_mirror.c), reduces them in C, and before each read
-- fetches only the rows written since its last read:
--
--  change_xid  on both tables: the transaction that wrote the row's
--              current version (set by a trigger on every insert and
--              update, so no writer can forget it). A read's statement
--              also returns its snapshot's xmin, the oldest transaction
--              still running then; every row version that read did not
--              see was written by a transaction at or after that xmin
--              (it was running, or started later), so the next read
--              fetches change_xid >= that xmin: nothing committed out
--              of order is missed, and rows seen twice are applied again.
--  fleet_mirror_epoch  one counter, raised by every DELETE (of at least a
--              row) or TRUNCATE of either table (a deleted row leaves nothing to fetch): a
--              read that sees it changed reloads the whole copy. Deletes
--              are rare: gpusizer_maintain() after retention, and an
--              operator's changes to stored results (0014's recompute).
--
-- The copy is exact: the same rows, the same reduction as the SQL it
-- replaces (tests/api/t_rollups.sh compares it with the raw results).

SET lock_timeout = '5s';

CREATE TABLE fleet_mirror_epoch (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    epoch bigint NOT NULL
);
INSERT INTO fleet_mirror_epoch VALUES (true, 0);

CREATE FUNCTION gpusizer_mirror_stamp() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.change_xid := pg_current_xact_id();
    RETURN NEW;
END
$$;

-- A DELETE that deleted nothing (gpusizer_maintain() runs one hourly)
-- leaves the copies as they are.
CREATE FUNCTION gpusizer_mirror_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' OR EXISTS (SELECT 1 FROM old_rows) THEN
        UPDATE fleet_mirror_epoch SET epoch = epoch + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION gpusizer_mirror_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE fleet_mirror_epoch SET epoch = epoch + 1;
    RETURN NULL;
END
$$;

ALTER TABLE node_gpus ADD COLUMN change_xid xid8;
UPDATE node_gpus SET change_xid = pg_current_xact_id();
ALTER TABLE node_gpus ALTER COLUMN change_xid SET NOT NULL;
CREATE INDEX node_gpus_change ON node_gpus (change_xid);
CREATE TRIGGER node_gpus_mirror_stamp BEFORE INSERT OR UPDATE ON node_gpus
    FOR EACH ROW EXECUTE FUNCTION gpusizer_mirror_stamp();
CREATE TRIGGER node_gpus_mirror_del AFTER DELETE ON node_gpus
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_deleted();
CREATE TRIGGER node_gpus_mirror_trunc AFTER TRUNCATE ON node_gpus
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_truncated();

ALTER TABLE rollup_gpu_latest ADD COLUMN change_xid xid8;
UPDATE rollup_gpu_latest SET change_xid = pg_current_xact_id();
ALTER TABLE rollup_gpu_latest ALTER COLUMN change_xid SET NOT NULL;
CREATE INDEX rollup_gpu_latest_change ON rollup_gpu_latest (change_xid);
CREATE TRIGGER rollup_gpu_latest_mirror_stamp
    BEFORE INSERT OR UPDATE ON rollup_gpu_latest
    FOR EACH ROW EXECUTE FUNCTION gpusizer_mirror_stamp();
CREATE TRIGGER rollup_gpu_latest_mirror_del AFTER DELETE ON rollup_gpu_latest
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_deleted();
CREATE TRIGGER rollup_gpu_latest_mirror_trunc
    AFTER TRUNCATE ON rollup_gpu_latest
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_truncated();

-- Statistics for the new columns now, so that the first reads fetch
-- their few rows through the indexes rather than scanning the tables.
ANALYZE node_gpus;
ANALYZE rollup_gpu_latest;

-- 0018_calibration_mirror.sql - the daemon's copy of rollup_type_runs for
-- calibration (issue 18: the calibration read in under 50 ms at 16,000
-- GPUs), kept current the way 0017 keeps the fleet's copy.
--
-- Calibration is, per GPU type, the median over the window's runs of each
-- run's value per metric and dtype (storage/bench.c
-- store_fleet_medians()); in SQL that is a sort of every run's values on
-- every read (~15 us a run: 0.9 s for the 60,000 runs of 30 days at
-- 16,000 GPUs, docs/BENCHMARKS.md). The daemon keeps the window's rows in
-- memory (storage/fleet_mirror.c) and fetches, before each read, the rows
-- written since its last read:
--
--  change_xid  the writing transaction (a default: rows are only
--              inserted; a trigger stamps any UPDATE). Rows stored
--              before this migration have none: only a whole load,
--              which does not filter on it, reads them.
--  fleet_mirror_epoch (0017) is raised by every DELETE of rows, and by
--              gpusizer_maintain() whenever it drops a partition or
--              deletes rows of a DEFAULT partition (neither fires a
--              trigger on the parent table): the copies are then loaded
--              again.

SET lock_timeout = '5s';

ALTER TABLE rollup_type_runs ADD COLUMN change_xid xid8;
ALTER TABLE rollup_type_runs
    ALTER COLUMN change_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX rollup_type_runs_change ON rollup_type_runs (change_xid);
CREATE TRIGGER rollup_type_runs_mirror_stamp
    BEFORE UPDATE ON rollup_type_runs
    FOR EACH ROW EXECUTE FUNCTION gpusizer_mirror_stamp();
CREATE TRIGGER rollup_type_runs_mirror_del AFTER DELETE ON rollup_type_runs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_deleted();

ALTER FUNCTION gpusizer_maintain(int, int, int)
    RENAME TO gpusizer_maintain_0016;
CREATE FUNCTION gpusizer_maintain(history_days int, recommendation_days int,
                                  months_ahead int)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    removed boolean := false;
BEGIN
    FOR line IN SELECT * FROM gpusizer_maintain_0016(
        history_days, recommendation_days, months_ahead) LOOP
        removed := removed OR line LIKE 'dropped %' OR line LIKE 'deleted %';
        RETURN NEXT line;
    END LOOP;
    IF removed THEN
        UPDATE fleet_mirror_epoch SET epoch = epoch + 1;
    END IF;
END
$$;

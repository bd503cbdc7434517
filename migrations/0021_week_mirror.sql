-- 0021_week_mirror.sql - what the daemon needs to keep a copy of each
-- node's latest run of each ISO week, current at every read (issue 18:
-- the capacity report under 200 ms at 16,000 GPUs).
--
-- The capacity report's weekly table (storage/report.c) is, per week and
-- GPU type, the GPUs measured in each node's latest ok/partial run of the
-- week and those of them not degraded against that week's medians. In
-- SQL that joined every such run to its rollup rows, unnested and sorted
-- their values on every read: ~58 us a GPU-week, 1.95 s at 33,600
-- GPU-weeks (docs/BENCHMARKS.md). The daemon instead keeps, per week and
-- node, the latest run (and the latest non-synthetic run) with its GPUs'
-- v_week values (storage/fleet_mirror.c), fetching before each read only
-- what changed, the way 0017 keeps the fleet's copy:
--
--  benchmark_runs.change_xid  the transaction that wrote the row's current
--              version: a default on insert, a trigger on UPDATE (a run
--              moved to another week, a status changed). Rows stored
--              before this migration have none: only a whole load, which
--              does not filter on it, reads them.
--  rollup_gpu_runs rows inserted for a run stored by another transaction
--              (results added to a run after it was stored) stamp the
--              run's change_xid again, so the run and its new rows are
--              fetched; the ingestion statement writes a run and its
--              rollups in one transaction and updates nothing here.
--  fleet_mirror_epoch (0017) is raised by a DELETE of runs or of rollup
--              rows (0014's recompute after an operator's change), as
--              for the other copies; partition drops by
--              gpusizer_maintain() raise it already (0018).

SET lock_timeout = '5s';

ALTER TABLE benchmark_runs ADD COLUMN change_xid xid8;
ALTER TABLE benchmark_runs
    ALTER COLUMN change_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX benchmark_runs_change ON benchmark_runs (change_xid);
CREATE TRIGGER benchmark_runs_mirror_stamp BEFORE UPDATE ON benchmark_runs
    FOR EACH ROW EXECUTE FUNCTION gpusizer_mirror_stamp();
CREATE TRIGGER benchmark_runs_mirror_del AFTER DELETE ON benchmark_runs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_deleted();
CREATE TRIGGER benchmark_runs_mirror_trunc AFTER TRUNCATE ON benchmark_runs
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_truncated();

CREATE FUNCTION gpusizer_week_rollup_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE benchmark_runs r SET change_xid = pg_current_xact_id()
    FROM (SELECT DISTINCT run_id FROM new_rows) n
    WHERE r.run_id = n.run_id
      AND r.change_xid IS DISTINCT FROM pg_current_xact_id();
    RETURN NULL;
END
$$;

CREATE TRIGGER rollup_gpu_runs_week_ins AFTER INSERT ON rollup_gpu_runs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_week_rollup_inserted();
CREATE TRIGGER rollup_gpu_runs_mirror_del AFTER DELETE ON rollup_gpu_runs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_deleted();
CREATE TRIGGER rollup_gpu_runs_mirror_trunc AFTER TRUNCATE ON rollup_gpu_runs
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_mirror_truncated();

ANALYZE benchmark_runs;

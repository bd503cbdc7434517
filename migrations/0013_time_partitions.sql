-- 0013_time_partitions.sql - probe history and sizing answers partitioned
-- by month; retention drops whole partitions (issue 18).
--
-- benchmark_runs (by received_at), benchmark_results (by measured_at) and
-- recommendations (by created_at) become range-partitioned tables with one
-- partition per calendar month (UTC), a DEFAULT partition for rows outside
-- every month made so far (a probe clock far off, a test backdating a
-- row), and the existing table attached as one "legacy" partition. Retention
-- is then DROP TABLE of a month instead of a DELETE of millions of rows and
-- the VACUUM after it: gpusizer_maintain() below, called by the daemon at
-- start and hourly and by `gpusizerd maintain` (docs/OPERATIONS.md).
--
-- Online on a populated database: no row is copied or rewritten. The old
-- tables are renamed and attached as they are: a CHECK constraint matching
-- the legacy partition's bound is validated first (one sequential scan of
-- the table, no rewrite), so ATTACH PARTITION does not scan again; indexes
-- the parent declares with the same definition are adopted, not rebuilt.
-- Only the run ids are copied, to benchmark_run_ids (36 bytes a run).
--
-- A partitioned table's unique constraints must contain its partition key,
-- so uniqueness moves:
--  * run_id: benchmark_run_ids (run_id PRIMARY KEY) is the guard the
--    ingestion statement inserts into first (ON CONFLICT DO NOTHING: a
--    replay stores nothing, as before); each partition keeps its own
--    primary key on run_id and unique first_result_id;
--  * result ids: each partition's own primary key on id (ids come from
--    the per-run blocks of 0007, unique by construction);
--  * recommendation ids: each partition's own primary key; the ids are
--    random v4 UUIDs made by the daemon.
-- gpusizer_maintain() adds those per-partition keys to every partition it
-- creates.

SET lock_timeout = '5s';

-- ------------------------------------------------------------ run ids
CREATE TABLE benchmark_run_ids (
    run_id      uuid PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO benchmark_run_ids (run_id, received_at)
    SELECT run_id, received_at FROM benchmark_runs;

-- ------------------------------------------------------------ helpers
-- The first instant of the month after the latest key, but at least the
-- start of next month (UTC): the legacy partition's upper bound.
CREATE FUNCTION gpusizer_month_after(t timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT (date_trunc('month', t AT TIME ZONE 'UTC')
            + interval '1 month') AT TIME ZONE 'UTC'
$$;

-- Per-partition keys (see the header): added to every partition made.
CREATE FUNCTION gpusizer_partition_keys(tbl text, part text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF tbl LIKE 'rollup\_%' THEN
        RETURN;  -- rollups (0014) are read by run and time, not by key
    ELSIF tbl = 'benchmark_runs' THEN
        EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (run_id),'
                       ' ADD UNIQUE (first_result_id)', part);
    ELSE
        EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (id)', part);
    END IF;
END
$$;

-- Turns table tbl into a table partitioned on col: the old table becomes
-- <tbl>_legacy, for everything before the month after its latest row
-- (rows dated more than a day ahead, a probe clock far off, are left out
-- of that: moved to the DEFAULT partition); attached below.
CREATE FUNCTION gpusizer_partition_table(tbl text, col text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    latest timestamptz;
    bound timestamptz;
    legacy text := tbl || '_legacy';
    dflt text := tbl || '_default';
BEGIN
    EXECUTE format('SELECT max(%I) FROM %I WHERE %I <= now() + interval'
                   ' ''1 day''', col, tbl, col) INTO latest;
    bound := gpusizer_month_after(coalesce(latest,
                                           now() - interval '1 month'));
    EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, legacy);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS'
                   ' INCLUDING CONSTRAINTS INCLUDING COMPRESSION)'
                   ' PARTITION BY RANGE (%I)', tbl, legacy, col);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', dflt, tbl);
    PERFORM gpusizer_partition_keys(tbl, dflt);
    EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= $1 RETURNING *)'
                   ' INSERT INTO %I SELECT * FROM m', legacy, col, dflt)
        USING bound;
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %L)'
                   ' NOT VALID', legacy, legacy || '_bound', col, bound);
    EXECUTE format('ALTER TABLE %I VALIDATE CONSTRAINT %I', legacy,
                   legacy || '_bound');
END
$$;

-- ------------------------------------------------------------ benchmark_runs
-- The old delete trigger cannot stay on a partition (it has a transition
-- table); it is recreated on the parent below.
DROP TRIGGER benchmark_runs_delete_results ON benchmark_runs;
SELECT gpusizer_partition_table('benchmark_runs', 'received_at');
ALTER TABLE benchmark_runs
    ADD FOREIGN KEY (hostname) REFERENCES nodes (hostname);
CREATE INDEX benchmark_runs_host_p
    ON benchmark_runs (hostname, received_at DESC);
CREATE INDEX benchmark_runs_received_p
    ON benchmark_runs (received_at DESC, run_id);

-- ------------------------------------------------------------ results
SELECT gpusizer_partition_table('benchmark_results', 'measured_at');
CREATE INDEX benchmark_results_type_time_p
    ON benchmark_results (gpu_type, measured_at DESC);
CREATE INDEX benchmark_results_gpu_time_p
    ON benchmark_results (gpu_uuid, measured_at DESC)
    WHERE gpu_uuid IS NOT NULL;

-- ------------------------------------------------------------ recommendations
SELECT gpusizer_partition_table('recommendations', 'created_at');
CREATE INDEX recommendations_created_p
    ON recommendations (created_at DESC, id DESC);
CREATE INDEX recommendations_kind_p
    ON recommendations (kind, created_at DESC);
CREATE INDEX recommendations_model_p
    ON recommendations (model, created_at DESC);
CREATE INDEX recommendations_gpu_p
    ON recommendations (gpu, created_at DESC);

-- Attach the legacy tables (the CHECK above spares the scan; the indexes
-- above are adopted: same definitions as the legacy ones).
DO $$
DECLARE
    t record;
    bound text;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('benchmark_runs'), ('benchmark_results'),
                                   ('recommendations')) v (tbl) LOOP
        SELECT substring(pg_get_constraintdef(c.oid)
                         FROM '''([^'']+)''') INTO bound
          FROM pg_constraint c
         WHERE c.conname = t.tbl || '_legacy_bound';
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I'
                       ' FOR VALUES FROM (MINVALUE) TO (%L)',
                       t.tbl, t.tbl || '_legacy', bound);
    END LOOP;
END $$;

-- Deleting runs still deletes their results (0007's rule), whatever
-- partition either lives in.
CREATE TRIGGER benchmark_runs_delete_results AFTER DELETE ON benchmark_runs
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION benchmark_runs_delete_results();

-- ------------------------------------------------------------ maintenance
-- Creates the month partitions from the current month to months_ahead
-- months ahead (a month already covered, by the legacy partition or an
-- earlier call, is skipped; rows of that month sitting in the DEFAULT
-- partition are moved into the new one), then, for a retention > 0 days
-- (history_days: probe runs, results and their rollups (0014);
-- recommendation_days: sizing answers), drops every partition wholly
-- older than now() - retention and
-- deletes the DEFAULT partition's rows older than that. A partition goes
-- when its last instant is past the cut: up to a month after its oldest
-- rows. One row per action.
CREATE FUNCTION gpusizer_maintain(history_days int, recommendation_days int,
                                  months_ahead int)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    t record;
    retention_days int;
    gone timestamptz := '-infinity';
    p record;
    lo timestamptz;
    hi timestamptz;
    part text;
    dflt text;
    cut timestamptz;
    moved bigint;
    n bigint;
BEGIN
    -- one caller at a time (several replicas run it hourly); a partition
    -- drop waits for its parent's readers at most 5 s, then fails and is
    -- tried again on the next call
    PERFORM pg_advisory_xact_lock(hashtext('gpusizer_maintain'));
    PERFORM set_config('lock_timeout', '5s', true);
    FOR t IN SELECT * FROM (VALUES ('benchmark_runs', 'received_at'),
                                   ('benchmark_results', 'measured_at'),
                                   ('rollup_gpu_runs', 'measured_at'),
                                   ('rollup_type_runs', 'measured_at'),
                                   ('recommendations', 'created_at'))
             v (tbl, col) LOOP
        CONTINUE WHEN to_regclass(t.tbl) IS NULL;  -- before 0014
        dflt := t.tbl || '_default';
        gone := '-infinity';
        FOR i IN 0 .. greatest(months_ahead, 0) LOOP
            lo := (date_trunc('month', now() AT TIME ZONE 'UTC')
                   + make_interval(months => i)) AT TIME ZONE 'UTC';
            hi := gpusizer_month_after(lo);
            part := t.tbl || '_' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMM');
            CONTINUE WHEN to_regclass(part) IS NOT NULL;
            -- covered already (the legacy partition reaches past lo)?
            CONTINUE WHEN EXISTS (
                SELECT 1 FROM pg_inherits i JOIN pg_class c
                    ON c.oid = i.inhrelid
                 WHERE i.inhparent = t.tbl::regclass
                   AND c.relname <> dflt
                   AND substring(pg_get_expr(c.relpartbound, c.oid)
                                 FROM 'TO \(''([^'']+)''\)')::timestamptz
                       > lo);
            EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS'
                           ' INCLUDING CONSTRAINTS INCLUDING COMPRESSION)',
                           part, t.tbl);
            PERFORM gpusizer_partition_keys(t.tbl, part);
            -- rows of this month in DEFAULT move first, or ATTACH fails
            EXECUTE format('WITH m AS (DELETE FROM ONLY %I WHERE %I >= $1'
                           ' AND %I < $2 RETURNING *)'
                           ' INSERT INTO %I SELECT * FROM m',
                           dflt, t.col, t.col, part)
                USING lo, hi;
            GET DIAGNOSTICS moved = ROW_COUNT;
            EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK'
                           ' (%I >= %L AND %I < %L)', part, part || '_bound',
                           t.col, lo, t.col, hi);
            EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I'
                           ' FOR VALUES FROM (%L) TO (%L)',
                           t.tbl, part, lo, hi);
            EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part,
                           part || '_bound');
            RETURN NEXT format('created %s (%s rows moved from %s)', part,
                               moved, dflt);
        END LOOP;
        retention_days := CASE t.tbl WHEN 'recommendations'
                          THEN recommendation_days ELSE history_days END;
        CONTINUE WHEN coalesce(retention_days, 0) <= 0;
        cut := now() - make_interval(days => retention_days);
        FOR p IN SELECT c.relname,
                        substring(pg_get_expr(c.relpartbound, c.oid)
                                  FROM 'TO \(''([^'']+)''\)')::timestamptz
                            AS upper
                   FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                  WHERE i.inhparent = t.tbl::regclass AND c.relname <> dflt
                  ORDER BY 2 LOOP
            CONTINUE WHEN p.upper IS NULL OR p.upper > cut;
            EXECUTE format('DROP TABLE %I', p.relname);
            gone := greatest(gone, p.upper);
            RETURN NEXT format('dropped %s (older than %s)', p.relname, cut);
        END LOOP;
        IF t.tbl = 'benchmark_runs' THEN
            -- The ids of runs no longer stored are forgotten (such a run
            -- posted again is stored again): those of the dropped
            -- partitions (an id is recorded with its run's received_at)
            -- and of the DEFAULT partition's rows deleted here.
            WITH d AS (DELETE FROM ONLY benchmark_runs_default
                       WHERE received_at < cut RETURNING run_id)
            DELETE FROM benchmark_run_ids i USING d WHERE i.run_id = d.run_id;
            GET DIAGNOSTICS n = ROW_COUNT;
            DELETE FROM benchmark_run_ids WHERE received_at < gone;
        ELSE
            EXECUTE format('DELETE FROM ONLY %I WHERE %I < $1', dflt, t.col)
                USING cut;
            GET DIAGNOSTICS n = ROW_COUNT;
        END IF;
        IF n > 0 THEN
            RETURN NEXT format('deleted %s rows of %s older than %s', n,
                               dflt, cut);
        END IF;
    END LOOP;
END
$$;

SELECT gpusizer_maintain(0, 0, 2);

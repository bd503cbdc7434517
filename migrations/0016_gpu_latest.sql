-- 0016_gpu_latest.sql - each GPU's latest rollup row, kept as it is
-- written, so GET /v1/fleet (and the capacity report, which embeds it)
-- reads one row per GPU instead of searching each GPU's runs (issue 18).
--
-- The fleet view is defined on each GPU's latest run in the window
-- (storage/bench.c store_fleet(): rollup_gpu_runs ordered by measured_at,
-- the newest at or after now() - window_days; synthetic runs only when
-- asked). The window only has a lower bound, so that run is the GPU's
-- latest run overall when that one is in the window, and none otherwise:
-- the answer needs only the latest row, one for all runs and one for the
-- real (non-synthetic) runs. Read through rollup_gpu_runs, each GPU cost
-- an index probe into every monthly partition (Merge Append, ~50 µs a
-- GPU: docs/BENCHMARKS.md); read here it is one row of a small table.
--
--  rollup_gpu_latest  one row per GPU and with_synthetic: with_synthetic
--                     true holds the GPU's latest rollup_gpu_runs row of
--                     any run, false its latest row of a non-synthetic
--                     run (absent if it has none); the columns are
--                     rollup_gpu_runs' (0014).
--
-- Kept by statement triggers on rollup_gpu_runs: an insert moves a GPU's
-- row forward when the inserted run is as new or newer; a delete (0014's
-- recompute after an operator's UPDATE or DELETE of results) refreshes
-- the GPUs whose latest run it removed from what remains. Retention drops
-- partitions without triggers, so gpusizer_maintain() (0013, wrapped
-- below) then deletes the rows whose run is no longer stored: a GPU's
-- latest run dropped means all its runs were (they are older).

SET lock_timeout = '5s';

CREATE TABLE rollup_gpu_latest (
    gpu_uuid       text NOT NULL,
    with_synthetic boolean NOT NULL,
    measured_at    timestamptz NOT NULL,
    run_id         uuid NOT NULL,
    synthetic      boolean NOT NULL,
    metrics        text[] NOT NULL,
    dtypes         text[] NOT NULL,
    units          text[] NOT NULL,
    v              float8[] NOT NULL,
    lim            float8[] NOT NULL,
    v_week         float8[] NOT NULL,
    slowdowns      text[] NOT NULL,
    PRIMARY KEY (gpu_uuid, with_synthetic)
);

-- Rows of several runs of a GPU in one statement (a recompute): the
-- newest wins (DISTINCT ON), as one upsert may not touch a row twice.
CREATE FUNCTION gpusizer_latest_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO rollup_gpu_latest AS l
    SELECT DISTINCT ON (n.gpu_uuid, w.ws) n.gpu_uuid, w.ws, n.measured_at,
           n.run_id, n.synthetic, n.metrics, n.dtypes, n.units, n.v, n.lim,
           n.v_week, n.slowdowns
    FROM new_rows n, (VALUES (true), (false)) w (ws)
    WHERE w.ws OR NOT n.synthetic
    ORDER BY n.gpu_uuid, w.ws, n.measured_at DESC
    ON CONFLICT (gpu_uuid, with_synthetic) DO UPDATE
        SET measured_at = excluded.measured_at, run_id = excluded.run_id,
            synthetic = excluded.synthetic, metrics = excluded.metrics,
            dtypes = excluded.dtypes, units = excluded.units,
            v = excluded.v, lim = excluded.lim, v_week = excluded.v_week,
            slowdowns = excluded.slowdowns
        WHERE excluded.measured_at >= l.measured_at;
    RETURN NULL;
END
$$;

-- The GPUs' latest rows from rollup_gpu_runs (one index probe each).
CREATE FUNCTION gpusizer_latest_refresh(gpus text[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM rollup_gpu_latest WHERE gpu_uuid = ANY (gpus);
    INSERT INTO rollup_gpu_latest
    SELECT g.u, w.ws, x.measured_at, x.run_id, x.synthetic, x.metrics,
           x.dtypes, x.units, x.v, x.lim, x.v_week, x.slowdowns
    FROM (SELECT DISTINCT unnest(gpus) AS u) g,
         (VALUES (true), (false)) w (ws),
         LATERAL (SELECT * FROM rollup_gpu_runs r
                  WHERE r.gpu_uuid = g.u AND (w.ws OR NOT r.synthetic)
                  ORDER BY r.measured_at DESC LIMIT 1) x;
$$;

CREATE FUNCTION gpusizer_latest_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    gpus text[];
BEGIN
    SELECT array_agg(DISTINCT l.gpu_uuid) INTO gpus
    FROM rollup_gpu_latest l JOIN old_rows o
      ON o.gpu_uuid = l.gpu_uuid AND o.run_id = l.run_id;
    IF gpus IS NOT NULL THEN
        PERFORM gpusizer_latest_refresh(gpus);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER rollup_gpu_runs_latest_ins AFTER INSERT ON rollup_gpu_runs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_latest_inserted();
CREATE TRIGGER rollup_gpu_runs_latest_del AFTER DELETE ON rollup_gpu_runs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION gpusizer_latest_deleted();

-- Partition drops fire no trigger: after them, rows whose run is gone go.
ALTER FUNCTION gpusizer_maintain(int, int, int)
    RENAME TO gpusizer_maintain_partitions;
CREATE FUNCTION gpusizer_maintain(history_days int, recommendation_days int,
                                  months_ahead int)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    RETURN QUERY SELECT * FROM gpusizer_maintain_partitions(
        history_days, recommendation_days, months_ahead);
    DELETE FROM rollup_gpu_latest l WHERE NOT EXISTS (
        SELECT 1 FROM rollup_gpu_runs r
        WHERE r.gpu_uuid = l.gpu_uuid AND r.measured_at = l.measured_at
          AND r.run_id = l.run_id);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
        RETURN NEXT format('deleted %s rows of rollup_gpu_latest whose run'
                           ' is no longer stored', n);
    END IF;
END
$$;

-- The GPUs stored so far.
SELECT gpusizer_latest_refresh(coalesce(array_agg(DISTINCT gpu_uuid), '{}'))
FROM rollup_gpu_runs;

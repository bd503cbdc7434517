-- 0026_shape_lock.sql - ingestions that make new rollup shapes no longer
-- deadlock. gpusizer_shape (0020) inserts a shape the first time it is
-- seen; an INSERT ... ON CONFLICT waits for another transaction's
-- uncommitted insert of the same key. One report makes a shape per GPU in
-- whatever order its rows come (a DISTINCT by hash), so two reports whose
-- GPUs bring the same two new shapes in opposite orders waited on each
-- other: a deadlock, detected after deadlock_timeout (1 s), answered 503
-- (a fresh-clone CI run of tests/api/t_faults.sh, 2026-11-26; reproduced
-- with two sessions in tests/api/t_ingest_order.sh). Making a shape now
-- first takes one transaction-level advisory lock, so the transactions
-- that create shapes do it one after another: a transaction holding an
-- uncommitted shape also holds the lock, and nobody waits on its insert
-- while holding the lock themselves. A shape that exists costs no lock.
CREATE OR REPLACE FUNCTION gpusizer_shape(m text[], d text[], u text[])
RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    s int;
BEGIN
    SELECT shape INTO s FROM rollup_shapes
     WHERE metrics = m AND dtypes = d AND units = u;
    IF NOT FOUND THEN
        PERFORM pg_advisory_xact_lock(hashtext('gpusizer_shape'));
        INSERT INTO rollup_shapes (metrics, dtypes, units) VALUES (m, d, u)
            ON CONFLICT DO NOTHING RETURNING shape INTO s;
        IF s IS NULL THEN
            SELECT shape INTO s FROM rollup_shapes
             WHERE metrics = m AND dtypes = d AND units = u;
        END IF;
    END IF;
    RETURN s;
END
$$;

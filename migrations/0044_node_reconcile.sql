-- 0044_node_reconcile.sql - a node's GPUs as its newest inventory says,
-- one reconciliation of a node at a time (review s25b G1). As one statement
-- (storage/bench.c before), a reconciliation read the node's inventory from
-- the snapshot it started with and then waited on row locks, so an older
-- inventory could be applied after a newer one's: the last to finish won.
-- Here each takes a transaction lock on its host first and only then reads,
-- in a statement of its own (a VOLATILE function's statements each take a
-- new snapshot under READ COMMITTED), so it sees every reconciliation of the
-- host before it, whose lock is released only once its commit is visible.
-- A GPU the newest inventory leaves out is removed unless a real report
-- measured it after that inventory; each it lists is present (0043).
-- Returns the rows changed. Idempotent: storage calls it after every
-- report, a replay included.
CREATE OR REPLACE FUNCTION gpusizer_reconcile_node(host text)
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    changed integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('gpusizer node ' || host, 0));
    WITH n AS (SELECT inventory_uuids AS inv, inventory_at AS at
               FROM nodes WHERE hostname = host
               AND inventory_uuids IS NOT NULL),
         want AS (SELECT g.uuid, NOT (g.uuid = ANY (n.inv))
                  AND coalesce(g.reported_at <= n.at, true) AS removed
                  FROM node_gpus g, n WHERE g.hostname = host),
         lk AS (SELECT g.uuid FROM node_gpus g JOIN want w USING (uuid)
                WHERE (g.removed_at IS NOT NULL) <> w.removed
                ORDER BY g.uuid FOR UPDATE OF g)
    UPDATE node_gpus g SET removed_at = CASE WHEN w.removed THEN now() END
    FROM want w WHERE w.uuid = g.uuid AND g.hostname = host
      AND g.uuid IN (SELECT uuid FROM lk)
      AND (g.removed_at IS NOT NULL) <> w.removed;
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed;
END
$$;
-- Rows written before 0043 have no report time (review s25b G4): a report
-- spooled before the upgrade and sent after it would have taken their
-- facts (moved a GPU back, become its node's last run). Their last arrival
-- stands in for it.
UPDATE node_gpus SET reported_at = last_seen WHERE reported_at IS NULL;
UPDATE nodes SET reported_at = last_seen WHERE reported_at IS NULL;

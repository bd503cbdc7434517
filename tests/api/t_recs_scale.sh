#!/usr/bin/env bash
# GET /v1/recommendations reads one page through the (created_at, id)
# index, however long the history: its ORDER BY named the ::text output
# columns, so every page sorted the whole table (46 ms at 20,000 answers,
# 125 ms at 100,000, 365 ms at 300,000; linear: the adversarial review's
# measurement). 100,000 small answers are planted with SQL; a page must be
# read through the index (PostgreSQL's scan counters say which plan ran,
# no timing is asserted), and the pages must still come newest first, each
# answer once.
. "$(dirname "$0")/lib.sh"
own_database gsz_recs
psqlbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
start_daemon || { not_ok "daemon starts"; exit 1; }
sql() { "$psqlbin" "$DATABASE_URL" -X -q -At -c "$1"; }
sql "INSERT INTO recommendations (id, kind, model, gpu, request, response, summary, created_at)
	SELECT gen_random_uuid(), CASE WHEN g % 3 = 0 THEN 'inference' ELSE 'training' END,
	'llama-2-7b', 'h100-sxm5-80gb', '{\"model\":\"llama-2-7b\"}', '{}', '{\"gpus\":8}',
	now() - (g || ' seconds')::interval FROM generate_series(1, 100000) g;
	ANALYZE recommendations" || not_ok "100,000 answers planted"

# Which plan a page took, from PostgreSQL's own counters rather than a
# timing: rows read by sequential scans of the table's partitions. Sorting
# the history (the bug) reads all 100,000 for every page; through the
# index a page reads its rows by index (an empty partition may still be
# scanned, reading nothing). Counters reach pg_stat_user_tables when the
# daemon's backends next flush them (within PostgreSQL's 10 s idle
# interval), so they are polled.
scans() { # rows read by sequential scans, and index scans, over the partitions
	sql "SELECT pg_stat_clear_snapshot(); SELECT coalesce(sum(seq_tup_read), 0) || ' ' || coalesce(sum(idx_scan), 0)
		FROM pg_stat_user_tables WHERE relid IN (SELECT relid FROM pg_partition_tree('recommendations'))" | tail -n 1
}
read -r seq0 idx0 <<<"$(scans)"
for q in "limit=5" "limit=5" "kind=training&limit=5" "gpu=h100&limit=5" "limit=500"; do
	req GET "/v1/recommendations?$q"
	[ "$STATUS" = 200 ] || not_ok "list ($q) answers" "$STATUS $(body)"
done
for i in $(seq 1 150); do
	read -r seq1 idx1 <<<"$(scans)"
	[ "$idx1" -ge $((idx0 + 5)) ] && break
	sleep 0.1
done
[ "$idx1" -ge $((idx0 + 5)) ] && [ $((seq1 - seq0)) -lt 1000 ] &&
	ok "five pages of 100,000 answers read through the index ($((seq1 - seq0)) rows read by sequential scans)" ||
	not_ok "five pages of 100,000 answers read through the index" "rows read by sequential scans $seq0 -> $seq1, index scans $idx0 -> $idx1"

# Keyset paging over the index: the SQL order, each answer once.
ids=""
cursor=""
for i in $(seq 1 12); do
	req GET "/v1/recommendations?limit=500${cursor:+&cursor=$cursor}"
	ids+=$(jq -r '.items[].id' "$T/body")$'\n'
	cursor=$(jq -r '.next_cursor // empty' "$T/body")
done
want=$(sql "SELECT id FROM recommendations ORDER BY created_at DESC, id DESC LIMIT 6000")
[ "$(grep -c . <<<"$ids")" = 6000 ] && [ "$(grep . <<<"$ids")" = "$want" ] &&
	ok "12 pages of 500: the SQL order, each answer once" ||
	not_ok "12 pages of 500: the SQL order, each answer once" "$(grep -c . <<<"$ids") ids"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

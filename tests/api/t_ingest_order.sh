#!/usr/bin/env bash
# Concurrent probe reports that list the same GPUs in different orders
# (one node's spool flushing while its next run reports, or a report
# re-serialised on its way): each upserts the same node_gpus rows, and
# rows locked in report order made two such reports wait on each other
# (a deadlock, or lock_timeout) until one was a 503. storage/bench.c
# upserts them in uuid order, so every report is stored: 201.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "probe-$RANDOM$RANDOM" probe)
fixture=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
host=node-$RANDOM$RANDOM
pairs=${PAIRS:-40}

# Pairs of reports from one node with its 8 GPUs in opposite orders.
mkdir -p "$T/reps"
jq --arg now "$now" --arg h "$host" \
	'.node.hostname = $h | .started_at = $now | .finished_at = $now' "$fixture" >"$T/fwd.json"
jq '.gpus |= reverse | .results |= reverse' "$T/fwd.json" >"$T/rev.json"
for i in $(seq 1 "$pairs"); do
	for o in fwd rev; do
		jq --arg r "$(cat /proc/sys/kernel/random/uuid)" '.run_id = $r' "$T/$o.json" >"$T/reps/$i-$o.json"
	done
done
ls "$T"/reps/*.json | xargs -P 16 -I{} curl -sS -o /dev/null -w '%{http_code}\n' --max-time 30 \
	-H "Authorization: Bearer $probe" -H 'Content-Type: application/json' \
	--data-binary @{} "$GSZ_URL/v1/benchmarks" >"$T/codes" 2>&1
got=$(sort "$T/codes" | uniq -c | tr -s ' ' | tr '\n' ',')
n201=$(grep -c '^201$' "$T/codes")
[ "$n201" = $((2 * pairs)) ] && ok "$((2 * pairs)) concurrent reports, the same GPUs in opposite orders: all 201" ||
	not_ok "$((2 * pairs)) concurrent reports, the same GPUs in opposite orders: all 201" "answers:$got $(grep -o 'SQLSTATE [0-9A-Z]*' "$GSZ_LOG" | sort | uniq -c | tr '\n' ' ')"
req GET "/v1/nodes/$host"
check "the node lists its 8 GPUs once, in index order" 200 '(.gpus | length) == 8 and ([.gpus[].index] == [0,1,2,3,4,5,6,7])'

# Two ingestions that each make the same two new rollup shapes, in
# opposite orders (one report's GPUs come in hash order): each waited on
# the other's uncommitted shape, a deadlock answered 503 (t_faults in a
# fresh-clone CI). migrations/0026 makes shapes under one advisory lock.
psql_q() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" gpusizer "$1"; }
sfx=s$RANDOM$RANDOM
shape_tx() {
	psql_q "BEGIN; SELECT gpusizer_shape('{$1$sfx}', '{d}', '{u}'); SELECT pg_sleep(0.5);
		SELECT gpusizer_shape('{$2$sfx}', '{d}', '{u}'); COMMIT;" >"$T/shape-$1" 2>&1
}
shape_tx first second &
p1=$!
sleep 0.2
shape_tx second first &
p2=$!
wait $p1 && wait $p2 &&
	ok "two transactions making the same two new shapes in opposite orders both commit" ||
	not_ok "two transactions making the same two new shapes in opposite orders both commit" "$(cat "$T"/shape-*)"
[ "$(psql_q "SELECT count(*) FROM rollup_shapes WHERE metrics[1] LIKE '%$sfx'")" = 2 ] &&
	ok "each shape stored once" || not_ok "each shape stored once"

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer report"

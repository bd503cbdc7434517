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

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer report"

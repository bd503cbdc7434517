#!/usr/bin/env bash
# db-growth.sh - measures how much PostgreSQL grows per probe run, for
# capacity planning (docs/OPERATIONS.md "Sizing the service").
#
#   deploy/tools/db-growth.sh [RUNS] [NODES]      (default 1000 runs over 100 nodes)
#
# Starts a private PostgreSQL (deploy/dev/pg.sh) and build/gpusizerd, posts
# RUNS copies of tests/fixtures/probe/report_synthetic_h100x8.json (8 GPUs,
# 290 results each; a fresh run_id each, NODES host names in turn), then
# prints the growth of the database and of each table, per run.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
runs=${1:-1000}
nodes=${2:-100}
work=$(mktemp -d "${TMPDIR:-/tmp}/gsz-growth.XXXXXX")
chmod 755 "$work"
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	deploy/dev/pg.sh stop "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
make -s build/gpusizerd
port=$((30000 + RANDOM % 10000))
DATABASE_URL=$(deploy/dev/pg.sh start "$work/pg" "$port")
export DATABASE_URL
http=$((40000 + RANDOM % 10000))
build/gpusizerd serve --listen "127.0.0.1:$http" >"$work/d.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/readyz" >/dev/null && break; sleep 0.1; done
token=$(build/gpusizerd token create --name growth --scopes probe 2>/dev/null)
psql_() { deploy/dev/pg.sh psql "$work/pg" "$port" gpusizer "$1"; }
sizes() {
	psql_ "CHECKPOINT" >/dev/null 2>&1 || true
	psql_ "SELECT 'database', pg_database_size('gpusizer') UNION ALL
		SELECT relname, pg_total_relation_size(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1"
}
sizes >"$work/before"
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
mkdir -p "$work/r"
for i in $(seq 1 "$runs"); do
	h=$(((i - 1) % nodes))
	jq -c --arg now "$now" --arg h "growth-node-$h" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$(printf '%08x' "$h")" '.run_id = $r | .node.hostname = $h
		| .started_at = $now | .finished_at = $now
		| .gpus |= map(.uuid |= sub("5e7e71c0"; $s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; $s) else . end
			| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; $s) else . end)' \
		tests/fixtures/probe/report_synthetic_h100x8.json >"$work/r/$i.json"
done
start=$(date +%s)
find "$work/r" -name '*.json' -print0 | xargs -0 -P 4 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
	-X POST "http://127.0.0.1:$http/v1/benchmarks" -H "Authorization: Bearer $token" \
	-H 'Content-Type: application/json' --data-binary @{} >"$work/codes"
secs=$(($(date +%s) - start))
sizes >"$work/after"
echo "posted $runs reports ($(wc -c <tests/fixtures/probe/report_synthetic_h100x8.json) bytes of JSON each) in ${secs}s:" \
	"$(sort "$work/codes" | uniq -c | tr '\n' ' ')"
join -t'|' "$work/before" "$work/after" | awk -F'|' -v n="$runs" '
	{ d = $3 - $2; printf "  %-20s %12d -> %12d bytes   %+10.0f bytes per run\n", $1, $2, $3, d / n }'

#!/usr/bin/env bash
# `make demo` (deploy/dev/demo.sh, issue 16): against a daemon on a fresh
# database it posts three synthetic nodes dated now and sizes seven jobs;
# the fleet view, the nodes and the capacity report show them. Run twice,
# the nodes get a second run each, the GPUs stay the same GPUs and the
# same questions stay the same jobs. Without a daemon it says so and fails.
. "$(dirname "$0")/lib.sh"
own_database gsz_demo
start_daemon || { not_ok "daemon starts"; exit 1; }

demo() { # the script as `make demo` runs it, against this daemon
	GPUSIZER_URL=$GSZ_URL GPUSIZERD=$GSZ_BIN "$TOP/deploy/dev/demo.sh" >"$T/demo.out" 2>&1
}

if demo; then
	ok "make demo runs against a fresh database"
else
	not_ok "make demo runs against a fresh database" "$(tail -n 5 "$T/demo.out" | tr '\n' '|')"
fi
grep -q "$GSZ_URL/v1/reports/capacity" "$T/demo.out" && grep -c '^  demo-' "$T/demo.out" | grep -qx 3 &&
	[ "$(grep -c '^  \(training\|inference\|compare\) ' "$T/demo.out")" = 7 ] &&
	ok "it says what it posted and where the report is" ||
	not_ok "it says what it posted and where the report is" "$(head -c 600 "$T/demo.out" | tr '\n' '|')"

req GET /v1/nodes
check "GET /v1/nodes: the three demo nodes" 200 \
	'[.items[].hostname] == ["demo-a100-1", "demo-h100-1", "demo-h100-2"] and all(.items[]; .gpus == 8)'
req GET /v1/fleet
check "GET /v1/fleet: 16 H100s on 2 nodes with GPU 3 of demo-h100-2 degraded, 8 A100s" 200 '
	(.items | map({(.gpu_type): {gpus, nodes, degraded: [.degraded[] | "\(.hostname)/\(.index)"]}}) | add)
	== {"a100-sxm4-80gb": {gpus: 8, nodes: 1, degraded: []},
	    "h100-sxm5-80gb": {gpus: 16, nodes: 2, degraded: ["demo-h100-2/3"]}}'
req GET '/v1/fleet?window_days=1'
check "GET /v1/fleet?window_days=1 still sees it (dated now)" 200 '(.items | map(.gpus) | add) == 24'
req GET '/v1/reports/capacity?section=summary'
cp "$T/body" "$T/summary1.csv"
summary() { # FIELD FILE: a column of the summary table
	awk -F, -v f="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $(c[f]) }' "$2" | tr -d '\r'
}
[ "$(summary jobs "$T/summary1.csv")" = 7 ] && [ "$(summary sizing_requests "$T/summary1.csv")" = 7 ] &&
	[ "$(summary nodes_fresh "$T/summary1.csv")" = 3 ] && [ "$(summary degraded_gpus "$T/summary1.csv")" = 1 ] &&
	ok "the report: 7 jobs, 3 fresh nodes, 1 degraded GPU" ||
	not_ok "the report: 7 jobs, 3 fresh nodes, 1 degraded GPU" "$(cat "$T/summary1.csv")"
req GET '/v1/reports/capacity?section=capacity'
cp "$T/body" "$T/capacity1.csv"
jq -R -s -e 'split("\r\n") | map(select(length > 0) | split(",")) | .[0] as $h
	| .[1:] | map([$h, .] | transpose | map({(.[0]): .[1]}) | add)
	| map({(.gpu_type): {healthy: .healthy_gpu_days, asked: (.asked_gpu_days | tonumber > 0)}}) | add
	| .["h100-sxm5-80gb"] == {healthy: "105", asked: true} and .["a100-sxm4-80gb"] == {healthy: "56", asked: true}
	  and .["l4-24gb"] == {healthy: "0", asked: true}' "$T/capacity1.csv" >/dev/null &&
	ok "the capacity table: H100, A100 and L4 GPU-days asked beside 105, 56 and 0 healthy GPU-days" ||
	not_ok "the capacity table: H100, A100 and L4 GPU-days asked beside healthy GPU-days" "$(cat "$T/capacity1.csv")"
req GET /v1/reports/capacity
grep -q 'data-chart="capacity"' "$T/body" && ! grep -q 'No data yet' "$T/body" &&
	ok "the HTML report has data in every section" ||
	not_ok "the HTML report has data in every section" "$(grep -o 'No data yet[^<]*' "$T/body" | head -3)"

# --- twice
if demo; then ok "make demo runs a second time"; else
	not_ok "make demo runs a second time" "$(tail -n 5 "$T/demo.out" | tr '\n' '|')"
fi
req GET '/v1/reports/capacity?section=summary'
cp "$T/body" "$T/summary2.csv"
[ "$(summary jobs "$T/summary2.csv")" = 7 ] && [ "$(summary sizing_requests "$T/summary2.csv")" = 14 ] &&
	[ "$(summary gpus_measured "$T/summary2.csv")" = 24 ] && [ "$(summary probe_runs "$T/summary2.csv")" = 6 ] &&
	ok "twice: the same 7 jobs (14 requests), the same 24 GPUs, a second run per node" ||
	not_ok "twice: the same 7 jobs (14 requests), the same 24 GPUs, a second run per node" "$(cat "$T/summary2.csv")"
req GET '/v1/reports/capacity?section=capacity'
if diff <(cut -d, -f3- "$T/capacity1.csv") <(cut -d, -f3- "$T/body") >"$T/cap.diff"; then
	ok "twice: the capacity table is unchanged"
else
	not_ok "twice: the capacity table is unchanged" "$(head -n 6 "$T/cap.diff" | tr '\n' '|')"
fi
tokens=$("$GSZ_BIN" token list --database-url "$DATABASE_URL" 2>&1 | grep '^demo-probe-')
[ "$(printf '%s\n' "$tokens" | grep -c .)" = 2 ] && ! printf '%s\n' "$tokens" | grep -vq revoked &&
	ok "each run's probe token is revoked when it is done" ||
	not_ok "each run's probe token is revoked when it is done" "$tokens"

# --- no daemon there
stop_daemon && ok "clean exit" || not_ok "clean exit"
if demo; then
	not_ok "without a daemon it fails" "exit 0: $(head -c 300 "$T/demo.out")"
elif grep -q "no ready gpusizerd at $GSZ_URL" "$T/demo.out"; then
	ok "without a daemon it fails and says make run"
else
	not_ok "without a daemon it fails and says make run" "$(head -c 300 "$T/demo.out")"
fi
sanitizer_clean "no sanitizer reports"

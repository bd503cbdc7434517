#!/usr/bin/env bash
# Compact runs (issue 18, migrations/0020_compact_runs.sql): a run is
# stored as its report, zstd-compressed, with no result rows. Checked:
# GET /v1/benchmarks lists each result exactly as the result rows did (the
# listing statement of 0019, kept here, over the results taken apart from
# the reports in SQL: tests/api/sql/raw_results.sql); paging with filters
# over runs stored both ways (rows, as the release before 0020 stored
# them, and compact) is the same as one ordered list; a filter that lets
# runs through but none of their results ends pages early with a cursor;
# the report reads back as posted; replays and conflicts answer as before;
# a damaged stored report is a 500 for that run, not a crash.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_compact
start_daemon || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "compact-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')

# Variety beyond the fixture: a result with no status (stored as ok), one
# skipped, one with no dtype or method (an HBM rate: a GEMM's names its
# dtype since review s15b), a whole-number median, a node-level result (no
# GPU) and one more GPU type's worth of names.
mk cmp-a "$(at '-30 minutes')" '.results[3] |= del(.status) | .results[4].status = "skipped"
	| .results[8] |= (.dtype = null | .method = null) | .results[6].median = 450
	| .results += [.results[7] | .gpu_uuid = null | .metric = "nccl_allreduce_busbw_gbps" | .dtype = null]' >"$T/a.json"
mk cmp-b "$(at '-20 minutes')" '.' >"$T/b.json"
mk cmp-c "$(at '-10 minutes')" '.results |= map(if .median then .median *= 0.97 else . end)' >"$T/c.json"
for f in a b c; do post "report $f" "$T/$f.json"; done
ra=$(jq -r .run_id "$T/a.json")

# The 0019 listing statement (storage/bench.c store_bench_list before 0020)
# over raw_results: what the result rows listed.
listed() { # WHERE: the rows' listing, newest first, as a JSON array
	raw_refresh
	q "SELECT coalesce(json_agg(o ORDER BY id DESC), '[]') FROM (SELECT id, json_build_object('id', id,
	 'run_id', run_id, 'hostname', hostname, 'gpu_uuid', gpu_uuid, 'gpu_type', gpu_type,
	 'metric', metric, 'dtype', dtype, 'method', method, 'peer_index', peer_index,
	 'size_bytes', size_bytes, 'unit', unit, 'status', status, 'median', median, 'max', max,
	 'mean', mean, 'p10', p10, 'p90', p90, 'cv', cv, 'n', n, 'limit', limit_value,
	 'efficiency', efficiency, 'measured_at', measured_at) AS o FROM raw_results WHERE $1) x"
}
# pages QUERY: every page of GET /v1/benchmarks?QUERY, concatenated
pages() {
	local cur="" n=0
	: >"$T/pages"
	while :; do
		curl -s "$GSZ_URL/v1/benchmarks?$1${cur:+&cursor=$cur}" >"$T/page"
		jq -c '.items[]' "$T/page" >>"$T/pages"
		cur=$(jq -r '.next_cursor // empty' "$T/page")
		n=$((n + 1))
		[ -n "$cur" ] && [ $n -lt 500 ] || break
	done
	echo "$n"
}
# Numbers to the 12 significant digits responses carry (server/http.c
# JSON_REAL_PRECISION(12)), on both sides.
sig12='def r12: if . == 0 or floor == . then . else pow(10; 11 - (fabs | log10 | floor)) as $m | (. * $m | round) / $m end;
	walk(if type == "number" then r12 else . end)'
same_list() { # NAME QUERY WHERE: the API's pages are the rows' listing
	local n
	n=$(pages "$2")
	jq -S -s "$sig12" "$T/pages" >"$T/got.json"
	listed "$3" | jq -S "$sig12" >"$T/want.json"
	if [ "$(jq 'length' "$T/want.json")" -gt 0 ] || [ "$4" = empty ]; then
		if cmp -s "$T/got.json" "$T/want.json"; then
			ok "$1 ($n pages, $(jq length "$T/want.json") results)"
		else
			not_ok "$1" "$(diff "$T/got.json" "$T/want.json" | head -12 | tr '\n' ' ')"
		fi
	else
		not_ok "$1" "the reference lists nothing"
	fi
}

got=$(q "SELECT count(*) FILTER (WHERE report_zstd IS NOT NULL AND report IS NULL),
	(SELECT count(*) FROM benchmark_results), max(result_count),
	bool_and(octet_length(report_zstd) < 40000)
	FROM benchmark_runs")
[ "$got" = "3|0|291|t" ] && ok "runs are stored compact: a zstd frame, no report text, no result rows" ||
	not_ok "runs are stored compact: a zstd frame, no report text, no result rows" "$got"
same_list "a compact run's results are listed as its rows were" "run_id=$ra&limit=500" "run_id = '$ra'"
n=$(jq '.results | length' "$T/a.json")
req GET "/v1/benchmarks?run_id=$ra&limit=500"
check "every result of the run, ids in its block" 200 \
	"(.items | length) == $n and ([.items[].id] | max - min) == $n - 1 and .items[0].id > .items[1].id"
check "the result with no status reads ok, the whole-number median as an integer" 200 \
	"([.items[] | select(.status == \"skipped\")] | length) == 1 and ([.items[] | select(.median == 450)] | length) == 1"
check "the node-level result has the node's type" 200 \
	'[.items[] | select(.gpu_uuid == null)] | length >= 1 and all(.gpu_type == "h100-sxm5-80gb")'
req GET "/v1/benchmarks/$ra"
if [ "$STATUS" = 200 ] && [ "$(jq -S .report "$T/body")" = "$(jq -S . "$T/a.json")" ]; then
	ok "GET /v1/benchmarks/{id}: the report as posted"
else
	not_ok "GET /v1/benchmarks/{id}: the report as posted" "$STATUS"
fi
jq . "$T/a.json" >"$T/a-pretty.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/a-pretty.json"
check "the same report re-serialised is a replay" 201 ".results == $n"
jq '.results[0].median *= 2' "$T/a.json" >"$T/a-other.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/a-other.json"
check_problem "another report under a stored run_id is a 409" 409

# Runs stored both ways, paged with filters: one list by id.
as_rows "$(jq -r .run_id "$T/b.json")"
got=$(q "SELECT count(*) FROM benchmark_results")
[ "$got" = 290 ] && ok "one run stored as rows, as before 0020" || not_ok "one run stored as rows, as before 0020" "$got"
mk cmp-d "$(at '-5 minutes')" '.' >"$T/d.json"
post "report d" "$T/d.json"
same_list "all results, 97 a page, rows and compact runs merged by id" "limit=97" "true"
same_list "by GPU type and metric, 7 a page" "limit=7&gpu_type=h100-sxm5-80gb&metric=gemm_tflops" \
	"gpu_type = 'h100-sxm5-80gb' AND metric = 'gemm_tflops'"
same_list "by node and dtype" "limit=50&node=cmp-b&dtype=bf16" "hostname = 'cmp-b' AND dtype = 'bf16'"
same_list "since a date" "limit=100&since=$(at '-15 minutes')" "measured_at >= '$(at '-15 minutes')'"
same_list "a metric no run measured: nothing" "metric=gemm_sustained_tflops" "metric = 'gemm_sustained_tflops'" empty

# A filter every run lets through (each has HBM results and bf16 ones) but
# no result matches: pages end after opening 64 runs, with a cursor.
for i in $(seq 1 70); do
	mk "cmp-many-$((i % 5))" "$(at "-$((100 - i)) seconds")" '.' >"$T/m.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/m.json"
	[ "$STATUS" = 201 ] || not_ok "run $i stored" "$STATUS"
done
req GET "/v1/benchmarks?metric=hbm_read_gbps&dtype=bf16&limit=10"
check "a sparse filter: the first page is empty but says where to go on" 200 '(.items | length) == 0 and (.next_cursor | type) == "string"'
n=$(pages "metric=hbm_read_gbps&dtype=bf16&limit=10")
[ "$n" = 2 ] && [ ! -s "$T/pages" ] && ok "following the cursor ends, with nothing found (2 pages)" ||
	not_ok "following the cursor ends, with nothing found" "$n pages, $(wc -l <"$T/pages") items"
same_list "74 compact runs and one stored as rows, 200 a page" "limit=200&metric=gemm_tflops" "metric = 'gemm_tflops'"

# A damaged stored report: that run answers 500, the daemon goes on.
q "UPDATE benchmark_runs SET report_zstd = '\\x28b52ffd00' WHERE run_id = '$ra'" >/dev/null
req GET "/v1/benchmarks/$ra"
check_problem "a damaged stored report: GET answers 500" 500
req GET "/v1/benchmarks/$(jq -r .run_id "$T/c.json")"
check "the other runs still read" 200 '.report.results | length == 290'
req GET /healthz
check "the daemon is up" 200
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

#!/usr/bin/env bash
# The capacity report, GET /v1/reports/capacity (issues 6 and 16): a
# self-contained HTML page whose plots are inline SVG, and one CSV table
# per section, over probe reports and sizing requests posted through the
# API. On a database of its own, so the counts are exact: first empty
# (every section says "No data yet"), then five nodes and five sizing
# requests that are four jobs. Headless Chromium renders the page; the
# screenshot's pixels show that the plots were drawn. Last, the Grafana
# dashboard's SQL panels run against the same database.
#
# REPORT_SCREENSHOT=DIR keeps report.html, the CSV tables and report.png
# there.
. "$(dirname "$0")/lib.sh"
own_database gsz_report
start_daemon || { not_ok "daemon starts"; exit 1; }
sections="summary capacity fleet measured calibration degraded freshness demand"

# py NAME SCRIPT ARGS...: a check written in Python (stdlib only), which
# prints what it found; skipped where python3 is not installed.
py() {
	local name=$1 script=$2 out
	shift 2
	if ! command -v python3 >/dev/null 2>&1; then
		ok "$name # SKIP python3 not installed"
	elif out=$(python3 -c "$script" "$@" 2>&1); then
		ok "$name ($out)"
	else
		not_ok "$name" "$(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# --- before any data: every section says so
req GET /v1/reports/capacity
cp "$T/body" "$T/empty.html"
[ "$STATUS" = 200 ] && ok "an empty report is answered" || not_ok "an empty report is answered" "$STATUS"
py "an empty report says 'No data yet' in every section" '
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
secs = re.findall(r"<section id=\"([a-z]+)\"(.*?)</section>", page, re.S)
ids = [i for i, _ in secs]
want = ["summary", "capacity", "fleet", "flops", "bandwidth", "calibration", "degraded", "freshness", "demand"]
assert ids == want, ids
quiet = [i for i, body in secs if "No data yet: " not in body]
assert not quiet, "no \"No data yet\" in %s" % quiet
assert "<svg" not in page, "a chart drawn without data"
print(len(secs), "sections")
' "$T/empty.html"
req GET '/v1/reports/capacity?section=capacity'
[ "$STATUS" = 200 ] && [ "$(wc -l <"$T/body")" = 1 ] && ok "an empty CSV table is its header line" ||
	not_ok "an empty CSV table is its header line" "$STATUS $(head -c 300 "$T/body")"

probe=$(create_token "report-probe-$RANDOM$RANDOM" probe)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
J=(-H 'Content-Type: application/json')
fixture=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
tag=$(printf '%08x' $(((RANDOM << 15 | RANDOM) & 0x7fffffff)))
# A GPU name is free text from NVML: it must come out escaped (HTML) and
# defused (CSV).
# (no control or bidirectional character: ingestion refuses those since
# review s15, t_benchmarks)
hostile=$'=HYPERLINK("x")<script>alert(1)</script>&evil'
h_ok=rpt-$tag-h100a
h_bad=rpt-$tag-h100b
h_a100=rpt-$tag-a100
h_evil=rpt-$tag-evil
h_old=rpt-$tag-old

# post_report HOST SERIAL JQ_EDIT: the synthetic fixture as a new run from
# HOST, timestamped now, with GPU UUIDs of its own, edited by JQ_EDIT.
post_report() {
	local host=$1 serial=$2 edit=$3
	jq --arg now "$now" --arg h "$host" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$tag-$serial" --arg evil "$hostile" "
		.run_id = \$r | .node.hostname = \$h | .started_at = \$now | .finished_at = \$now
		| .gpus |= map(.uuid |= sub(\"5e7e71c0-0000\"; \$s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub(\"5e7e71c0-0000\"; \$s) else . end
			| if .peer_uuid then .peer_uuid |= sub(\"5e7e71c0-0000\"; \$s) else . end)
		| $edit" "$fixture" >"$T/report.json" || { STATUS=jq; return; }
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/report.json"
}

post_report "$h_ok" 0001 '.'
check "an H100 node reports" 201
post_report "$h_bad" 0002 '.gpus[3].pcie.gen_current = 4
	| .results |= map(if .gpu_index == 3 and .metric == "gemm_tflops" then .median *= 0.7 else . end)'
check "an H100 node with a slow, PCIe-downtrained GPU 3 reports" 201
# An A100 node: no FP8, and rates scaled to the A100's datasheet.
post_report "$h_a100" 0003 "$(cat "$TOP/tests/fixtures/probe/as_a100.jq")"
check "an A100 node reports" 201
post_report "$h_evil" 0004 '.gpus |= map(.name = $evil)'
check "a node whose GPUs have a hostile NVML name reports" 201
post_report "$h_old" 0005 '.'
check "a fifth node reports" 201
# A node that stopped reporting three days ago: the API cannot backdate
# last_seen (the database sets it), so age it in place.
deploy_pg() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$dbname" "$1"; }
dbname=$(printf '%s\n' "$DATABASE_URL" | grep -o 'dbname=[^ ]*' | cut -d= -f2)
if deploy_pg "UPDATE nodes SET last_seen = now() - interval '3 days' WHERE hostname = '$h_old'" >/dev/null; then
	ok "a node is aged to three days"
else
	not_ok "a node is aged to three days"
fi

# Five requests, four jobs: the H100 training job is asked twice.
job='{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"top":1}'
n=0
for g in h100-sxm5-80gb h100-sxm5-80gb a100-sxm4-80gb; do
	n=$((n + 1))
	req POST /v1/sizing/training "${J[@]}" -d "$(jq -c --arg g "$g" '.gpu = $g' <<<"$job")"
	check "sizing request for $g is answered" 201
	cp "$T/body" "$T/train$n.json"
done
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb"}'
check "an inference sizing request is answered" 201
cp "$T/body" "$T/infer.json"
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e11,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb","rtx-4090-24gb"]}'
check "a compare request is answered" 201

# --- HTML
req GET /v1/reports/capacity
cp "$T/body" "$T/report.html"
[ "$STATUS" = 200 ] && [ "$(header Content-Type)" = "text/html; charset=utf-8" ] && [ -z "$(header Content-Disposition)" ] &&
	ok "GET /v1/reports/capacity is text/html by default, shown inline" ||
	not_ok "GET /v1/reports/capacity is text/html by default, shown inline" "$STATUS $(header Content-Type) $(header Content-Disposition)"
html=$T/report.html
count() { grep -o -- "$1" "$html" | wc -l; }
n_gemm=$(count 'data-chart="gemm"')
n_bw=$(count 'data-chart="bandwidth"')
n_meas=$(count '<rect class="bar measured"')
n_ref=$(count '<rect class="bar reference"')
[ "$n_gemm" -ge 3 ] && [ "$n_bw" -ge 3 ] && [ "$n_meas" -ge 30 ] && [ "$n_ref" -ge 30 ] &&
	ok "measured vs datasheet plots per GPU type (gemm $n_gemm, bandwidth $n_bw, bars $n_meas/$n_ref)" ||
	not_ok "measured vs datasheet plots per GPU type" "gemm $n_gemm bandwidth $n_bw measured $n_meas reference $n_ref"
for c in fleet freshness demand; do
	[ "$(count "data-chart=\"$c\"")" = 1 ] && ok "the $c plot is drawn" || not_ok "the $c plot is drawn"
done
[ "$(count '<rect class="bar degraded"')" -ge 1 ] && ok "the fleet plot shows degraded GPUs" ||
	not_ok "the fleet plot shows degraded GPUs"
[ "$(count '<rect class="bar demand"')" -ge 3 ] && ok "the demand plot has bars" || not_ok "the demand plot has bars"
# GPU-days per week: one chart per GPU type asked for or measured (H100,
# A100 and the hostile NVML name).
n_cap=$(count 'data-chart="capacity"')
[ "$n_cap" = 3 ] && [ "$(count '<rect class="bar asked"')" -ge 3 ] && grep -q 'id="capacity-table"' "$html" &&
	ok "the capacity plots (one per GPU type) and table are drawn" ||
	not_ok "the capacity plots (one per GPU type) and table are drawn" "$n_cap charts"
grep -q 'because serving is assumed to run around the clock' "$html" &&
	grep -q "<b>Healthy GPU-days</b>: the distinct GPUs of the type in each node's latest probe run of the week" "$html" &&
	ok "the page says how asked and healthy GPU-days are computed" ||
	not_ok "the page says how asked and healthy GPU-days are computed"
py "every chart labels both axes" '
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg class=\"chart\" data-chart=\"([a-z]+)\".*?</svg>", page, re.S)
bodies = re.findall(r"<svg class=\"chart\" data-chart=\"[a-z]+\".*?</svg>", page, re.S)
bad, seen = [], set()
for name, svg in zip(svgs, bodies):
    xs = re.findall(r"<text class=\"axis-title\" data-axis=\"x\"[^>]*>([^<]+)</text>", svg)
    ys = re.findall(r"<text class=\"axis-title\" data-axis=\"y\"[^>]*>([^<]+)</text>", svg)
    if len(xs) != 1 or len(ys) != 1:
        bad.append((name, xs, ys))
    else:
        seen.add("%s: %s / %s" % (name, ys[0], xs[0]))
assert len(bodies) >= 8 and not bad, bad
print("; ".join(sorted(seen)))
' "$html"
# Distinct jobs: the H100 training job asked twice is one job, and the
# demand chart stacks to the jobs the page counts.
stacked=$(grep -o '<rect class="bar demand"[^>]*><title>[^<]*: [0-9]* jobs\?</title>' "$html" |
	sed -E 's/.*: ([0-9]+) jobs?<.*/\1/' | awk '{ s += $1 } END { print s + 0 }')
grep -q '>4 distinct jobs in the window (2 training, 1 inference, 1 compare) from 5 sizing requests' "$html" &&
	[ "$stacked" = 4 ] && ok "demand counts distinct jobs (4 of 5 requests) and its chart stacks to them" ||
	not_ok "demand counts distinct jobs (4 of 5 requests) and its chart stacks to them" \
		"stacked ${stacked:-?}; $(grep -o '[0-9]* distinct jobs in the window[^<]*' "$html")"
row=$(sed -n '/id="demand-table"/,/<\/table>/p' "$html" | grep -F '<tr><td>NVIDIA H100 SXM5 80GB</td>')
largest=$(jq -s 'map(.plans[0].gpus) | max' "$T/train2.json" "$T/infer.json")
[[ $row == *"<td class=\"n\">3</td><td class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">4</td><td class=\"n\">$largest</td>"* ]] &&
	ok "H100 demand: 3 jobs (1 training, 1 inference, 1 compare) from 4 requests, largest plan $largest GPUs" ||
	not_ok "H100 demand: 3 jobs (1 training, 1 inference, 1 compare) from 4 requests, largest plan $largest GPUs" "$row"
if command -v python3 >/dev/null 2>&1; then
	if out=$(python3 - "$html" 2>&1 <<'EOF'
import re, sys, xml.etree.ElementTree as ET
page = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
for s in svgs:
    ET.fromstring(s)  # raises on a tag or escape out of place
print(len(svgs))
EOF
	); then ok "every inline SVG is well-formed XML ($out)"; else not_ok "every inline SVG is well-formed XML" "$out"; fi
else
	ok "every inline SVG is well-formed XML # SKIP python3 not installed"
fi
if grep -Eiq '<script|<link|<iframe|<img|<object|<embed|src=|url\(|@import|href="(https?:)?//' "$html"; then
	not_ok "self-contained: no script and no external resource" "$(grep -Eio '<script|<link|<iframe|<img|<object|<embed|src=|url\(|@import|href="(https?:)?//' "$html" | head -3)"
else
	ok "self-contained: no script and no external resource"
fi
if grep -qF '<script>alert(1)' "$html"; then
	not_ok "a hostile GPU name is HTML-escaped" "raw <script> in the page"
elif grep -qF '=HYPERLINK(&quot;x&quot;)&lt;script&gt;alert(1)&lt;/script&gt;&amp;evil' "$html"; then
	ok "a hostile GPU name is HTML-escaped"
else
	not_ok "a hostile GPU name is HTML-escaped" "escaped name not found"
fi
if grep -qF $'\u202E' "$html"; then
	not_ok "a right-to-left override in a name does not reach the page" "raw U+202E in the page"
else
	ok "a right-to-left override in a name does not reach the page"
fi
missing=""
for h in "$h_ok" "$h_bad" "$h_a100" "$h_evil" "$h_old"; do
	grep -qF ">$h<" "$html" || missing="$missing $h"
done
[ -z "$missing" ] && ok "every reporting node is listed" || not_ok "every reporting node is listed" "missing:$missing"
sed -n '/id="degraded-table"/,/<\/table>/p' "$html" | grep -F "$h_bad" | grep -q 'PCIe link trained at Gen4' &&
	ok "the degraded table names the slow GPU and why" || not_ok "the degraded table names the slow GPU and why"
grep -F ">$h_old<" "$html" | grep -q 'class="n stale"' && ok "a node silent for three days is stale" ||
	not_ok "a node silent for three days is stale" "$(grep -F ">$h_old<" "$html" | head -c 300)"
grep -q '<h3>NVIDIA A100 SXM4 80GB' "$html" && ok "GPU types show their catalog display names" ||
	not_ok "GPU types show their catalog display names"
grep -q 'id="demand-table"' "$html" && grep -q 'id="tile-requests"><b>5<' "$html" && grep -q 'id="tile-jobs"><b>4<' "$html" &&
	ok "sizing demand is tabulated and counted (tiles: 4 jobs, 5 requests)" || not_ok "sizing demand is tabulated and counted (tiles: 4 jobs, 5 requests)"
for s in $sections; do
	grep -q "href=\"?section=$s&amp;window_days=30\" download>CSV</a>" "$html" || missing="$missing $s"
done
[ -z "$missing" ] && ok "every section links its CSV table" || not_ok "every section links its CSV table" "missing:$missing"
req GET '/v1/reports/capacity?window_days=365'
[ "$STATUS" = 200 ] && grep -q 'counted on the week of its latest answer' "$T/body" && ok "a year's window groups demand by week" ||
	not_ok "a year's window groups demand by week" "$STATUS"
req HEAD /v1/reports/capacity -I
[ "$STATUS" = 200 ] && ok "HEAD works" || not_ok "HEAD works" "$STATUS"

# --- CSV: one table per section, a download with a dated name
declare -A want_head=(
	[summary]='generated_at,window_days,gpu_types,gpus_measured,degraded_gpus,nodes,nodes_fresh,nodes_stale,nodes_silent,probe_runs,sizing_requests,jobs,training_jobs,inference_jobs,compare_jobs,asked_gpu_days,healthy_gpu_days'
	[capacity]='week,week_start,gpu_type,training_jobs,training_gpu_days,inference_jobs,inference_gpu_days_24x7,asked_gpu_days,seen_gpus,healthy_gpus,healthy_gpu_days'
	[fleet]='gpu_type,display_name,in_catalog,gpus,healthy_gpus,degraded_gpus,nodes'
	[measured]='gpu_type,metric,dtype,unit,measured,reference,reference_basis,efficiency,gpus'
	[calibration]='gpu_type,field,metric,dtype,unit,value,runs,nodes,reference,reference_basis,fraction,implausible_runs,degraded_nodes,disputed_nodes,sizing_value,capped_at_datasheet,window_days,set_aside'
	[degraded]='gpu_type,hostname,gpu_index,gpu_uuid,reasons'
	[freshness]='hostname,gpu_types,gpus,last_seen,age_hours,freshness,last_status,runs_in_window'
	[demand]='period,kind,gpu_type,jobs,largest_plan_gpus'
)
today=$(date -u +%Y-%m-%d)
for s in $sections; do
	req GET "/v1/reports/capacity?section=$s"
	cp "$T/body" "$T/$s.csv"
	cd_want="attachment; filename=\"gpusizer-capacity-$s-$today.csv\""
	if [ "$STATUS" = 200 ] && [[ $(header Content-Type) == text/csv* ]] &&
		[ "$(header Content-Disposition)" = "$cd_want" ] &&
		[ "$(head -n 1 "$T/$s.csv" | tr -d '\r')" = "${want_head[$s]}" ]; then
		ok "?section=$s: its own columns, Content-Disposition $cd_want"
	else
		not_ok "?section=$s: its own columns and a dated filename" \
			"$STATUS $(header Content-Type) [$(header Content-Disposition)] $(head -n 1 "$T/$s.csv")"
	fi
done
py "every CSV table parses, one row per line, none ragged" '
import csv, sys
n = 0
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    assert rows and all(len(r) == len(rows[0]) for r in rows), path
    n += len(rows) - 1
print(n, "rows")
' "$T"/summary.csv "$T"/capacity.csv "$T"/fleet.csv "$T"/measured.csv "$T"/degraded.csv "$T"/freshness.csv "$T"/demand.csv
py "the CSV tables: reference, degraded GPU, defused formula, jobs" '
import csv, sys
d = sys.argv[1]
def table(s):
    return list(csv.DictReader(open("%s/%s.csv" % (d, s), newline="", encoding="utf-8")))
bf16 = [r for r in table("measured") if r["gpu_type"] == "h100-sxm5-80gb"
        and r["metric"] == "gemm_tflops" and r["dtype"] == "bf16"]
assert bf16 and float(bf16[0]["reference"]) == 989.4 and bf16[0]["reference_basis"] == "datasheet", bf16
assert 0.5 < float(bf16[0]["efficiency"]) < 1, bf16
deg = [r for r in table("degraded") if r["hostname"] == sys.argv[2]]
assert len(deg) == 1 and deg[0]["gpu_index"] == "3" and "PCIe" in deg[0]["reasons"], deg
evil = [r for r in table("freshness") if r["hostname"] == sys.argv[3]]
assert evil and evil[0]["gpu_types"].startswith("\x27="), evil  # defused formula
s = table("summary")[0]
assert (s["sizing_requests"], s["jobs"], s["training_jobs"], s["inference_jobs"], s["compare_jobs"]) == ("5", "4", "2", "1", "1"), s
dem = table("demand")
assert sum(int(r["jobs"]) for r in dem) == 4, dem
cmp = [r for r in dem if r["kind"] == "compare"]
assert len(cmp) == 1 and cmp[0]["gpu_type"] == "a100-sxm4-80gb,h100-sxm5-80gb,rtx-4090-24gb", cmp
fl = {r["gpu_type"]: r for r in table("fleet")}
assert (fl["h100-sxm5-80gb"]["gpus"], fl["h100-sxm5-80gb"]["healthy_gpus"], fl["h100-sxm5-80gb"]["degraded_gpus"]) == ("24", "23", "1"), fl
print("summary", s["jobs"], "jobs of", s["sizing_requests"], "requests")
' "$T" "$h_bad" "$h_evil"
# GPU-days: the H100 training job once (gpus x days of its answer), the
# inference job x 7; healthy: 24 H100s measured this week, one degraded.
train_h100=$(jq '.plans[0].gpus * .plans[0].days' "$T/train2.json")
train_a100=$(jq '.plans[0].gpus * .plans[0].days' "$T/train3.json")
infer_h100=$(jq '.plans[0].gpus * 7' "$T/infer.json")
py "GPU-days asked and healthy per GPU type and week" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")))
by = {}
for r in rows:
    by.setdefault(r["gpu_type"], []).append(r)
t_h100, t_a100, i_h100 = map(float, sys.argv[2:5])
h = by["h100-sxm5-80gb"]
assert len(h) == 1 or min(r["week"] for r in h) != max(r["week"] for r in h), h
h = h[-1] if len(h) == 1 else None
assert h, by
assert (h["training_jobs"], h["inference_jobs"]) == ("1", "1"), h
assert abs(float(h["training_gpu_days"]) - t_h100) < 0.051, (h, t_h100)
assert abs(float(h["inference_gpu_days_24x7"]) - i_h100) < 0.051, (h, i_h100)
assert abs(float(h["asked_gpu_days"]) - (t_h100 + i_h100)) < 0.051, h
assert (h["seen_gpus"], h["healthy_gpus"], h["healthy_gpu_days"]) == ("24", "23", "161"), h
a = by["a100-sxm4-80gb"][-1]
assert abs(float(a["asked_gpu_days"]) - t_a100) < 0.051 and a["healthy_gpu_days"] == "56", a
assert "rtx-4090-24gb" not in by, "a compare request added GPU-days"
print("H100 %s asked / %s healthy GPU-days" % (h["asked_gpu_days"], h["healthy_gpu_days"]))
' "$T/capacity.csv" "$train_h100" "$train_a100" "$infer_h100"
# Weeks: the A100 node's run, received a week earlier, counts in the week
# before (and the A100 training job asked this week stays in this one).
if deploy_pg "UPDATE benchmark_runs SET received_at = received_at - interval '7 days' WHERE hostname = '$h_a100'" >/dev/null; then
	req GET '/v1/reports/capacity?section=capacity'
	cp "$T/body" "$T/capacity-weeks.csv"
	py "a run counts in the ISO week it was received" '
import csv, datetime, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")) if r["gpu_type"] == "a100-sxm4-80gb"]
today = datetime.datetime.now(datetime.timezone.utc).date()
this = (today - datetime.timedelta(days=today.weekday())).isoformat()
last = (today - datetime.timedelta(days=today.weekday() + 7)).isoformat()
by = {r["week_start"]: r for r in rows}
assert set(by) == {this, last}, by
assert (by[last]["healthy_gpus"], by[last]["healthy_gpu_days"], by[last]["asked_gpu_days"]) == ("8", "56", "0"), by[last]
assert by[this]["healthy_gpus"] == "0" and float(by[this]["asked_gpu_days"]) > 0, by[this]
print("A100: %s healthy GPU-days in %s, asked in %s" % (by[last]["healthy_gpu_days"], by[last]["week"], by[this]["week"]))
' "$T/capacity-weeks.csv"
else
	not_ok "a run counts in the ISO week it was received" "cannot move the run"
fi
req GET '/v1/reports/capacity?format=csv'
check_problem "CSV without section is a 400 naming section" 400 section
jq -e '.errors[0].message | contains("summary, capacity, fleet, measured, calibration, degraded, freshness, demand")' "$T/body" >/dev/null &&
	ok "the 400 lists the sections" || not_ok "the 400 lists the sections" "$(head -c 300 "$T/body")"
req GET /v1/reports/capacity -H 'Accept: text/csv'
check_problem "Accept: text/csv without section is a 400 naming section" 400 section
req GET '/v1/reports/capacity?section=nodes'
check_problem "an unknown section is a 400 naming it" 400 section
req GET '/v1/reports/capacity?section=fleet&format=html'
check_problem "section with format=html is a 400 naming section" 400 section
req GET '/v1/reports/capacity?section=fleet' -H 'Accept: application/json'
check_problem "section with an Accept that refuses CSV is a 406" 406
req GET '/v1/reports/capacity?section=fleet' -H 'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
[ "$STATUS" = 200 ] && [[ $(header Content-Type) == text/csv* ]] && [[ $(header Content-Disposition) == attachment* ]] &&
	ok "a browser following a section's CSV link downloads it" ||
	not_ok "a browser following a section's CSV link downloads it" "$STATUS $(header Content-Type)"
req GET '/v1/reports/capacity?section=fleet' -H 'Accept: text/html;q=0.5, text/csv'
[[ $(header Content-Type) == text/csv* ]] && ok "the preferred type wins (q values)" || not_ok "the preferred type wins (q values)" "$(header Content-Type)"
req GET /v1/reports/capacity -H 'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
[[ $(header Content-Type) == text/html* ]] && ok "a browser's Accept gets HTML" || not_ok "a browser's Accept gets HTML" "$(header Content-Type)"
req GET /v1/reports/capacity -H 'Accept: application/json'
check_problem "Accept: application/json alone is 406" 406
req GET '/v1/reports/capacity?format=xml'
check_problem "a bad format is a 400 naming it" 400 format
req GET '/v1/reports/capacity?window_days=0'
check_problem "a bad window is a 400 naming it" 400 window_days
req GET '/v1/reports/capacity?window_days=12x'
check_problem "a non-numeric window is a 400" 400 window_days
req GET '/v1/reports/capacity?window_days=367&format=csv'
check_problem "a window beyond 366 days is a 400 naming it" 400 window_days

# --- headless Chromium: the page renders and the plots are on it
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "# installing chromium (apt-get)"
	{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium ||
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }; } >"$T/apt.log" 2>&1
	chromium=$(command -v chromium || true)
fi
png=$T/report.png
if [ -z "$chromium" ]; then
	ok "headless Chromium screenshot of the report # SKIP chromium not installed (apt-get install chromium, as root)"
else
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$T/chromium.XXXXXX")" --screenshot="$png" \
		--window-size=1280,3000 "$GSZ_URL/v1/reports/capacity" >"$T/chromium.log" 2>&1
	size=$(stat -c %s "$png" 2>/dev/null || echo 0)
	[ "$size" -gt 50000 ] && ok "headless Chromium screenshot of the report ($size bytes)" ||
		not_ok "headless Chromium screenshot of the report" "$size bytes; $(tail -n 3 "$T/chromium.log")"
	if [ "$size" -gt 0 ] && command -v python3 >/dev/null 2>&1; then
		# The fill colours of handlers/report/report_int.h: measured bars (and
		# healthy GPU-days), reference bars, degraded GPUs, GPU-days
		# asked (the fresh-node green is further down the page than
		# 3000 pixels once a few GPU types report).
		px=$(python3 "$TOP/tests/report_screenshot.py" "$png" measured=#4e79a7 reference=#cfd6e0 \
			degraded=#e15759 asked=#f28e2b fresh=#59a14f 2>&1)
		echo "# screenshot: $px"
		if jq -e '.width == 1280 and .height == 3000 and .colours > 200 and .pixels.measured > 20000
			and .pixels.reference > 20000 and .pixels.degraded > 200 and .pixels.asked > 2000' <<<"$px" >/dev/null 2>&1; then
			ok "the screenshot shows the plots (pixels of bar colours counted)"
		else
			not_ok "the screenshot shows the plots (pixels of bar colours counted)" "$px"
		fi
	elif [ "$size" -gt 0 ]; then
		ok "the screenshot shows the plots # SKIP python3 not installed"
	fi
fi
if [ -n "${REPORT_SCREENSHOT:-}" ]; then
	mkdir -p "$REPORT_SCREENSHOT" && cp "$T/report.html" "$T"/*.csv "$REPORT_SCREENSHOT/" &&
		{ [ ! -f "$png" ] || cp "$png" "$REPORT_SCREENSHOT/"; }
fi

# --- the Grafana dashboard's SQL runs against this schema and data
dash=$TOP/deploy/grafana/dashboards/gpusizer.json
if [ ! -f "$dash" ]; then
	not_ok "Grafana SQL panels run" "$dash missing"
else
	n=0
	bad=""
	while IFS= read -r enc; do
		title=$(printf '%s' "$enc" | base64 -d | jq -r .title)
		sql=$(printf '%s' "$enc" | base64 -d | jq -r .sql | sed -E \
			-e "s/\\\$__timeFilter\(([^)]*)\)/\1 BETWEEN now() - interval '30 days' AND now()/g" \
			-e "s/\\\$__timeFrom\(\)/(now() - interval '30 days')/g" \
			-e "s/\\\$__timeTo\(\)/now()/g" \
			-e "s/\\\$__timeGroupAlias\(([^,]*),[^)]*\)/date_trunc('hour', \1) AS \"time\"/g" \
			-e "s/\\\$\{?gpu_type(:[a-z]+)?\}?/'h100-sxm5-80gb'/g")
		n=$((n + 1))
		if ! out=$(deploy_pg "$sql" 2>&1); then
			bad="$bad; $title: $(printf '%s' "$out" | head -n 2 | tr '\n' ' ')"
		elif [ -z "$out" ]; then
			bad="$bad; $title: no rows"
		fi
	done < <(jq -r '[.panels[] | (.panels // [.])[]] | .[] | .title as $t | .targets[]? |
		select(.rawSql) | {title: $t, sql: .rawSql} | @base64' "$dash"
		jq -r '.templating.list[] | select(.type == "query" and (.query | type) == "string") |
			{title: ("variable " + .name), sql: .query} | @base64' "$dash")
	[ "$n" -ge 6 ] && [ -z "$bad" ] && ok "every Grafana SQL panel runs and returns rows ($n queries)" ||
		not_ok "every Grafana SQL panel runs and returns rows" "$n queries${bad}"
fi

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

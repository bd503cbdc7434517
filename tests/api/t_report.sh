#!/usr/bin/env bash
# The capacity report, GET /v1/reports/capacity (issue 6): a self-contained
# HTML page whose plots are inline SVG, and CSV, over probe reports and
# sizing requests posted through the API. Headless Chromium renders the
# page; the screenshot's pixels show that the plots were drawn. Last, the
# Grafana dashboard's SQL panels run against the same database.
#
# REPORT_SCREENSHOT=DIR keeps report.html, report.csv and report.png there.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "report-probe-$RANDOM$RANDOM" probe)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
J=(-H 'Content-Type: application/json')
fixture=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
tag=$(printf '%08x' $(((RANDOM << 15 | RANDOM) & 0x7fffffff)))
# A GPU name is free text from NVML: it must come out escaped (HTML) and
# defused (CSV).
hostile='=HYPERLINK("x")<script>alert(1)</script>&'
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
post_report "$h_a100" 0003 '.gpus |= map(.name = "NVIDIA A100-SXM4-80GB" | .pci_device_id = "0x20b2"
		| .compute_capability = "8.0" | .nvlink.active_links = 12 | .nvlink.limit_gbps = 300)
	| .results |= map(
		if .metric == "gemm_tflops" and .dtype == "fp8_e4m3" then
			.status = "skipped" | .reason = "needs compute capability 8.9"
			| .median = null | .max = null | .mean = null | .p10 = null | .p90 = null
			| .cv = null | .n = 0 | .efficiency = null
		elif .median != null then
			(if (.metric | startswith("gemm")) then (if (.dtype == "fp64" or .dtype == "fp32") then 0.29 else 0.315 end)
			 elif (.metric | startswith("hbm")) then 0.61
			 elif (.metric | test("^p2p_.*gbps$")) then 0.667 else 1 end) as $f
			| .median *= $f | .max *= $f | .mean *= $f | .p10 *= $f | .p90 *= $f
			| if .limit != null then .limit *= $f else . end
		else . end)'
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

job='{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"top":1}'
for g in h100-sxm5-80gb h100-sxm5-80gb a100-sxm4-80gb; do
	req POST /v1/sizing/training "${J[@]}" -d "$(jq -c --arg g "$g" '.gpu = $g' <<<"$job")"
	check "sizing request for $g is answered" 201
done
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb"}'
check "an inference sizing request is answered" 201
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e11,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb","rtx-4090-24gb"]}'
check "a compare request is answered" 201

# --- HTML
req GET /v1/reports/capacity
cp "$T/body" "$T/report.html"
[ "$STATUS" = 200 ] && [ "$(header Content-Type)" = "text/html; charset=utf-8" ] &&
	ok "GET /v1/reports/capacity is text/html by default" ||
	not_ok "GET /v1/reports/capacity is text/html by default" "$STATUS $(header Content-Type)"
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
elif grep -qF '=HYPERLINK(&quot;x&quot;)&lt;script&gt;alert(1)&lt;/script&gt;&amp;' "$html"; then
	ok "a hostile GPU name is HTML-escaped"
else
	not_ok "a hostile GPU name is HTML-escaped" "escaped name not found"
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
grep -q 'id="demand-table"' "$html" && grep -q 'id="tile-requests"><b>[1-9]' "$html" &&
	ok "sizing demand is tabulated and counted" || not_ok "sizing demand is tabulated and counted"
req GET '/v1/reports/capacity?window_days=365'
[ "$STATUS" = 200 ] && grep -q 'answered per week' "$T/body" && ok "a year's window groups demand by week" ||
	not_ok "a year's window groups demand by week" "$STATUS"
req HEAD /v1/reports/capacity -I
[ "$STATUS" = 200 ] && ok "HEAD works" || not_ok "HEAD works" "$STATUS"

# --- CSV and negotiation
req GET '/v1/reports/capacity?format=csv'
cp "$T/body" "$T/report.csv"
header_want='section,gpu_type,metric,dtype,unit,measured,reference,reference_basis,efficiency,gpus,nodes,degraded,hostname,gpu_index,gpu_uuid,last_seen,age_hours,freshness,last_status,runs,period,kind,requests,gpus_recommended,detail'
[ "$STATUS" = 200 ] && [[ $(header Content-Type) == text/csv* ]] && [ "$(head -n 1 "$T/report.csv" | tr -d '\r')" = "$header_want" ] &&
	ok "?format=csv answers CSV with the documented columns" ||
	not_ok "?format=csv answers CSV with the documented columns" "$STATUS $(header Content-Type) $(head -n 1 "$T/report.csv")"
if command -v python3 >/dev/null 2>&1; then
	if out=$(python3 - "$T/report.csv" "$h_bad" "$h_evil" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
head, body = rows[0], rows[1:]
assert all(len(r) == len(head) for r in rows), "ragged rows"
col = {n: i for i, n in enumerate(head)}
sections = {r[0] for r in body}
assert {"fleet", "measured", "degraded", "node", "demand"} <= sections, sections
bf16 = [r for r in body if r[0] == "measured" and r[col["gpu_type"]] == "h100-sxm5-80gb"
        and r[col["metric"]] == "gemm_tflops" and r[col["dtype"]] == "bf16"]
assert bf16 and float(bf16[0][col["reference"]]) == 989.4 and bf16[0][col["reference_basis"]] == "datasheet", bf16
assert 0.5 < float(bf16[0][col["efficiency"]]) < 1, bf16
deg = [r for r in body if r[0] == "degraded" and r[col["hostname"]] == sys.argv[2]]
assert len(deg) == 1 and deg[0][col["gpu_index"]] == "3" and "PCIe" in deg[0][col["detail"]], deg
evil = [r for r in body if r[0] == "node" and r[col["hostname"]] == sys.argv[3]]
assert evil and evil[0][col["gpu_type"]].startswith("'="), evil  # defused formula
assert any(r[0] == "demand" and r[col["gpu_type"]] == "a100-sxm4-80gb" for r in body)
print(len(body))
EOF
	); then ok "the CSV parses: sections, reference, degraded GPU, defused formula ($out rows)"; else not_ok "the CSV parses" "$out"; fi
else
	ok "the CSV parses # SKIP python3 not installed"
fi
req GET /v1/reports/capacity -H 'Accept: text/csv'
[ "$STATUS" = 200 ] && [[ $(header Content-Type) == text/csv* ]] && ok "Accept: text/csv answers CSV" ||
	not_ok "Accept: text/csv answers CSV" "$STATUS $(header Content-Type)"
req GET /v1/reports/capacity -H 'Accept: text/html;q=0.5, text/csv'
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
		--window-size=1280,2000 "$GSZ_URL/v1/reports/capacity" >"$T/chromium.log" 2>&1
	size=$(stat -c %s "$png" 2>/dev/null || echo 0)
	[ "$size" -gt 50000 ] && ok "headless Chromium screenshot of the report ($size bytes)" ||
		not_ok "headless Chromium screenshot of the report" "$size bytes; $(tail -n 3 "$T/chromium.log")"
	if [ "$size" -gt 0 ] && command -v python3 >/dev/null 2>&1; then
		# The fill colours of handlers/report.c: measured bars, reference
		# bars, degraded GPUs (the fresh-node green is further down the
		# page than 2000 pixels once a few GPU types report).
		px=$(python3 "$TOP/tests/report_screenshot.py" "$png" measured=#4e79a7 reference=#cfd6e0 \
			degraded=#e15759 fresh=#59a14f 2>&1)
		echo "# screenshot: $px"
		if jq -e '.width == 1280 and .height == 2000 and .colours > 200 and .pixels.measured > 20000
			and .pixels.reference > 20000 and .pixels.degraded > 200' <<<"$px" >/dev/null 2>&1; then
			ok "the screenshot shows the plots (pixels of bar colours counted)"
		else
			not_ok "the screenshot shows the plots (pixels of bar colours counted)" "$px"
		fi
	elif [ "$size" -gt 0 ]; then
		ok "the screenshot shows the plots # SKIP python3 not installed"
	fi
fi
if [ -n "${REPORT_SCREENSHOT:-}" ]; then
	mkdir -p "$REPORT_SCREENSHOT" && cp "$T/report.html" "$T/report.csv" "$REPORT_SCREENSHOT/" &&
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

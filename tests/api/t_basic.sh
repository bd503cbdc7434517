#!/usr/bin/env bash
# Health, readiness, metrics, the spec, the catalog and model presets,
# routing errors, request ids and keep-alive.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
ok "daemon starts and becomes ready"

# review s16b F7: a second daemon on the same address fails to bind, and
# its log names that address, not MHD's "port 0"
port=${GSZ_URL##*:}
timeout 20 "$GSZ_BIN" serve --listen "127.0.0.1:$port" --database-url "$DATABASE_URL" \
	--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/bind.log" 2>&1
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] &&
	grep -q "Failed to bind to port $port: .*\"listen\":\"127.0.0.1:$port\"" "$T/bind.log" &&
	grep -q "cannot listen on 127.0.0.1:$port" "$T/bind.log" && ! grep -q 'port 0' "$T/bind.log" &&
	ok "a bind failure logs the address (127.0.0.1:$port), not port 0" ||
	not_ok "a bind failure logs the address, not port 0" "rc $rc: $(head -c 600 "$T/bind.log")"
# review s16b F9: boolean settings in any case (GPUSIZER_AUTH_READS=FALSE
# refused to start); a value that is none of them still refuses
for v in FALSE:0 True:1 OFF:0 Yes:1; do
	GPUSIZER_AUTH_READS=${v%:*} timeout 20 "$GSZ_BIN" serve --listen 127.0.0.1:0 --database-url "$DATABASE_URL" \
		--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/bool.log" 2>&1 &
	bpid=$!
	for _ in $(seq 1 200); do
		grep -q '"msg":"configuration"' "$T/bool.log" && break
		kill -0 "$bpid" 2>/dev/null || break
		sleep 0.05
	done
	kill "$bpid" 2>/dev/null
	wait "$bpid" 2>/dev/null
	grep -q "\"auth_reads\":\"${v#*:}\"" "$T/bool.log" &&
		ok "GPUSIZER_AUTH_READS=${v%:*} reads as ${v#*:}" ||
		not_ok "GPUSIZER_AUTH_READS=${v%:*} reads as ${v#*:}" "$(head -c 400 "$T/bool.log")"
done
GPUSIZER_AUTH_READS=maybe "$GSZ_BIN" serve --listen 127.0.0.1:0 --database-url "$DATABASE_URL" >/dev/null 2>"$T/bool.err"
[ $? = 2 ] && grep -q 'expected true or false' "$T/bool.err" &&
	ok "GPUSIZER_AUTH_READS=maybe is refused (exit 2)" ||
	not_ok "GPUSIZER_AUTH_READS=maybe is refused" "$(cat "$T/bool.err")"

req GET /healthz
check "healthz 200" 200 '.status == "ok"'
req GET /readyz
check "readyz 200 with migrations applied" 200 '.status == "ready" and .migrations >= 3'
[ -n "$(header X-Request-Id)" ] && ok "responses carry X-Request-Id" || not_ok "responses carry X-Request-Id"
req GET /healthz -H 'X-Request-Id: abc-123'
[ "$(header X-Request-Id)" = "abc-123" ] && ok "a caller's X-Request-Id is echoed" || not_ok "a caller's X-Request-Id is echoed" "$(header X-Request-Id)"

req GET /openapi.yaml
check "openapi.yaml served" 200
grep -q '^openapi: 3.1' "$T/body" && ok "openapi.yaml is OpenAPI 3.1" || not_ok "openapi.yaml is OpenAPI 3.1"

req GET /v1/gpus
check "GET /v1/gpus lists the catalog" 200 '(.items | length) >= 15'
for g in a100-sxm4-40gb a100-sxm4-80gb a100-pcie-40gb a100-pcie-80gb a800-sxm4-80gb h100-sxm5-80gb h100-pcie-80gb h100-nvl-94gb h800-sxm5-80gb h200-sxm-141gb b200-sxm-180gb l40s-48gb l4-24gb rtx-3090-24gb rtx-4090-24gb rtx-5090-32gb mi300x-192gb; do
	jq -e --arg g "$g" '[.items[].name] | index($g) != null' "$T/body" >/dev/null &&
		ok "catalog has $g" || not_ok "catalog has $g"
done
req GET /v1/gpus/h100-sxm5-80gb
check "GET /v1/gpus/{name}: H100 SXM dense bf16 989.4, NVLink 450 one way" 200 \
	'.bf16_tflops == 989.4 and .fp8_tflops == 1978.9 and .intra_node_gbps == 450 and .memory_gib == 80 and .intra_node_link == "nvlink"'
req GET /v1/gpus/a100-sxm4-80gb
check "A100 has no FP8 (null, not 0)" 200 '.fp8_tflops == null and .bf16_tflops == 312'
req GET /v1/gpus/rtx-4090-24gb
check "RTX 4090 bf16 at the FP32-accumulate rate 165.2" 200 '.bf16_tflops == 165.2 and .intra_node_link == "pcie"'
req GET /v1/gpus/no-such-gpu
check_problem "unknown GPU is a 404 problem" 404

req GET /v1/models
check "GET /v1/models lists presets with parameter counts" 200 \
	'(.items | length) >= 12 and all(.items[]; .params.total > 0)'
req GET /v1/models/llama-2-70b
check "Llama-2-70B has ~68.98e9 parameters" 200 \
	'(.params.total - 68.98e9 | fabs) < 0.02e9 and .params.active == .params.total'
req GET /v1/models/llama-2-7b
check "Llama-2-7B has ~6.74e9 parameters" 200 '(.params.total - 6.74e9 | fabs) < 0.01e9'
req GET /v1/models/mixtral-8x7b
check "Mixtral 8x7B: ~46.7e9 total, ~12.9e9 active" 200 \
	'(.params.total - 46.7e9 | fabs) < 0.3e9 and (.params.active - 12.9e9 | fabs) < 0.2e9'
req GET /v1/models/deepseek-v3
check "DeepSeek-V3: ~671e9 total, ~37e9 active" 200 \
	'(.params.total - 671e9 | fabs) < 5e9 and (.params.active - 37e9 | fabs) < 1.5e9'
req GET /v1/models/nope
check_problem "unknown model is a 404 problem" 404
# Catalog and preset texts cite public documents, never a file a user of
# the service does not have (issue 16: gpu_specs.csv, SIZING.md, ../shared).
req GET /v1/gpus
cp "$T/body" "$T/gpus.json"
req GET /v1/models
cited=$(jq -r -s '[.[0].items[], .[1].items[]] | map(select([.source, .notes, .efficiency_source]
	| map(. // "") | join(" ") | test("gpu_specs|sizing\\.md|shared/|reference/"; "i"))) | map(.name) | join(" ")' \
	"$T/gpus.json" "$T/body" 2>&1)
n_rows=$(jq -s '[.[0].items[], .[1].items[]] | length' "$T/gpus.json" "$T/body" 2>/dev/null || echo 0)
[ "$STATUS" = 200 ] && [ "$n_rows" -ge 40 ] && [ -z "$cited" ] &&
	ok "no catalog or preset text cites gpu_specs.csv, SIZING.md or shared/ ($n_rows rows)" ||
	not_ok "no catalog or preset text cites gpu_specs.csv, SIZING.md or shared/" "$n_rows rows; cited by: $cited"

req GET /v1/does-not-exist
check_problem "unknown route is a 404 problem" 404
req DELETE /v1/gpus
check_problem "wrong method is a 405 problem" 405
[ "$(header Allow)" = "GET, HEAD" ] && ok "405 carries Allow" || not_ok "405 carries Allow" "$(header Allow)"
req POST /v1/models/llama-2-7b -d '{}'
check_problem "POST on a read-only resource is 405" 405
req GET //v1/gpus
check_problem "empty path segment is 404" 404
s=$(curl -s -I -o /dev/null -w '%{http_code}' "$GSZ_URL/v1/gpus")
[ "$s" = 200 ] && ok "HEAD works like GET" || not_ok "HEAD works like GET" "$s"

req GET /metrics
check "metrics served" 200
grep -q '^gpusizer_http_requests_total{route="/v1/gpus",method="GET",status="200"} [1-9]' "$T/body" &&
	ok "metrics count requests by route and status" || not_ok "metrics count requests by route and status"
grep -q '^gpusizer_http_request_duration_seconds_bucket{route="/v1/gpus",method="GET",le="+Inf"}' "$T/body" &&
	ok "metrics have a latency histogram" || not_ok "metrics have a latency histogram"
grep -q '^gpusizer_db_pool_connections{state="configured"} [0-9]' "$T/body" &&
	ok "metrics have database pool gauges" || not_ok "metrics have database pool gauges"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/body" >/dev/null 2>&1 && ok "promtool accepts /metrics" || not_ok "promtool accepts /metrics" "$(promtool check metrics <"$T/body" 2>&1 | head -3)"
fi

# Keep-alive: answering on the final call keeps the connection open.
n=$(curl -s -o /dev/null -o /dev/null -o /dev/null -w '%{num_connects}\n' \
	"$GSZ_URL/healthz" "$GSZ_URL/v1/gpus" "$GSZ_URL/healthz" | awk '{s += $1} END {print s}')
[ "$n" = 1 ] && ok "three requests reuse one keep-alive connection" || not_ok "three requests reuse one keep-alive connection" "connects=$n"

# Log lines are JSON, one per request, without tokens.
tail -n 3 "$GSZ_LOG" | jq -e 'select(.msg=="request") | .method and .path and .status and (.duration_ms|type=="number") and .request_id' >/dev/null &&
	ok "one JSON log line per request" || not_ok "one JSON log line per request" "$(tail -n 2 "$GSZ_LOG")"

stop_daemon && ok "SIGTERM: clean exit 0" || not_ok "SIGTERM: clean exit 0" "$(tail -n 5 "$GSZ_LOG")"
sanitizer_clean "no sanitizer reports"

# Draining: readyz turns 503 at once, in-flight work finishes, new
# connections are refused (not left hanging), exit 0.
start_daemon --drain-delay 2 || { not_ok "daemon starts for the drain test"; exit 1; }
url=$GSZ_URL
exec 5<>"/dev/tcp/127.0.0.1/${url##*:}"
kill -TERM "$GSZ_PID"
sleep 0.5
req GET /readyz
check_problem "draining: /readyz is 503 during the delay" 503
req GET /healthz
check "draining: /healthz still answers during the delay" 200
# A request on a connection opened before SIGTERM is still served.
printf 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n' >&5
line=$(timeout 5 head -n 1 <&5 | tr -d '\r')
[[ $line == *" 200 "* ]] && ok "draining: an open connection is still served" || not_ok "draining: an open connection is still served" "$line"
exec 5<&-
sleep 2.5
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url/healthz")
t1=$(date +%s%N)
[ "$code" = 000 ] && [ $(( (t1 - t0) / 1000000 )) -lt 2000 ] && ok "after the delay: new connections are refused at once" ||
	not_ok "after the delay: new connections are refused at once" "code=$code in $(( (t1 - t0) / 1000000 )) ms"
rc=0
wait "$GSZ_PID" || rc=$?
GSZ_PID=""
[ $rc = 0 ] && ok "drained: exit 0" || not_ok "drained: exit 0" "rc=$rc"
grep -q '"msg":"stopped"' "$GSZ_LOG" && ok "drained: logged stopped" || not_ok "drained: logged stopped"

# --listen with a port past 65535: refused at start (getaddrinfo kept the
# low 16 bits, so 99999 listened on 34463), as a usage error (exit 2)
# before the daemon starts, like every other bad option (review s23a F4)
for l in 127.0.0.1:99999 127.0.0.1:65536 127.0.0.1:http 127.0.0.1:; do
	rc=0
	timeout 20 "$GSZ_BIN" serve --listen "$l" --database-url "$DATABASE_URL" \
		--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/listen.log" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -q 'with a port in \[0, 65535\]' "$T/listen.log" &&
		ok "--listen $l is refused at start" || not_ok "--listen $l is refused at start" "rc=$rc $(tail -n 1 "$T/listen.log")"
done

# A daemon whose start cannot reach its database says so on /readyz (review
# s14: "starting: ... not verified yet" for as long as it ran).
"$GSZ_BIN" serve --listen 127.0.0.1:0 --database-url "host=$T/no-such-dir port=1 dbname=x user=y connect_timeout=1" \
	--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/unreach.log" 2>&1 &
upid=$!
uport=""
for i in $(seq 1 100); do
	uport=$(grep -o '"msg":"listening".*"port":"[0-9]*"' "$T/unreach.log" 2>/dev/null | grep -o '"port":"[0-9]*"' | grep -o '[0-9]*' | head -n 1)
	[ -n "$uport" ] && break
	sleep 0.05
done
body=$(curl -s --max-time 10 "http://127.0.0.1:${uport:-1}/readyz")
kill "$upid" 2>/dev/null
timeout 30 tail --pid="$upid" -f /dev/null 2>/dev/null
jq -e '.status == 503 and (.detail | startswith("starting: database unreachable"))' <<<"$body" >/dev/null &&
	ok "/readyz of a daemon that cannot reach its database: 503 saying so" ||
	not_ok "/readyz of a daemon that cannot reach its database: 503 saying so" "$body"

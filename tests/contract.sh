#!/usr/bin/env bash
# contract.sh - proves openapi.yaml true of the real daemon (part of `make lint`).
#
# Starts gpusizerd twice (open reads, and --auth-reads) on a private PostgreSQL (deploy/dev/pg.sh),
# puts Prism (@stoplight/prism-cli, pinned in tools/package.json) in front of each as a validating
# proxy, and sends a request set that covers every operation of openapi.yaml with its main
# statuses: valid and invalid bodies, 401/403 with tokens, 404, 405, 406, 409, 413, 415, 422, 503
# (PostgreSQL stopped at the end), CSV and HTML. Prism checks every exchange against the contract
# and lists what does not match in an `sl-violations` header. A request FAILS when
#   - its status is not the one expected;
#   - Prism found a violation located in the response. Prism runs on a strict copy of the contract
#     in which every object of an answer is closed, so a field the contract does not name fails
#     too (openapi.yaml itself stays open to additions);
#   - the daemon accepted it (2xx) but the contract says the request is invalid, or, for the
#     requests marked invalid=1, the daemon refused it but the contract finds nothing wrong.
#     (The other negative cases are refused for reasons a schema cannot state: unknown names,
#     cross-field rules; their request violations are expected.)
#   - its answer fails the jq filter given as `expect` (behaviour the contract states in words:
#     which field a problem names, what a replay answers, what was stored).
# Also checked: every route of server/routes.c is in the contract; a daemon that never becomes
# ready (its database is down) answers `starting: ...` 503s; and, straight to a daemon (Prism's
# own HTTP parser refuses such requests), the framing rules (Transfer-Encoding with
# Content-Length, other Transfer-Encodings) and the request deadline (--connection-timeout).
#
# Then a canary: a copy of the contract in which every object schema requires one more property
# (`__contract_canary__`) is served by a third Prism, and each JSON answer of the first phase is
# requested again through it. Every one must now show a response violation; one that does not was
# never validated (Prism silently skips a schema it cannot compile), and the test fails.
#
# Prints TAP lines (`ok N - ...` / `not ok N - ...`, the reasons as `#` lines, the plan last) and a
# summary; exits 1 on any failure. Prints `1..0 # SKIP <why>` and exits 0 when it cannot run: no
# npm/node, npm registry unreachable (tools not installed yet), no PostgreSQL server binaries, no
# curl/jq.
#
# Environment: GSZ_BIN=PATH (a built daemon; default: make -s build/gpusizerd),
# LINT_NODE_DIR=DIR (where the Node tools are installed, as in tests/lint.sh),
# CONTRACT_VERBOSE=1 (also print the request violations of every request),
# CONTRACT_KEEP=1 (keep the temporary directory with the daemon and Prism logs).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

skip() { echo "1..0 # SKIP contract: $*"; exit 0; }
bail() { echo "not ok - contract: $*"; echo "# contract: 1 failed"; exit 1; }

for c in curl jq; do command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"; done
command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || skip "npm/node not installed (apt-get install -y npm)"
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || skip "PostgreSQL server binaries not found (apt-get install -y postgresql)"

# --- Prism, installed like tests/lint.sh installs the Node tools --------------------------------
node_dir=${LINT_NODE_DIR:-}
if [ -z "$node_dir" ]; then
	if git check-ignore -q tools/node_modules 2>/dev/null; then node_dir=tools; else node_dir=build/tools; fi
fi
export REDOCLY_TELEMETRY=off NO_UPDATE_NOTIFIER=1 SCARF_ANALYTICS=false npm_config_update_notifier=false \
	npm_config_fund=false npm_config_audit=false
prism=$node_dir/node_modules/.bin/prism
stamp=$node_dir/node_modules/.gpusizer-lock
if [ ! -x "$prism" ] || ! cmp -s tools/package-lock.json "$stamp"; then
	timeout 20 npm ping >/dev/null 2>&1 || skip "the npm registry is unreachable; cannot install tools/package.json"
	mkdir -p "$node_dir"
	[ "$node_dir" != tools ] && cp tools/package.json tools/package-lock.json "$node_dir/"
	echo "# npm ci --prefix $node_dir"
	npm_ok=0
	for try in 1 2 3; do # a registry's transient error is not a finding: three tries
		if timeout 600 npm ci --prefix "$node_dir" --no-audit --no-fund --loglevel=error >"$node_dir/npm-ci.log" 2>&1; then
			npm_ok=1
			break
		fi
		[ "$try" = 3 ] || sleep $((try * 10))
	done
	[ "$npm_ok" = 1 ] ||
		{ tail -n 20 "$node_dir/npm-ci.log" | sed 's/^/# /'; bail "npm ci failed (log: $node_dir/npm-ci.log)"; }
	cp tools/package-lock.json "$stamp"
fi
[ -x "$prism" ] || bail "tools/package.json does not provide prism (@stoplight/prism-cli)"

# --- daemon binary -----------------------------------------------------------------------------
bin=${GSZ_BIN:-}
if [ -z "$bin" ]; then
	make -s build/gpusizerd >/dev/null 2>&1 || { make -s build/gpusizerd 2>&1 | tail -n 20 | sed 's/^/# /'; bail "make build/gpusizerd failed"; }
	bin=build/gpusizerd
fi
[ -x "$bin" ] || bail "no daemon binary at $bin"

# --- scratch space, PostgreSQL, daemons, proxies -------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/gsz-contract.XXXXXX")
chmod 755 "$T" # as root, PostgreSQL runs as "postgres" and must reach $T/pg
# A private copy: `make` may relink build/gpusizerd while this runs.
cp "$bin" "$T/gsz-contractd"
bin=$T/gsz-contractd
pids=()
pg_up=0
d_open="" d_auth="" p_open="" p_auth="" p_canary="" # ports, set by start_daemon/start_prism
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	[ "$pg_up" = 1 ] && deploy/dev/pg.sh stop "$T/pg" >/dev/null 2>&1
	if [ "${CONTRACT_KEEP:-0}" = 1 ]; then echo "# kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

db=$(deploy/dev/pg.sh start "$T/pg" 54329 2>"$T/pg.err") || { sed 's/^/# /' "$T/pg.err"; bail "PostgreSQL did not start"; }
pg_up=1

# A port nobody listens on, below the kernel's range of ephemeral (outgoing) ports.
free_port() {
	local p lo=32768
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	for p in $(shuf -i 10000-$((lo - 1)) -n 100); do
		(: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}

# start_prism VAR NAME SPEC UPSTREAM_PORT: sets VAR to its port (three tries, should the port be
# taken). Not in a subshell ($(...)), so that the pid is remembered for the cleanup.
start_prism() {
	local var=$1 name=$2 spec=$3 up=$4 port pid
	for _ in 1 2 3; do
		port=$(free_port) || return 1
		"$prism" proxy "$spec" "http://127.0.0.1:$up" -p "$port" --cors false -v warn >"$T/$name.log" 2>&1 &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 1 240); do
			[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ] &&
				{ printf -v "$var" %s "$port"; return 0; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.25
		done
		kill "$pid" 2>/dev/null
	done
	tail -n 20 "$T/$name.log" | sed 's/^/# /' >&2
	return 1
}

# start_daemon VAR NAME [args...]: sets VAR to its port once /readyz answers 200 (with
# unready=1: once it listens and /readyz answers at all, for a daemon that cannot become ready).
start_daemon() {
	local var=$1 name=$2 log=$T/$2.log port="" ready=200
	shift 2
	[ "${unready:-0}" = 1 ] && ready=503
	"$bin" serve --listen 127.0.0.1:0 --database-url "$db" --migrations-dir migrations \
		--openapi-file openapi.yaml --fleet-synthetic "$@" >"$log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 200); do
		port=$(grep -o '"msg":"listening".*"port":"[0-9]*"' "$log" 2>/dev/null | grep -o '"port":"[0-9]*"' |
			grep -o '[0-9]*' | head -n 1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { tail -n 20 "$log" | sed 's/^/# /' >&2; return 1; }
	for _ in $(seq 1 200); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = "$ready" ] &&
			{ printf -v "$var" %s "$port"; return 0; }
		sleep 0.05
	done
	return 1
}

start_daemon d_open open || bail "gpusizerd did not start"
start_daemon d_auth authreads --auth-reads || bail "gpusizerd --auth-reads did not start"
token() { "$bin" token create --name "$1" --scopes "$2" --database-url "$db" 2>/dev/null; }
PROBE=$(token contract-probe probe) && ADMIN=$(token contract-admin admin) && REVOKED=$(token contract-old admin) &&
	"$bin" token revoke contract-old --database-url "$db" >/dev/null 2>&1 || bail "cannot make tokens"
# Two contracts derived from openapi.yaml (written by the Node script below):
#  - strict.json: every object schema of an answer is closed (additionalProperties: false, with the
#    properties of its allOf parts), so that a field the contract does not name is a violation too.
#    openapi.yaml itself stays open to additions; this checks that it names everything served today.
#  - canary.json: every object schema requires one more property, `__contract_canary__` (see top).
node -e '
	const fs = require("fs"), yaml = require(process.argv[1]);
	const src = yaml.parse(fs.readFileSync("openapi.yaml", "utf8"));
	const copy = (x) => JSON.parse(JSON.stringify(x));
	const isSchemaMap = (k) => k === "properties" || k === "patternProperties" || k === "$defs";
	// Inline every local $ref (the contract has no recursive schemas), so that each use of a
	// schema can be closed, or not, on its own.
	const deref = (x, root, depth) => {
		if (depth > 64) throw new Error("recursive $ref");
		if (Array.isArray(x)) return x.map((v) => deref(v, root, depth));
		if (!x || typeof x !== "object") return x;
		if (typeof x.$ref === "string" && x.$ref.startsWith("#/")) {
			const target = x.$ref.slice(2).split("/").reduce((o, k) => o[k.replace(/~1/g, "/").replace(/~0/g, "~")], root);
			const rest = Object.assign({}, x);
			delete rest.$ref;
			return Object.assign(deref(copy(target), root, depth + 1), deref(rest, root, depth + 1));
		}
		const out = {};
		for (const [k, v] of Object.entries(x))
			out[k] = k === "example" || k === "value" ? v : deref(v, root, depth + 1);
		return out;
	};
	const names = (s) => {
		let n = s.properties ? Object.keys(s.properties) : [];
		for (const m of s.allOf || []) n = n.concat(names(m));
		return n;
	};
	const close = (s, member) => {
		if (Array.isArray(s)) return s.forEach((v) => close(v, false));
		if (!s || typeof s !== "object") return;
		if (!member && (s.properties || s.allOf) && s.additionalProperties === undefined && !s.patternProperties) {
			const all = names(s);
			if (all.length) {
				s.properties = s.properties || {};
				for (const k of all) if (!(k in s.properties)) s.properties[k] = {};
				s.additionalProperties = false;
			}
		}
		for (const [k, v] of Object.entries(s)) {
			if (k === "example" || k === "examples") continue;
			if (k === "allOf") v.forEach((m) => close(m, true));
			else if (isSchemaMap(k)) Object.values(v).forEach((m) => close(m, false));
			else close(v, false);
		}
	};
	const strict = deref(copy(src), src, 0);
	delete strict.components;
	for (const item of Object.values(strict.paths))
		for (const op of Object.values(item))
			for (const r of Object.values((op && op.responses) || {}))
				for (const media of Object.values(r.content || {})) close(media.schema, false);
	fs.writeFileSync(process.argv[2], JSON.stringify(strict));

	const canary = copy(src);
	const mark = (s) => {
		if (Array.isArray(s)) return s.forEach(mark);
		if (!s || typeof s !== "object") return;
		if (s.properties && typeof s.properties === "object" && !Array.isArray(s.properties))
			s.required = (s.required || []).concat(["__contract_canary__"]);
		Object.values(s).forEach(mark);
	};
	mark(canary.components.schemas);
	// Request bodies are not checked in the canary: their (now failing) violations would come
	// first in the header and could push the response ones past the 8 KB Prism keeps.
	for (const item of Object.values(canary.paths))
		for (const op of Object.values(item))
			if (op && op.requestBody && op.requestBody.content)
				for (const media of Object.values(op.requestBody.content)) media.schema = {};
	fs.writeFileSync(process.argv[3], JSON.stringify(canary));
' "$(cd "$node_dir" && pwd)/node_modules/@stoplight/yaml" "$T/strict.json" "$T/canary.json" ||
	bail "cannot derive the strict and canary contracts from openapi.yaml"
# The order of the Gpu properties: GET /v1/gpus serves PostgreSQL's row_to_json text, whose keys
# come in the table's column order, which the contract lists in the same order (warnings, of a
# PUT's answer only, is no column).
jq -c '.paths["/v1/gpus/{name}"].get.responses["200"].content["application/json"].schema.properties | keys_unsorted | map(select(. != "warnings"))' \
	"$T/strict.json" >"$T/gpu-keys.json" || bail "cannot read the Gpu properties of the contract"
start_prism p_open prism-open "$T/strict.json" "$d_open" || bail "prism did not start"
start_prism p_auth prism-auth "$T/strict.json" "$d_auth" || bail "prism did not start"
echo "# gpusizerd on :$d_open (open reads) and :$d_auth (--auth-reads); prism $("$prism" --version) on :$p_open, :$p_auth"

# --- every route the daemon serves is in the contract ------------------------------------------
n=1
missing=$(comm -23 \
	<(sed -n 's/^[[:space:]]*{"\([A-Z]*\)", "\(\/[^"]*\)".*/\1 \2/p' server/routes.c | sort -u) \
	<(jq -r '.paths | to_entries[] | .key as $p | .value | keys[]
		| select(test("^(get|put|post|delete|patch|head|options)$")) | "\(ascii_upcase) \($p)"' "$T/strict.json" | sort -u))
if [ -z "$missing" ] && grep -q '"/healthz"' server/routes.c; then
	echo "ok 1 - every route of server/routes.c is in openapi.yaml"
	failed=0
else
	echo "not ok 1 - every route of server/routes.c is in openapi.yaml"
	if [ -n "$missing" ]; then
		sed 's/^/#   served but not in the contract: /' <<<"$missing"
	else
		echo "#   cannot read the route table of server/routes.c"
	fi
	failed=1
fi

# --- requests ------------------------------------------------------------------------------------
resp_violations=0
replay=() # the requests of the open daemon whose answers were JSON: the canary sends them again
via=$p_open
# Set for one call (`undocumented=1 call ...`):
#   undocumented=1  the path+method is not in the contract (404/405 cases)
#   lenient=1       a request the contract does not describe but the daemon accepts (text/plain)
#   invalid=1       the contract itself must find the request invalid, not only the daemon
#   expect=FILTER   a jq filter the answer must satisfy (jq -e); raw=1 reads the answer as one
#                   string instead of JSON; $ref is the JSON of the file expect_ref names
undocumented=0 lenient=0 invalid=0 expect="" raw=0 expect_ref=/dev/null

# violations FILE: Prism's violations of the answer whose headers are in FILE, one per line as
# "<location>: <message>". Prism cuts a list longer than 8 KB and prefixes "Too many violations!";
# the entries before the cut are still read, and a last line "TRUNCATED" says so.
violations() {
	local v
	v=$(grep -i '^sl-violations:' "$1" | head -n 1 | cut -d' ' -f2- | tr -d '\r')
	[ -n "$v" ] || return 0
	if [[ $v == "Too many violations! "* ]]; then
		v=${v#Too many violations! }
		grep -o '{"location":\[[^]]*\],"severity":"[A-Za-z]*"\(,"code":[^,]*\)\?,"message":"\([^"\\]\|\\.\)*"}' <<<"$v" |
			jq -r '"\(.location | join(".")): \(.message)"' 2>/dev/null
		echo TRUNCATED
	else
		jq -r '.[] | "\(.location | join(".")): \(.message)"' <<<"$v" 2>/dev/null || echo "unreadable: $v"
	fi
}

# call NAME WANT METHOD PATH [curl args...]: one request through Prism, one TAP line.
call() {
	local name=$1 want=$2 method=$3 path=$4
	shift 4
	local status ct v
	n=$((n + 1))
	# An answer sent before the request body is read (413 over --max-body-bytes) races the upload
	# through the proxy: Prism, still writing the body when the daemon closes, sometimes answers
	# its own 500 "FetchError ... write EPIPE" instead (a fresh-clone CI run here failed on it, 2026-11-27).
	# That is the proxy losing the race, not the daemon's answer: asked again, up to 3 tries.
	local try
	for try in 1 2 3; do
		status=$(curl -sS -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 60 -X "$method" \
			"http://127.0.0.1:$via$path" "$@" 2>"$T/curl.err") || status=000
		[ "$want" = 413 ] && [ "$status" = 500 ] && grep -q '"FetchError"' "$T/body" 2>/dev/null ||
			break
		echo "#   (try $try: Prism lost the early 413 to its upload, EPIPE; asked again)"
	done
	ct=$(grep -i '^content-type:' "$T/headers" | head -n 1 | cut -d' ' -f2- | tr -d '\r')
	local bad=() req=()
	[ "$status" = "$want" ] || bad+=("status $status, want $want: $(head -c 300 "$T/body")$(cat "$T/curl.err")")
	if [ -n "$expect" ]; then
		local how=()
		[ "$raw" = 1 ] && how=(-R -s)
		jq -e "${how[@]}" --slurpfile ref "$expect_ref" "$expect" "$T/body" >/dev/null 2>&1 ||
			bad+=("the answer fails: $expect ($(head -c 300 "$T/body"))")
	fi
	while IFS= read -r v; do
		case $v in
		response*)
			bad+=("response violation: $v")
			resp_violations=$((resp_violations + 1))
			;;
		TRUNCATED) bad+=("Prism cut its list of violations: a response violation may be hidden") ;;
		unreadable*) bad+=("$v") ;;
		*"route not found"* | *"Route not resolved"* | *"no path matched"*)
			[ "$undocumented" = 1 ] || bad+=("not in the contract: $v")
			;;
		*) req+=("$v") ;;
		esac
	done < <(violations "$T/headers")
	# A request the daemon accepts must be valid by the contract, and the other way round where
	# the contract can tell (invalid=1): the request schemas are neither stricter nor looser.
	if [[ $want == 2* ]] && [ "$lenient" = 0 ] && [ ${#req[@]} -gt 0 ]; then
		bad+=("${req[@]/#/the daemon accepts what the contract refuses: }")
	fi
	if [ "$invalid" = 1 ] && [ ${#req[@]} -eq 0 ]; then
		bad+=("the contract accepts this request; the daemon refuses it")
	fi
	[ "${CONTRACT_VERBOSE:-0}" = 1 ] && [ ${#req[@]} -gt 0 ] && printf '#   (request) %s\n' "${req[@]}"
	if [ ${#bad[@]} -eq 0 ]; then
		echo "ok $n - $method $path: $status $name"
	else
		echo "not ok $n - $method $path: $name"
		printf '#   %s\n' "${bad[@]}"
		failed=$((failed + 1))
	fi
	if [ "$via" = "$p_open" ] && [ "$undocumented" = 0 ] &&
		[[ $ct == application/json* || $ct == application/problem+json* ]]; then
		replay+=("$(printf '%q ' "$name" "$status" "$method" "$path" "$@")")
	fi
	undocumented=0
	return 0
}
body_file() { printf '%s' "$2" >"$T/$1.json"; echo "@$T/$1.json"; }
J=(-H 'Content-Type: application/json')
A=(-H "Authorization: Bearer $ADMIN")
P=(-H "Authorization: Bearer $PROBE")

# operations
call "liveness" 200 GET /healthz
call "readiness" 200 GET /readyz
raw=1 expect='test("\n# TYPE gpusizer_http_connections_reaped_total counter\ngpusizer_http_connections_reaped_total [0-9]+\n")' \
	call "metrics, with the reaped-connections counter" 200 GET /metrics
call "the contract itself" 200 GET /openapi.yaml
call "request id echoed" 200 GET /healthz -H 'X-Request-Id: contract-1'
undocumented=1 call "POST on a GET path" 405 POST /healthz

# probe reports first, so that sizing finds measurements (calibration auto/measured)
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
jq -c --arg n "$now" '.started_at = $n | .finished_at = $n' tests/fixtures/probe/report_synthetic_h100x8.json >"$T/h100x8.json"
jq -c '.run_id = "5d1c8e2a-7f3b-4a9c-b6e0-2c4d8f1a3b57" | .node.hostname = "synthetic-h100x8-node-2"
	| .gpus |= map(.uuid |= sub("5e7e71c0"; "6f8f82d1"))
	| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; "6f8f82d1") else . end)
	| .gpus[3].pcie.gen_current = 4
	| .results |= map(if .metric == "hbm_read_gbps" and .gpu_index == 3 then .median = .median * 0.8 else . end)' \
	"$T/h100x8.json" >"$T/h100x8-2.json"
jq -c '.synthetic = false' "$T/h100x8.json" >"$T/h100x8-changed.json"
run1=$(jq -r .run_id "$T/h100x8.json")
call "report without a token" 401 POST /v1/benchmarks "${J[@]}" --data-binary "@$T/h100x8.json"
call "report with an admin token (needs probe)" 403 POST /v1/benchmarks "${J[@]}" "${A[@]}" --data-binary "@$T/h100x8.json"
call "report with a revoked token" 401 POST /v1/benchmarks "${J[@]}" -H "Authorization: Bearer $REVOKED" --data-binary "@$T/h100x8.json"
call "report 8x H100" 201 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/h100x8.json"
cp "$T/body" "$T/receipt-h100x8.json"
expect_ref=$T/receipt-h100x8.json expect='. == $ref[0]' \
	call "report replayed: same answer" 201 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/h100x8.json"
# Re-serialised (keys sorted, indented): other bytes, the same canonical JSON. Sent as text/plain,
# which Prism forwards as is (it re-encodes application/json bodies).
jq -S . "$T/h100x8.json" >"$T/h100x8-resorted.json"
cmp -s "$T/h100x8.json" "$T/h100x8-resorted.json" && bail "jq -S did not change the report's bytes"
lenient=1 expect_ref=$T/receipt-h100x8.json expect='. == $ref[0]' \
	call "report re-serialised (keys sorted, indented): a replay, same answer" 201 POST /v1/benchmarks \
	-H 'Content-Type: text/plain' "${P[@]}" --data-binary "@$T/h100x8-resorted.json"
expect='.type == "/problems/conflict"' \
	call "another report with a used run_id" 409 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/h100x8-changed.json"
call "report a second node, one GPU degraded" 201 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/h100x8-2.json"
call "report a node without GPUs" 201 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary @tests/api/bodies/benchmarks.json
# Prism re-encodes JSON and form bodies it forwards; text/plain (also read as JSON) goes through as is.
jq '.run_id = "8e6b2c1d-3f4a-4b5c-9d6e-7f8091a2b3c4" | .node.hostname = "synthetic-cpu-node-2"' \
	tests/api/bodies/benchmarks.json >"$T/text-plain.json"
lenient=1 call "report sent as text/plain" 201 POST /v1/benchmarks -H 'Content-Type: text/plain' "${P[@]}" --data-binary "@$T/text-plain.json"
invalid=1 call "report: every bad field" 400 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "$(body_file bad-report \
	'{"schema_version":2,"run_id":"abc","status":"great","node":{"hostname":"bad host"},"started_at":"yesterday","gpus":[{"index":0,"name":"x","uuid":"u"},{"index":1,"name":"x","uuid":"u"}],"results":[{"metric":"gemm_sweep","unit":"TFLOP/s","gpu_uuid":"v","median":"x"},5]}')"
invalid=1 call "report: empty object" 400 POST /v1/benchmarks "${J[@]}" "${P[@]}" -d '{}'
# Statistics are 0 or 1e-9 to 1e15 in magnitude (issue 15): a GEMM median of 1e-310 is refused.
jq -c '.run_id = "0f0f0f0f-1111-4222-8333-444444444444" | .results[0].median = 1e-310' "$T/h100x8.json" >"$T/tiny-median.json"
invalid=1 expect='[.errors[].field] == ["results[0].median"]' \
	call "report: a subnormal median" 400 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/tiny-median.json"
call "report: not JSON" 400 POST /v1/benchmarks -H 'Content-Type: text/plain' "${P[@]}" -d '{"a":'
call "report: XML" 415 POST /v1/benchmarks -H 'Content-Type: application/xml' "${P[@]}" -d '<report/>'
call "report: multipart" 415 POST /v1/benchmarks -F 'report=@tests/api/bodies/benchmarks.json' "${P[@]}"
printf '{"pad":"%s"}' "$(head -c 1100000 /dev/zero | tr '\0' a)" >"$T/big.json"
call "report over --max-body-bytes" 413 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "@$T/big.json"
# Whole numbers written as reals: accepted, stored as integers (text/plain: Prism would re-encode 5.0 as 5).
lenient=1 call "report: whole numbers written as reals (0.0, 5.0, 1e6)" 201 POST /v1/benchmarks -H 'Content-Type: text/plain' "${P[@]}" --data-binary "$(body_file real-int \
	'{"schema_version":1.0,"run_id":"11111111-2222-4333-8444-555555555555","status":"ok","node":{"hostname":"edge-node"},"gpus":[{"index":0.0,"name":"NVIDIA L4","uuid":"GPU-edge-0"}],"results":[{"metric":"hbm_read_gbps","unit":"GB/s","gpu_uuid":"GPU-edge-0","median":250,"n":5.0,"size_bytes":1e6,"peer_index":1.0}]}')"
raw=1 expect='test("\"peer_index\":1,\"size_bytes\":1000000,") and test("\"n\":5,")' \
	call "results of that report: stored as integers" 200 GET /v1/benchmarks?run_id=11111111-2222-4333-8444-555555555555
expect='.gpus[0].index == 0 and .gpus[0].name == "NVIDIA L4"' call "edge node: GPU index 0.0 stored as 0" 200 GET /v1/nodes/edge-node
call "report: a GPU NVML could not name (null), a gemm_sweep_tflops result" 201 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "$(body_file null-name \
	'{"schema_version":1,"run_id":"22222222-3333-4444-8555-666666666666","status":"partial","node":{"hostname":"unnamed-gpu-node"},"gpus":[{"index":0,"name":null,"uuid":"GPU-unnamed-0"},{"index":1,"uuid":"GPU-unnamed-1"}],"results":[{"metric":"gemm_sweep_tflops","dtype":"bf16","unit":"TFLOP/s","gpu_uuid":"GPU-unnamed-0","median":700.5,"n":5,"shape":{"m":8192,"n":8192,"k":8192}}]}')"
expect='[.gpus[].name] == ["unknown", "unknown"] and [.gpus[].gpu_type] == [null, null]' \
	call "a node whose GPUs have no name" 200 GET /v1/nodes/unnamed-gpu-node
expect='[.items[] | [.metric, .gpu_uuid]] == [["gemm_sweep_tflops", "GPU-unnamed-0"]]' \
	call "gemm_sweep_tflops results" 200 GET "/v1/benchmarks?metric=gemm_sweep_tflops"
invalid=1 expect='[.errors[].field] == ["started_at", "finished_at"]' \
	call "report: dates that do not exist (year 0000, 2026-02-31)" 400 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "$(body_file bad-dates \
	'{"schema_version":1,"run_id":"33333333-4444-4555-8666-777777777777","status":"ok","node":{"hostname":"edge-node"},"started_at":"0000-01-01T00:00:00Z","finished_at":"2026-02-31"}')"
call "report: an offset PostgreSQL cannot represent (+16:00)" 400 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary "$(body_file bad-offset \
	'{"schema_version":1,"run_id":"44444444-5555-4666-8777-888888888888","status":"ok","node":{"hostname":"edge-node"},"started_at":"2026-11-21T00:00:00+16:00"}')"
undocumented=1 call "DELETE on the reports" 405 DELETE /v1/benchmarks

call "results" 200 GET /v1/benchmarks
call "results, every filter" 200 GET "/v1/benchmarks?node=synthetic-h100x8-node&gpu_type=h100-sxm5-80gb&metric=gemm_tflops&dtype=bf16&since=2026-01-01&run_id=$run1&limit=2"
cursor=$(jq -r .next_cursor "$T/body")
call "results, next page" 200 GET "/v1/benchmarks?node=synthetic-h100x8-node&gpu_type=h100-sxm5-80gb&metric=gemm_tflops&dtype=bf16&since=2026-01-01&run_id=$run1&limit=2&cursor=$cursor"
call "results since an offset date-time" 200 GET "/v1/benchmarks?since=2026-11-21T10:00:00%2B01:00&limit=1"
invalid=1 call "results: bad query" 400 GET "/v1/benchmarks?limit=0&since=yesterday&run_id=x&cursor=abc&node="
invalid=1 expect='[.errors[].field] == ["since"]' call "results since year 0000" 400 GET "/v1/benchmarks?since=0000-01-01"
expect='[.errors[].field] == ["since"]' call "results since 2026-02-31" 400 GET "/v1/benchmarks?since=2026-02-31T00:00:00Z"
expect='.errors[0].field == "since"' call "results since an offset PostgreSQL refuses" 400 GET "/v1/benchmarks?since=2026-11-21T00:00:00%2B16:00"
q=$(printf '&x%d=1' $(seq 1 15))
expect='.items | length == 1' call "results: 16 query parameters" 200 GET "/v1/benchmarks?limit=1$q"
expect='[.errors[].field] == ["query"]' call "results: 17 query parameters" 400 GET "/v1/benchmarks?limit=1&x0=1$q"
call "results: %00 in the query" 400 GET "/v1/benchmarks?node=a%00b"
call "one run" 200 GET "/v1/benchmarks/$run1"
call "one run without GPUs" 200 GET /v1/benchmarks/c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31
call "unknown run" 404 GET /v1/benchmarks/00000000-0000-4000-8000-000000000000
call "run id that is not a UUID" 404 GET /v1/benchmarks/nope

call "nodes" 200 GET /v1/nodes
call "one node" 200 GET /v1/nodes/synthetic-h100x8-node
call "a node without GPUs" 200 GET /v1/nodes/synthetic-cpu-node
call "unknown node" 404 GET /v1/nodes/nope
call "fleet" 200 GET /v1/fleet
call "fleet, one day" 200 GET '/v1/fleet?window_days=1'
invalid=1 call "fleet: bad window" 400 GET '/v1/fleet?window_days=0'
undocumented=1 call "POST on the fleet" 405 POST /v1/fleet
call "capacity report, HTML" 200 GET /v1/reports/capacity
call "capacity report, a CSV table by format" 200 GET '/v1/reports/capacity?format=csv&section=capacity&window_days=7'
call "capacity report, a CSV table by Accept" 200 GET '/v1/reports/capacity?section=fleet' -H 'Accept: text/csv, text/html;q=0.5'
call "capacity report: CSV without section" 400 GET '/v1/reports/capacity?format=csv'
call "capacity report: Accept allows neither" 406 GET /v1/reports/capacity -H 'Accept: application/json'
invalid=1 call "capacity report: bad query" 400 GET '/v1/reports/capacity?window_days=0&format=pdf'
invalid=1 call "capacity report: unknown section" 400 GET '/v1/reports/capacity?section=nodes'

# catalog (served through a 2 s cache that a PUT clears)
expect_ref=$T/gpu-keys.json expect='all(.items[]; keys_unsorted == $ref[0])' \
	call "catalog: PostgreSQL's JSON text, keys in column order" 200 GET /v1/gpus
expect_ref=$T/gpu-keys.json expect='keys_unsorted == $ref[0]' call "one GPU" 200 GET /v1/gpus/h100-sxm5-80gb
call "unknown GPU" 404 GET /v1/gpus/no-such-gpu
call "%00 in the path" 400 GET '/v1/gpus/a%00b'
gpu='{"display_name":"Contract GPU 48GB","vendor":"Example","architecture":"Demo","memory_gib":48,"memory_bandwidth_gbps":864,"intra_node_link":"pcie","intra_node_gbps":32,"bf16_tflops":181,"source":"contract test"}'
call "PUT without a token" 401 PUT /v1/gpus/contract-48gb "${J[@]}" -d "$gpu"
call "PUT with a probe token (needs admin)" 403 PUT /v1/gpus/contract-48gb "${J[@]}" "${P[@]}" -d "$gpu"
call "PUT with a revoked token" 401 PUT /v1/gpus/contract-48gb "${J[@]}" -H "Authorization: Bearer $REVOKED" -d "$gpu"
call "PUT creates" 201 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -d "$gpu"
expect='any(.items[]; .name == "contract-48gb")' call "catalog right after a PUT lists the new GPU" 200 GET /v1/gpus
expect='.max_gpus_per_node == 8' call "the new GPU" 200 GET /v1/gpus/contract-48gb
call "PUT replaces" 200 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -d "$(jq -c '.price_per_gpu_hour = null | .notes = null | .max_gpus_per_node = 4' <<<"$gpu")"
expect='.max_gpus_per_node == 4' call "the GPU right after a PUT replaced it" 200 GET /v1/gpus/contract-48gb
etag=$(grep -i '^etag:' "$T/headers" | head -n 1 | cut -d' ' -f2- | tr -d '\r')
call "GET with If-None-Match naming the current version: 304" 304 GET /v1/gpus/contract-48gb -H "If-None-Match: W/\"x\", $etag"
call "PUT with If-Match listing the current version" 200 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -H "If-Match: \"2020-01-01T00:00:00+00:00\", $etag" -d "$(jq -c '.price_per_gpu_hour = null | .notes = null | .max_gpus_per_node = 4' <<<"$gpu")"
call "PUT with If-Match naming a stale version: 412" 412 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -H "If-Match: $etag" -d "$gpu"
invalid=1 call "PUT: every bad field" 400 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" \
	-d '{"display_name":"x","vendor":"x","architecture":"x","memory_gib":-1,"memory_bandwidth_gbps":"fast","intra_node_link":"ethernet","intra_node_gbps":32,"source":"s","colour":"red","name":"other"}'
invalid=1 call "PUT: null where not nullable" 400 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -d "$(jq -c '.max_gpus_per_node = null | .name = null' <<<"$gpu")"
invalid=1 call "PUT: name not a slug" 400 PUT /v1/gpus/Contract "${J[@]}" "${A[@]}" -d "$gpu"
invalid=1 expect='[.errors[].field] == ["price_per_gpu_hour"]' \
	call "PUT: a subnormal price" 400 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -d "$(jq -c '.price_per_gpu_hour = 1e-310' <<<"$gpu")"
invalid=1 call "PUT: pcie_width not a lane count" 400 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" -d "$(jq -c '.pcie_width = 3' <<<"$gpu")"
# Whole numbers written as reals (text/plain: Prism would re-encode 8.0 as 8).
lenient=1 raw=1 expect='test("\"max_gpus_per_node\":4,") and test("\"pcie_width\":8,")' \
	call "PUT: pcie_width 8.0 stored as 8" 200 PUT /v1/gpus/contract-48gb -H 'Content-Type: text/plain' "${A[@]}" -d "${gpu%\}},\"pcie_width\":8.0,\"max_gpus_per_node\":4.0}"
expect='.errors[0].field == "pcie_width"' \
	call "PUT: pcie_width 3.0 is a 400 naming pcie_width" 400 PUT /v1/gpus/contract-48gb -H 'Content-Type: text/plain' "${A[@]}" -d "${gpu%\}},\"pcie_width\":3.0}"
call "PUT: not JSON" 400 PUT /v1/gpus/contract-48gb -H 'Content-Type: text/plain' "${A[@]}" -d '{"a":'
call "PUT: XML" 415 PUT /v1/gpus/contract-48gb -H 'Content-Type: application/xml' "${A[@]}" -d '<gpu/>'
call "PUT over --max-body-bytes" 413 PUT /v1/gpus/contract-48gb "${J[@]}" "${A[@]}" --data-binary "@$T/big.json"
undocumented=1 call "DELETE a GPU" 405 DELETE /v1/gpus/contract-48gb

# software-stack profiles (issue 13)
call "stacks" 200 GET /v1/stacks
call "one stack" 200 GET /v1/stacks/megatron-core
expect='.name == "pytorch-fsdp2-fa2"' call "a stack by a short name" 200 GET /v1/stacks/fsdp
call "unknown stack" 404 GET /v1/stacks/no-such-stack
stack='{"display_name":"Contract stack","attn_kernel":"fa2","tp_comm_overlap":0,"dp_overlap":0.8,"source":"contract test"}'
call "PUT a stack without a token" 401 PUT /v1/stacks/contract-stack "${J[@]}" -d "$stack"
call "PUT a stack with a probe token (needs admin)" 403 PUT /v1/stacks/contract-stack "${J[@]}" "${P[@]}" -d "$stack"
expect='.reduce_dtype == "grad" and .fp8_weight_cache == true and .attn_fwd_efficiency == null' \
	call "PUT creates a stack, defaults filled" 201 PUT /v1/stacks/contract-stack "${J[@]}" "${A[@]}" -d "$stack"
call "PUT replaces a stack" 200 PUT /v1/stacks/contract-stack "${J[@]}" "${A[@]}" -d "$(jq -c '.fp8_recipe = "mxfp8" | .attn_fwd_efficiency = 0.5' <<<"$stack")"
invalid=1 expect='[.errors[].field] | index("tp_comm_overlap") != null and index("attn_kernel") != null' \
	call "PUT a stack: every bad field" 400 PUT /v1/stacks/contract-stack "${J[@]}" "${A[@]}" -d "$(jq -c '.tp_comm_overlap = 1.5 | .attn_kernel = "fa9"' <<<"$stack")"
invalid=1 call "PUT a stack: name not a slug" 400 PUT /v1/stacks/Contract "${J[@]}" "${A[@]}" -d "$stack"
undocumented=1 call "DELETE a stack" 405 DELETE /v1/stacks/contract-stack

# models
call "presets" 200 GET /v1/models
call "dense preset" 200 GET /v1/models/llama-3-8b
call "MoE preset" 200 GET /v1/models/mixtral-8x7b
call "MoE + MLA preset" 200 GET /v1/models/deepseek-v3
call "unknown preset" 404 GET /v1/models/nope

# sizing: training
S=/v1/sizing/training
expect='(.plans[0].time_s | .compute_attention > 0 and .compute_memory_bound > 0 and .compute_attention + .compute_memory_bound < .compute)
	and .min_gpus_no_offload >= .min_gpus and .basis.gemm_tflops.source == "measured"' \
	call "training, measured rates (auto)" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e12,"global_batch_size":512,"gpu":"h100-sxm5-80gb","max_gpus":256,"top":2}'
rec_training=$(jq -r .id "$T/body")
expect='.basis.stack.name == "megatron-core" and .basis.stack.fp8.recipe == "delayed" and .assumptions.stack == "megatron-core"' \
	call "training with a stack, fp8" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":64,"precision":"fp8","stack":"mcore","top":1}'
expect='.basis.stack.tp_comm_overlap == 0 and .basis.stack.name == "nemo"' \
	call "training with a stack object of overrides" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":64,"stack":{"name":"nemo","tp_comm_overlap":0},"top":1}'
expect='[.errors[].field] == ["stack"]' \
	call "training: unknown stack" 400 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":64,"stack":"no-such-stack"}'
invalid=1 expect='[.errors[].field] == ["stack.tp_comm_overlap"]' \
	call "training: stack override out of range" 400 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":64,"stack":{"tp_comm_overlap":2}}'
call "training, datasheet rates, by cost" 201 POST $S "${J[@]}" -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"global_batch_tokens":4194304,"gpu":"h100-sxm5-80gb","gpus":1024,"deadline_days":30,"objective":"cost","strategies":{"tp":8,"pp":[2,4,8],"zero":[1],"recompute":["selective","full"],"sequence_parallel":true},"calibration":"datasheet"}'
expect='.basis.gemm_tflops.power_limit == {"limit_w":500,"board_power_w":700,"slope":0.546,"ratio":0.844,"applied":true}' \
	call "training under a 500 W power limit" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"calibration":"datasheet","power_limit_w":500,"top":1}'
expect='.basis.gemm_tflops.power_limit.applied == false and .basis.gemm_tflops.source == "measured"' \
	call "training: a power limit on measured rates is shown, not applied" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"power_limit_w":500,"top":1}'
expect='[.errors[].field] == ["power_limit_w"]' \
	call "training: a power limit above the board power" 400 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"power_limit_w":900}'
expect='(.rows[] | select(.gpu == "h100-sxm5-80gb") | .power_limit.ratio) == 0.844' \
	call "compare with a power limit per GPU type" 201 POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e10,"max_gpus":16,"calibration":"datasheet","power_cap_slope":0.546},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"],"power_limits":{"h100-sxm5-80gb":500}}'
call "training, calibration measured" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"calibration":"measured","top":1}'
call "training, inline architecture, LoRA" 201 POST $S "${J[@]}" -d '{"model":{"layers":24,"hidden_size":2048,"heads":16,"ffn_hidden_size":5504,"vocab_size":32000,"kv_heads":null,"moe":null},"seq_len":2048,"gpu":"a100-sxm4-80gb","max_gpus":8,"method":"lora","lora_rank":8,"precision":null}'
call "training, uneven pipeline stages" 201 POST $S "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"global_batch_size":2048,"gpu":"h100-sxm5-80gb","gpus":16384,"strategies":{"tp":[8],"pp":[16]},"top":1}'
call "training, MoE with expert parallelism" 201 POST $S "${J[@]}" -d '{"model":"mixtral-8x7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"strategies":{"ep":[2,4,8],"cp":[1,2]},"top":3}'
expect='.min_gpus == 1 and .min_gpus_no_offload == 0' \
	call "training, offload to host memory" 201 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"rtx-4090-24gb","gpus":1,"strategies":{"offload":"optimizer+weights"},"optimizer":"adamw_8bit","top":1}'
expect='.assumptions.max_gpus == 8 and .global_batch_size == 64' \
	call "training: null counts as not given (one of a pair, deadline_days)" 201 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"global_batch_size":64,"global_batch_tokens":null,"gpus":null,"max_gpus":8,"deadline_days":null,"gpu":"h100-sxm5-80gb","top":1}'
invalid=1 expect='[.errors[].field] == ["train_tokens"]' \
	call "training: deadline_days without train_tokens" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"h100-sxm5-80gb","deadline_days":3}'
invalid=1 expect='[.errors[].field] == ["train_tokens"]' \
	call "training: deadline_days with train_tokens 0" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"h100-sxm5-80gb","deadline_days":3,"train_tokens":0}'
# An unknown key of 62 ASCII bytes and an é: the field name, cut at 63 bytes, would end in half
# a character; problem texts stay valid UTF-8 (the half becomes "?").
k=$(printf 'k%.0s' $(seq 1 62))é
invalid=1 expect='.errors[0].field == "'"${k%é}"'?" and (.detail | startswith("'"${k%é}"'?: is not a known field"))' \
	call "training: a long non-ASCII unknown key, cut to valid UTF-8" 400 POST $S "${J[@]}" -d '{"'"$k"'":1,"model":"llama-2-7b","seq_len":2048,"gpu":"h100-sxm5-80gb"}'
invalid=1 expect='[.errors[].field] == ["train_tokens", "price_per_gpu_hour"]' \
	call "training: a fraction of a token and a subnormal price" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"h100-sxm5-80gb","train_tokens":0.5,"price_per_gpu_hour":5e-324}'
call "training on a GPU without a price" 201 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e9,"gpu":"contract-48gb","max_gpus":8,"top":1}'
invalid=1 call "training: every bad field" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":-5,"gpu":"a100-sxm4-80gb","top":0,"precision":"fp4","seqlen":1,"strategies":{"tp":"x","zero":[5],"recompute":["some"]},"gpus":1,"max_gpus":2}'
invalid=1 call "training: required fields" 400 POST $S "${J[@]}" -d '{}'
call "training: inconsistent architecture" 400 POST $S "${J[@]}" -d '{"model":{"layers":24,"hidden_size":2048,"heads":15,"ffn_hidden_size":5504,"vocab_size":32000},"seq_len":2048,"gpu":"a100-sxm4-80gb"}'
call "training: unknown preset" 400 POST $S "${J[@]}" -d '{"model":"llama-9-1t","seq_len":2048,"gpu":"a100-sxm4-80gb"}'
call "training: unknown GPU" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"tpu-v9"}'
call "training: tp the heads cannot split into" 400 POST $S "${J[@]}" -d '{"model":"llama-2-70b","seq_len":4096,"gpu":"h100-sxm5-80gb","strategies":{"tp":[3]}}'
call "training: a batch no layout can split" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","global_batch_size":7,"strategies":{"dp":[2],"tp":[1],"pp":[1],"micro_batch":[1]},"gpus":2}'
invalid=1 call "training: not an object" 400 POST $S "${J[@]}" -d '[1]'
call "training: not JSON" 400 POST $S -H 'Content-Type: text/plain' -d '{"a":'
call "training: does not fit" 422 POST $S "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"gpu":"l4-24gb","max_gpus":4,"strategies":{"offload":["none"]}}'
call "training: fp8 on an A100" 422 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"a100-sxm4-80gb","precision":"fp8"}'
expect='(.detail | startswith("calibration: no probe has measured a \"a100-sxm4-80gb\" (gpu)")) and [.errors[].field] == ["calibration"]' \
	call "training: calibration measured, nothing measured" 422 POST $S "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"a100-sxm4-80gb","calibration":"measured"}'
call "training: XML" 415 POST $S -H 'Content-Type: application/xml' -d '<job/>'
call "training over --max-body-bytes" 413 POST $S "${J[@]}" --data-binary "@$T/big.json"
undocumented=1 call "GET the training endpoint" 405 GET $S

# sizing: inference
S=/v1/sizing/inference
expect='(.basis | keys) == ["attention_tflops", "calibration", "gemm_tflops", "hbm_gbps", "intra_node_gbps", "probe_runs", "serving"]' \
	call "inference at 10 requests/s, FP8" 201 POST $S "${J[@]}" -d '{"model":"llama-3-70b","weight_precision":"fp8","prompt_tokens":2048,"output_tokens":512,"requests_per_s":10,"tpot_ms":50,"gpu":"h100-sxm5-80gb","top":2}'
rec_inference=$(jq -r .id "$T/body")
call "inference without load, datasheet" 201 POST $S "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","top":1,"calibration":"datasheet","kv_cache_precision":"int8"}'
call "inference, pinned tp, concurrent sequences" 201 POST $S "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","tp":8,"concurrent_sequences":64,"max_batch":32,"memory_utilization":0.85}'
call "inference, inline MoE, tokens/s" 201 POST $S "${J[@]}" -d '{"model":{"layers":8,"hidden_size":1024,"heads":8,"ffn_hidden_size":4096,"vocab_size":32000,"moe":{"experts":8,"top_k":2,"expert_ffn_hidden_size":2048}},"prompt_tokens":256,"output_tokens":64,"output_tokens_per_s":5000,"gpu":"a100-sxm4-80gb","weight_precision":"int4"}'
call "inference, TensorRT-LLM profile with overrides" 201 POST $S "${J[@]}" -d '{"model":"llama-3-8b","prompt_tokens":1024,"output_tokens":256,"gpu":"h100-sxm5-80gb","requests_per_s":5,"serving":"tensorrt-llm","max_num_batched_tokens":4096,"chunked_prefill":true,"max_utilization":0.7,"ttft_ms":500}'
invalid=1 call "inference: bad serving fields" 400 POST $S "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","serving":"tgi","chunked_prefill":"yes","max_utilization":0}'
invalid=1 call "inference: bad fields, two loads" 400 POST $S "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","requests_per_s":1,"concurrent_sequences":4,"memory_utilization":2,"kv_cache_precision":"int4"}'
invalid=1 call "inference: required fields" 400 POST $S "${J[@]}" -d '{"gpu":"h100-sxm5-80gb"}'
expect='.assumptions.load == "concurrent_sequences"' \
	call "inference: null loads count as not given" 201 POST $S "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","requests_per_s":null,"concurrent_sequences":4,"output_tokens_per_s":null,"top":1}'
expect='(.detail | startswith("calibration: no probe has measured a \"a100-sxm4-80gb\" (gpu)")) and [.errors[].field] == ["calibration"]' \
	call "inference: calibration measured, nothing measured" 422 POST $S "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"a100-sxm4-80gb","calibration":"measured"}'
call "inference: tp beyond a node" 400 POST $S "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","tp":16}'
call "inference: unreachable latency" 422 POST $S "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":512,"tpot_ms":0.5,"gpu":"a100-sxm4-80gb"}'
call "inference: fp8 weights on an A100" 422 POST $S "${J[@]}" -d '{"model":"llama-2-7b","weight_precision":"fp8","prompt_tokens":512,"output_tokens":128,"gpu":"a100-sxm4-80gb"}'
call "inference: does not fit in max_gpus" 422 POST $S "${J[@]}" -d '{"model":"llama-3.1-405b","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","max_gpus":4}'
call "inference: multipart" 415 POST $S -F 'job=x'

# sizing: compare
S=/v1/sizing/compare
call "compare training on three types" 201 POST $S "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e12,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb","rtx-4090-24gb"],"prices":{"h100-sxm5-80gb":3.2}}'
rec_compare=$(jq -r .id "$T/body")
invalid=1 expect='[.errors[].field] == ["prices.h100-sxm5-80gb"]' \
	call "compare: a price of 1e-300" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e12,"max_gpus":64},"gpus":["h100-sxm5-80gb"],"prices":{"h100-sxm5-80gb":1e-300}}'
# The default list: every catalog GPU type with a price (contract-48gb has none) or a `prices` entry,
# in the catalog's order.
curl -s "http://127.0.0.1:$d_open/v1/gpus" |
	jq -c '[.items[] | select((.price_per_gpu_hour // 0) > 0 or .name == "contract-48gb") | .name]' >"$T/priced.json"
expect_ref=$T/priced.json expect='[.rows[].gpu] == $ref[0] and all(.rows[]; .price_per_gpu_hour > 0)' \
	call "compare inference on every priced type" 201 POST $S "${J[@]}" -d '{"inference":{"model":"llama-3-70b","prompt_tokens":2048,"output_tokens":512,"requests_per_s":10,"gpu":null},"prices":{"contract-48gb":1.2}}'
call "compare as CSV" 201 POST $S "${J[@]}" -H 'Accept: text/csv' -d '{"inference":{"model":"llama-3-70b","prompt_tokens":2048,"output_tokens":512,"requests_per_s":10},"gpus":["h100-sxm5-80gb","h200-sxm-141gb","l4-24gb"]}'
call "compare training as CSV, a row that fails" 201 POST $S "${J[@]}" -H 'Accept: text/csv' -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10,"precision":"fp8","max_gpus":8},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"]}'
call "compare, a row that fails" 201 POST $S "${J[@]}" -d '{"inference":{"model":"llama-2-7b","weight_precision":"fp8","prompt_tokens":512,"output_tokens":128},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"]}'
expect='[.rows[] | [.gpu, .ok, .price_per_gpu_hour]] == [["contract-48gb", false, 1.2], ["h100-sxm5-80gb", true, 2.75]]' \
	call "compare, a tp too wide for one type" 201 POST $S "${J[@]}" -d '{"inference":{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"tp":8},"gpus":["contract-48gb","h100-sxm5-80gb"],"prices":{"contract-48gb":1.2}}'
expect='[.errors[].field] == ["gpus[0]"] and (.errors[0].message | endswith("give prices.contract-48gb"))' \
	call "compare: a listed type without a price" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10,"max_gpus":8},"gpus":["contract-48gb","h100-sxm5-80gb"]}'
invalid=1 expect='[.errors[].field] == ["training.train_tokens"]' \
	call "compare: training without train_tokens" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"max_gpus":8},"gpus":["h100-sxm5-80gb"]}'
invalid=1 call "compare: job fields named under the job" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":-1,"gpu":"x"},"gpus":["h100-sxm5-80gb"]}'
invalid=1 call "compare: no job" 400 POST $S "${J[@]}" -d '{"gpus":["h100-sxm5-80gb"]}'
invalid=1 call "compare: both jobs" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096},"inference":{}}'
invalid=1 expect='[.errors[].field] == ["gpus"]' \
	call "compare: a GPU twice" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10},"gpus":["h100-sxm5-80gb","h100-sxm5-80gb"]}'
expect='[.errors[].field] == ["gpus[1]"]' \
	call "compare: unknown GPU" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10},"gpus":["h100-sxm5-80gb","nope"]}'
invalid=1 expect='[.errors[].field] == ["prices.h100-sxm5-80gb"]' \
	call "compare: bad price" 400 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10},"prices":{"h100-sxm5-80gb":-1}}'
call "compare: runs nowhere" 422 POST $S "${J[@]}" -d '{"inference":{"model":"llama-2-70b","weight_precision":"fp8","prompt_tokens":512,"output_tokens":128,"tpot_ms":0.1},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"]}'
expect='(.detail | startswith("training.calibration: no probe has measured a \"a100-sxm4-80gb\" (gpus[0])")) and [.errors[].field] == ["training.calibration"]' \
	call "compare: calibration measured, one type unmeasured" 422 POST $S "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e10,"calibration":"measured"},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"]}'
call "compare: XML" 415 POST $S -H 'Content-Type: application/xml' -d '<job/>'

# recommendations
call "history" 200 GET /v1/recommendations
call "history, filtered, one per page" 200 GET '/v1/recommendations?kind=training&model=llama-3-8b&gpu=h100-sxm5-80gb&since=2026-01-01&limit=1'
cursor=$(jq -r .next_cursor "$T/body")
call "history, next page" 200 GET "/v1/recommendations?kind=training&model=llama-3-8b&gpu=h100-sxm5-80gb&since=2026-01-01&limit=1&cursor=$cursor"
call "history of compares" 200 GET '/v1/recommendations?kind=compare&gpu=h100-sxm5-80gb'
invalid=1 call "history: bad query" 400 GET '/v1/recommendations?limit=0&kind=x&since=yesterday'
invalid=1 expect='[.errors[].field] == ["since"]' call "history since year 0000" 400 GET '/v1/recommendations?since=0000-01-01'
expect='[.errors[].field] == ["since"]' call "history since 2025-02-29" 400 GET '/v1/recommendations?since=2025-02-29'
expect='[.errors[].field] == ["query"]' call "history: 17 query parameters" 400 GET "/v1/recommendations?kind=training$(printf '&x%d=1' $(seq 1 16))"
call "history: bad cursor" 400 GET '/v1/recommendations?cursor=zz'
call "stored training answer" 200 GET "/v1/recommendations/$rec_training"
call "stored inference answer" 200 GET "/v1/recommendations/$rec_inference"
call "stored compare answer" 200 GET "/v1/recommendations/$rec_compare"
call "unknown recommendation" 404 GET /v1/recommendations/00000000-0000-4000-8000-000000000000

# --auth-reads: reads and sizing need a token of any scope
via=$p_auth
call "--auth-reads: liveness stays open" 200 GET /healthz
call "--auth-reads: catalog without a token" 401 GET /v1/gpus
call "--auth-reads: catalog with a probe token" 200 GET /v1/gpus "${P[@]}"
call "--auth-reads: fleet with a revoked token" 401 GET /v1/fleet -H "Authorization: Bearer $REVOKED"
call "--auth-reads: nodes with an admin token" 200 GET /v1/nodes "${A[@]}"
call "--auth-reads: results without a token" 401 GET /v1/benchmarks
call "--auth-reads: sizing without a token" 401 POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","top":1}'
call "--auth-reads: sizing with an admin token" 201 POST /v1/sizing/inference "${J[@]}" "${A[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","top":1}'
call "--auth-reads: history without a token" 401 GET /v1/recommendations
call "--auth-reads: a stored answer without a token" 401 GET "/v1/recommendations/$rec_training"
call "--auth-reads: a model without a token" 401 GET /v1/models/llama-3-8b
call "--auth-reads: capacity report without a token" 401 GET /v1/reports/capacity
via=$p_open

# --- straight to the daemon: framing (Prism's own HTTP parser refuses these requests) -------------
# check NAME [REASON...]: one TAP line, ok when no reason is given.
check() {
	local name=$1
	shift
	n=$((n + 1))
	if [ $# -eq 0 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		printf '#   %s\n' "$@"
		failed=$((failed + 1))
	fi
}
D=http://127.0.0.1:$d_open
got=$(curl -sS --max-time 20 -o "$T/direct.json" -w '%{http_code} %{num_connects}\n' -H 'Transfer-Encoding: chunked' \
	-H 'Content-Length: 5' -H 'Content-Type: application/json' -d '{"model":"llama-2-7b"}' "$D/v1/sizing/training" \
	--next -sS -o /dev/null -w '%{http_code} %{num_connects}\n' "$D/healthz" 2>&1 | tr '\n' ' ')
why=()
[ "$got" = "400 1 200 1 " ] || why+=("statuses and new connections: $got, want 400 1 200 1 (the connection closed: the second request on a new one)")
jq -e '.type == "/problems/bad-request" and .detail == "Content-Length and Transfer-Encoding together are ambiguous"' \
	"$T/direct.json" >/dev/null 2>&1 || why+=("answer: $(head -c 300 "$T/direct.json")")
check "direct: Transfer-Encoding: chunked with Content-Length: 400 after the body, then the connection is closed (RFC 9112 6.1)" "${why[@]}"
got=$(curl -sS --max-time 20 -o "$T/direct.json" -D "$T/direct.h" -w '%{http_code} %{num_connects}\n' \
	-H 'Transfer-Encoding: gzip' "$D/healthz" --next -sS -o /dev/null -w '%{http_code} %{num_connects}\n' "$D/healthz" 2>&1 |
	tr '\n' ' ')
why=()
[ "$got" = "400 1 200 1 " ] || why+=("statuses and new connections: $got, want 400 1 200 1 (the second on a new connection)")
grep -qi '^connection: close' "$T/direct.h" || why+=("no Connection: close")
jq -e '.type == "/problems/bad-request" and .detail == "only Transfer-Encoding: chunked is supported"' \
	"$T/direct.json" >/dev/null 2>&1 || why+=("answer: $(head -c 300 "$T/direct.json")")
check "direct: Transfer-Encoding other than chunked: 400 at once, connection closed" "${why[@]}"

# --- canary: is every JSON answer really validated? -----------------------------------------------
start_prism p_canary prism-canary "$T/canary.json" "$d_open" || bail "prism (canary) did not start"
canary_missed=0
for r in "${replay[@]}"; do
	eval "set -- $r"
	name=$1 want=$2 method=$3 path=$4
	shift 4
	# An answer sent before the request body is read (413 over --max-body-bytes) races the
	# upload through the proxy: Prism then sometimes loses the answer or skips its validation.
	# A race is not the question here, so a miss is asked again (3 tries); an answer the stricter
	# contract really does not reach misses every time.
	seen=""
	for try in 1 2 3; do
		got=$(curl -sS -o /dev/null -D "$T/headers" -w '%{http_code}' --max-time 60 -X "$method" \
			"http://127.0.0.1:$p_canary$path" "$@" 2>/dev/null) || got=000
		seen+="$got "
		violations "$T/headers" | grep -q '^response' && break
	done
	if [ "$try" = 3 ] && ! violations "$T/headers" | grep -q '^response'; then
		echo "#   canary: no response violation for $method $path ($name, statuses ${seen% } over 3 tries, $want before): its answer is not validated"
		canary_missed=$((canary_missed + 1))
	fi
done
n=$((n + 1))
if [ "$canary_missed" = 0 ]; then
	echo "ok $n - canary: all ${#replay[@]} JSON answers are validated (each fails a stricter contract)"
else
	echo "not ok $n - canary: $canary_missed of ${#replay[@]} JSON answers were not validated at all"
	failed=$((failed + 1))
fi

# --- the database goes away: 503 ---------------------------------------------------------------
deploy/dev/pg.sh stop "$T/pg" >/dev/null 2>&1 && pg_up=0
call "database down: readiness" 503 GET /readyz
call "database down: nodes" 503 GET /v1/nodes
call "database down: history" 503 GET /v1/recommendations
call "database down: fleet" 503 GET /v1/fleet
call "database down: sizing" 503 POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":2048,"gpu":"h100-sxm5-80gb"}'
call "database down: report" 503 POST /v1/benchmarks "${J[@]}" "${P[@]}" --data-binary @tests/api/bodies/benchmarks.json

# --- a daemon that has not applied the migrations: starting ----------------------------------------
# Started while PostgreSQL is down, it retries its migrations and never becomes ready. Also the
# request deadline: its --connection-timeout is 2 s.
unready=1 start_daemon d_cold cold --connection-timeout 2 || bail "gpusizerd (database down) did not start"
start_prism p_cold prism-cold "$T/strict.json" "$d_cold" || bail "prism (database down) did not start"
via=$p_cold
expect='.detail | startswith("starting: ")' call "not migrated yet: readiness" 503 GET /readyz
expect='.detail | startswith("starting: ")' call "not migrated yet: catalog" 503 GET /v1/gpus
call "not migrated yet: liveness" 200 GET /healthz
via=$p_open
# A request trickled a header line every 0.5 s (never idle, never whole) is closed after the
# 2 s deadline without an answer, and counted.
t0=$(date +%s%N)
exec 3<>"/dev/tcp/127.0.0.1/$d_cold"
printf 'GET /healthz HTTP/1.1\r\nHost: contract\r\n' >&3
(
	trap '' PIPE
	for i in $(seq 1 20); do
		sleep 0.5
		printf 'X-Slow-%d: 1\r\n' "$i" >&3 2>/dev/null || exit 0
	done
) &
trickle=$!
timeout 10 cat <&3 >"$T/reaped.out"
rc=$?
t1=$(date +%s%N)
kill "$trickle" 2>/dev/null
wait "$trickle" 2>/dev/null
exec 3<&- 3>&-
ms=$(((t1 - t0) / 1000000))
why=()
[ "$rc" = 0 ] || why+=("the connection was not closed within 10 s")
[ -s "$T/reaped.out" ] && why+=("it was answered: $(head -c 200 "$T/reaped.out")")
[ "$ms" -ge 1500 ] && [ "$ms" -le 6000 ] || why+=("closed after $ms ms, want about 2000")
curl -s "http://127.0.0.1:$d_cold/metrics" | grep -q '^gpusizer_http_connections_reaped_total [1-9]' ||
	why+=("gpusizer_http_connections_reaped_total did not count it")
check "direct: a request not whole within --connection-timeout is closed unanswered ($ms ms), and counted" "${why[@]}"

echo "1..$n"
echo "# contract: $n checks ($((n - 5)) requests, the route list, the canary and 3 direct checks), $failed failed, $resp_violations response violations"
[ "$failed" -eq 0 ]

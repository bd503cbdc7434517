# lib.sh - helpers for the API tests: a real gpusizerd over real HTTP.
#
# Sourced by tests/api/*.sh, which tests/run.sh runs with:
#   GSZ_BIN       the daemon binary (sanitizer build)
#   GSZ_PGDIR     the private PostgreSQL cluster directory
#   GSZ_PGPORT    its port (unix socket only)
#   DATABASE_URL  conninfo of the test database
# Each check prints one TAP line: "ok - name" or "not ok - name".

set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/gsz-api.XXXXXX")
STATUS=0
GSZ_PID=""
GSZ_URL=""
GSZ_LOG="$T/daemon.log"

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	shift
	[ $# -gt 0 ] && echo "# $*"
	return 0
}

# start_daemon [args...]: starts gpusizerd on a free port, waits for ready.
# The suites post the probe's synthetic fixtures and expect them in the
# fleet figures, so the daemon counts synthetic reports (--fleet-synthetic)
# unless GSZ_REAL_FLEET=1 asks for the default (t_synthetic).
start_daemon() {
	local syn=--fleet-synthetic
	[ "${GSZ_REAL_FLEET:-0}" = 1 ] && syn=""
	: >"$GSZ_LOG"
	GSZ_MIGRATIONS_DIR=${GSZ_MIGRATIONS_DIR:-$TOP/migrations} \
	GSZ_OPENAPI=${GSZ_OPENAPI:-$TOP/openapi.yaml} \
		"$GSZ_BIN" serve --listen 127.0.0.1:0 \
		--database-url "$DATABASE_URL" \
		--migrations-dir "${GSZ_MIGRATIONS_DIR:-$TOP/migrations}" \
		--openapi-file "$TOP/openapi.yaml" $syn "$@" >>"$GSZ_LOG" 2>&1 &
	GSZ_PID=$!
	local port="" i
	for i in $(seq 1 200); do
		port=$(grep -o '"msg":"listening".*"port":"[0-9]*"' "$GSZ_LOG" 2>/dev/null |
			grep -o '"port":"[0-9]*"' | grep -o '[0-9]*' | head -n 1)
		[ -n "$port" ] && break
		kill -0 "$GSZ_PID" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$port" ]; then
		echo "# daemon did not start:"; sed 's/^/#   /' "$GSZ_LOG" | tail -n 20
		return 1
	fi
	GSZ_URL="http://127.0.0.1:$port"
	for i in $(seq 1 200); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$GSZ_URL/readyz")" = 200 ] && return 0
		sleep 0.05
	done
	echo "# daemon not ready"; tail -n 20 "$GSZ_LOG" | sed 's/^/#   /'
	return 1
}

# stop_daemon: SIGTERM, expect a clean exit 0 within 30 s.
stop_daemon() {
	[ -n "$GSZ_PID" ] || return 0
	kill -TERM "$GSZ_PID" 2>/dev/null
	local rc=0
	wait "$GSZ_PID" || rc=$?
	GSZ_PID=""
	return $rc
}

# sanitizer_clean NAME: the daemon log has no ASan/UBSan report.
sanitizer_clean() {
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$GSZ_LOG"; then
		not_ok "$1" "$(grep -m3 -E 'ERROR: |runtime error:' "$GSZ_LOG")"
	else
		ok "$1"
	fi
}

# req METHOD PATH [curl args...]: sets STATUS; body in $T/body,
# headers in $T/headers.
req() {
	local m=$1 p=$2
	shift 2
	STATUS=$(curl -sS -o "$T/body" -D "$T/headers" -w '%{http_code}' \
		--max-time 30 -X "$m" "$GSZ_URL$p" "$@" 2>"$T/curl.err") || STATUS=000
}

header() { grep -i "^$1:" "$T/headers" | head -n 1 | cut -d' ' -f2- | tr -d '\r'; }
body() { cat "$T/body"; }

# check NAME WANT_STATUS [JQ_EXPR]: status matches and jq -e expr holds.
check() {
	local name=$1 want=$2 expr=${3:-}
	if [ "$STATUS" != "$want" ]; then
		not_ok "$name" "status $STATUS, want $want: $(head -c 400 "$T/body")"
		return 0
	fi
	if [ -n "$expr" ] && ! jq -e "$expr" "$T/body" >/dev/null 2>&1; then
		not_ok "$name" "jq '$expr' failed on: $(head -c 400 "$T/body")"
		return 0
	fi
	ok "$name"
}

# check_problem NAME WANT_STATUS [FIELD]: an RFC 9457 problem with the
# status; when FIELD is given, errors[] names it (or detail mentions it).
check_problem() {
	local name=$1 want=$2 field=${3:-}
	local ct
	ct=$(header Content-Type)
	if [ "$STATUS" != "$want" ]; then
		not_ok "$name" "status $STATUS, want $want: $(head -c 400 "$T/body")"
	elif [ "$ct" != "application/problem+json" ]; then
		not_ok "$name" "content-type '$ct'"
	elif ! jq -e --argjson s "$want" '(.type|type)=="string" and (.title|type)=="string" and .status==$s and (.detail|type)=="string"' "$T/body" >/dev/null 2>&1; then
		not_ok "$name" "not a problem body: $(head -c 400 "$T/body")"
	elif [ -n "$field" ] && ! jq -e --arg f "$field" 'if .errors then ([.errors[].field] | index($f)) != null else (.detail | contains($f)) end' "$T/body" >/dev/null 2>&1; then
		not_ok "$name" "field '$field' not named: $(head -c 400 "$T/body")"
	else
		ok "$name"
	fi
}

# split_console_block FILE: a ```console block of docs/API.md into its
# commands (FILE.cmd.NN: a "$ " line and its indented continuations) and
# the output printed after each (FILE.out.NN), for the docs tests.
split_console_block() {
	awk -v base="$1" '
		/^\$ / { n++; c = sprintf("%s.cmd.%02d", base, n); o = sprintf("%s.out.%02d", base, n);
			 sub(/^\$ /, ""); print > c; printf "" > o; cont = 1; next }
		cont && /^ / { print > c; next }
		{ cont = 0; if (n) print > o }
	' "$1"
}

# check_console_block FILE PREFIX NORM: runs each command of a console block
# (split_console_block) in $work and checks what it prints against the
# documented output, both read through NORM (a command or function reading
# stdin), one check each named PREFIX and the command's start.
check_console_block() {
	local b=$1 prefix=$2 norm=$3
	rm -f "$b".cmd.* "$b".out.*
	split_console_block "$b"
	(
		cd "$work" || exit 1
		for c in "$b".cmd.*; do
			o=${c/.cmd./.out.}
			got=$(bash "$c" 2>&1 | $norm)
			want=$($norm <"$o")
			if [ "$got" = "$want" ]; then
				ok "$prefix$(head -c 70 "$c" | tr '\n' ' ')"
			else
				not_ok "$prefix$(head -c 70 "$c" | tr '\n' ' ')" \
					"$(diff <(echo "$want") <(echo "$got") | head -20 | tr '\n' '|')"
			fi
		done
	)
}

# own_database PREFIX: DATABASE_URL (exported) names a new, empty database
# PREFIX_<random> of the suite's PostgreSQL, for a test whose figures need a
# fleet of its own.
own_database() {
	DATABASE_URL=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$1_$RANDOM$RANDOM")
	export DATABASE_URL
}

# check_alive NAME: the daemon still answers /healthz.
check_alive() {
	if kill -0 "$GSZ_PID" 2>/dev/null &&
		[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$GSZ_URL/healthz")" = 200 ]; then
		ok "$1"
	else
		not_ok "$1" "daemon gone: $(tail -n 5 "$GSZ_LOG")"
	fi
}

# create_token NAME SCOPES: prints a fresh token.
create_token() {
	"$GSZ_BIN" token create --name "$1" --scopes "$2" --database-url "$DATABASE_URL" 2>/dev/null
}

cleanup() {
	[ -n "$GSZ_PID" ] && kill -KILL "$GSZ_PID" 2>/dev/null
	# Keep the daemon log of a failing script for the CI output.
	if [ -s "$GSZ_LOG" ] && grep -qE 'ERROR: |runtime error:' "$GSZ_LOG"; then
		grep -A40 -E 'ERROR: |runtime error:' "$GSZ_LOG" | head -n 80 | sed 's/^/# /'
	fi
	rm -rf "$T"
}
trap cleanup EXIT

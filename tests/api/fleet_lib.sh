# fleet_lib.sh - shared by the fleet-history tests (t_rollups, t_latest,
# t_fleet_mirror, t_report_mirror, t_compact), sourced after lib.sh: a
# database of their own, psql on it, the reference queries of
# tests/api/sql, probe reports made from the H100 fixture, and a second
# daemon on the same database.

# fleet_database PREFIX: db and DATABASE_URL (exported) name a new database.
fleet_database() {
	db=$1_$RANDOM$RANDOM
	DATABASE_URL=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db")
	export DATABASE_URL
}
q() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "$1"; }
psqlbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
# raw_refresh: raw_results (tests/api/sql/raw_results.sql) holds every
# stored result as a row; compact runs' reports (migrations/0020) are
# decompressed with the zstd tool, not through the daemon.
raw_refresh() {
	local id
	q "CREATE TABLE IF NOT EXISTS raw_reports (run_id uuid PRIMARY KEY, report jsonb NOT NULL)" >/dev/null
	for id in $(q "SELECT run_id FROM benchmark_runs WHERE report_zstd IS NOT NULL
		AND run_id NOT IN (SELECT run_id FROM raw_reports)"); do
		q "SELECT encode(report_zstd, 'base64') FROM benchmark_runs WHERE run_id = '$id'" |
			base64 -d | zstd -dcq >"$T/raw_report.json"
		{
			printf "INSERT INTO raw_reports VALUES ('%s', \$gszraw\$" "$id"
			cat "$T/raw_report.json"
			printf "\$gszraw\$);\n"
		} | "$psqlbin" "$DATABASE_URL" -q -v ON_ERROR_STOP=1 -f - >/dev/null
	done
	"$psqlbin" "$DATABASE_URL" -q -v ON_ERROR_STOP=1 -f "$TOP/tests/api/sql/raw_results.sql" >/dev/null
}
raw() { # FILE VAR=VALUE...: a reference query with psql variables (one on
	# result rows reads raw_results, brought up to date first)
	local f=$TOP/tests/api/sql/$1 v=()
	shift
	for a in "$@"; do v+=(-v "$a"); done
	if grep -q benchmark_results "$f"; then
		raw_refresh
		sed 's/\bbenchmark_results\b/raw_results/g' "$f" >"$T/raw.sql"
		f=$T/raw.sql
	fi
	"$psqlbin" "$DATABASE_URL" -Atq -v ON_ERROR_STOP=1 -v lo=1e-9 -v hi=1e15 "${v[@]}" -f "$f"
}
# as_rows RUN_ID: the compact run stored as rows instead, as a daemon of
# the release before migrations/0020 stored it (report text, one row per
# result: their insert recomputes its rollups from them, 0014)
as_rows() {
	raw_refresh
	q "INSERT INTO benchmark_results SELECT * FROM raw_results WHERE run_id = '$1';
	   UPDATE benchmark_runs r SET report = p.report::text, report_zstd = NULL,
	    result_count = NULL, gpu_uuids = NULL, gpu_types = NULL, node_type = NULL,
	    metrics = NULL, dtypes = NULL
	   FROM raw_reports p WHERE p.run_id = r.run_id AND r.run_id = '$1'" >/dev/null
}
at() { date -u -d "$1" +%Y-%m-%dT%H:%M:%S.000Z; }
mk() { # HOST FINISHED JQ: the H100 fixture as host HOST, finished then, edited by JQ
	jq -c --arg h "$1" --arg f "$2" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$(printf '%08x' "$(cksum <<<"$1" | cut -d' ' -f1)")" '.run_id = $r | .node.hostname = $h
		| .started_at = $f | .finished_at = $f
		| .gpus |= map(.uuid |= sub("5e7e71c0"; $s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; $s) else . end
			| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; $s) else . end) | '"$3" \
		"$TOP/tests/fixtures/probe/report_synthetic_h100x8.json"
}
post() { # NAME FILE: posted with the probe headers in P (201 or a failing check)
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$2"
	[ "$STATUS" = 201 ] || not_ok "$1 stored" "$STATUS $(head -c 300 "$T/body")"
}
# fleet_same NAME SQL SYN DAYS [BASE]: GET /v1/fleet?window_days=DAYS (through
# BASE, the daemon by default) answers, key for key, what the reference query
# tests/api/sql/SQL answers (SYN: whether synthetic runs count).
fleet_same() {
	local name=$1 sql=$2 syn=$3 days=$4 base=${5:-$GSZ_URL} want thr
	thr=$(awk '/#define DEGRADED_THRESHOLD/ {print $3}' "$TOP/handlers/calib.h")
	STATUS=$(curl -sS --max-time 30 -o "$T/body" -w '%{http_code}' "$base/v1/fleet?window_days=$days") || STATUS=000
	want=$(raw "$sql" days="$days" thr="$thr" syn="$syn" | jq -S .)
	# the handler's implausible flag and calibration (h_fleet) are not
	# the storage's (t_calib_robust checks calibration)
	if [ "$STATUS" = 200 ] && [ "$(jq -S 'del(.items[].metrics[].implausible, .items[].calibration)' "$T/body")" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "$STATUS $(diff <(jq -S 'del(.items[].metrics[].implausible, .items[].calibration)' "$T/body") <(echo "$want") | head -20 | tr '\n' ' ')"
	fi
}
# second_daemon [ARG...]: another daemon on the same database (ARGs added
# to serve's), started and ready: its pid in d2, its URL in base2.
second_daemon() {
	local port2=""
	"$GSZ_BIN" serve --listen 127.0.0.1:0 "$@" --database-url "$DATABASE_URL" \
		--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/d2.log" 2>&1 &
	d2=$!
	for _ in $(seq 200); do
		port2=$(grep -o '"msg":"listening".*"port":"[0-9]*"' "$T/d2.log" | grep -o '"port":"[0-9]*"' | grep -o '[0-9]*' | head -n 1)
		[ -n "$port2" ] && curl -sf "http://127.0.0.1:$port2/readyz" >/dev/null && break
		sleep 0.05
	done
	base2=http://127.0.0.1:$port2
}
# second_daemon_stop: it exits cleanly, with no sanitizer report.
second_daemon_stop() {
	kill -TERM "$d2" && wait "$d2" && ok "the second daemon exits cleanly" || not_ok "the second daemon exits cleanly"
	grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$T/d2.log" &&
		not_ok "no sanitizer reports (second daemon)" "$(grep -m3 -E 'ERROR: |runtime error:' "$T/d2.log")" ||
		ok "no sanitizer reports (second daemon)"
}

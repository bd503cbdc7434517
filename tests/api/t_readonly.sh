#!/usr/bin/env bash
# A database that takes no writes (a hot standby, a primary demoted by a
# failover, default_transaction_read_only for maintenance) is a transient
# database condition: every write is 503 with Retry-After, /readyz says
# not ready, and all is well again once it takes writes (review s19a F1:
# each write was a 500 while /readyz said 200). Also: reports posted on
# pooled connections the server closed while the daemon was idle are
# stored, not 503 (review s19a F3).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_readonly
start_daemon --db-pool-size 4 || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "ro-$RANDOM" probe,admin)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
now=$(at '-1 minutes')
INF='{"model":"llama-3-8b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb"}'
# from the postgres database: a session of $db would be read-only itself
qp() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" postgres "$1"; }
kick() { # ends the daemon's sessions, so that new ones see the setting
	qp "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
	    WHERE datname = '$db'" >/dev/null
}
until_status() { # WANT METHOD PATH [ARGS...]: the request, retried up to 20 times until WANT
	local want=$1 i
	shift
	for i in $(seq 1 20); do
		req "$@"
		[ "$STATUS" = "$want" ] && return 0
		sleep 0.1
	done
	return 1
}

mk ro-a "$now" '.' >"$T/a.json"
post "a report while the database takes writes" "$T/a.json"
req POST /v1/sizing/inference -H 'Content-Type: application/json' -d "$INF"
check "a sizing while the database takes writes" 201

qp "ALTER DATABASE $db SET default_transaction_read_only = on" >/dev/null
kick
until_status 503 GET /readyz
check_problem "read-only database: /readyz is 503" 503
jq -e '.detail | test("read-only")' "$T/body" >/dev/null && ok "... and says the database is read-only" ||
	not_ok "... and says the database is read-only" "$(body)"
req POST /v1/sizing/inference -H 'Content-Type: application/json' -d "$INF"
check_problem "read-only database: a sizing (which must persist) is 503, not 500" 503
[ -n "$(header Retry-After)" ] && ok "... with Retry-After" || not_ok "... with Retry-After"
mk ro-b "$now" '.' >"$T/b.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/b.json"
check_problem "read-only database: a probe report is 503, which the probe retries" 503
req GET /v1/gpus/h100-sxm5-80gb
check "read-only database: reads are served" 200
jq 'del(.name, .created_at, .updated_at)' "$T/body" >"$T/gpu.json"
req PUT /v1/gpus/h100-sxm5-80gb "${P[@]}" --data-binary @"$T/gpu.json"
check_problem "read-only database: a catalog PUT is 503" 503
check_alive "daemon alive"

qp "ALTER DATABASE $db RESET default_transaction_read_only" >/dev/null
kick
until_status 200 GET /readyz
check "writable again: /readyz is 200" 200
# every pooled connection was ended by the server while no request ran:
# the report's statement is retried on a new one (review s19a F3)
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/b.json"
check "writable again: the report refused before is stored at once, on a connection the server had closed" 201
kick
for i in 1 2 3 4; do
	mk "ro-c$i" "$now" '.' >"$T/c$i.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/c$i.json"
	[ "$STATUS" = 201 ] || break
done
check "four more reports after the server ended every session: each stored, none 503" 201
req POST /v1/sizing/inference -H 'Content-Type: application/json' -d "$INF"
check "writable again: sizing" 201
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

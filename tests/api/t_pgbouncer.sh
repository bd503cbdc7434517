#!/usr/bin/env bash
# The daemon behind a real PgBouncer in transaction pool mode (Debian's
# pgbouncer package, installed by `make deps`), in front of the suite's
# PostgreSQL, with PgBouncer's defaults: no ignore_startup_parameters, no
# max_prepared_statements. Every statement goes to whichever server
# connection is free, so the daemon's settings must travel with each
# transaction (storage/db.c settings_sql):
#   - migrations and readiness (the migration lock is released on the
#     server connection that took it), a sizing request that is stored, a probe report stored and
#     replayed, and the reads of both, all through the pooler;
#   - timestamps in UTC although the database's default TimeZone is not;
#   - lock_timeout (2 s) and statement_timeout (--statement-timeout-ms) end
#     a statement stuck behind a lock, through the pooler;
#   - a connection the pooler refuses is logged with libpq's message and
#     counted in /metrics, and the daemon recovers when the pooler admits it.
. "$(dirname "$0")/lib.sh"

pgb=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
[ -x "$pgb" ] || { not_ok "pgbouncer is installed" "run make deps (Makefile DEB_PKGS)"; exit 0; }
pguser=$(sed -n 's/.*user=\([^ ]*\).*/\1/p' <<<"$DATABASE_URL")
db=gsz_bouncer_$RANDOM$RANDOM
"$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" >/dev/null ||
	{ not_ok "a database for the pooler test"; exit 0; }
psql_q() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "$1"; }
# A server default that is not UTC: what the daemon gets unless it sets
# TimeZone on the server connection each statement runs on.
psql_q "ALTER DATABASE $db SET timezone TO 'America/New_York'" >/dev/null

# Round robin over at least two server connections: consecutive
# transactions of one client land on different server connections, as
# they do on a busy pooler.
# PgBouncer refuses to run as root; like PostgreSQL (deploy/dev/pg.sh) it
# then runs as the cluster's user, on a unix socket in a directory of its own.
B=$(mktemp -d "${TMPDIR:-/tmp}/gsz-pgb.XXXXXX")
bport=$((20000 + RANDOM % 20000))
as_pgb() { if [ "$(id -u)" = 0 ]; then runuser -u "$pguser" -- "$@"; else "$@"; fi; }
cat >"$B/pgbouncer.ini" <<EOF
[databases]
$db = host=$GSZ_PGDIR port=$GSZ_PGPORT dbname=$db user=$pguser
[pgbouncer]
listen_addr =
listen_port = $bport
unix_socket_dir = $B
auth_type = trust
auth_file = $B/users.txt
admin_users = $pguser
pool_mode = transaction
default_pool_size = 4
min_pool_size = 2
server_round_robin = 1
logfile = $B/pgbouncer.log
pidfile = $B/pgbouncer.pid
EOF
echo "\"$pguser\" \"\"" >"$B/users.txt"
[ "$(id -u)" = 0 ] && chown -R "$pguser" "$B"
stop_bouncer() {
	[ -s "$B/pgbouncer.pid" ] && kill "$(cat "$B/pgbouncer.pid")" 2>/dev/null
	rm -rf "$B"
}
trap 'stop_bouncer; cleanup' EXIT
as_pgb "$pgb" -d -q "$B/pgbouncer.ini" 2>"$B/start.err"
for i in $(seq 1 100); do [ -S "$B/.s.PGSQL.$bport" ] && break; sleep 0.05; done
[ -S "$B/.s.PGSQL.$bport" ] && ok "pgbouncer starts in transaction pool mode" ||
	{ not_ok "pgbouncer starts in transaction pool mode" "$(cat "$B/start.err" "$B/pgbouncer.log" 2>/dev/null | tail -n 5)"; exit 0; }
admin() { as_pgb psql -h "$B" -p "$bport" -U "$pguser" -d pgbouncer -Atqc "$1" >/dev/null 2>&1; }
# Two server connections open before the daemon comes.
for i in 1 2; do as_pgb psql -h "$B" -p "$bport" -U "$pguser" -d "$db" -Atqc "SELECT pg_sleep(0.3)" >/dev/null 2>&1 & done
wait
advisory_locks() { # NAME: no advisory lock is held now
	local n
	n=$(psql_q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
	[ "$n" = 0 ] && ok "$1" || not_ok "$1" "$n advisory locks held"
}

# The daemon (its migrations, tokens and every request) through the pooler.
export DATABASE_URL="host=$B port=$bport dbname=$db user=$pguser"
start_daemon || { not_ok "the daemon becomes ready through pgbouncer"; exit 0; }
req GET /readyz
check "the daemon becomes ready through pgbouncer" 200 '.status == "ready" and .database == "ok"'
n=$(psql_q "SELECT count(*) FROM schema_migrations")
[ "$n" = "$(ls "$TOP"/migrations/[0-9][0-9][0-9][0-9]_*.sql | wc -l)" ] && ok "its migrations are applied through pgbouncer" ||
	not_ok "its migrations are applied through pgbouncer" "$n rows in schema_migrations"
advisory_locks "no migration lock stays behind on a server connection"

J=(-H 'Content-Type: application/json')
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1}'
check "a sizing request through pgbouncer: 201" 201 '.kind == "training" and (.plans | length) == 1'
rec=$(jq -r .id "$T/body")
req GET "/v1/recommendations/$rec"
check "the recommendation is stored and read back" 200 ".id == \"$rec\""
req GET "/v1/recommendations?kind=training&limit=5"
check "the recommendation history lists it" 200 "[.items[].id] | index(\"$rec\") != null"
jq -e '.items[0].created_at | test("(Z|\\+00:00)$")' "$T/body" >/dev/null &&
	ok "timestamps are UTC though the database's default TimeZone is not" ||
	not_ok "timestamps are UTC though the database's default TimeZone is not" "$(jq -c '.items[0].created_at' "$T/body")"

probe=$(create_token "probe-$RANDOM$RANDOM" probe)
[ -n "$probe" ] && ok "a token is created through pgbouncer" || not_ok "a token is created through pgbouncer"
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
host=node-$RANDOM$RANDOM
run=$(cat /proc/sys/kernel/random/uuid)
jq --arg now "$now" --arg h "$host" --arg r "$run" \
	'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now' \
	"$TOP/tests/fixtures/probe/report_synthetic_h100x8.json" >"$T/r1.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r1.json"
check "a probe report through pgbouncer: 201" 201 ".run_id == \"$run\" and .gpus == 8 and .results == 290"
cp "$T/body" "$T/a1.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r1.json"
check "its replay answers the same" 201
cmp -s "$T/body" "$T/a1.json" && ok "the replay's answer is identical" || not_ok "the replay's answer is identical" "$(body)"
run2=$(cat /proc/sys/kernel/random/uuid)
jq --arg r "$run2" '.run_id = $r' "$T/r1.json" >"$T/r2.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r2.json"
check "a second report through pgbouncer: 201" 201 ".run_id == \"$run2\" and .results == 290"
req GET "/v1/benchmarks/$run"
check "GET /v1/benchmarks/{run_id} reads it back" 200 ".run_id == \"$run\" and (.report.results | length) == 290 and (.received_at | test(\"(Z|\\\\+00:00)$\"))"
req GET "/v1/benchmarks?run_id=$run2&limit=500"
check "its results are stored once" 200 '(.items | length) == 290'
req GET "/v1/nodes/$host"
check "GET /v1/nodes/{hostname} reads the node" 200 "(.gpus | length) == 8 and .runs[0].run_id == \"$run2\""
req GET /v1/fleet
check "GET /v1/fleet reads the fleet" 200 '[.items[].gpu_type] | index("h100-sxm5-80gb") != null'

# A statement stuck behind a lock held on a direct connection: the
# daemon's lock_timeout (2 s) ends it, then with a statement_timeout below
# that, the statement timeout does. Without them the request would wait
# for the lock (held up to 30 s, cancelled once the checks are done).
psql_q "BEGIN; LOCK TABLE benchmark_runs IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30); COMMIT" >/dev/null 2>&1 &
lockpid=$!
for i in $(seq 1 100); do
	[ "$(psql_q "SELECT count(*) FROM pg_locks WHERE relation = 'benchmark_runs'::regclass AND mode = 'AccessExclusiveLock' AND granted")" = 1 ] && break
	sleep 0.05
done
t0=$(date +%s%N)
req GET "/v1/benchmarks/$run"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$STATUS" = 503 ] && jq -e '.detail | test("lock timeout")' "$T/body" >/dev/null && [ "$ms" -lt 4000 ]; then
	ok "lock_timeout holds through pgbouncer: 503 after ${ms} ms"
else
	not_ok "lock_timeout holds through pgbouncer" "status $STATUS after $ms ms: $(head -c 300 "$T/body")"
fi
stop_daemon || not_ok "the daemon stops cleanly" "exit status $?"
start_daemon --statement-timeout-ms 400 || { not_ok "the daemon restarts with a 400 ms statement timeout"; exit 0; }
advisory_locks "no migration lock stays behind after a restart either"
t0=$(date +%s%N)
req GET "/v1/benchmarks/$run"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$STATUS" = 503 ] && jq -e '.detail | test("statement timeout")' "$T/body" >/dev/null && [ "$ms" -lt 1900 ]; then
	ok "statement_timeout holds through pgbouncer: 503 after ${ms} ms"
else
	not_ok "statement_timeout holds through pgbouncer" "status $STATUS after $ms ms: $(head -c 300 "$T/body")"
fi
psql_q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
wait "$lockpid" 2>/dev/null
req GET "/v1/benchmarks/$run"
check "once the lock is gone the same read succeeds" 200 ".run_id == \"$run\""

# The pooler refuses the database (DISABLE, then KILL drops the daemon's
# connections): the daemon answers 503, logs libpq's message and counts
# the errors; once the pooler admits it again, it serves.
admin "DISABLE $db" && admin "KILL $db" && admin "RESUME $db" ||
	not_ok "pgbouncer's admin console disables the database"
req GET /readyz
check_problem "a refused connection: /readyz is 503" 503
req GET "/v1/benchmarks/$run"
check_problem "a refused connection: a read is 503" 503
if grep '"msg":"cannot connect to the database"' "$GSZ_LOG" | grep -q "database \\\\\"$db\\\\\" is disabled"; then
	ok "the connection error is logged with libpq's message"
else
	not_ok "the connection error is logged with libpq's message" "$(grep -E '"level":"(error|warn)"' "$GSZ_LOG" | grep -v '"msg":"request"' | tail -n 3)"
fi
req GET /metrics
n=$(grep '^gpusizer_db_connection_errors_total ' "$T/body" | awk '{print $2}')
[ "${n:-0}" -ge 1 ] && ok "connection errors are counted in /metrics ($n)" ||
	not_ok "connection errors are counted in /metrics" "gpusizer_db_connection_errors_total ${n:-missing}"
admin "ENABLE $db" || not_ok "pgbouncer's admin console enables the database"
for i in $(seq 1 60); do
	req GET /readyz
	[ "$STATUS" = 200 ] && break
	sleep 0.1
done
check "once the pooler admits it again, /readyz is 200" 200
req GET "/v1/benchmarks/$run"
check "and reads succeed" 200 ".run_id == \"$run\""

stop_daemon && ok "the daemon stops cleanly" || not_ok "the daemon stops cleanly" "exit status $?"
sanitizer_clean "no sanitizer report"

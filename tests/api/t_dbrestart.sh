#!/usr/bin/env bash
# PostgreSQL restarted under a running daemon: 503 problems during the
# outage, /healthz stays up, recovery afterwards without a daemon restart.
. "$(dirname "$0")/lib.sh"
start_daemon --db-pool-size 4 || { not_ok "daemon starts"; exit 1; }
req GET /v1/gpus
check "serving before the outage" 200
# The fleet view reads the daemon's copy (storage/fleet_mirror.c), which is
# brought up to date at every read: it fails with the database, and loads
# again after it.
req GET "/v1/fleet?window_days=30"
check "fleet view before the outage (its copy loaded)" 200
cp "$T/body" "$T/fleet_before"

"$TOP/deploy/dev/pg.sh" stop "$GSZ_PGDIR"
req GET /v1/recommendations
check_problem "database down: GET /v1/recommendations is 503" 503
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"a100-sxm4-80gb","max_gpus":8}'
check_problem "database down: a sizing request (which must persist) is 503, not 500" 503
# The catalog is served from a 2-second cache; past it, reads fail too.
sleep 2.2
req GET /v1/gpus
check_problem "database down: GET /v1/gpus is 503 once the catalog cache expires" 503
# A client's mistake is its 400 even now: the model's lookup waits for the
# other fields (handlers/sizing_parse.c sizing_defer); a valid body is 503.
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":"x","gpu":"a100-sxm4-80gb","max_gpus":8}'
check_problem "database down: a training body with a type error is its 400 naming seq_len" 400 seq_len
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"a100-sxm4-80gb","max_gpus":8,"stack":"torchtitan","top":0}'
check_problem "database down: a bad top beside a stack to look up is its 400 naming top" 400 top
req POST /v1/sizing/inference -d '{"model":"llama-2-7b","prompt_tokens":-1,"output_tokens":128,"gpu":"a100-sxm4-80gb"}'
check_problem "database down: an inference body with a bad prompt_tokens is its 400" 400 prompt_tokens
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"a100-sxm4-80gb","max_gpus":8}'
check_problem "database down: a valid body past the catalog cache is 503" 503
[ -n "$(header Retry-After)" ] && ok "503 carries Retry-After" || not_ok "503 carries Retry-After"
req GET "/v1/fleet?window_days=30"
check_problem "database down: the fleet view is 503, not an answer from its stale copy" 503
req GET /readyz
check_problem "database down: /readyz is 503" 503
req GET /healthz
check "database down: /healthz still 200" 200
for i in 1 2 3 4 5 6 7 8; do req GET /v1/models; done
check_problem "database down: repeated requests stay 503" 503
check_alive "daemon alive through the outage"

"$TOP/deploy/dev/pg.sh" start "$GSZ_PGDIR" "$GSZ_PGPORT" >/dev/null
recovered=""
for i in $(seq 1 50); do
	req GET /v1/gpus
	[ "$STATUS" = 200 ] && { recovered=1; break; }
	sleep 0.1
done
[ -n "$recovered" ] && ok "database back: GET /v1/gpus recovers without a daemon restart" ||
	not_ok "database back: GET /v1/gpus recovers without a daemon restart" "$STATUS $(body)"
# Every pooled connection was lost; each must be re-established.
for i in $(seq 1 12); do req GET /v1/models; [ "$STATUS" = 200 ] || break; done
check "database back: every pooled connection works again" 200
req GET /readyz
check "database back: /readyz is 200" 200
req GET "/v1/fleet?window_days=30"
check "database back: the fleet view answers again" 200
cmp -s "$T/body" "$T/fleet_before" && ok "database back: the fleet view is what it was before the outage" ||
	not_ok "database back: the fleet view is what it was before the outage" "$(diff "$T/body" "$T/fleet_before" | head -5)"
req GET /metrics
grep -q '^gpusizer_db_connection_errors_total [1-9]' "$T/body" && ok "metrics count the lost connections" || not_ok "metrics count the lost connections"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

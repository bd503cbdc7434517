#!/usr/bin/env bash
# Admission of engine work (hostile review, 2026-11-26): at most
# --engine-concurrency training and compare searches run at once; the others
# wait their turn within --engine-timeout-ms. This checks what does not
# depend on timing: with one slot, concurrent searches all finish; a slot
# is given back after a 400, a 422 and a client that left; the setting is
# range-checked. (What overload does to latency is measured, not asserted:
# docs/BENCHMARKS.md.)
. "$(dirname "$0")/lib.sh"

bad=$("$GSZ_BIN" serve --engine-concurrency 2000 2>&1) ; rc=$?
[ "$rc" = 2 ] && echo "$bad" | grep -q "engine-concurrency" &&
	ok "--engine-concurrency 2000 is refused, naming the flag (exit 2)" ||
	not_ok "--engine-concurrency 2000 is refused" "rc $rc: $bad"

# A conninfo libpq cannot parse never connects, and libpq's message about
# it quotes it whole: refused at once, password never logged (hostile
# review, 2026-11-26: it was retried forever, the password in every line).
badurl='postgres://admin:s3cret-pw@[::1'
timeout 20 "$GSZ_BIN" serve --listen 127.0.0.1:0 --database-url "$badurl" \
	--migrations-dir "$TOP/migrations" --openapi-file "$TOP/openapi.yaml" >"$T/badurl.log" 2>&1
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q s3cret-pw "$T/badurl.log" && grep -q "not a valid PostgreSQL URI" "$T/badurl.log" &&
	ok "serve with an unparsable DATABASE_URL exits at once (rc $rc), saying so, without the password" ||
	not_ok "serve with an unparsable DATABASE_URL" "rc $rc: $(tail -c 300 "$T/badurl.log")"
for cmd in "token list" "migrate"; do
	DATABASE_URL="$badurl" timeout 20 "$GSZ_BIN" $cmd --migrations-dir "$TOP/migrations" >"$T/badurl.log" 2>&1
	rc=$?
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && ! grep -q s3cret-pw "$T/badurl.log" &&
		ok "$cmd with it: exit $rc, no password in the output" ||
		not_ok "$cmd with an unparsable DATABASE_URL" "rc $rc: $(tail -c 300 "$T/badurl.log")"
done

# a wrong --openapi-file is said at start; a directory answers 404 as a
# missing file does (it was a 500 per request)
start_daemon --openapi-file "$T" || { not_ok "daemon starts with a directory as its openapi file"; exit 1; }
grep -q '"msg":"openapi file not found or not a file' "$GSZ_LOG" && ok "a directory as --openapi-file: a warning at start" ||
	not_ok "a directory as --openapi-file: a warning at start" "$(head -c 400 "$GSZ_LOG")"
req GET /openapi.yaml
check_problem "and GET /openapi.yaml is a 404, not a 500" 404
stop_daemon >/dev/null

start_daemon --engine-concurrency 1 --engine-timeout-ms 60000 || { not_ok "daemon starts"; exit 1; }
grep -q "\"engine_concurrency\":\"1\"" "$GSZ_LOG" && ok "the configuration line shows engine_concurrency 1" ||
	not_ok "the configuration line shows engine_concurrency" "$(grep configuration "$GSZ_LOG" | head -c 300)"

job='{"model":"llama-2-70b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":512}'
cmp='{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":64},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"]}'
pids=""
for i in 1 2 3 4 5 6; do
	curl -s -o /dev/null -w '%{http_code}\n' -X POST "$GSZ_URL/v1/sizing/training" -d "$job" >"$T/c$i" &
	pids="$pids $!"
done
for i in 7 8; do
	curl -s -o /dev/null -w '%{http_code}\n' -X POST "$GSZ_URL/v1/sizing/compare" -d "$cmp" >"$T/c$i" &
	pids="$pids $!"
done
wait $pids # not the daemon's
codes=$(cat "$T"/c? | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$(cat "$T"/c? | grep -c '^201$')" = 8 ] && ok "one slot: 6 trainings and 2 compares sent at once all answer 201 ($codes)" ||
	not_ok "one slot: concurrent searches all answer 201" "$codes"

# slots come back after a field error, an infeasible job and a client gone
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":-1,"gpu":"h100-sxm5-80gb"}'
check_problem "a field error: 400" 400 seq_len
req POST /v1/sizing/training -d '{"model":"llama-3.1-405b","seq_len":4096,"train_tokens":1e11,"gpu":"l4-24gb","max_gpus":4}'
check_problem "an infeasible job: 422" 422
curl -s -o /dev/null --max-time 0.01 -X POST "$GSZ_URL/v1/sizing/training" -d "$job" || true
for i in 1 2 3; do
	req POST /v1/sizing/training -d "$job"
	check "after them, search $i still gets the slot (201)" 201 '.plans | length >= 1'
done
req POST /v1/sizing/compare -d "$cmp"
check "and a compare (201)" 201 '.rows | length == 2'

# SIGHUP: nothing to reload; ignored with a warning (its default action
# killed the daemon and every request in flight)
kill -HUP "$GSZ_PID"
sleep 0.3
req GET /v1/gpus/h100-sxm5-80gb
check "after SIGHUP the daemon still answers" 200 '.name == "h100-sxm5-80gb"'
grep -q '"msg":"SIGHUP ignored' "$GSZ_LOG" && ok "and its log says SIGHUP was ignored" || not_ok "the log says SIGHUP was ignored" "$(tail -3 "$GSZ_LOG")"
check_alive "daemon alive"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

#!/usr/bin/env bash
# Bounded engine work (issue 15, item 1). A valid, unauthenticated training
# request can ask for a search of billions of layouts (every value inside
# its documented range). The daemon:
#   - stops a search past --engine-max-steps with a 422 naming the lists
#     to narrow, for sizing and compare alike;
#   - stops work whose client hung up (the log says why);
#   - answers 503 with Retry-After when the engine work outlives
#     --engine-timeout-ms (a saturated server);
#   - exits within --drain-timeout on SIGTERM with such work in flight.
# The unbounded runs below use --engine-max-steps 1000000000 so that the
# hostile search runs for seconds (about 7 s of one core without
# sanitizers); nothing here asserts a duration except liveness bounds.
. "$(dirname "$0")/lib.sh"

# The shape of the issue's request: a 2,520-layer model, 24-value lists.
hostile() {
	jq -nc '
	def divs(n): [range(1; n + 1) | select(n % . == 0)][0:24];
	{model: {layers: 2520, hidden_size: 110880, heads: 55440,
		 ffn_hidden_size: 443520, vocab_size: 32000},
	 seq_len: 2882880, gpu: "h100-sxm5-80gb", gpus_per_node: 1024,
	 max_gpus: 1048576, global_batch_size: 720720,
	 strategies: {tp: divs(55440), pp: divs(2520), cp: divs(2882880),
		      vp: [range(1; 25)], micro_batch: divs(720720)}}'
}
hostile >"$T/hostile.json"

# --- the default limit -------------------------------------------------------
start_daemon || { not_ok "daemon starts"; exit 1; }
req POST /v1/sizing/training -d @"$T/hostile.json"
check_problem "a search past the step limit is a 422 naming strategies" 422 strategies
check "the 422 is search-too-large and says how to narrow it" 422 \
	'.type == "/problems/search-too-large" and (.detail | contains("narrow strategies")) and (.detail | contains("max_gpus"))'

jq -c '{training: (del(.gpu)), gpus: ["h100-sxm5-80gb", "a100-sxm4-80gb"]} | .training.train_tokens = 1e13' \
	"$T/hostile.json" >"$T/hostile_compare.json"
req POST /v1/sizing/compare -d @"$T/hostile_compare.json"
check_problem "compare stops the same search with the same 422" 422 strategies

# Without lists the field to narrow is max_gpus (a tiny limit makes a
# preset's default search too large).
stop_daemon
start_daemon --engine-max-steps 10000 || { not_ok "daemon starts (small limit)"; exit 1; }
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"global_batch_size":1024,"gpu":"h100-sxm5-80gb","max_gpus":4096}'
check_problem "without lists the 422 names max_gpus" 422 max_gpus
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"global_batch_size":1024,"gpu":"h100-sxm5-80gb","gpus":64,"strategies":{"tp":8,"pp":2}}'
check "a narrowed search fits in the same limit" 201 '.plans[0].gpus == 64'
check_alive "the daemon serves after refusing searches"
stop_daemon

# --- the wall clock of a saturated server -------------------------------------
start_daemon --engine-max-steps 1000000000 --engine-timeout-ms 300 ||
	{ not_ok "daemon starts (engine timeout)"; exit 1; }
req POST /v1/sizing/training -d @"$T/hostile.json"
check_problem "engine work past --engine-timeout-ms is a 503" 503
ra=$(header Retry-After)
[ -n "$ra" ] && [ "$ra" -gt 0 ] 2>/dev/null && ok "the 503 carries Retry-After ($ra)" ||
	not_ok "the 503 carries Retry-After" "headers: $(tr -d '\r' <"$T/headers")"
grep -q '"detail":"engine work stopped: deadline"' "$GSZ_LOG" &&
	ok "the log says the deadline stopped it" || not_ok "the log says the deadline stopped it"
stop_daemon

# --- a client that hangs up ---------------------------------------------------
start_daemon --engine-max-steps 1000000000 --engine-timeout-ms 600000 ||
	{ not_ok "daemon starts (unbounded)"; exit 1; }
curl -s -o /dev/null --max-time 1 -X POST "$GSZ_URL/v1/sizing/training" -d @"$T/hostile.json"
stopped=0
for i in $(seq 1 200); do
	grep -q '"detail":"engine work stopped: client_gone"' "$GSZ_LOG" && { stopped=1; break; }
	sleep 0.1
done
[ $stopped = 1 ] && ok "work whose client hung up stops (the log says client_gone)" ||
	not_ok "work whose client hung up stops" "$(tail -n 3 "$GSZ_LOG")"
# ... logged at info as a 499 and counted so, not as a server error
# (review s23a F2: it was a 503 at error, which the 5xx alert counts)
line=$(grep '"detail":"engine work stopped: client_gone"' "$GSZ_LOG" | tail -n 1)
case $line in
*'"level":"info"'*'"status":499'* | *'"status":499'*'"level":"info"'*)
	ok "a client's hang-up is logged at info as a 499" ;;
*) not_ok "a client's hang-up is logged at info as a 499" "$line" ;;
esac
req GET /metrics
grep -q 'gpusizer_http_requests_total{route="/v1/sizing/training",method="POST",status="499"} 1' "$T/body" &&
	! grep -q 'route="/v1/sizing/training",method="POST",status="503"' "$T/body" &&
	ok "metrics count it under 499, not 503" ||
	not_ok "metrics count it under 499, not 503" "$(grep 'sizing/training' "$T/body")"
check_alive "the daemon serves after the client left"

# --- shutdown with the work in flight ------------------------------------------
stop_daemon
start_daemon --engine-max-steps 1000000000 --engine-timeout-ms 600000 --drain-timeout 1 ||
	{ not_ok "daemon starts (drain)"; exit 1; }
curl -s -o "$T/drain.body" -w '%{http_code}' --max-time 60 -X POST \
	"$GSZ_URL/v1/sizing/training" -d @"$T/hostile.json" >"$T/drain.code" &
client=$!
sleep 0.5
kill -TERM "$GSZ_PID"
exited=0
for i in $(seq 1 100); do # the drain timeout (1 s) plus a margin
	kill -0 "$GSZ_PID" 2>/dev/null || { exited=1; break; }
	sleep 0.1
done
if [ $exited = 1 ]; then
	rc=0
	wait "$GSZ_PID" || rc=$?
	GSZ_PID=""
	[ $rc = 0 ] && ok "SIGTERM with engine work in flight exits within the drain timeout, status 0" ||
		not_ok "SIGTERM with engine work in flight exits 0" "exit $rc"
else
	not_ok "SIGTERM with engine work in flight exits within the drain timeout" "still running after 10 s"
fi
wait "$client" 2>/dev/null
[ "$(cat "$T/drain.code")" = 503 ] && jq -e '.status == 503' "$T/drain.body" >/dev/null 2>&1 &&
	ok "the stopped request got a 503 problem" ||
	not_ok "the stopped request got a 503 problem" "$(cat "$T/drain.code") $(head -c 300 "$T/drain.body")"
sanitizer_clean "no sanitizer reports"
exit 0

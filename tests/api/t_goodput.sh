#!/usr/bin/env bash
# Goodput of whole-run figures and the wall-clock limit of objective cost
# (issue 13): the request fields, their 400s naming the field, the output
# fields, and no plan of years when a faster one exists.
. "$(dirname "$0")/lib.sh"

start_daemon || { not_ok "daemon starts"; exit 1; }

job='"model":"llama-3-70b","seq_len":4096,"train_tokens":2e12,"gpu":"h100-sxm5-80gb","max_gpus":1024'

# --- output fields and defaults --------------------------------------------
req POST /v1/sizing/training -d "{$job}"
check "every plan: days, gpu_hours and cost with goodput, the steady state beside them" 201 \
	'all(.plans[]; .goodput_fraction > 0 and .goodput_fraction < 1 and .days > .steady_state_days and .gpu_hours > .steady_state_gpu_hours and .cost > .steady_state_cost and (.goodput | has("expected_interruptions") and has("mtbi_hours") and has("checkpoint_write_s") and has("checkpoint_interval_s")))'
check "days is steady_state_days over goodput_fraction" 201 \
	'all(.plans[]; ((.steady_state_days / .goodput_fraction) / .days - 1 | fabs) < 1e-3)'
check "assumptions.goodput states the defaults (Llama 3 rate and storage, 10-minute restart) and the checkpoint size" 201 \
	'.assumptions.goodput.failures_per_gpu_hour == 2.1946e-05 and .assumptions.goodput.checkpoint_gbps_per_gpu == 0.12207 and .assumptions.goodput.restart_minutes == 10 and .assumptions.goodput.checkpoint_gib > 900 and (.assumptions.goodput.model | contains("Daly"))'
check "objective time without a deadline: no max_days" 201 \
	'(.assumptions | has("max_days") | not) and ([.plans[] | has("within_max_days")] | any | not)'
days=$(jq '.plans[0].days' "$T/body")

# --- the inputs move the figures -------------------------------------------
req POST /v1/sizing/training -d "{$job,\"failures_per_gpu_hour\":0}"
check "no failures: goodput 1, days are the steady state" 201 \
	'all(.plans[]; .goodput_fraction == 1 and .days == .steady_state_days and .goodput.mtbi_hours == 0)'
req POST /v1/sizing/training -d "{$job,\"failures_per_gpu_hour\":0.001,\"restart_minutes\":30,\"checkpoint_gbps_per_gpu\":0.01}"
jq -e --argjson d "$days" '.plans[0].days > $d and .plans[0].goodput_fraction < 0.9 and .request.failures_per_gpu_hour == 0.001 and .request.restart_minutes == 30' "$T/body" >/dev/null &&
	ok "more failures, slower storage and restarts: a longer run, kept in the stored request" ||
	not_ok "more failures make a longer run" "$(jq -c '{p: .plans[0] | {days, steady_state_days, goodput_fraction}, r: .request}' "$T/body")"
check "low goodput is warned about" 201 '.checks.warnings | map(test("^goodput [0-9]+ %")) | any'

# --- 400s naming the field ------------------------------------------------
for bad in '"failures_per_gpu_hour":-1' '"failures_per_gpu_hour":0.5' '"failures_per_gpu_hour":"x"' \
	'"checkpoint_gbps_per_gpu":0' '"checkpoint_gbps_per_gpu":1e9' '"restart_minutes":-5' \
	'"restart_minutes":100000' '"max_days":0' '"max_days":1e9' '"max_days":true'; do
	field=${bad%%\":*}
	field=${field#\"}
	req POST /v1/sizing/training -d "{$job,$bad}"
	check_problem "$bad is a 400 naming $field" 400 "$field"
done

# --- objective cost without a deadline stays within max_days ---------------
req POST /v1/sizing/training -d "{$job,\"objective\":\"cost\"}"
check "objective cost, no deadline: every plan within 90 days, said in assumptions and warnings" 201 \
	'.assumptions.max_days.days == 90 and all(.plans[]; .days <= 90 and .within_max_days) and (.checks.warnings | map(test("max_days \\(90 days\\)")) | any)'
req POST /v1/sizing/training -d "{$job,\"objective\":\"cost\",\"max_days\":30}"
check "max_days 30: a plan within 30 days" 201 \
	'.assumptions.max_days.days == 30 and .plans[0].days <= 30 and .request.max_days == 30'
req POST /v1/sizing/training -d '{"model":"llama-3-70b","seq_len":4096,"train_tokens":2e12,"gpu":"h100-sxm5-80gb","max_gpus":16,"objective":"cost"}'
check "nothing within max_days: the fastest plan, and a warning naming the limit" 201 \
	'(.plans[0].within_max_days | not) and .plans[0].days == ([.plans[].days] | min) and (.checks.warnings | map(test("no plan ends within max_days")) | any)'
req POST /v1/sizing/training -d "{$job,\"objective\":\"cost\",\"deadline_days\":200}"
check "a deadline replaces max_days" 201 '(.assumptions | has("max_days") | not) and .plans[0].meets_deadline'

# review s19b F2: the warning quotes the fields' figures (4 significant
# digits), not "restarts add 0.0 days to the 0.0 of steady training"
req POST /v1/sizing/training -d '{"model":"llama-3-8b","gpu":"h100","seq_len":8192,"train_tokens":2e10,"gpus":1024,"failures_per_gpu_hour":0.003,"top":1,"calibration":"datasheet"}'
check "the goodput warning quotes the added and steady days, the interval and the MTBI as the fields print them" 201 \
	'.plans[0] as $p | ($p.days - $p.steady_state_days) as $add
	 | (.checks.warnings | map(select(test("^goodput"))) | .[0]) as $w
	 | ($w | test("one every \($p.goodput.mtbi_hours) h"))
	 and ($w | test("checkpoint every \($p.goodput.checkpoint_interval_s) s"))
	 and ($w | test("to the \($p.steady_state_days) days of steady"))
	 and ($w | test("add 0[.]0 days") | not)
	 and ($add > 0.019 and $add < 0.0198)
	 and ($w | test("add 0[.]019[67][0-9]* days"))'

# --- compare ranks whole runs with goodput ---------------------------------
req POST /v1/sizing/compare -d '{"training":{"model":"llama-3-70b","seq_len":4096,"train_tokens":2e12,"max_gpus":256,"failures_per_gpu_hour":0.001},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"]}'
check "compare takes the goodput inputs" 201 '[.rows[] | select(.ok)] | length == 2'

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

#!/usr/bin/env bash
# Compare against a catalog an admin has grown (hostile review, 2026-11-26):
# a GPU name of the full 64 characters PUT accepts can be compared; a bad
# entry is named by its index; and the default list (every priced type)
# never drops types silently: past the 32 one compare takes it is a 400
# asking for the list. Its own database, so the types it adds stay here.
. "$(dirname "$0")/lib.sh"
own_database gsz_cmpcat
start_daemon || { not_ok "daemon starts"; exit 1; }

adm=$(create_token "cmpcat-admin-$RANDOM$RANDOM" admin)
job='"training":{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64}'
# put_copy NAME JQ: a copy of h100-sxm5-80gb under NAME, edited by JQ.
put_copy() {
	curl -s "$GSZ_URL/v1/gpus/h100-sxm5-80gb" | jq "del(.name) | $2" >"$T/gpu.json"
	req PUT "/v1/gpus/$1" -H "Authorization: Bearer $adm" -d @"$T/gpu.json"
}

long=z$(printf 'a%.0s' $(seq 63))
put_copy "$long" '.price_per_gpu_hour = 2'
check "a 64-character GPU name is accepted by PUT" 201 '.name | length == 64'
req POST /v1/sizing/compare -d "{$job,\"gpus\":[\"h100-sxm5-80gb\",\"$long\"]}"
check "and compared under that name" 201 "[.rows[].gpu] | index(\"$long\") != null"
req POST /v1/sizing/compare -d "{$job,\"gpus\":[\"h100-sxm5-80gb\",\"${long}b\"]}"
check_problem "a 65-character entry is a 400 naming gpus[1]" 400 'gpus[1]'
req POST /v1/sizing/compare -d "{$job,\"gpus\":[\"h100-sxm5-80gb\",7]}"
check_problem "a non-string entry is a 400 naming gpus[1]" 400 'gpus[1]'

req POST /v1/sizing/compare -d "{$job}"
check "the default list is every priced type" 201 "[.rows[].gpu] | index(\"$long\") != null"
n=$(jq '.rows | length' "$T/body")
for i in $(seq 1 $((33 - n))); do
	put_copy "zz-priced-$i" '.price_per_gpu_hour = 1' >/dev/null
done
req GET /v1/gpus
total=$(jq '[.items[] | select(.price_per_gpu_hour > 0)] | length' "$T/body")
[ "$total" -eq 33 ] && ok "33 catalog types now have a price" || not_ok "33 catalog types now have a price" "$total"
req POST /v1/sizing/compare -d "{$job}"
check_problem "33 priced types: the default list is a 400 naming gpus, not a silent cut at 32" 400 gpus
grep -q 'list the ones to compare' "$T/body" && ok "the 400 says to list the types" || not_ok "the 400 says to list the types" "$(body)"
req POST /v1/sizing/compare -d "{$job,\"gpus\":[\"zz-priced-1\",\"h100-sxm5-80gb\"],\"prices\":{\"zz-priced-1\":0.01}}"
check "an explicit list still compares, with its prices" 201 '(.rows[] | select(.gpu == "zz-priced-1") | .cheapest)'

# a GPU type without a price: cost is 0, said in a warning, and objective
# cost (which would rank every plan as free) asks for a price
put_copy "zz-unpriced" '.price_per_gpu_hour = null' >/dev/null
req POST /v1/sizing/training -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"gpu":"zz-unpriced","top":1}'
check "training without a price: cost 0 and a warning saying it is not free" 201 \
	'.plans[0].cost == 0 and ([.checks.warnings[] | select(test("no price"))] | length) == 1'
req POST /v1/sizing/training -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"gpu":"zz-unpriced","objective":"cost"}'
check_problem "objective cost without a price: 400 naming price_per_gpu_hour" 400 price_per_gpu_hour
req POST /v1/sizing/training -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"gpu":"zz-unpriced","objective":"cost","price_per_gpu_hour":2}'
check "objective cost with the request's price" 201 '.plans[0].cost > 0 and ([.checks.warnings[] | select(test("no price"))] | length) == 0'
req POST /v1/sizing/inference -d '{"model":"llama-3-8b","prompt_tokens":512,"output_tokens":128,"gpu":"zz-unpriced","requests_per_s":1}'
check "inference without a price: a warning says the 0 costs are not free" 201 \
	'.plans[0].cost_per_hour == 0 and ([.warnings[] | select(test("no price"))] | length) == 1'

# the stored request sizes the same job when POSTed again: prices and
# power_limits are kept under the GPUs' own names, as gpus is
req POST /v1/sizing/compare -d '{"training":{"model":"llama-3-8b","seq_len":2048,"train_tokens":1e10,"max_gpus":64},"gpus":["h100","b200"],"prices":{"b200":4},"power_limits":{"h100":550}}'
check "a compare with short names in prices and power_limits" 201 \
	'.request.prices == {"b200-sxm-180gb":4} and .request.power_limits == {"h100-sxm5-80gb":550}'
jq -c '[.rows[] | {gpu, cost, days}]' "$T/body" >"$T/rows1"
jq -c .request "$T/body" >"$T/replay.json"
req POST /v1/sizing/compare -d @"$T/replay.json"
check "its stored request, POSTed again, gives the same rows" 201 "[.rows[] | {gpu, cost, days}] == $(cat "$T/rows1")"
req POST /v1/sizing/compare -d '{"training":{"model":"llama-3-8b","seq_len":2048,"train_tokens":1e10,"max_gpus":64},"gpus":["h100","b200"],"prices":{"h100":1,"h100-sxm5-80gb":9}}'
check_problem "two prices for one GPU (as asked and by its own name): 400" 400 'prices.h100-sxm5-80gb'

check_alive "daemon alive"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

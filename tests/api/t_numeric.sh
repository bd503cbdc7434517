#!/usr/bin/env bash
# Numeric edges (issue 15 item 2): subnormal, huge and negative-zero
# numbers on every real-valued input are refused with a 400 naming the
# field and its allowed range; valid values at the edges of each range
# answer 201 with every member present and every number finite, and the
# stored recommendation is the answer.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
J=(-H 'Content-Type: application/json')
admin=$(create_token "numeric-admin-$RANDOM$RANDOM" admin)
probe=$(create_token "numeric-probe-$RANDOM$RANDOM" probe)
A=(-H "Authorization: Bearer $admin")
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')

trn='"model":"llama-2-7b","seq_len":2048,"gpu":"h100-sxm5-80gb","max_gpus":64'
inf='"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb"'

# range_named NAME FIELD: the 400 names FIELD and states its range.
range_named() {
	if jq -e --arg f "$2" '[.errors[] | select(.field == $f) | .message
		| test("\\[[-0-9.e+]+, [-0-9.e+]+\\]")] | any' "$T/body" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1" "$(head -c 400 "$T/body")"
	fi
}

# --- the issue's inputs
req POST /v1/sizing/training "${J[@]}" -d '{'"$trn"',"train_tokens":2e11,"price_per_gpu_hour":5e-324}'
check_problem "training: price_per_gpu_hour 5e-324 is a 400 naming it" 400 price_per_gpu_hour
range_named "training: the 400 states price_per_gpu_hour's range" price_per_gpu_hour
req POST /v1/sizing/training "${J[@]}" -d '{'"$trn"',"train_tokens":5e-324}'
check_problem "training: train_tokens 5e-324 is a 400 naming it" 400 train_tokens
range_named "training: the 400 states train_tokens' range" train_tokens
req POST /v1/sizing/inference "${J[@]}" -d '{'"$inf"',"price_per_gpu_hour":5e-324}'
check_problem "inference: price_per_gpu_hour 5e-324 is a 400 naming it" 400 price_per_gpu_hour
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"],"prices":{"h100-sxm5-80gb":5e-324}}'
check_problem "compare: a price of 5e-324 is a 400 naming it" 400 prices.h100-sxm5-80gb
range_named "compare: the 400 states the price range" prices.h100-sxm5-80gb

tiny=tiny-gpu-$RANDOM$RANDOM
gpu=$(curl -s "$GSZ_URL/v1/gpus/a100-sxm4-80gb" | jq -c 'del(.name, .created_at, .updated_at)')
req PUT "/v1/gpus/$tiny" "${A[@]}" -d "$(jq -c '.price_per_gpu_hour = 1e-310' <<<"$gpu")"
check_problem "catalog: a GPU priced 1e-310 is a 400 naming price_per_gpu_hour" 400 price_per_gpu_hour
range_named "catalog: the 400 states the price range" price_per_gpu_hour
req GET "/v1/gpus/$tiny"
check_problem "catalog: the refused GPU was not stored" 404

fixture=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
host=numeric-$RANDOM$RANDOM
jq --arg now "$now" --arg h "$host" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
	'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now
	| .results |= map(if .metric == "gemm_tflops" then .median = 1e-310 else . end)' "$fixture" >"$T/tiny.json"
first=$(jq '[.results[] | .metric == "gemm_tflops"] | index(true)' "$T/tiny.json")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/tiny.json"
check_problem "probe: GEMM medians of 1e-310 are a 400 naming the result's median" 400 "results[$first].median"
range_named "probe: the 400 states the median's range" "results[$first].median"
req GET "/v1/nodes/$host"
check_problem "probe: nothing of the refused report was stored" 404
for k in p10 cv efficiency limit; do
	jq --arg k "$k" '.run_id = "'"$(cat /proc/sys/kernel/random/uuid)"'" | .results[0][$k] = 1e-300' "$T/tiny.json" |
		jq '.results |= map(if .median == 1e-310 then .median = 700 else . end)' >"$T/one.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/one.json"
	check_problem "probe: a $k of 1e-300 is a 400 naming it" 400 "results[0].$k"
done

# --- more edges on a few fields: huge, negative zero, tiny but normal
edge() { # NAME PATH BODY WANT_FIELD
	req POST "$2" "${J[@]}" -d "$3"
	check_problem "$1" 400 "$4"
}
edge "training: train_tokens 1e308 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":1e308}' train_tokens
edge "training: train_tokens 1e-300 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":1e-300}' train_tokens
edge "training: train_tokens 0.5 is a 400 (below one token)" /v1/sizing/training '{'"$trn"',"train_tokens":0.5}' train_tokens
edge "training: deadline_days 1e-300 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":2e11,"deadline_days":1e-300}' deadline_days
edge "training: price 1e308 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":2e11,"price_per_gpu_hour":1e308}' price_per_gpu_hour
edge "training: price 1e-300 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":2e11,"price_per_gpu_hour":1e-300}' price_per_gpu_hour
edge "training: inter_node_gbps 5e-324 is a 400" /v1/sizing/training '{'"$trn"',"train_tokens":2e11,"inter_node_gbps":5e-324}' inter_node_gbps
edge "inference: requests_per_s 1e-300 is a 400" /v1/sizing/inference '{'"$inf"',"requests_per_s":1e-300}' requests_per_s
edge "inference: ttft_ms 1e308 is a 400" /v1/sizing/inference '{'"$inf"',"ttft_ms":1e308}' ttft_ms
edge "inference: tpot_ms 5e-324 is a 400" /v1/sizing/inference '{'"$inf"',"tpot_ms":5e-324}' tpot_ms
edge "inference: memory_utilization -0 is a 400" /v1/sizing/inference '{'"$inf"',"memory_utilization":-0}' memory_utilization
edge "compare: a price of -0 is a 400" /v1/sizing/compare '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["h100-sxm5-80gb"],"prices":{"h100-sxm5-80gb":-0}}' prices.h100-sxm5-80gb
edge "compare: a price of 1e-300 is a 400" /v1/sizing/compare '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["h100-sxm5-80gb"],"prices":{"h100-sxm5-80gb":1e-300}}' prices.h100-sxm5-80gb
edge "compare: the job's train_tokens 5e-324 is a 400 under training." /v1/sizing/compare '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":5e-324,"max_gpus":64},"gpus":["h100-sxm5-80gb"]}' training.train_tokens
for f in memory_gib bf16_tflops intra_node_gbps; do
	req PUT "/v1/gpus/$tiny" "${A[@]}" -d "$(jq -c --arg f "$f" '.[$f] = 1e-300' <<<"$gpu")"
	check_problem "catalog: $f 1e-300 is a 400 naming it" 400 "$f"
done
req PUT "/v1/gpus/$tiny" "${A[@]}" -d "$(jq -c '.memory_gib = 1e308' <<<"$gpu")"
check_problem "catalog: memory_gib 1e308 is a 400 naming it" 400 memory_gib
# -0 is zero: a price of -0 on a request means no override, as 0 does.
req POST /v1/sizing/training "${J[@]}" -d '{'"$trn"',"train_tokens":2e11,"price_per_gpu_hour":-0}'
check "training: price -0 is zero (the catalog price), not -0 in the answer" 201 '.plans[0].cost > 0'

# --- valid values at the edges of each range: 201, every member present,
# every number finite, nothing null that is not documented as nullable,
# and the stored recommendation is the same text.
# meets_deadline is in a plan only with a deadline (issue 16): checked where one is given.
training_members='["assumptions","basis","checks","created_at","flops","global_batch_size","gpu","id","kind","layouts_evaluated","min_gpus","min_gpus_no_offload","model","plans","request"]'
training_plan='["binding","cost","days","dp","flash_attention","global_batch_size","gpu_hours","gpus","grad_accum","hfu","memory_gib","mfu","micro_batch","nodes","offload","pp","recompute","sequence_parallel","time_s","tokens_per_s","tokens_per_s_per_gpu","tp","zero"]'
inference_members='["assumptions","basis","created_at","gpu","id","kind","memory","model","plans","request","warnings"]'
inference_plan='["batch","binding","capacity","cost_per_hour","cost_per_million_output_tokens","decode_batch","decode_bound","gpus","max_batch_fit","mbu","meets_targets","memory_gib","output_tokens_per_s","pp","replicas","requests_per_s","total_output_tokens_per_s","tp","tpot_ms","ttft_ms","utilization"]'
compare_members='["cost_basis","created_at","id","job","kind","model","request","rows","time_basis","verdict"]'
# Paths where null is the documented "not applicable".
nullable='["load_value","max_num_seqs","max_num_batched_tokens"]'

# whole NAME KIND: the answer in $T/body is complete (see above).
whole() {
	local name=$1 kind=$2 members plan ok=1 why=""
	case $kind in
	training) members=$training_members plan=$training_plan ;;
	inference) members=$inference_members plan=$inference_plan ;;
	compare) members=$compare_members plan='[]' ;;
	esac
	if [ "$STATUS" != 201 ]; then
		ok=0 why="status $STATUS: $(head -c 300 "$T/body")"
	elif ! jq -e --argjson m "$members" --argjson p "$plan" --arg k "$kind" '
		.kind == $k and ($m - keys == [])
		and ((.plans // [{}]) | length >= 1)
		and all((.plans // [])[]; ($p - keys) == [])
		and all((.rows // [])[]; has("gpu") and has("ok") and has("price_per_gpu_hour")
			and (if .ok then has("cost") or has("cost_per_hour") else has("reason") end))' "$T/body" >/dev/null 2>&1; then
		ok=0 why="members missing: $(jq -c --argjson m "$members" --argjson p "$plan" '{top: ($m - keys), plan: ($p - ((.plans // [{}])[0] | keys))}' "$T/body" 2>&1 | head -c 300)"
	elif ! jq -e --argjson n "$nullable" '[paths(. == null) | select((.[-1] | tostring) as $k | $n | index($k) | not)] == []' "$T/body" >/dev/null 2>&1; then
		ok=0 why="unexpected nulls: $(jq -c --argjson n "$nullable" '[paths(. == null) | select((.[-1] | tostring) as $k | $n | index($k) | not)] | .[:5]' "$T/body")"
	elif grep -qE '(nan|inf)x|[^A-Za-z](nan|NaN|inf|Infinity)[^A-Za-z]' "$T/body"; then
		ok=0 why="inf/nan in the text: $(grep -oE '.{30}(nan|NaN|inf|Infinity).{10}' "$T/body" | head -n 3)"
	fi
	if [ $ok = 1 ]; then
		cp "$T/body" "$T/answer.json"
		req GET "$(header Location)"
		if [ "$STATUS" != 200 ] || ! cmp -s "$T/body" "$T/answer.json"; then
			ok=0 why="stored recommendation differs: $STATUS $(head -c 200 "$T/body")"
		fi
	fi
	[ $ok = 1 ] && ok "$name" || not_ok "$name" "$why"
}

# the shortest run is one sequence (seq_len 2048; fewer is a 400 since
# review s15)
for tt in 2048 2e11 1e18; do
	for price in 1e-6 3.2 1e4; do
		req POST /v1/sizing/training "${J[@]}" -d '{'"$trn"',"train_tokens":'"$tt"',"price_per_gpu_hour":'"$price"'}'
		whole "training edge: train_tokens $tt, price $price: complete and finite" training
	done
done
for dd in 1e-6 1e6; do
	req POST /v1/sizing/training "${J[@]}" -d '{'"$trn"',"train_tokens":1e18,"deadline_days":'"$dd"',"price_per_gpu_hour":1e-6,"inter_node_gbps":1e-3}'
	whole "training edge: deadline_days $dd, inter_node_gbps 1e-3: complete and finite" training
	jq -e 'all(.plans[]; has("meets_deadline"))' "$T/body" >/dev/null &&
		ok "training edge: deadline_days $dd: every plan says meets_deadline" ||
		not_ok "training edge: deadline_days $dd: every plan says meets_deadline"
done
for load in '"requests_per_s":1e-9' '"requests_per_s":1e7' '"concurrent_sequences":1e-9' '"output_tokens_per_s":1e-9' '"output_tokens_per_s":1e10'; do
	for price in 1e-6 1e4; do
		req POST /v1/sizing/inference "${J[@]}" -d '{'"$inf"','"$load"',"price_per_gpu_hour":'"$price"',"max_gpus":1048576}'
		if [ "$STATUS" = 422 ]; then
			check_problem "inference edge: $load, price $price: a 422 (infeasible) names the load" 422
		else
			whole "inference edge: $load, price $price: complete and finite" inference
		fi
	done
done
req POST /v1/sizing/inference "${J[@]}" -d '{'"$inf"',"ttft_ms":1e7,"tpot_ms":1e7,"memory_utilization":0.05,"max_utilization":1}'
whole "inference edge: targets 1e7 ms, memory_utilization 0.05: complete and finite" inference
for prices in '{"a100-sxm4-80gb":1e-6,"h100-sxm5-80gb":1e4}' '{"a100-sxm4-80gb":1e4,"h100-sxm5-80gb":1e-6}' '{"a100-sxm4-80gb":1e-6,"h100-sxm5-80gb":1e-6}'; do
	req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e18,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"],"prices":'"$prices"'}'
	whole "compare edge: prices $prices: complete and finite" compare
	jq -e '(.rows | length) == 2 and ([.rows[] | select(.cheapest)] | length) == 1' "$T/body" >/dev/null &&
		ok "compare edge: prices $prices: both rows present, one named cheapest" ||
		not_ok "compare edge: prices $prices: both rows present, one named cheapest" "$(head -c 300 "$T/body")"
done
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"requests_per_s":1e-9},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb"],"prices":{"a100-sxm4-80gb":1e-6,"h100-sxm5-80gb":1e4}}'
whole "compare edge: inference at 1e-9 req/s, prices 1e-6 and 1e4: complete and finite" compare

# A GPU at the edges of the catalog's ranges is sized with a complete
# answer (or refused as infeasible), never a 500.
edge_gpu=edge-gpu-$RANDOM$RANDOM
req PUT "/v1/gpus/$edge_gpu" "${A[@]}" -d "$(jq -c '.price_per_gpu_hour = 1e-6 | .fp64_tflops = 1e-6 | .fp32_tflops = 1e-6 | .tf32_tflops = 1e-6 | .bf16_tflops = 1e-6 | .fp16_tflops = 1e-6 | .memory_bandwidth_gbps = 0.001 | .intra_node_gbps = 0.001 | .inter_node_gbps = 0.001' <<<"$gpu")"
check "catalog: a GPU at the bottom of every range is stored" 201
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"'"$edge_gpu"'","train_tokens":1e18,"max_gpus":64}'
whole "training on the edge GPU: complete and finite" training
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"'"$edge_gpu"'"}'
if [ "$STATUS" = 422 ]; then check_problem "inference on the edge GPU: infeasible is a 422" 422; else whole "inference on the edge GPU: complete and finite" inference; fi
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["h100-sxm5-80gb","'"$edge_gpu"'"]}'
whole "compare with the edge GPU: complete and finite" compare

# --- the read path: rows that validation now refuses but the database
# may hold (stored before the floor, or written around the API) neither
# calibrate sizing nor show in the fleet view: skipped, not NaN.
deploy_pg() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$dbname" "$1"; }
dbname=$(printf '%s\n' "$DATABASE_URL" | grep -o 'dbname=[^ ]*' | cut -d= -f2)
planted=planted-gpu-$RANDOM$RANDOM
req PUT "/v1/gpus/$planted" "${A[@]}" -d "$(curl -s "$GSZ_URL/v1/gpus/h100-sxm5-80gb" | jq -c 'del(.name, .created_at, .updated_at)')"
check "read path: a GPU type for planted measurements" 201
phost=planted-$RANDOM$RANDOM
prun=$(cat /proc/sys/kernel/random/uuid)
jq --arg now "$now" --arg h "$phost" --arg r "$prun" \
	'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now' "$fixture" >"$T/planted.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/planted.json"
check "read path: a valid report is stored" 201
# Planted where the reads take them from: the run's rollups (its results
# are not rows since migrations/0020; the rollups skip such values when
# they are made, so only a write around the API leaves them there).
bad() { # COLUMN [METRICS DTYPES]: the rollup array COLUMN with the planted values
	echo "ARRAY(SELECT CASE WHEN m = 'gemm_tflops' AND d = 'bf16' THEN 1e-310::float8
		WHEN m = 'gemm_tflops' THEN 'NaN'::float8 WHEN m LIKE 'hbm_%' THEN 'Infinity'::float8
		ELSE x END FROM unnest(${2:-metrics}, ${3:-dtypes}, $1) WITH ORDINALITY u (m, d, x, i) ORDER BY i)"
}
badlim() { # [METRICS]
	echo "ARRAY(SELECT CASE WHEN m LIKE 'nccl_%' THEN 'NaN'::float8 ELSE x END
	FROM unnest(${1:-metrics}, lim) WITH ORDINALITY u (m, x, i) ORDER BY i)"
}
# (a GPU's rollup row names its metrics through its shape, migrations/0020)
sm="(SELECT s.metrics FROM rollup_shapes s WHERE s.shape = rollup_gpu_runs.shape)"
sd="(SELECT s.dtypes FROM rollup_shapes s WHERE s.shape = rollup_gpu_runs.shape)"
if deploy_pg "UPDATE rollup_type_runs SET gpu_type = '$planted', v = $(bad v) WHERE run_id = '$prun'" >/dev/null &&
	deploy_pg "UPDATE rollup_gpu_runs SET v = $(bad v "$sm" "$sd"), v_week = $(bad "coalesce(v_week, v)" "$sm" "$sd"),
		lim = $(badlim "$sm") WHERE run_id = '$prun'" >/dev/null &&
	deploy_pg "UPDATE rollup_gpu_latest SET v = $(bad v), v_week = $(bad v_week), lim = $(badlim) WHERE run_id = '$prun'" >/dev/null &&
	deploy_pg "UPDATE node_gpus SET gpu_type = '$planted' WHERE hostname = '$phost'" >/dev/null; then
	ok "read path: GEMM medians of 1e-310 and NaN, HBM Infinity, NCCL limits NaN planted"
else
	not_ok "read path: GEMM medians of 1e-310 and NaN, HBM Infinity, NCCL limits NaN planted"
fi
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"'"$planted"'","train_tokens":2e11,"max_gpus":64,"calibration":"auto"}'
whole "read path: training on the planted type (auto): complete and finite" training
jq -e '.basis.gemm_tflops.source != "measured" and .basis.gemm_tflops.value > 100
	and (.basis.hbm_gbps.source != "measured")' "$T/answer.json" >/dev/null 2>&1 &&
	ok "read path: planted GEMM and HBM medians do not calibrate (auto)" ||
	not_ok "read path: planted GEMM and HBM medians do not calibrate (auto)" "$(jq -c .basis "$T/answer.json" 2>&1 | head -c 300)"
# measured: every GEMM median planted is unusable, so the job's bf16 GEMM
# was not measured: the 422, not an answer from the datasheet
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"'"$planted"'","train_tokens":2e11,"max_gpus":64,"calibration":"measured"}'
check_problem "read path: training on the planted type (measured): 422, its GEMM medians unusable" 422 calibration
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"'"$planted"'"}'
whole "read path: inference on the planted type: complete and finite" inference
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["h100-sxm5-80gb","'"$planted"'"],"prices":{"'"$planted"'":2}}'
whole "read path: compare with the planted type: complete and finite" compare
req GET /v1/fleet
check "read path: the fleet view answers" 200 '.items | length >= 1'
if grep -qE '"(NaN|Infinity|-Infinity)"|1e-310' "$T/body"; then
	not_ok "read path: the fleet view shows no NaN, Infinity or 1e-310" "$(grep -oE '.{60}"(NaN|Infinity)".{10}' "$T/body" | head -n 3)"
else
	ok "read path: the fleet view shows no NaN, Infinity or 1e-310"
fi
jq -e --arg k "$planted" '[.items[] | select(.gpu_type == $k) | .metrics[]
	| select(.metric == "gemm_tflops" or (.metric | startswith("hbm_")))] == []' "$T/body" >/dev/null &&
	ok "read path: the planted GEMM and HBM rows are skipped in the fleet view" ||
	not_ok "read path: the planted GEMM and HBM rows are skipped in the fleet view" "$(jq -c --arg k "$planted" '[.items[] | select(.gpu_type == $k)]' "$T/body" | head -c 400)"

# A catalog price stored before the floor (1e-310) reads as no price.
cheap=cheap-gpu-$RANDOM$RANDOM
req PUT "/v1/gpus/$cheap" "${A[@]}" -d "$gpu"
check "read path: a GPU type for a planted price" 201
if deploy_pg "UPDATE gpus SET price_per_gpu_hour = 1e-310 WHERE name = '$cheap'" >/dev/null; then
	ok "read path: a catalog price of 1e-310 planted"
else
	not_ok "read path: a catalog price of 1e-310 planted"
fi
sleep 2.1 # the catalog cache (2 s)
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"'"$cheap"'","train_tokens":2e11,"max_gpus":64}'
whole "read path: training on a GPU priced 1e-310: complete and finite" training
jq -e '.plans[0].cost == 0' "$T/answer.json" >/dev/null 2>&1 &&
	ok "read path: a price of 1e-310 costs as no price (0)" ||
	not_ok "read path: a price of 1e-310 costs as no price (0)" "$(jq -c '.plans[0].cost' "$T/answer.json" 2>&1)"
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":2e11,"max_gpus":64},"gpus":["h100-sxm5-80gb","'"$cheap"'"]}'
check_problem "read path: compare asks for a price instead of ranking a GPU priced 1e-310" 400 'gpus[1]'

check_alive "daemon alive after the numeric edges"
! grep -q '"status":500' "$GSZ_LOG" && ok "no 500 in the log" || not_ok "no 500 in the log" "$(grep '"status":500' "$GSZ_LOG" | head -n 3)"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

#!/usr/bin/env bash
# Probe reports: ingestion (idempotent by run_id), queries, nodes, the fleet
# view with degraded GPUs, and calibration of sizing from measurements.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "probe-$RANDOM$RANDOM" probe)
admin=$(create_token "admin-$RANDOM$RANDOM" admin)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
fixture=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)

# The synthetic fixture, made recent, on a host of its own.
host=node-$RANDOM$RANDOM
run=$(cat /proc/sys/kernel/random/uuid)
jq --arg now "$now" --arg h "$host" --arg r "$run" \
	'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now' "$fixture" >"$T/r1.json"

req POST /v1/benchmarks -H 'Content-Type: application/json' --data-binary @"$T/r1.json"
check_problem "POST /v1/benchmarks without a token is 401" 401
req POST /v1/benchmarks -H "Authorization: Bearer $admin" --data-binary @"$T/r1.json"
check_problem "POST /v1/benchmarks with an admin-only token is 403" 403
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r1.json"
check "a probe report is stored: 201" 201 ".run_id == \"$run\" and .gpus == 8 and .results == 290 and .hostname == \"$host\""
[ "$(header Location)" = "/v1/benchmarks/$run" ] && ok "201 carries Location" || not_ok "201 carries Location"
cp "$T/body" "$T/a1.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r1.json"
check "the same run_id again answers the same" 201
cmp -s "$T/body" "$T/a1.json" && ok "the replay's answer is identical" || not_ok "the replay's answer is identical" "$(body)"
req GET "/v1/benchmarks?run_id=$run&limit=500"
check "the replay stored nothing twice" 200 '(.items | length) == 290'
# The run's results hold one block of ids (migrations/0007), in report order.
jq -e --slurpfile rep "$T/r1.json" '[.items[].id] as $ids | ($ids | min) % 32768 == 0
	and ($ids | max) - ($ids | min) == 289
	and ([.items[].metric] | reverse) == [$rep[0].results[].metric]
	and ([.items[].peer_index] | reverse) == [$rep[0].results[].peer_index]' "$T/body" >/dev/null &&
	ok "a run's results have consecutive ids from its block, in report order" ||
	not_ok "a run's results have consecutive ids from its block, in report order" "$(jq -c '[.items[].id] | [min, max]' "$T/body")"
# Every number as posted (sent to PostgreSQL as binary arrays): the
# statistics exactly, integers, and nulls as nulls.
bad=$(jq -c --slurpfile rep "$T/r1.json" '[.items | reverse | to_entries[] | .key as $i | .value as $got
	| $rep[0].results[$i] as $want
	| select([$got.median, $got.max, $got.mean, $got.p10, $got.p90, $got.cv, $got.limit, $got.efficiency, $got.n, $got.size_bytes, $got.peer_index]
		!= [$want.median, $want.max, $want.mean, $want.p10, $want.p90, $want.cv, $want.limit, $want.efficiency, $want.n, $want.size_bytes, $want.peer_index])
	| $i] | .[:5]' "$T/body")
[ "$bad" = "[]" ] && ok "every result's numbers are stored as posted" || not_ok "every result's numbers are stored as posted" "rows $bad"
jq '.results[0].median = 1' "$T/r1.json" >"$T/r1b.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r1b.json"
check_problem "a different report reusing a run_id is 409" 409

req GET "/v1/benchmarks/$run"
check "GET /v1/benchmarks/{run_id} returns the run and its report" 200 ".run_id == \"$run\" and .report.node.hostname == \"$host\" and (.report.results | length) == 290"
req GET "/v1/benchmarks?node=$host&metric=gemm_tflops&dtype=bf16"
check "results filter by node, metric and dtype" 200 '(.items | length) == 8 and all(.items[]; .metric == "gemm_tflops" and .dtype == "bf16" and .gpu_type == "h100-sxm5-80gb")'
req GET "/v1/benchmarks?node=$host&limit=100"
check "results page 1" 200 '(.items | length) == 100 and (.next_cursor | type) == "string"'
c=$(jq -r .next_cursor "$T/body")
req GET "/v1/benchmarks?node=$host&limit=500&cursor=$c"
check "results page 2 holds the rest" 200 '(.items | length) == 190 and .next_cursor == null'
req GET "/v1/benchmarks?since=garbage"
check_problem "a bad since is a 400" 400 since
# review s16b F8: metric and dtype are closed lists (a typo was an empty
# history); gpu_type forgives names as sizing does
req GET "/v1/benchmarks?metric=nosuch"
check_problem "an unknown metric is a 400 listing the metrics" 400 metric
grep -q 'gemm_tflops' "$T/body" && ok "the metric 400 lists the known ones" || not_ok "the metric 400 lists the known ones" "$(body)"
req GET "/v1/benchmarks?dtype=bf8"
check_problem "an unknown dtype is a 400" 400 dtype
req GET "/v1/benchmarks?metric=hbm_read_gbps&metric=nope"
check_problem "a filter given twice is a 400 (the second went unseen)" 400 metric
req GET "/v1/benchmarks?metric="
check_problem "an empty metric: one 400" 400 metric
jq -e '(.errors | length) == 1' "$T/body" >/dev/null && ok "an empty metric is named once" || not_ok "an empty metric is named once" "$(body)"
req GET "/v1/benchmarks?node=$host&gpu_type=h100&metric=gemm_tflops&dtype=bf16"
check "gpu_type=h100 finds what is stored under h100-sxm5-80gb" 200 '(.items | length) == 8 and all(.items[]; .gpu_type == "h100-sxm5-80gb")'
req GET "/v1/benchmarks/00000000-0000-4000-8000-000000000000"
check_problem "an unknown run is 404" 404

req GET /v1/nodes
check "GET /v1/nodes lists the node, its GPU count and types" 200 "([.items[].hostname] | index(\"$host\") != null)
	and (.items[] | select(.hostname == \"$host\") | .gpus == 8 and .gpu_types == [\"h100-sxm5-80gb\"])"
req GET "/v1/nodes/$host"
check "GET /v1/nodes/{hostname}: inventory and runs" 200 "(.gpus | length) == 8 and .gpus[0].gpu_type == \"h100-sxm5-80gb\" and .gpus[0].pcie.gen_max == 5 and .runs[0].run_id == \"$run\""
req GET /v1/nodes/nope.example
check_problem "an unknown node is 404" 404

# A second node whose GPU 3 is slow and trained down to PCIe Gen4.
host2=node-$RANDOM$RANDOM
run2=$(cat /proc/sys/kernel/random/uuid)
jq --arg now "$now" --arg h "$host2" --arg r "$run2" '
	.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now
	| .gpus |= map(.uuid |= sub("0000-4000"; "1111-4000"))
	| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("0000-4000"; "1111-4000") else . end)
	| .gpus[3].pcie.gen_current = 4
	| .results |= map(if .gpu_index == 3 and .metric == "gemm_tflops" then .median = .median * 0.7 else . end)' \
	"$fixture" >"$T/r2.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r2.json"
check "a second node's report is stored" 201
req GET /v1/fleet
check "fleet: H100 type with 16 GPUs on 2 nodes" 200 '.items[] | select(.gpu_type == "h100-sxm5-80gb") | .gpus >= 16 and .nodes >= 2'
jq -e '.items[] | select(.gpu_type == "h100-sxm5-80gb") | .metrics[] | select(.metric == "gemm_tflops" and .dtype == "bf16") | (.fleet_median > 700 and .datasheet == 989.4 and .efficiency > 0.5)' "$T/body" >/dev/null &&
	ok "fleet: measured median beside the datasheet" || not_ok "fleet: measured median beside the datasheet" "$(jq -c '.items[0].metrics[0]' "$T/body")"
jq -e --arg h "$host2" '.items[] | select(.gpu_type == "h100-sxm5-80gb") | .degraded | map(select(.hostname == $h and .index == 3)) | length == 1' "$T/body" >/dev/null &&
	ok "fleet: the slow GPU is flagged degraded" || not_ok "fleet: the slow GPU is flagged degraded" "$(jq -c '.items[0].degraded' "$T/body")"
jq -e --arg h "$host2" '.items[] | select(.gpu_type == "h100-sxm5-80gb") | .degraded[] | select(.hostname == $h and .index == 3) | (.reasons | map(test("under the fleet median")) | any) and (.reasons | map(test("PCIe")) | any)' "$T/body" >/dev/null &&
	ok "fleet: the reasons say why (30% under the median, PCIe Gen4 of Gen5)" || not_ok "fleet: the reasons say why" "$(jq -c '.items[0].degraded' "$T/body")"
jq -e --arg h "$host2" '[.items[] | .degraded[] | select(.hostname == $h and .index != 3)] | length == 0' "$T/body" >/dev/null &&
	ok "fleet: healthy GPUs are not flagged" || not_ok "fleet: healthy GPUs are not flagged"
req GET '/v1/fleet?window_days=0'
check_problem "fleet: a bad window is a 400" 400 window_days
# Windows are bounded (a year): what the view reads grows with them.
req GET '/v1/fleet?window_days=366'
check "fleet: a year's window is served" 200 '.window_days == 366 and (.items | length) >= 1'
req GET '/v1/fleet?window_days=367'
check_problem "fleet: a window beyond 366 days is a 400 naming it" 400 window_days
jq -e '.errors[0].message == "must be an integer in [1, 366]"' "$T/body" >/dev/null &&
	ok "fleet: the 400 says the bound" || not_ok "fleet: the 400 says the bound" "$(body)"
req GET '/v1/fleet?window_days=3650'
check_problem "fleet: a ten-year window is a 400" 400 window_days

# Calibration: sizing now rests on the measured medians.
job='{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1}'
req POST /v1/sizing/training -d "$job"
check "calibration auto: GEMM rate from the fleet, with sample counts" 201 \
	'.basis.gemm_tflops.source == "measured" and .basis.gemm_tflops.samples >= 1 and .basis.gemm_tflops.measured_median > 760 and .basis.gemm_tflops.measured_median < 800 and .basis.probe_runs >= 2'
# The best-shape median keeps the datasheet path's in-step retention
# (0.75/0.869): a fleet at mamf-finder's figure sizes like the datasheet.
check "calibration: the measured GEMM median times the in-step retention, both in basis" 201 \
	'.basis.gemm_tflops.in_step_retention == 0.863 and (.basis.gemm_tflops.value - .basis.gemm_tflops.measured_median * 0.75 / 0.869 | fabs) < 0.1 and .basis.gemm_tflops.value < 700 and (.basis.hbm_gbps | has("in_step_retention") | not)'
req POST /v1/sizing/training -d "$(echo "$job" | jq -c '.calibration = "datasheet"')"
check "calibration datasheet: datasheet x efficiency" 201 '.basis.gemm_tflops.source | test("datasheet")'
req POST /v1/sizing/training -d "$(echo "$job" | jq -c '.calibration = "measured"')"
check "calibration measured: accepted where measured" 201 '.basis.gemm_tflops.source == "measured"'
# A measured rate ran under its nodes' own power limit: a request's limit
# is shown, not applied again (engine/hw.h hw_power_cap_basis).
req POST /v1/sizing/training -d "$(echo "$job" | jq -c '.calibration = "measured" | .power_limit_w = 500')"
check "calibration measured with power_limit_w: shown, not applied (ratio 1)" 201 \
	'.basis.gemm_tflops.source == "measured" and .basis.gemm_tflops.power_limit == {"limit_w":500,"board_power_w":700,"slope":0.546,"ratio":1,"applied":false}'
req POST /v1/sizing/inference -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb"}'
check "inference is calibrated too (HBM read rate)" 201 '.basis.hbm_gbps.source == "measured"'

# The metrics calibration needs (issue 14): sustained plan GEMMs,
# all-gather and reduce-scatter curves, all-reduce latency by rank count
# (GPUs of its own, so no other node's inventory changes).
run3=$(cat /proc/sys/kernel/random/uuid)
jq --arg now "$now" --arg h "node-$RANDOM$RANDOM" --arg r "$run3" '.run_id = $r | .node.hostname = $h
	| .started_at = $now | .finished_at = $now
	| (.results | map(select(.metric == "gemm_tflops" and .dtype == "bf16")) | .[0]) as $g
	| (.results | map(select(.metric == "nccl_allreduce_busbw_gbps")) | .[0]) as $n
	| .results = [$g + {metric: "gemm_sustained_tflops", shape: {m: 1280, n: 4096, k: 8192}},
		$n + {metric: "nccl_allgather_busbw_gbps"}, $n + {metric: "nccl_allgather_algbw_gbps"},
		$n + {metric: "nccl_reducescatter_busbw_gbps"}, $n + {metric: "nccl_reducescatter_algbw_gbps"},
		$n + {metric: "nccl_allreduce_latency_us", unit: "us", size_bytes: 8, nranks: 2, limit: null, efficiency: null}]
	| .gpus |= map(.uuid = "T14-" + .uuid)
	| .results |= map(if .gpu_uuid then .gpu_uuid = "T14-" + .gpu_uuid else . end)' \
	"$fixture" >"$T/r3.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/r3.json"
check "a report with sustained GEMM, all-gather, reduce-scatter and latency metrics is stored" 201 '.results == 6'
req GET "/v1/benchmarks?run_id=$run3&metric=nccl_allreduce_latency_us"
check "the all-reduce latency is listed by its metric" 200 '(.items | length) == 1 and .items[0].unit == "us"'
req GET "/v1/benchmarks?run_id=$run3&metric=gemm_sustained_tflops"
check "the sustained GEMM rate is listed by its metric" 200 '(.items | length) == 1 and .items[0].dtype == "bf16"'

# A node without GPUs reports no_device; bad reports name the field.
nd=$(cat /proc/sys/kernel/random/uuid)
jq --arg r "$nd" '.run_id = $r' "$TOP/tests/fixtures/probe/report_synthetic_no_device.json" >"$T/nd.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/nd.json"
check "a no_device report is stored" 201 '.status == "no_device" and .gpus == 0'
for mut in 'del(.run_id)|run_id' '.run_id = "x"|run_id' '.schema_version = 2|schema_version' '.status = "great"|status' \
	'del(.node)|node' '.node.hostname = "a b"|node.hostname' '.results = [{"metric":"vibes","unit":"x"}]|results[0].metric' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","gpu_uuid":"GPU-nope"}]|results[0].gpu_uuid' \
	'.gpus = [{"index":0,"uuid":"a","name":"x"},{"index":1,"uuid":"a","name":"x"}]|gpus[1].uuid' \
	'.results = [{"metric":"hbm_read_gbps","unit":"GB/s","median":"fast"}]|results[0].median' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf16","median":-500}]|results[0].median' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf16","status":"ok","median":null}]|results[0].median' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf99","median":700}]|results[0].dtype' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf16","median":700,"cv":-1}]|results[0].cv' \
	'.node.gpu_count = -8|node.gpu_count' '.node.hostname = ".."|node.hostname' \
	'.node.hostname = "node1."|node.hostname' '.node.hostname = "-"|node.hostname' \
	'.node.cpu_model = "a\u2028b"|node.cpu_model' '.node.cpu_model = "a\u0085b"|node.cpu_model' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","median":700}]|results[0].dtype' \
	'.results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf16","median":700,"n":0}]|results[0].n' \
	'.node.cpu_model = "x\u202ey"|node.cpu_model' \
	'.gpus = [{"index":0,"uuid":"a","name":"bell\u0007"}]|gpus[0].name' \
	'.started_at = "9999-12-31T23:00:00Z" | .finished_at = "9999-12-31T23:59:59Z"|started_at'; do
	f=${mut%|*}
	field=${mut##*|}
	jq --arg r "$(cat /proc/sys/kernel/random/uuid)" ".run_id = \$r | $f" "$T/nd.json" >"$T/bad.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/bad.json"
	check_problem "a report with a bad $field is a 400 naming it" 400 "$field"
done

# review s17c F5: a gpu_type names the catalog type of a GPU whose NVML
# name maps to none; where the name maps, the name decides, and a gpu_type
# naming another type is refused (an H100 labelled b200-sxm-180gb had made
# every B200 answer "measured" at H100 rates).
mkrun() { jq --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "f5-$RANDOM$RANDOM" --arg now "$now" \
	'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now
	 | .gpus |= map(.uuid |= sub("5e7e71c0"; "f5f5f5f5"))
	 | .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; "f5f5f5f5") else . end
		| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; "f5f5f5f5") else . end) | '"$1" "$fixture"; }
mkrun '.gpus[3].gpu_type = "b200-sxm-180gb"' >"$T/f5.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/f5.json"
check_problem "an H100 (by its NVML name) labelled b200-sxm-180gb is a 400 naming gpus[3].gpu_type" 400 'gpus[3].gpu_type'
jq -e '.errors[0].message | test("b200-sxm-180gb.*NVIDIA H100 80GB HBM3.*h100-sxm5-80gb")' "$T/body" >/dev/null &&
	ok "... saying which type the name is" || not_ok "... saying which type the name is" "$(body)"
req GET "/v1/benchmarks?gpu_type=b200-sxm-180gb&limit=1"
check "... and nothing is filed under b200-sxm-180gb" 200 '(.items | length) == 0'
mkrun '.gpus[3].gpu_type = "h100-sxm5-80gb" | .gpus[4].gpu_type = "not-a-catalog-name"' >"$T/f5b.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/f5b.json"
check "a gpu_type the name agrees with, or no catalog name, is stored" 201 '.gpus == 8'
mkrun '.gpus[0].name = "NVIDIA Next 9000" | .gpus[0].gpu_type = "b200-sxm-180gb"' >"$T/f5c.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/f5c.json"
check "a GPU whose name the catalog does not map takes its gpu_type" 201 '.gpus == 8'
req GET "/v1/benchmarks?run_id=$(jq -r .run_id "$T/f5c.json")&gpu_type=b200-sxm-180gb&metric=gemm_tflops&limit=50"
check "... and its results are filed under it" 200 '(.items | length) > 0 and all(.items[]; .gpu_uuid | endswith("0000"))'

# The cases the probe's checker is held to (tests/unit/test_probe_check.c
# reads the same file; review s16b F4): the server answers each as listed,
# so a rule added on one side only fails one of the two tests.
ncase=0
while IFS=$'\t' read -r -a col; do
	[[ ${#col[@]} -eq 0 || ${col[0]} == \#* ]] && continue
	edits=$(printf '%s\n' "${col[@]:2}" | jq -Rs 'split("\n")[:-1]')
	jq --arg r "$(cat /proc/sys/kernel/random/uuid)" --argjson e "$edits" \
		'reduce range(0; $e | length; 2) as $i (.run_id = $r | .status = "partial";
		  setpath($e[$i] | split(".") | map(tonumber? // .); $e[$i + 1] | fromjson))' \
		"$T/nd.json" >"$T/case.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/case.json"
	ncase=$((ncase + 1))
	if [ "${col[0]}" = 201 ]; then
		check "shared case $ncase (${col[2]}) is stored, as the probe's checker accepts it" 201 '.run_id'
	else
		check_problem "shared case $ncase: a bad ${col[1]} is a 400 naming it, as the probe's checker refuses it" 400 "${col[1]}"
	fi
done <"$TOP/tests/fixtures/probe/ingest_cases.tsv"
[ "$ncase" -ge 30 ] && ok "the shared ingestion cases ran ($ncase)" || not_ok "the shared ingestion cases ran ($ncase)"

# review s15: a result that skipped needs no median; a run_id is kept in
# lower case, so a replay that upper-cases it is the same run
jq --arg r "$(cat /proc/sys/kernel/random/uuid)" '.run_id = $r | .status = "partial" | .results = [{"metric":"gemm_tflops","unit":"TFLOP/s","dtype":"bf16","status":"skipped","reason":"no cuBLASLt algorithm"}]' "$T/nd.json" >"$T/skip.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/skip.json"
check "a skipped result without a median is stored" 201 '.results == 1'
up=$(cat /proc/sys/kernel/random/uuid)
jq --arg r "$up" '.run_id = $r' "$T/nd.json" >"$T/lo.json"
jq --arg r "${up^^}" '.run_id = $r' "$T/nd.json" >"$T/hi.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/lo.json"
check "a run in lower case is stored" 201 ".run_id == \"$up\""
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/hi.json"
check "the same run in upper case is a replay, answered in lower case" 201 ".run_id == \"$up\""

# review s24c F2: a second result of one measurement (GPU 0's bf16 GEMM at
# 100 beside its 809.6) was stored, and the fleet averaged the two
jq --arg r "$(cat /proc/sys/kernel/random/uuid)" '.run_id = $r | .results += [.results[0] | .median = 100]' \
	"$TOP/tests/fixtures/probe/report_h200x1_full.json" >"$T/dup.json"
n_res=$(jq '.results | length - 1' "$T/dup.json")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/dup.json"
check_problem "a result repeating an earlier one's measurement is a 400 naming results" 400 results
check "its message names both results" 400 ".detail | contains(\"results[$n_res] repeats results[0]\")"

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

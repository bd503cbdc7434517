#!/usr/bin/env bash
# The fleet view counts each node once (review s23c F1): one report of 64
# invented GPUs had outvoted two real nodes of 8, so that all 16 real GPUs
# were "degraded" and the capacity report called the invented ones the
# healthy fleet. And a figure far beyond its own probe limit is no
# measurement: refused at ingestion. Reports of tests/fixtures/probe/
# report_synthetic_h100x8.json, made real, under a GPU name no catalog type
# maps (its own nvml: group, apart from the other tests' fleets).
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "fleetnodes-$RANDOM$RANDOM" probe)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
fix=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
name="NVIDIA Fleetnodes $RANDOM$RANDOM"

# node HOST NGPUS HBM: the fixture's GPU 0 HBM read result on NGPUS GPUs of
# a node HOST, at HBM GB/s, in $T/HOST.json
node() {
	jq --arg now "$now" --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "$1" \
		--arg name "$name" --argjson n "$2" --argjson v "$3" --arg p "$(cut -c1-8 /proc/sys/kernel/random/uuid)" '
		.synthetic = false | .run_id = $r | .node.hostname = $h | .node.gpu_count = $n
		| .started_at = $now | .finished_at = $now
		| .gpus[0] as $g0
		| ([.results[] | select(.metric == "hbm_read_gbps" and .gpu_index == 0)][0]) as $r0
		| .gpus = [range($n) | . as $i | $g0 | .index = $i | .name = $name | .gpu_type = null
			| .uuid = ("GPU-" + $p + "-0000-4000-8000-" + ("000000000000" + ($i | tostring) | .[-12:]))]
		| .results = [.gpus[] | . as $g | $r0 | .gpu_index = $g.index | .gpu_uuid = $g.uuid
			| .median = $v | .max = $v | .mean = $v | .p10 = $v | .p90 = $v | .samples = [$v]]' \
		"$fix" >"$T/$1.json"
}
real1=fleetnodes-a-$RANDOM
real2=fleetnodes-b-$RANDOM
fake=fleetnodes-z-$RANDOM
node "$real1" 8 3011
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$real1.json"
check "a real node of 8 GPUs is stored" 201
node "$real2" 8 3005
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$real2.json"
check "a second real node of 8 GPUs is stored" 201
# one report of 64 GPUs reading 3,650 GB/s (inside the 1.1x band of the
# 3,350 datasheet): one node
node "$fake" 64 3650
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$fake.json"
check "one report of 64 GPUs at 3,650 GB/s is stored" 201
req GET /v1/fleet
check "the fleet median is the median of the three nodes' medians, not of the 80 GPUs" 200 \
	"(.items[] | select(.gpu_type == \"nvml:$name\") | (.gpus == 80 and .nodes == 3
	  and (.metrics[] | select(.metric == \"hbm_read_gbps\") | .fleet_median == 3011 and .gpus == 80)))"
check "no real GPU is degraded by the 64" 200 \
	"(.items[] | select(.gpu_type == \"nvml:$name\") | [.degraded[] | select(.hostname != \"$fake\")] | length) == 0"
# The capacity report agrees: its week's healthy GPUs and its fleet section
# (review s23d F1: the weekly table still took the median over the 80 GPUs
# and called the 64 invented ones the healthy fleet)
req GET '/v1/reports/capacity?section=capacity'
grep -F ",nvml:$name," "$T/body" | awk -F, '{print $(NF-2), $(NF-1)}' | grep -qx '80 80' &&
	ok "the capacity section: 80 GPUs seen, 80 healthy" ||
	not_ok "the capacity section: 80 GPUs seen, 80 healthy" "$(grep -F "nvml:$name" "$T/body")"
req GET '/v1/reports/capacity?section=fleet'
tr -d "\r" <"$T/body" | grep -F "nvml:$name," | awk -F, '{print $(NF-3), $(NF-2), $(NF-1), $NF}' | grep -qx '80 80 0 3' &&
	ok "the fleet section: 80 GPUs, 80 healthy, 0 degraded, 3 nodes" ||
	not_ok "the fleet section: 80 GPUs, 80 healthy, 0 degraded, 3 nodes" "$(grep -F "nvml:$name" "$T/body")"
# An ok median of 0 is refused (it had pulled the fleet's median down and
# hidden degraded GPUs)
h=fleetnodes-x-$RANDOM
node "$h" 8 0
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$h.json"
check_problem "an ok HBM median of 0 is a 400" 400 'results[0].median'
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

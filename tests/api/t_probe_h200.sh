#!/usr/bin/env bash
# The first real probe reports (one H200, 2026-11-26; docs/BENCHMARKS.md
# "The probe on an H200") through the daemon: stored whole, the GPU mapped
# to its catalog type, and sizing calibrated from what was measured.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "probe-h200-$RANDOM$RANDOM" probe)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
fix=$TOP/tests/fixtures/probe

# Each report made recent, on a host and GPU of its own (the tests share
# one database).
mk() { # mk FIXTURE OUT: prints the new run_id
	local r u
	r=$(cat /proc/sys/kernel/random/uuid)
	u="GPU-$(cat /proc/sys/kernel/random/uuid)"
	jq --arg now "$now" --arg r "$r" --arg h "h200-$RANDOM$RANDOM" --arg u "$u" \
		'.run_id = $r | .node.hostname = $h | .started_at = $now | .finished_at = $now
		| .gpus[0].uuid = $u | .results |= map(.gpu_uuid = (if .gpu_uuid then $u else null end))' \
		"$1" >"$2"
	echo "$r"
}
full=$(mk "$fix/report_h200x1_full.json" "$T/full.json")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/full.json"
check "the H200's full report is stored" 201 ".run_id == \"$full\" and .gpus == 1 and .results == 49 and .status == \"ok\""
req GET "/v1/benchmarks/$full"
jq -e --slurpfile rep "$T/full.json" '.report == $rep[0]' "$T/body" >/dev/null &&
	ok "the stored report is the one posted" || not_ok "the stored report is the one posted" "$(head -c 300 "$T/body")"
req GET "/v1/benchmarks?run_id=$full&limit=500"
check "every result is listed; the 6 that one GPU cannot measure as skipped" 200 \
	'(.items | length) == 49 and ([.items[] | select(.status == "skipped") | .metric | test("^(p2p|nccl)_")] | length) == 6
	and ([.items[] | select(.status != "ok" and (.metric | test("^(p2p|nccl)_") | not))] | length) == 0'
req GET "/v1/benchmarks?run_id=$full&metric=gemm_sustained_tflops&limit=50"
check "the sustained plan GEMMs are listed: 4 shapes in bf16 and fp8" 200 \
	'(.items | length) == 8 and ([.items[].dtype] | unique) == ["bf16", "fp8_e4m3"]'
quick=$(mk "$fix/report_h200x1_quick.json" "$T/quick.json")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/quick.json"
check "the H200's quick report is stored" 201 ".run_id == \"$quick\" and .results == 22"
host=$(jq -r .node.hostname "$T/quick.json")
req GET "/v1/nodes/$host"
check "the NVML name 'NVIDIA H200' maps to the catalog's h200-sxm-141gb" 200 \
	'[.. | objects | select(has("gpu_type")) | .gpu_type] | index("h200-sxm-141gb") != null'

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

# Calibration (migrations/0022): the full run's sustained plan GEMMs are
# the in-step rate; their median over the four shapes is divided by the
# median of the engine's shape factors of those shapes (16-bit: 1,280 and
# 3,584 in the middle, (1280/1408 + 3584/3712) / 2), with no retention.
# The quick run beside it, which has no sustained GEMMs, changes nothing.
job='{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h200-sxm-141gb","max_gpus":64,"top":1,"calibration":"measured"}'
sus=$(jq '[.results[] | select(.metric == "gemm_sustained_tflops" and .dtype == "bf16") | .median] | sort | (.[1] + .[2]) / 2' "$T/full.json")
psf=$(awk 'BEGIN { printf "%.10f", (1280 / 1408 + 3584 / 3712) / 2 }')
req POST /v1/sizing/training -d "$job"
check "calibration: the sustained plan GEMMs' median ($sus), their shapes taken out" 201 \
	".basis.gemm_tflops.source == \"measured\" and .basis.gemm_tflops.measured_metric == \"gemm_sustained_tflops\"
	 and ((.basis.gemm_tflops.measured_median - $sus) | fabs) < 0.05 and .basis.gemm_tflops.in_step_retention == 1
	 and ((.basis.gemm_tflops.plan_shape_factor - $psf) | fabs) < 5e-5
	 and ((.basis.gemm_tflops.value - $sus / $psf) / ($sus / $psf) | fabs) < 5e-4"
# FP8 the same way, with FP8's shape factors ((1280/1536 + 3584/3840) / 2).
sus8=$(jq '[.results[] | select(.metric == "gemm_sustained_tflops" and .dtype == "fp8_e4m3") | .median] | sort | (.[1] + .[2]) / 2' "$T/full.json")
req POST /v1/sizing/training -d "$(echo "$job" | jq -c '.precision = "fp8"')"
check "calibration in FP8: the FP8 sustained median ($sus8) over 0.8833" 201 \
	".basis.gemm_tflops.measured_metric == \"gemm_sustained_tflops\" and ((.basis.gemm_tflops.measured_median - $sus8) / $sus8 | fabs) < 5e-4
	 and ((.basis.gemm_tflops.plan_shape_factor - 0.8833) | fabs) < 1e-4
	 and ((.basis.gemm_tflops.value - $sus8 / 0.88333333) / ($sus8 / 0.88333333) | fabs) < 5e-4"
# The same GPU's quick run alone (another catalog type, by the NVML name
# that type maps: a gpu_type contradicting the name is refused since review
# s17c F5): its best-shape median times the in-step retention 0.75/0.869.
q2=$(mk "$fix/report_h200x1_quick.json" "$T/q2.json")
jq '.gpus[0].name = "NVIDIA H200 NVL"' "$T/q2.json" >"$T/q2n.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/q2n.json"
check "a quick report attributed to another type is stored" 201 ".run_id == \"$q2\""
best=$(jq '.results[] | select(.metric == "gemm_tflops" and .dtype == "bf16") | .median' "$T/quick.json")
req POST /v1/sizing/training -d "$(echo "$job" | jq -c '.gpu = "h200-nvl-141gb"')"
check "calibration without sustained GEMMs: the best-shape median ($best) x 0.863" 201 \
	".basis.gemm_tflops.measured_metric == \"gemm_tflops\" and ((.basis.gemm_tflops.measured_median - $best) | fabs) < 0.05
	 and .basis.gemm_tflops.in_step_retention == 0.863 and (.basis.gemm_tflops | has(\"plan_shape_factor\") | not)
	 and ((.basis.gemm_tflops.value - $best * 0.75 / 0.869) | fabs) < 0.1"

#!/usr/bin/env bash
# Synthetic reports stay out of fleet figures by default (issue 14). A
# report that says "synthetic": true (the probe's fixtures, make demo) is
# stored and listed like any other, but the fleet view, calibration and
# the capacity report's healthy GPUs leave it out unless the daemon runs
# with --fleet-synthetic. The same real-looking report without the flag
# counts at once.
. "$(dirname "$0")/lib.sh"

GSZ_REAL_FLEET=1 start_daemon || { not_ok "daemon starts (default)"; exit 1; }
tok=$(create_token "synthetic-$RANDOM$RANDOM" probe)
sfx=$RANDOM$RANDOM
# The H100 fixture as RTX 5090s (a type no other suite reports), with its
# own host and GPU uuids, dated now; its GEMM and HBM figures scaled to
# what a 5090 can reach (209.5 / 419 TFLOP/s BF16 / FP8, 1,792 GB/s):
# calibration ignores medians above 1.1x a type's datasheet.
mk() { # NAME SYNTHETIC: a report of host NAME, "synthetic" as given
	jq -c --arg h "$1" --arg sx "-$1" --argjson syn "$2" --arg id "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$(date -u -d '-8 minutes' +%Y-%m-%dT%H:%M:%S.000Z)" --arg f "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)" '
		.run_id = $id | .node.hostname = $h | .synthetic = $syn | .started_at = $s | .finished_at = $f
		| .gpus = [.gpus[] | .uuid += $sx | .name = "NVIDIA GeForce RTX 5090"]
		| .results = [.results[] | if .gpu_uuid then .gpu_uuid += $sx else . end
			| (if (.metric | test("^gemm")) then 0.2 elif (.metric | test("^hbm")) then 0.5 else 1 end) as $k
			| (.median, .mean, .p10, .p90, .max) |= (if type == "number" then . * $k else . end)]' \
		"$TOP/tests/fixtures/probe/report_synthetic_h100x8.json"
}
mk "syn-$sfx" true >"$T/syn.json"
req POST /v1/benchmarks -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d @"$T/syn.json"
check "a synthetic report is stored (201)" 201
req GET "/v1/benchmarks?run_id=$(jq -r .run_id "$T/syn.json")&limit=1"
check "and listed like any other" 200 '(.items | length) == 1'
req GET /v1/fleet
# (until review s15 its GPUs were listed, unmeasured, and counted)
check "by default the fleet view leaves the synthetic run's GPUs out: no type, no medians, no counts" 200 \
	'[.items[] | select(.gpu_type == "rtx-5090-32gb")] == []'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"rtx-5090-32gb","max_gpus":8,"calibration":"measured"}'
check_problem "calibration: measured finds no (real) measurement of the type" 422 calibration
stop_daemon

start_daemon || { not_ok "daemon starts (--fleet-synthetic)"; exit 1; }
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"rtx-5090-32gb","max_gpus":8,"calibration":"measured"}'
check "with --fleet-synthetic the same report calibrates" 201 '.basis.gemm_tflops.source == "measured"'
req GET /v1/fleet
check "and the fleet view has its medians" 200 '[.items[] | select(.gpu_type == "rtx-5090-32gb") | .metrics | length > 0] == [true]'
stop_daemon

GSZ_REAL_FLEET=1 start_daemon || { not_ok "daemon starts (default, again)"; exit 1; }
mk "real-$sfx" false >"$T/real.json"
req POST /v1/benchmarks -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -d @"$T/real.json"
check "a report not marked synthetic is stored" 201
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"rtx-5090-32gb","max_gpus":8,"calibration":"measured"}'
check "and calibrates by default" 201 '.basis.gemm_tflops.source == "measured" and .basis.probe_runs == 1'
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

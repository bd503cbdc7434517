#!/usr/bin/env bash
# Rollups (issue 18, migrations/0014_fleet_rollups.sql): the fleet view,
# calibration and the capacity report read per-run rollups instead of raw
# result rows, and answer exactly what the raw queries answered before
# (tests/api/sql/*_raw.sql: those queries as they were), on a fleet with a
# degraded GPU, a thermal slowdown, an older run per node, a run in an
# earlier week, and a median planted with UPDATE (the rollups follow
# changes to stored results).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_roll
start_daemon || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "roll-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
# GPU 3 of roll-b measures 30 % slower; GPU 5 of roll-c saw a thermal
# slowdown; roll-a also ran two days ago (other values), and roll-d ten
# days ago only (an earlier week).
mk roll-a "$(at '-2 days')" '.results |= map(if .median then .median *= 1.1 else . end)' >"$T/a0.json"
mk roll-a "$(at '-5 minutes')" '.' >"$T/a1.json"
mk roll-b "$(at '-4 minutes')" '.results |= map(if (.gpu_uuid // "" | endswith("0003")) and .metric == "gemm_tflops" then .median *= 0.7 else . end)' >"$T/b.json"
# roll-c's GPU 2 also swept HBM: a smaller size (slower) and a larger one
# that failed: the fleet view takes the largest ok size, the capacity
# report the largest size when it is ok.
mk roll-c "$(at '-3 minutes')" '.results |= map(if (.gpu_uuid // "" | endswith("0005")) then .telemetry.clock_event_reasons += ["hw_thermal_slowdown"] else . end)
	| .results += [.results[] | select((.gpu_uuid // "" | endswith("0002")) and .metric == "hbm_read_gbps")
		| (.size_bytes /= 2 | .median *= 0.5), (.size_bytes *= 2 | .status = "failed" | .median *= 0.3)]' >"$T/c.json"
mk roll-d "$(at '-10 days')" '.results |= map(if .median then .median *= 0.95 else . end)' >"$T/d.json"
for f in a0 a1 b c d; do post "report $f" "$T/$f.json"; done
q "UPDATE benchmark_runs SET received_at = now() - interval '10 days' WHERE run_id = '$(jq -r .run_id "$T/d.json")'" >/dev/null
# A NaN planted in a stored result: skipped by both, once the rollup follows
# (a run stored as rows, by the release before 0020: a compact run's
# results are not rows to plant in).
as_rows "$(jq -r .run_id "$T/a1.json")"
q "UPDATE benchmark_results SET median = 'NaN' WHERE run_id = '$(jq -r .run_id "$T/a1.json")'
   AND metric = 'hbm_read_gbps' AND gpu_uuid LIKE '%0001'" >/dev/null || not_ok "NaN planted"

for days in 1 30 366; do
	fleet_same "fleet (window $days d) answers what the raw query answers" fleet_raw.sql true "$days"
done
req GET "/v1/fleet?window_days=30"
check "the comparison has substance: medians, a slow GPU and a slowdown" 200 \
	'(.items[0].metrics | length) > 10 and ([.items[0].degraded[].reasons[]] | any(test("gemm_tflops bf16")) and any(test("clock slowdowns")))'

# Calibration: the medians sizing uses against the raw query's.
thr=$(awk '/#define DEGRADED_THRESHOLD/ {print $3}' "$TOP/handlers/calib.h")
want=$(raw medians_raw.sql gpu=h100-sxm5-80gb days=30 syn=true thr="$thr")
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"measured"}'
# (the sustained plan GEMMs where a run has them, t_benchmarks' run 3 does:
# 0022)
bf16=$(awk -F'|' '$1 == "gemm_sustained_tflops" && $2 == "bf16" {print $3 "|" $4}' <<<"$want")
[ -n "$bf16" ] || bf16=$(awk -F'|' '$1 == "gemm_tflops" && $2 == "bf16" {print $3 "|" $4}' <<<"$want")
hbm=$(awk -F'|' '$1 == "hbm_read_gbps" {print $3 "|" $4}' <<<"$want")
# (basis shows 4 significant digits; the samples and runs exactly)
close() { echo "(((($1) - ($2)) / ($2) | fabs) < 5e-4)"; }
check "calibration: the GEMM median and its samples are the raw query's ($bf16)" 201 \
	"$(close .basis.gemm_tflops.measured_median "${bf16%|*}") and .basis.gemm_tflops.samples == ${bf16#*|}"
check "calibration: the HBM median and its samples are the raw query's ($hbm)" 201 \
	"$(close .basis.hbm_gbps.value "${hbm%|*}") and .basis.hbm_gbps.samples == ${hbm#*|}"
runs=$(head -n 1 <<<"$want" | awk -F'|' '{print $5}')
check "calibration: the runs counted are the raw query's ($runs)" 201 ".basis.probe_runs == $runs"
# The same GPU named by an alias or in capitals is calibrated the same
# (the measurements are filed under the catalog's name, not the alias).
for alias in h100 H100-SXM5-80GB; do
	req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"'"$alias"'","max_gpus":64,"top":1,"calibration":"measured"}'
	check "calibration: the alias $alias finds the measurements ($runs runs)" 201 \
		".basis.gemm_tflops.source == \"measured\" and .basis.probe_runs == $runs"
done

# Capacity report: seen and healthy GPUs per week and type.
for days in 30 366; do
	req GET "/v1/reports/capacity?section=capacity&window_days=$days"
	got=$(tail -n +2 "$T/body" | awk -F, '{print $1 "," $3 "," $9 "," $10}')
	want=$(raw report_raw.sql days=$days bucket=day maxnodes=50 thr=0.1 syn=true |
		jq -r '.capacity.items[] | [.week, .gpu_type, .seen_gpus, .healthy_gpus] | map(tostring) | join(",")')
	if [ "$STATUS" = 200 ] && [ -n "$got" ] && [ "$got" = "$want" ]; then
		ok "capacity report (window $days d): seen and healthy GPUs per week are the raw query's"
	else
		not_ok "capacity report (window $days d): seen and healthy GPUs per week are the raw query's" "got: $got want: $want"
	fi
done
[ "$(wc -l <<<"$want")" -ge 2 ] && grep -q ',24,22$' <<<"$want" &&
	ok "the capacity comparison spans two weeks, with unhealthy GPUs" || not_ok "the capacity comparison spans two weeks, with unhealthy GPUs" "$want"

# A node whose report is filed under the wrong GPU type (or whose probe is
# broken) reports GEMM medians no GPU of that type reaches: calibration
# leaves medians above 1.1x the datasheet out, says so in the basis and a
# warning, and sizes on the datasheet (CALIB_PLAUSIBLE_MAX_RATIO).
adm=$(create_token "roll-adm-$RANDOM" admin)
req GET /v1/gpus/h100-sxm5-80gb
jq 'del(.name)' "$T/body" >"$T/gpu.json"
req PUT /v1/gpus/h100 -H "Authorization: Bearer $adm" -H 'Content-Type: application/json' --data-binary @"$T/gpu.json"
check_problem "PUT a new GPU named like an alias (h100): 400 naming name" 400 name
# review s15: a new name that takes a short name from an entry ("h100-sxm5"
# found h100-sxm5-80gb) is stored, and its PUT answer warns; the short name
# is then ambiguous, a 400 with did_you_mean, never silently another entry
# (s15b: preferring the entry with the fewest words let a shorter one
# added later take it)
req PUT /v1/gpus/h100-sxm5-80gb-custom -H "Authorization: Bearer $adm" -H 'Content-Type: application/json' --data-binary @"$T/gpu.json"
check "PUT h100-sxm5-80gb-custom: stored, the answer warns it takes h100-sxm5 from h100-sxm5-80gb" 201 \
	'[.warnings[] | select(test("short name \"h100-sxm5\" found h100-sxm5-80gb"))] | length == 1'
req POST /v1/sizing/training -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5","gpus":8,"top":1}'
check_problem "h100-sxm5 is now ambiguous: 400 naming gpu" 400 gpu
jq -e '(.errors[0].message | test("\"h100-sxm5\" starts 2 catalog GPU names; give the full name"))
	and (.errors[0].did_you_mean | index("h100-sxm5-80gb") != null and index("h100-sxm5-80gb-custom") != null)' "$T/body" >/dev/null &&
	ok "it says the short name is shared, with both entries in did_you_mean" ||
	not_ok "it says the short name is shared, with both entries in did_you_mean" "$(body)"
req POST /v1/sizing/training -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb-custom","gpus":8,"top":1}'
check "the new entry is found by its own name" 201 '.request.gpu == "h100-sxm5-80gb-custom"'
req GET /v1/gpus/h100-sxm5-80gb-custom
req PUT /v1/gpus/h100-sxm5-80gb-custom -H "Authorization: Bearer $adm" -H 'Content-Type: application/json' -d "$(jq -c '.warnings = ["echoed"]' "$T/body")"
check "its answer echoed back (warnings too) replaces it, with no new warning" 200 'has("warnings") | not'
req PUT /v1/gpus/implaus-h100 -H "Authorization: Bearer $adm" -H 'Content-Type: application/json' --data-binary @"$T/gpu.json"
[ "$STATUS" = 201 ] || [ "$STATUS" = 200 ] || not_ok "a copy of the H100 entry is stored" "$STATUS $(head -c 300 "$T/body")"
# (a GPU name the catalog does not map, so that its gpu_type files it: one
# the name maps decides, review s17c F5)
mk roll-x "$(at '-1 minutes')" '.gpus |= map(.name = "NVIDIA H100 implaus" | .gpu_type = "implaus-h100")
	| .results |= map(if .metric == "gemm_tflops" and .dtype == "bf16" then .median = 2500 | .mean = 2500 | .p10 = 2500 | .p90 = 2500 | .max = 2500 | .samples = [2500] else . end)' >"$T/x.json"
post "report x" "$T/x.json"
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"implaus-h100","gpus":8,"top":1}'
check "calibration: a GEMM median 2.5x the datasheet is not used" 201 \
	'.basis.gemm_tflops.source == "datasheet×efficiency" and .plans[0].mfu < 1
	 and (.basis.ignored_measurements | map(.metric) | index("gemm_tflops.bf16")) != null
	 and (.basis.ignored_measurements[] | select(.metric == "gemm_tflops.bf16") | .median == 2500 and .datasheet == 989.4)
	 and (.checks.warnings | map(select(test("not used.*gemm_tflops.bf16 2500 [(]2.53x[)]"))) | length) == 1'
check "calibration: its plausible medians are still used (HBM measured)" 201 '.basis.hbm_gbps.source == "measured"'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","gpus":8,"top":1}'
check "calibration: a plausible type lists no ignored medians" 201 '.basis.gemm_tflops.source == "measured" and (.basis | has("ignored_measurements") | not)'
req GET /v1/fleet
check "the fleet view marks the implausible median, and only it" 200 \
	'(.items[] | select(.gpu_type == "implaus-h100") | .metrics[] | select(.metric == "gemm_tflops" and .dtype == "bf16") | .implausible == true)
	 and ([.items[] | select(.gpu_type == "implaus-h100") | .metrics[] | select(.metric | startswith("hbm")) | has("implausible")] | any | not)
	 and ([.items[] | select(.gpu_type == "h100-sxm5-80gb") | .metrics[] | has("implausible")] | any | not)'

# Deleting a run deletes its rollups too.
rd=$(jq -r .run_id "$T/d.json")
q "DELETE FROM benchmark_runs WHERE run_id = '$rd'" >/dev/null
got=$(q "SELECT (SELECT count(*) FROM rollup_gpu_runs WHERE run_id = '$rd') + (SELECT count(*) FROM rollup_type_runs WHERE run_id = '$rd')")
[ "$got" = 0 ] && ok "a deleted run's rollups go with it" || not_ok "a deleted run's rollups go with it" "$got"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

#!/usr/bin/env bash
# Calibration that one node cannot move (review s17c F1, F2, F3, F9;
# docs/MODEL.md §5): each probe run is held to the plausible band of its
# GPU type's datasheet figure (the all-reduce too, against the link), a
# node counts once, a node the fleet's degraded rule flags is left out,
# and a measured GEMM or HBM rate is used at most at its datasheet figure.
# Each part uses a GPU type of its own in a database of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_calrob
start_daemon || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "calrob-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
now=$(at '-1 minutes')
# set(PRED; X): every statistic of the results PRED selects is X
SET='def set(p; x): .results |= map(if (p) and .median then .median = x | .max = x | .mean = x | .p10 = x | .p90 = x
	| .samples |= map(x) | .efficiency = null else . end);'
infer() { # MODEL GPU TP: one request at concurrency 1, its answer in $T/body
	req POST /v1/sizing/inference -H 'Content-Type: application/json' \
		-d '{"model":"'"$1"'","gpu":"'"$2"'","prompt_tokens":2048,"output_tokens":128,"concurrent_sequences":1,"tp":'"$3"',"top":1}'
}
summary() { jq -c '{t: .plans[0] | {ttft_ms, tpot_ms}, g: .basis.gemm_tflops | {value, samples}, h: .basis.hbm_gbps | {value, samples}}' "$T/body"; }

# F2: one healthy H100 node, then one broken node beside it. Its GEMM
# (bf16 at 5 TFLOP/s) is under the band; its HBM (1000 of 3350 GB/s,
# 0.30x) is inside the band but 70 % under the healthy node: the degraded
# rule. The answer is the healthy node's alone, and says what it left out.
mk f2-good "$now" '.' >"$T/good.json"
post "the healthy node's run" "$T/good.json"
infer llama-3-8b h100-sxm5-80gb 1
check "one healthy node: GEMM and HBM measured" 201 '.basis.gemm_tflops.source == "measured" and .basis.hbm_gbps.source == "measured"'
alone=$(summary)
# review s18b F5: a request's own efficiency wins over the measurement (it
# was dropped without a word on measured types only)
req POST /v1/sizing/inference -H 'Content-Type: application/json' \
	-d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":2048,"output_tokens":128,"concurrent_sequences":1,"tp":1,"top":1,"hbm_efficiency":0.5}'
mk f2-broken "$now" "$SET"' set(.metric == "gemm_tflops" and .dtype == "bf16"; 5) | set(.metric == "hbm_read_gbps"; 1000)' >"$T/broken.json"
post "the broken node's run" "$T/broken.json"
infer llama-3-8b h100-sxm5-80gb 1
got=$(summary)
[ "$got" = "$alone" ] && ok "a broken node beside a healthy one moves nothing ($alone)" ||
	not_ok "a broken node beside a healthy one moves nothing" "alone $alone, with it $got"
check "its GEMM run is listed as implausible (1 run, median 5), its HBM node as degraded" 201 \
	'(.basis.ignored_measurements[] | select(.metric == "gemm_tflops.bf16") | .runs == 1 and .median == 5)
	 and (.basis.degraded_nodes_left_out[] | select(.metric == "hbm_gbps") | .nodes == 1 and .median == 1000)
	 and (.warnings | map(select(test("not used.*gemm_tflops.bf16 5 [(]0.01x[)] in 1 run"))) | length) == 1'
req GET /v1/fleet
check "the fleet view flags the broken node's GPUs degraded, by the same 10 % rule" 200 \
	'[.items[] | select(.gpu_type == "h100-sxm5-80gb") | .degraded[] | select(.hostname == "f2-broken")] | length == 8'
# The broken node re-run twice: three runs of one node against one run of
# the healthy node still count as one node each.
for i in 2 3; do
	mk f2-broken "$now" "$SET"' set(.metric == "hbm_read_gbps"; 1000)' >"$T/broken$i.json"
	post "the broken node's run $i" "$T/broken$i.json"
done
infer llama-3-8b h100-sxm5-80gb 1
got=$(summary)
[ "$(jq -c .h <<<"$got")" = "$(jq -c .h <<<"$alone")" ] &&
	ok "a node re-run three times still counts once: HBM stays the healthy node's" ||
	not_ok "a node re-run three times still counts once: HBM stays the healthy node's" "alone $alone, now $got"
check "... and is one node left out, behind three runs" 201 \
	'.basis.degraded_nodes_left_out[] | select(.metric == "hbm_gbps") | .nodes == 1'
# review s19d F1: a run on some of the node's GPUs (its smallest GPU left
# out: another GPU key) is still that host's node
mk f2-broken "$now" "$SET"' set(.metric == "hbm_read_gbps"; 1000) | .gpus |= .[1:]
	| .results |= map(select(.gpu_index != 0))' >"$T/broken4.json"
post "the broken node's run on GPUs 1-7" "$T/broken4.json"
infer llama-3-8b h100-sxm5-80gb 1
got=$(summary)
[ "$(jq -c .h <<<"$got")" = "$(jq -c .h <<<"$alone")" ] &&
	ok "a run on some of a node's GPUs is still its host's node: HBM stays the healthy node's" ||
	not_ok "a run on some of a node's GPUs is still its host's node: HBM stays the healthy node's" "alone $alone, now $got"
# review s18b F5: a request's own efficiency wins over the measurement (it
# was dropped without a word on measured types only); s18d F8: and what
# calibration left out of that rate is not named
req POST /v1/sizing/inference -H 'Content-Type: application/json' \
	-d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":2048,"output_tokens":128,"concurrent_sequences":1,"tp":1,"top":1,"hbm_efficiency":0.5}'
check "hbm_efficiency 0.5 on a measured type: datasheet x the request's 0.5, no degraded HBM node named" 201 \
	'(.basis.hbm_gbps | .source == "datasheet×efficiency" and .efficiency_source == "request" and .value == 1675)
	 and ([.basis.degraded_nodes_left_out[]? | select(.metric == "hbm_gbps")] | length) == 0'

# F1: an all-reduce at 1e-9 GB/s (ingestion's floor) is no H200 node's
# figure: the H200 sizes on the datasheet link, says so, and stays sane.
h200='.gpus |= map(.name = "NVIDIA H200")'
mk f1-slow "$now" "$h200 | $SET"' set(.metric | startswith("nccl_allreduce_"); 1e-9)' >"$T/slow.json"
post "an H200 run with a 1e-9 GB/s all-reduce" "$T/slow.json"
infer llama-3-70b h200-sxm-141gb 8
check "a 1e-9 GB/s all-reduce does not calibrate intra_node_gbps, and is named" 201 \
	'.basis.intra_node_gbps.source == "datasheet×efficiency"
	 and (.basis.ignored_measurements[] | select(.metric == "intra_node_gbps") | .median == 1e-9 and .runs == 1 and .datasheet == 450)
	 and .plans[0].ttft_ms < 1000 and .plans[0].tpot_ms < 100
	 and (.warnings | map(select(test("not used.*intra_node_gbps 1e-09"))) | length) == 1'
# Above 2x the link (a unit slip) likewise; NVLink SHARP's 480 of 450
# GB/s is measured.
mk f1-fast "$now" "$h200 | $SET"' set(.metric == "nccl_allreduce_busbw_gbps"; 9.5e5)' >"$T/fast.json"
post "an H200 run with a 950,000 GB/s all-reduce" "$T/fast.json"
infer llama-3-70b h200-sxm-141gb 8
check "... and 950,000 GB/s neither (above 2x the 450 GB/s link)" 201 \
	'.basis.intra_node_gbps.source == "datasheet×efficiency"
	 and (.basis.ignored_measurements[] | select(.metric == "intra_node_gbps") | .runs == 2)'
mk f1-sharp "$now" "$h200 | $SET"' set(.metric == "nccl_allreduce_busbw_gbps"; 480)' >"$T/sharp.json"
post "an H200 run with a 480 GB/s all-reduce" "$T/sharp.json"
infer llama-3-70b h200-sxm-141gb 8
check "a SHARP all-reduce at 480 of 450 GB/s calibrates, beside the two left out" 201 \
	'.basis.intra_node_gbps.source == "measured" and .basis.intra_node_gbps.value == 480 and .basis.intra_node_gbps.samples == 1'

# review s19c F8: an all-reduce result of another dtype (the probe writes
# fp32) was a calibration group of its own, which overwrote the fleet's:
# one node's bf16 result at 890 GB/s replaced the others'. It is not taken.
mk f8-bf16 "$now" "$h200"' | .results |= map(if .metric == "nccl_allreduce_busbw_gbps" then .dtype = "bf16"
	| .median = 890 | .max = 890 | .mean = 890 | .p10 = 890 | .p90 = 890 | .samples |= map(890) else . end)' >"$T/bf16.json"
post "an H200 run with a bf16 all-reduce at 890 GB/s" "$T/bf16.json"
infer llama-3-70b h200-sxm-141gb 8
check "an all-reduce of another dtype does not replace the fleet's fp32 figure" 201 \
	'.basis.intra_node_gbps.source == "measured" and .basis.intra_node_gbps.value == 480 and .basis.intra_node_gbps.samples == 1'

# review s19c F7: only in-switch reduction (NVSwitch 3+, NVLink on
# compute capability 9.0+) takes busbw past the link; an A100 node reading
# H100's ~481 GB/s all-reduce on its 300 GB/s link is left out (band 1.1x).
mk f7-a100 "$now" '.gpus |= map(.name = "NVIDIA A100-SXM4-80GB")' >"$T/a100.json"
post "an A100 run whose all-reduce reads H100's 481 GB/s" "$T/a100.json"
infer llama-3-70b a100-sxm4-80gb 8
check "A100 (a ring, no SHARP): a 481 GB/s all-reduce on a 300 GB/s link is implausible, not taken" 201 \
	'.basis.intra_node_gbps.source == "datasheet×efficiency"
	 and (.basis.ignored_measurements[] | select(.metric == "intra_node_gbps") | .datasheet == 300 and .runs == 1)'

# The fleet view shows what calibration takes, the node-level all-reduce
# included (s17c F1's display part: it was shown nowhere), and the
# capacity report's calibration table the same.
req GET /v1/fleet
check "GET /v1/fleet: the H200's all-reduce as calibration takes it, the two runs it leaves out named" 200 \
	'.items[] | select(.gpu_type == "h200-sxm-141gb") | .calibration.values[]
	 | select(.field == "intra_node_gbps") | .metric == "nccl_allreduce_busbw_gbps" and .value == 480
	 and .runs == 1 and .nodes == 1 and .reference == 450 and .reference_basis == "link"
	 and .band_max == 900 and .implausible_runs == 2'
check "... and the H100's HBM as the healthy node's, the broken node left out as degraded" 200 \
	'.items[] | select(.gpu_type == "h100-sxm5-80gb") | .calibration.values[] | select(.field == "hbm_gbps")
	 | .nodes == 1 and .degraded_nodes == 1 and .degraded_median == 1000'
req GET '/v1/reports/capacity?section=calibration'
[ "$STATUS" = 200 ] && grep -q '^h200-sxm-141gb,intra_node_gbps,nccl_allreduce_busbw_gbps,,GB/s,480,1,1,450,link,1.067,2,0,0,480,false,30,' "$T/body" &&
	ok "the capacity report's calibration table has the H200 all-reduce" ||
	not_ok "the capacity report's calibration table has the H200 all-reduce" "$STATUS $(head -c 600 "$T/body")"

# F3: a B200 node's sustained plan GEMMs at 2450 TFLOP/s (1.089x, inside
# the band) over the shape factor would be 2614 of 2250: used at 2250.
jq -c '[.results[] | select(.metric == "gemm_sustained_tflops" and .dtype == "bf16")]' \
	"$TOP/tests/fixtures/probe/report_h200x1_full.json" >"$T/sus.json"
mk f3-b200 "$now" '.gpus |= map(.name = "NVIDIA B200")' | jq -c --slurpfile sus "$T/sus.json" '.gpus[0].uuid as $u
	| .results += [$sus[0][] | .gpu_uuid = $u | .gpu_index = 0 | .median = 2450 | .max = 2450 | .mean = 2450
		| .p10 = 2450 | .p90 = 2450 | .samples |= map(2450) | .limit = 2250 | .efficiency = null]' >"$T/b200.json"
post "a B200 run with sustained bf16 GEMMs at 2450 TFLOP/s" "$T/b200.json"
infer llama-3-70b b200-sxm-180gb 8
check "a sustained median over its shape factor is used at the 2250 TFLOP/s peak, capped" 201 \
	'.basis.gemm_tflops | .measured_metric == "gemm_sustained_tflops" and .measured_median == 2450
	 and .value == 2250 and .datasheet == 2250 and .capped_at_datasheet == true'

# F9: an H100 NVL node reading HBM at 4280 of 3900 GB/s (1.097x, inside
# the band) is used at 3900.
mk f9-nvl "$now" '.gpus |= map(.name = "NVIDIA H100 NVL") | '"$SET"' set(.metric == "hbm_read_gbps"; 4280)' >"$T/nvl.json"
post "an H100 NVL run reading HBM at 4280 GB/s" "$T/nvl.json"
infer llama-3-8b h100-nvl-94gb 1
check "a measured HBM rate above the datasheet is used at the datasheet, capped" 201 \
	'.basis.hbm_gbps | .source == "measured" and .value == 3900 and .capped_at_datasheet == true'
req GET /v1/fleet
check "... and the fleet view's calibration says so: value 4280, sizing_value 3900, capped (review s18d F12)" 200 \
	'.items[] | select(.gpu_type == "h100-nvl-94gb") | .calibration.values[] | select(.field == "hbm_gbps")
	 | .value == 4280 and .sizing_value == 3900 and .capped_at_datasheet == true'

# review s19c F2: two H800 nodes, one reading its bf16 GEMMs at 1085 of
# 989.4 TFLOP/s (inside the band). The median of two is their mean, so
# the healthy node fell 10 % under it and was left out: the inflated one
# set the rate. An even split is decided by what the type is expected to
# measure (datasheet x default efficiency): the inflated half goes.
h800='.gpus |= map(.name = "NVIDIA H800")'
mk s19c2-good "$now" "$h800" >"$T/h800good.json"
post "a healthy H800 node" "$T/h800good.json"
mk s19c2-high "$now" "$h800 | $SET"' set(.metric == "gemm_tflops" and .dtype == "bf16"; 1085)' >"$T/h800high.json"
post "an H800 node reading bf16 GEMMs at 1085" "$T/h800high.json"
infer llama-3-8b h800-sxm5-80gb 1
check "an even split: the healthy node's GEMM is taken, the inflated one set aside with its reason" 201 \
	'(.basis.gemm_tflops | .measured_metric == "gemm_tflops" and .measured_median < 800 and .samples == 1)
	 and (.basis.set_aside_measurements[] | select(.metric == "gemm_tflops.bf16")
		| .nodes == 1 and .median == 1085 and (.reason | test("split in two halves")))
	 and ([.basis.degraded_nodes_left_out[]? | select(.metric == "gemm_tflops.bf16")] | length) == 0'
req GET /v1/fleet
check "... and the fleet view's calibration counts the inflated node as disputed, not the healthy one as degraded" 200 \
	'.items[] | select(.gpu_type == "h800-sxm5-80gb") | .calibration.values[]
	 | select(.field == "gemm_tflops" and .dtype == "bf16")
	 | .nodes == 1 and .value < 800 and .disputed_nodes == 1 and .disputed_median == 1085
	 and .degraded_nodes == 0 and .set_aside == null'

# review s19c F5: a node is its GPUs, not its host name: the inflated
# node's report re-sent under two other host names (same GPU uuids) had
# been three nodes, a 3-to-1 majority.
for h in s19c2-copy1 s19c2-copy2; do
	jq -c --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "$h" '.run_id = $r | .node.hostname = $h' \
		"$T/h800high.json" >"$T/h800copy.json"
	post "the inflated H800 node's report under host $h" "$T/h800copy.json"
done
infer llama-3-8b h800-sxm5-80gb 1
check "the same GPUs under three host names are one node: the healthy node's GEMM still taken" 201 \
	'(.basis.gemm_tflops | .measured_median < 800 and .samples == 1)
	 and (.basis.set_aside_measurements[] | select(.metric == "gemm_tflops.bf16") | .nodes == 1 and .median == 1085)'

# review s19c F1: one node's single sustained GEMM result beside three
# nodes' best-shape figures had set the type's GEMM rate (to the peak):
# a sustained figure takes precedence only when at least half as many
# nodes back it (the B200 above: one node each, taken; s19d F3: "as many"
# let one quick run switch a type between the two figures).
nvl='.gpus |= map(.name = "NVIDIA H200 NVL")'
mk s19c1-a "$now" "$nvl" >"$T/nvla.json"
post "an H200 NVL node" "$T/nvla.json"
mk s19c1-b "$now" "$nvl" >"$T/nvlb.json"
post "a second H200 NVL node" "$T/nvlb.json"
mk s19c1-c "$now" "$nvl" >"$T/nvlc.json"
post "a third H200 NVL node" "$T/nvlc.json"
mk s19c1-sus "$now" "$nvl" | jq -c --slurpfile sus "$T/sus.json" '.gpus |= .[:1] | .gpus[0].uuid as $u
	| .results = [$sus[0][] | .gpu_uuid = $u | .gpu_index = 0 | .median = 900 | .max = 900 | .mean = 900
		| .p10 = 900 | .p90 = 900 | .samples |= map(900) | .limit = null | .efficiency = null]' >"$T/nvlsus.json"
post "an H200 NVL node with one sustained bf16 GEMM result" "$T/nvlsus.json"
infer llama-3-8b h200-nvl-141gb 1
check "one node's sustained figure beside three nodes' best-shape ones is set aside, and says why" 201 \
	'(.basis.gemm_tflops | .measured_metric == "gemm_tflops" and .samples == 3)
	 and (.basis.set_aside_measurements[] | select(.metric == "gemm_sustained_tflops.bf16")
		| .nodes == 1 and .median == 900 and (.reason | test("1 node[(]s[)] against the 3 behind gemm_tflops.bf16")))'
req GET /v1/fleet
check "... and the fleet view shows it set aside, with no sizing_value; the best-shape figure has one" 200 \
	'[.items[] | select(.gpu_type == "h200-nvl-141gb") | .calibration.values[] | select(.dtype == "bf16")]
	 | (map(select(.field == "gemm_sustained_tflops"))[0] | .sizing_value == null and (.set_aside | test("at least half as many nodes")))
	 and (map(select(.field == "gemm_tflops"))[0] | .sizing_value != null and .set_aside == null)'

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

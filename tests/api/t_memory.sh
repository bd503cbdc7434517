#!/usr/bin/env bash
# Training memory (issue 13): Llama 3 405B at Meta's published layout fits
# (Llama 3 Table 4: TP 8, CP 1, PP 16, 16M-token batch, 8K and 16K H100;
# §3.3.2: no activation recompute at 8K, optimizer state and gradients
# sharded: ZeRO-2, pinned, as the default profile runs no more than ZeRO-1;
# a layer fewer on the first and last stage; nothing offloaded), its MFU
# reported;
# dropout, memory_headroom_fraction and strategies.stage_rebalance through
# the API; the near-full warning; binding names what limits a plan.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
J=(-H 'Content-Type: application/json')

meta() { # GPUS [EXTRA JSON merged into the request]
	jq -nc --argjson g "$1" --argjson x "${2:-{\}}" '{model: "llama-3.1-405b", seq_len: 8192,
		global_batch_tokens: 16777216, gpu: "h100-sxm5-80gb", gpus: $g, calibration: "datasheet",
		strategies: {tp: 8, pp: 16, cp: 1, zero: 2, recompute: "none", offload: "none",
		stage_rebalance: true}} * $x'
}

for g in 16384 8192; do
	req POST /v1/sizing/training "${J[@]}" -d "$(meta $g)"
	check "Llama 3 405B, Meta's layout on $g H100 (no recompute) fits" 201 \
		".plans[0] | .tp == 8 and .pp == 16 and .dp == ($g / 128) and .recompute == \"none\"
		 and .stage_rebalance == true and .memory_gib.total <= .memory_gib.capacity"
	[ "$STATUS" = 201 ] && echo "# 405B on $g H100: $(jq -r '.plans[0] | "vp \(.vp // 1) zero \(.zero) offload \(.offload) \(.memory_gib.total) GiB, MFU \(.mfu), \(.binding)"' "$T/body") (paper: BF16 MFU $([ $g = 8192 ] && echo 43 || echo 41) %)"
	jq -e '.plans[0].mfu > 0.2 and .plans[0].mfu < 0.6' "$T/body" >/dev/null &&
		ok "405B on $g H100: MFU reported" || not_ok "405B on $g H100: MFU reported" "$(jq -c '.plans[0].mfu' "$T/body")"
done
jq -e '[.checks.warnings[] | select(test("pins ZeRO-2, which stack megatron-lm-2021 does not run"))] | length == 1' "$T/body" >/dev/null &&
	ok "Meta's ZeRO-2 is beyond the default profile: the answer says so" ||
	not_ok "Meta's ZeRO-2 is beyond the default profile: the answer says so" "$(jq -c '.checks.warnings' "$T/body")"
jq -e '.assumptions.dropout == false and .basis.memory_headroom.value == 0
	and .basis.memory_headroom.source == "default" and (.basis.memory_headroom.note | test("default 0"))' "$T/body" >/dev/null &&
	ok "Llama has no dropout; the default headroom 0 is stated in basis" ||
	not_ok "Llama has no dropout; the default headroom 0 is stated in basis" "$(jq -c '{a: .assumptions, b: .basis.memory_headroom}' "$T/body")"

# Meta's interleaving too (v 8, ZeRO-2; Llama 3 §3.3.2): at 16K GPUs the
# step has m = 16 = p micro-batches, so every forward runs before any
# backward (Megatron-Core schedules.py) and a middle rank holds 16 x 8
# layers: 74.8 GiB, fits, MFU within 15 % of the paper's 0.41. At 8K GPUs
# (m = 32) the warm-up holds 141 one-layer chunks: 81.9 GiB, a 422.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"strategies":{"vp":8,"zero":2}}')"
check "405B at Meta's layout with v 8 on 16,384 H100 fits, MFU within 15 % of 0.41" 201 \
	'.plans[0] | .vp == 8 and .memory_gib.total <= .memory_gib.capacity
	 and ((.mfu / 0.41 - 1) | fabs) <= 0.15'
[ "$STATUS" = 201 ] && echo "# 405B v 8 on 16384 H100: $(jq -r '.plans[0] | "\(.memory_gib.total) GiB (activations \(.memory_gib.activations)), MFU \(.mfu)"' "$T/body")"
req POST /v1/sizing/training "${J[@]}" -d "$(meta 8192 '{"strategies":{"vp":8,"zero":2}}')"
check_problem "405B at Meta's layout with v 8 on 8,192 H100 does not fit: 422" 422 gpus
# The overhead line is the request's (basis.memory_overheads). The defaults
# are stated there; an allocator that does not fragment (a statement about
# the run, e.g. expandable segments, not a default) lets the 8K layout fit.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384)"
check "basis.memory_overheads states the default 1.5 GiB + 5 %" 201 \
	'.basis.memory_overheads | .fixed_gib.value == 1.5 and .fixed_gib.source == "default"
	 and .fragmentation.value == 0.05 and .fragmentation.source == "default"'
req POST /v1/sizing/training "${J[@]}" -d "$(meta 8192 '{"memory_fragmentation_fraction":0,"strategies":{"vp":8,"zero":2}}')"
check "405B v 8 on 8,192 H100 with fragmentation 0 fits; the overhead is the fixed 1.5 GiB; basis says request" 201 \
	'.plans[0] | .vp == 8 and .memory_gib.total <= .memory_gib.capacity and .memory_gib.overhead == 1.5'
jq -e '.basis.memory_overheads.fragmentation | .value == 0 and .source == "request"' "$T/body" >/dev/null &&
	ok "basis names the request's fragmentation" || not_ok "basis names the request's fragmentation" "$(jq -c .basis.memory_overheads "$T/body")"
[ "$STATUS" = 201 ] && echo "# 405B v 8 on 8192 H100, fragmentation 0: $(jq -r '.plans[0] | "\(.memory_gib.total) GiB, MFU \(.mfu)"' "$T/body") (paper 0.43)"
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"memory_fixed_overhead_gib":6}')"
check "a larger fixed overhead shows in the plan's overhead line" 201 \
	'.plans[0].memory_gib.overhead > 6 and .basis.memory_overheads.fixed_gib.source == "request"'
# The host rates of offloading plans (basis.host_offload): the GPU's PCIe
# rate x 0.8 and CPU Adam at 10 GB/s by default; the request's, when given,
# move the step's optimizer time.
OFF='{"model":"llama-3-8b","seq_len":4096,"gpu":"h100-sxm5-80gb","gpus":1,"global_batch_size":8,"calibration":"datasheet","stack":"megatron-core","strategies":{"offload":"optimizer"}}'
req POST /v1/sizing/training "${J[@]}" -d "$OFF"
check "basis.host_offload: the H100's PCIe 5.0 x16 x 0.8 and the default CPU optimizer rate" 201 \
	'.basis.host_offload | .host_link_gbps.source == "datasheet" and .host_link_gbps.efficiency == 0.8
	 and ((.host_link_gbps.value - .host_link_gbps.datasheet * 0.8) | fabs) < 0.02
	 and .cpu_optimizer_gbps.value == 10 and .cpu_optimizer_gbps.source == "default"'
slow=$(jq -r '.plans[0].time_s.optimizer // empty' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d "$(jq -c '. + {host_link_gbps: 100, cpu_optimizer_gbps: 40}' <<<"$OFF")"
check "host_link_gbps and cpu_optimizer_gbps from the request, stated" 201 \
	'.basis.host_offload | .host_link_gbps.value == 80 and .host_link_gbps.source == "request" and .cpu_optimizer_gbps.source == "request"'
fast=$(jq -r '.plans[0].time_s.optimizer // empty' "$T/body")
[ -n "$slow" ] && [ -n "$fast" ] && awk -v a="$slow" -v b="$fast" 'BEGIN { exit !(b < a / 3) }' &&
	ok "faster host rates shorten the offloaded optimizer step ($slow -> $fast s)" ||
	not_ok "faster host rates shorten the offloaded optimizer step" "slow=$slow fast=$fast"
for bad in '"host_link_gbps":-1' '"host_link_gbps":0.01' '"host_link_gbps":"pcie5"' '"cpu_optimizer_gbps":-5' '"cpu_optimizer_gbps":1e6'; do
	f=${bad%%\":*}; f=${f#\"}
	req POST /v1/sizing/training "${J[@]}" -d "$(jq -c ". + {$bad}" <<<"$OFF")"
	check_problem "$bad: 400 naming $f" 400 "$f"
done
for bad in '"memory_fragmentation_fraction":-0.1' '"memory_fragmentation_fraction":1.5' '"memory_fragmentation_fraction":"5%"' \
	'"memory_fixed_overhead_gib":-1' '"memory_fixed_overhead_gib":1e9' '"memory_fixed_overhead_gib":[1]'; do
	f=${bad%%\":*}; f=${f#\"}
	req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 "{$bad}")"
	check_problem "$bad: 400 naming $f" 400 "$f"
done

# Megatron's distributed optimizer (ZeRO-1) on the same layout: 96 % of
# memory, flagged.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"strategies":{"zero":1,"vp":1}}')"
check "405B with ZeRO-1 fits above 95 % and is flagged" 201 \
	'(.plans[0].memory_gib | .total > 0.95 * .capacity) and ([.checks.warnings[] | test("above 95 %")] | any)'

# Headroom: 10 % still fits (ZeRO-2, 70.6 GiB); 15 % (68 GiB usable) does
# not, a 422; more headroom never fits more.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"memory_headroom_fraction":0.1}')"
check "405B with 10 % headroom fits within the usable 72 GiB" 201 \
	'.plans[0].memory_gib | .usable == 72 and .total <= .usable'
jq -e '.basis.memory_headroom.value == 0.1 and .basis.memory_headroom.source == "request"' "$T/body" >/dev/null &&
	ok "basis states the request's headroom" || not_ok "basis states the request's headroom" "$(jq -c '.basis' "$T/body")"
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"memory_headroom_fraction":0.15}')"
check_problem "405B with 15 % headroom does not fit: 422" 422 gpus

# Dropout is a request property: on, the same layout needs more memory.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"dropout":true,"strategies":{"zero":2,"vp":1,"micro_batch":1}}')"
on=$(jq -r '.plans[0].memory_gib.activations // empty' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"dropout":false,"strategies":{"zero":2,"vp":1,"micro_batch":1}}')"
off=$(jq -r '.plans[0].memory_gib.activations // empty' "$T/body")
[ -n "$on" ] && [ -n "$off" ] && awk -v a="$on" -v b="$off" 'BEGIN { exit !(a > b) }' &&
	ok "dropout true stores its masks (activations $on > $off GiB)" || not_ok "dropout true stores its masks" "on=$on off=$off"

# Binding: a small plan far below capacity is not memory-bound whatever
# its ZeRO stage.
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"global_batch_size":512,"gpu":"h100-sxm5-80gb","gpus":64,"calibration":"datasheet","strategies":{"tp":1,"pp":1,"zero":3,"micro_batch":1,"recompute":"none"}}'
check "binding: ZeRO-3 at well under half the memory is not 'memory'" 201 \
	'(.plans[0].memory_gib | .total < 0.5 * .capacity) and .plans[0].binding != "memory"'
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"strategies":{"zero":2,"vp":1,"micro_batch":1}}')"
check "binding: the 405B plan with nothing else allowed is bound by its pipeline bubble" 201 \
	'.plans[0].binding == "pipeline_bubble" and .checks.binding == "pipeline_bubble"'

# Field errors name the field.
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"memory_headroom_fraction":0.6}')"
check_problem "memory_headroom_fraction above 0.5 is a 400 naming it" 400 memory_headroom_fraction
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"dropout":"yes"}')"
check_problem "dropout must be a boolean (400 naming it)" 400 dropout
req POST /v1/sizing/training "${J[@]}" -d "$(meta 16384 '{"strategies":{"stage_rebalance":["x"]}}')"
check_problem "strategies.stage_rebalance takes booleans (400 naming it)" 400 strategies.stage_rebalance

check_alive "daemon alive after the memory requests"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

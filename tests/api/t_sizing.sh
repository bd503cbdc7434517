#!/usr/bin/env bash
# The sizing endpoints end to end: training, inference, compare; the
# worked numbers of tests/unit/test_engine.c (docs/MODEL.md) through the API; impossible requests;
# persistence and the recommendation history with cursor pagination.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
J=(-H 'Content-Type: application/json')

# --- training
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"global_batch_size":1024,"gpu":"h100-sxm5-80gb","max_gpus":2048,"top":3,"calibration":"datasheet"}'
check "training: 201 with ranked plans" 201 \
	'.kind == "training" and (.plans | length) >= 1 and (.plans | length) <= 3 and .model.name == "llama-2-70b"'
loc=$(header Location)
id=$(jq -r .id "$T/body")
[ "$loc" = "/v1/recommendations/$id" ] && ok "training: Location names the recommendation" || not_ok "training: Location names the recommendation" "$loc"
cp "$T/body" "$T/first.json"
jq -e '.plans[0] | .gpus > 0 and .nodes > 0 and .tp >= 1 and .pp >= 1 and .dp >= 1 and (.zero|type)=="number"
	and (.recompute|type)=="string" and (.sequence_parallel|type)=="boolean" and .micro_batch >= 1 and .grad_accum >= 1
	and .global_batch_size == 1024
	and (.memory_gib | .weights >= 0 and .gradients >= 0 and .optimizer >= 0 and .activations >= 0 and .overhead >= 0 and .capacity == 80 and .total <= .capacity)
	and (.time_s | .compute > 0 and .tp_comm >= 0 and .pp_bubble >= 0 and .dp_comm_exposed >= 0 and .step >= .compute)
	and .tokens_per_s > 0 and .tokens_per_s_per_gpu > 0 and .mfu > 0 and .mfu < 1 and .hfu >= .mfu
	and .days > 0 and .gpu_hours > 0 and .cost > 0' "$T/first.json" >/dev/null &&
	ok "training: every plan field of the contract is present and sane" || not_ok "training: every plan field of the contract is present and sane" "$(jq -c '.plans[0]' "$T/first.json")"
jq -e '[.plans[].memory_gib | .total <= .capacity] | all' "$T/first.json" >/dev/null && ok "training: every ranked plan fits" || not_ok "training: every ranked plan fits"
jq -e '[.plans[] | .global_batch_size == .dp * .micro_batch * .grad_accum] | all' "$T/first.json" >/dev/null &&
	ok "training: global batch = dp x micro_batch x grad_accum in every plan" || not_ok "training: global batch = dp x micro_batch x grad_accum in every plan" "$(jq -c '[.plans[] | {dp, micro_batch, grad_accum, global_batch_size}]' "$T/first.json")"
jq -e '(.model.params.total - 68.98e9 | fabs) < 0.05e9 and (.flops.model_per_token > 6 * 68e9) and .min_gpus >= 1
	and (.basis.gemm_tflops.source | test("datasheet")) and .basis.gemm_tflops.datasheet == 989.4' "$T/first.json" >/dev/null &&
	ok "training: model, FLOPs, min_gpus and basis" || not_ok "training: model, FLOPs, min_gpus and basis"
jq -e '(.checks.tensor_parallel.t_max - 11.18 | fabs) < 0.1 and .checks.tensor_parallel.link_gbps_one_direction == 450' "$T/first.json" >/dev/null &&
	ok "section 7.2: H100 NVLink t_max ~ 11.18 for h=8192 bf16" || not_ok "section 7.2: H100 NVLink t_max ~ 11.18 for h=8192 bf16" "$(jq -c .checks "$T/first.json")"

req GET "$loc"
cmp -s "$T/body" <(tr -d '\n' <"$T/first.json") && ok "GET /v1/recommendations/{id} returns the answer byte for byte" ||
	not_ok "GET /v1/recommendations/{id} returns the answer byte for byte" "$(head -c 200 "$T/body")"

req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-70b","seq_len":4096,"gpu":"rtx-4090-24gb","gpus_per_node":8,"strategies":{"tp":[8]},"max_gpus":512}'
# 70B on 512 x 24 GiB fits (pp and ZeRO spread it; tests/unit/test_engine.c
# test_tmax_warning_4090 sizes the same job), so the answer is a plan whose
# TP check fails with the t_max warning, never a 422.
check "section 5: TP 8 on RTX 4090 is sized (201)" 201
jq -e '(.checks.tensor_parallel.t_max - 4.8 | fabs) < 0.1 and .checks.tensor_parallel.ok == false and
	([.checks.warnings[] | test("4\\.8")] | any)' "$T/body" >/dev/null &&
	ok "section 5: TP 8 on RTX 4090 warns t_max ~ 4.8 at 165 TFLOP/s" || not_ok "section 5: TP 8 on RTX 4090 warns t_max ~ 4.8 at 165 TFLOP/s" "$(jq -c '.checks // .' "$T/body" | head -c 400)"

req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"a100-sxm4-80gb","precision":"fp8"}'
check_problem "section 7.7: fp8 on an A100 is a 422 naming precision" 422 precision
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"rtx-3090-24gb","precision":"fp8"}'
check_problem "section 7.7: fp8 on an RTX 3090 is a 422" 422 precision
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","precision":"fp8","max_gpus":64}'
check "fp8 on an H100 is sized" 201 '.plans | length >= 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-70b","seq_len":4096,"gpu":"h100-sxm5-80gb","strategies":{"tp":[3]}}'
check_problem "heads not divisible by tp is a 400 naming strategies.tp" 400 strategies.tp
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","global_batch_size":7,"strategies":{"dp":[2],"tp":[1],"pp":[1],"micro_batch":[1]},"gpus":2}'
check_problem "a global batch dp x micro-batch cannot divide is a 400" 400 global_batch_size
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"gpu":"l4-24gb","max_gpus":4,"strategies":{"offload":["none"]}}'
check_problem "a model that cannot fit at the largest allowed scale is a 422" 422 max_gpus
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"global_batch_size":2048,"gpu":"h100-sxm5-80gb","gpus":16384,"strategies":{"tp":[8],"pp":[16]}}'
check "Llama 3 405B on 16 stages: uneven stages allowed and flagged" 201 \
	'.plans[0].pp == 16 and .plans[0].uneven_stages == true and ([.checks.warnings[] | test("stage")] | any)'
req POST /v1/sizing/training "${J[@]}" -d '{"model":{"layers":24,"hidden_size":2048,"heads":16,"ffn_hidden_size":5504,"vocab_size":32000},"seq_len":2048,"gpu":"a100-sxm4-80gb","max_gpus":8,"method":"lora","lora_rank":8}'
check "an inline architecture object is sized (LoRA)" 201 '.model.name == "custom" and (.plans|length) >= 1'
# review s24a F2: fa3 named on an A100 (no FA3 kernels below sm_90) is
# sized as the FA2 it runs, and said so
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":16384,"gpu":"a100-sxm4-80gb","train_tokens":1e11,"gpus":16,"method":"lora","top":1,"stack":{"name":"megatron-lm-2021","attn_kernel":"fa2"}}'
fa2_step=$(jq '.plans[0].time_s.step' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":16384,"gpu":"a100-sxm4-80gb","train_tokens":1e11,"gpus":16,"method":"lora","top":1,"stack":{"name":"megatron-lm-2021","attn_kernel":"fa3"}}'
check "fa3 on an A100: FA2's step, and a warning that says so" 201 \
	".plans[0].time_s.step == $fa2_step and ([.checks.warnings[] | select(test(\"names attention kernel fa3, which needs compute capability 9.0\"))] | length == 1)"
# review s24a F1: a LoRA answer's flops.convention had the full-training formula
check "a LoRA answer's FLOP convention is LoRA's (4·N + 6·N_adapters)" 201 '.flops.convention | startswith("model = 4·N_active + 6·N_adapters")'
req POST /v1/sizing/training "${J[@]}" -d '{"model":{"layers":24,"hidden_size":2048,"heads":15,"ffn_hidden_size":5504,"vocab_size":32000},"seq_len":2048,"gpu":"a100-sxm4-80gb"}'
check_problem "an inconsistent architecture names model.heads" 400 model.heads
# model.hidden_size up to the contract's 1048576 (the engine refused
# above 1000000 with a 400)
# review s18b F9: every broken cross-field rule at once
req POST /v1/sizing/inference "${J[@]}" -d '{"model":{"layers":32,"hidden_size":4096,"heads":7,"kv_heads":8,"ffn_hidden_size":14336,"vocab_size":128256},"gpu":"h100","prompt_tokens":512,"output_tokens":128}'
check "heads 7 with kv_heads 8 and hidden 4096: both model.kv_heads and model.heads named" 400 '[.errors[].field] == ["model.kv_heads", "model.heads"]'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":{"layers":1,"hidden_size":1048576,"heads":1,"ffn_hidden_size":64,"vocab_size":100},"prompt_tokens":1,"output_tokens":1,"gpu":"h200-sxm-141gb"}'
check_problem "an architecture at the contract's largest hidden_size (1048576) is sized (422 too large, not a 400)" 422 model
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-9-1t","seq_len":2048,"gpu":"a100-sxm4-80gb"}'
check_problem "an unknown preset names model" 400 model
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"tpu-v9"}'
check_problem "an unknown GPU names gpu" 400 gpu
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seqlen":2048,"gpu":"a100-sxm4-80gb"}'
check_problem "a typo in a field name is reported (seqlen)" 400 seqlen
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":-5,"gpu":"a100-sxm4-80gb","top":0,"precision":"fp4"}'
check_problem "all bad fields at once" 400 seq_len
jq -e '[.errors[].field] | (index("top") != null) and (index("precision") != null)' "$T/body" >/dev/null && ok "errors list every bad field" || not_ok "errors list every bad field" "$(body)"
# The precisions and serving profiles each endpoint takes, named with the
# engine's words (engine/hw.h, engine/inference.h) in the order openapi.yaml
# shows them.
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"a100-sxm4-80gb","precision":"fp4","gradient_precision":"fp16"}'
jq -e '[.errors[] | [.field, .message]] | index([["precision", "must be one of: fp32, tf32, fp16, bf16, fp8"]]) != null
	and index([["gradient_precision", "must be one of: bf16, fp32"]]) != null' "$T/body" >/dev/null &&
	ok "training: a refused precision lists the ones allowed" || not_ok "training: a refused precision lists the ones allowed" "$(body)"
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","weight_precision":"fp4","kv_cache_precision":"int4","serving":"triton","prompt_tokens":1024,"output_tokens":256,"gpu":"h100-sxm5-80gb"}'
jq -e '[.errors[] | [.field, .message]] | index([["weight_precision", "must be one of: fp32, bf16, fp16, fp8, int8, int4"]]) != null
	and index([["kv_cache_precision", "must be one of: fp32, bf16, fp16, fp8, int8"]]) != null
	and index([["serving", "must be one of: vllm, tensorrt-llm, sglang, generic"]]) != null' "$T/body" >/dev/null &&
	ok "inference: refused precisions and serving list the ones allowed" || not_ok "inference: refused precisions and serving list the ones allowed" "$(body)"
# A GPU type no probe has measured (created here, so no other test's
# reports can calibrate it).
fresh=fresh-gpu-$RANDOM$RANDOM
admin=$(create_token "sizing-admin-$RANDOM$RANDOM" admin)
req PUT "/v1/gpus/$fresh" -H "Authorization: Bearer $admin" -d "$(curl -s "$GSZ_URL/v1/gpus/a100-sxm4-80gb" | jq 'del(.name)')"
check "a fresh GPU type for the calibration check" 201
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":2048,"gpu":"'"$fresh"'","calibration":"measured"}'
check_problem "calibration measured without measurements is a 422" 422 calibration

# --- inference
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","weight_precision":"fp16","kv_cache_precision":"fp16","prompt_tokens":1024,"output_tokens":256,"gpu":"h100-sxm5-80gb"}'
check "section 7.8: Llama-2-7B KV cache = 524288 B/token in fp16" 201 '.memory.kv_cache_bytes_per_token == 524288'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","weight_precision":"fp16","kv_cache_precision":"fp16","prompt_tokens":512,"output_tokens":512,"requests_per_s":2,"gpu":"h100-sxm5-80gb","top":4}'
check "section 7.8: Llama-2-70B (GQA) KV cache = 327680 B/token" 201 \
	'.memory.kv_cache_bytes_per_token == 327680 and (.memory.kv_cache_bytes_per_sequence == 327680 * 1024) and .memory.min_tp >= 2'
jq -e '.plans[0] | .tp >= 2 and .batch >= 1 and .ttft_ms > 0 and .tpot_ms > 0 and .output_tokens_per_s > 0
	and .total_output_tokens_per_s >= .output_tokens_per_s and .replicas >= 1 and .gpus == .tp * .pp * .replicas
	and .cost_per_hour > 0 and .cost_per_million_output_tokens > 0 and (.binding|type)=="string"' "$T/body" >/dev/null &&
	ok "inference: every plan field of the contract" || not_ok "inference: every plan field of the contract" "$(jq -c '.plans[0]' "$T/body")"
# decode never beats reading the weights once per token
jq -e '[.plans[] | .tpot_ms >= (137.9e9 / .tp / 3350e9 * 1000) * 0.999] | all' "$T/body" >/dev/null &&
	ok "inference: tpot never below weight bytes / (tp x HBM bandwidth)" || not_ok "inference: tpot never below weight bytes / (tp x HBM bandwidth)"
[ "$(jq '[.plans[1:][] | select(.tradeoff)] | length' "$T/body")" = "$(jq '.plans | length - 1' "$T/body")" ] &&
	ok "inference: alternatives explain their trade-off" || not_ok "inference: alternatives explain their trade-off"
# capacity.limited_by names the target that binds at capacity: with both
# given and TTFT reached first, ttft_ms (it said tpot_ms, at a TPOT of a
# quarter of its target).
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"mi300x-192gb","prompt_tokens":2048,"output_tokens":512,"requests_per_s":1,"tpot_ms":50,"ttft_ms":50,"calibration":"datasheet","top":1}'
check "inference: capacity limited by the target it reaches (ttft_ms at 50 ms, tpot well under 50)" 201 \
	'.plans[0].capacity | .limited_by == "ttft_ms" and .ttft_ms >= 49 and .ttft_ms <= 50.01 and .tpot_ms < 40'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":512,"tpot_ms":0.5,"gpu":"a100-sxm4-80gb"}'
check_problem "unreachable latency target is a 422 saying the best achievable" 422 tpot_ms
grep -q "best achievable" "$T/body" && ok "the 422 says the best achievable" || not_ok "the 422 says the best achievable" "$(body)"
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","weight_precision":"fp8","prompt_tokens":512,"output_tokens":128,"gpu":"a100-sxm4-80gb"}'
check_problem "inference fp8 weights on an A100 is a 422" 422 weight_precision
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","weight_precision":"bf16","prompt_tokens":512,"output_tokens":128,"gpu":"l4-24gb","max_gpus":4}'
check_problem "a model that cannot fit in max_gpus is a 422" 422
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","tp":8}'
check "inference: a pinned tp is honoured" 201 '[.plans[].tp] | all(. == 8)'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","prompt_tokens":128,"output_tokens":128,"gpu":"h100-sxm5-80gb","max_batch":16,"top":1}'
check "inference: a batch cap binds as scheduler, as capacity.limited_by says (not memory)" 201 \
	'.plans[0] | .binding == "scheduler" and .capacity.limited_by == "max_batch" and .max_batch_fit > 100'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-70b","seq_len":2048,"train_tokens":1e7,"gpu":"h100-sxm5-80gb","gpus":1,"method":"qlora","top":3}'
check "QLoRA 70B on one H100: a plan without offload ranks first when offloading buys under 1 %" 201 \
	'.plans[0].offload == "none"'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e9,"global_batch_size":64,"gpu":"a100-sxm4-80gb","gpus":8,"top":1}'
check "a plan above MFU 0.65 says it is above every published run and likely optimistic" 201 \
	'.plans[0].mfu > 0.65 and ([.checks.warnings[] | select(test("above every published training run"))] | length) == 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e9,"global_batch_size":64,"gpu":"a100-sxm4-80gb","gpus":8,"top":1,"strategies":{"recompute":["full"]}}'
check "with full recompute (MFU below 0.65) no such warning" 201 \
	'.plans[0].mfu <= 0.65 and ([.checks.warnings[] | select(test("above every published"))] | length) == 0'
# review s17c F11: at the smallest loads, sequences decoding never exceed
# those in flight; a refusal without targets does not speak of them
for l in '"requests_per_s":1e-9' '"concurrent_sequences":1e-9'; do
	req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":512,"output_tokens":128,"top":1,"calibration":"datasheet",'"$l"'}'
	check "load $l: decode_batch <= batch" 201 '.plans[0] | .decode_batch <= .batch'
done
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","gpu":"l4-24gb","prompt_tokens":10000000,"output_tokens":10000000,"requests_per_s":1e7}'
check "a load beyond every replica count, no targets: the 422 does not mention targets" 422 '(.detail | contains("target")) | not'
# review s17a F11: a 422's remedy names what can help: not weight offload
# (ZeRO-3) with every pinned pp above 1, but full recompute when pinned off
req POST /v1/sizing/training "${J[@]}" -d '{"model":"deepseek-v3","seq_len":4096,"gpu":"h800-sxm5-80gb","gpus":2048,"train_tokens":14.8e12,"precision":"fp8","global_batch_size":15360,"strategies":{"tp":1,"pp":16,"ep":64,"zero":1,"micro_batch":1,"recompute":"selective"}}'
check "DeepSeek-V3 pinned at pp 16, selective recompute: 422 suggesting full recompute, no weight-offload stack" 422 \
	'(.detail | contains("full recompute")) and (.detail | contains("offloads the weights") | not)'
# recompute partial (Megatron's block method): Llama 3 405B at Meta's layout
# on 8,192 H100 recomputes some layers of each chunk; the plan says how many,
# fewer than a chunk holds, and stays within 95 % of memory. On a stack
# without it a pinned partial is sized and warned about; "partial" is a
# known value, "block" a 400 naming the field.
META='"model":"llama-3.1-405b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":8192,"global_batch_tokens":16777216,"calibration":"datasheet"'
req POST /v1/sizing/training "${J[@]}" -d "{$META,\"strategies\":{\"tp\":8,\"pp\":16,\"cp\":1,\"zero\":2,\"stage_rebalance\":true}}"
check "405B at Meta's layout on 8,192 H100: partial recompute, recompute_layers below the chunk, within 95 % of memory" 201 \
	'.plans[0] | .recompute == "partial" and (.recompute_layers | type) == "number" and .recompute_layers >= 1
	 and .recompute_layers * (.vp // 1) < 128 / 16 and .memory_gib.total <= 0.95 * .memory_gib.capacity'
req POST /v1/sizing/training "${J[@]}" -d "{$META,\"stack\":\"pytorch-fsdp2-fa2\",\"strategies\":{\"tp\":8,\"pp\":16,\"cp\":1,\"zero\":2,\"recompute\":\"partial\"}}"
check "a pinned partial on a stack without it: sized, warned naming partial_recompute" 201 \
	'.plans[0].recompute == "partial" and ([.checks.warnings[] | select(contains("partial_recompute false"))] | length) == 1'
req POST /v1/sizing/training "${J[@]}" -d "{$META,\"strategies\":{\"recompute\":\"block\"}}"
check_problem "recompute block is a 400 naming strategies.recompute" 400 strategies.recompute
# review s20a F3: a pinned partial that fits nowhere is the 422 full gets, not
# the global batch's 400; one whose chunks hold one layer names the field.
# F4: a list naming partial on a stack without it is narrowed, unwarned.
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":8,"strategies":{"recompute":"partial"}}'
check "405B on 8 H100 with partial pinned: 422 does not fit, naming the smallest plan" 422 \
	'(.detail | contains("does not fit")) and (.detail | contains("recompute partial"))'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-8b","seq_len":8192,"gpu":"h100-sxm5-80gb","gpus":32,"strategies":{"tp":1,"pp":32,"recompute":"partial"}}'
check_problem "partial pinned where every chunk holds one layer: 400 naming strategies.recompute" 400 strategies.recompute
req POST /v1/sizing/training "${J[@]}" -d "{$META,\"stack\":\"pytorch-fsdp2-fa2\",\"strategies\":{\"tp\":8,\"pp\":16,\"cp\":1,\"zero\":2,\"recompute\":[\"partial\",\"full\"]}}"
check "a list [partial, full] on a stack without partial: full plans, no partial warning" 201 \
	'([.plans[] | select(.recompute == "partial")] | length) == 0 and ([.checks.warnings[] | select(contains("partial"))] | length) == 0'
# review s17a F10: at 128K the full-attention MFU convention passes 0.65
# without the GPU doing more: the answer says so, not "optimistic"
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":131072,"gpu":"a100-sxm4-80gb","max_gpus":16,"train_tokens":1e10,"top":1}'
check "128K on A100: MFU above 0.65 explained by the convention (executed share below it), no optimism warning" 201 \
	'.plans[0].mfu > 0.65 and ([.checks.warnings[] | select(test("above every published"))] | length) == 0 and ([.checks.warnings[] | select(test("counts the full attention score matrix"))] | length) == 1'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","prompt_tokens":1000,"output_tokens":1000,"concurrent_sequences":1e5,"gpu":"h100","max_num_batched_tokens":4194304}'
check_problem "inference: a token budget whose workspace leaves no room is a 422 naming max_num_batched_tokens (not the 15 GiB model)" 422 max_num_batched_tokens
req POST /v1/sizing/inference "${J[@]}" -d '{"model":{"layers":61,"hidden_size":7168,"heads":128,"vocab_size":129280,"ffn_hidden_size":18432,"moe":{"experts":65536,"top_k":64,"expert_ffn_hidden_size":2048,"shared_experts":1,"dense_layers":3}},"prompt_tokens":4096,"output_tokens":512,"requests_per_s":100,"gpu":"h100","max_gpus":1048576}'
check_problem "inference: weights beyond the largest replica name the model, not a max_gpus far above it" 422 model
grep -q "a replica of 256 GPUs" "$T/body" && ok "and say the largest replica (256 GPUs), not 1048576" || not_ok "the largest replica is said" "$(body)"
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":1024,"output_tokens":128,"requests_per_s":2,"gpu":"l4-24gb","tp":1}'
# a tp pin too small for the weights gets pipeline stages of that tp (review s18e F3: stages of any width)
check "inference: a tp pin too small for one GPU's memory is sized with pipeline stages of that tp" 201 \
	'all(.plans[]; .tp == 1) and .plans[0].pp >= 8'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","prompt_tokens":1024,"output_tokens":128,"requests_per_s":2,"gpu":"l4-24gb","tp":1,"max_gpus":32}'
check_problem "inference: ... and where 32 GPUs of it cannot hold them, a 422 naming max_gpus" 422 max_gpus
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","tp":16}'
check_problem "inference: tp beyond a node is a 400" 400 tp
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-70b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","requests_per_s":1,"concurrent_sequences":4}'
check_problem "inference: two load forms at once is a 400" 400 concurrent_sequences

# operating point at the stated load (issue 12): Little's law, delivered
# tokens, utilisation under the ceiling, capacity beside it
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-70b","prompt_tokens":467,"output_tokens":256,"requests_per_s":2,"tp":4,"gpu":"h100-sxm5-80gb"}'
check "inference at 2 req/s: ~10 in flight and ~20 ms TPOT, not the memory-limited batch" 201 \
	'.plans[0] | .replicas == 1 and .batch > 8 and .batch < 14 and .tpot_ms > 15 and .tpot_ms < 25 and .capacity.batch > 10 * .batch'
check "inference: in flight = load x request time (Little's law, 2 %)" 201 \
	'.plans[0] | ((.batch - .requests_per_s * (.ttft_ms + 255 * .tpot_ms) / 1000) | fabs) <= 0.02 * .batch'
check "inference: delivered tokens = load x output, cost at load x tokens/h = cost per hour" 201 \
	'.plans[0] | ((.total_output_tokens_per_s - 512) | fabs) < 0.01 and ((.cost_per_million_output_tokens * .total_output_tokens_per_s * 3600 / 1e6 - .cost_per_hour) | fabs) < 0.01 * .cost_per_hour'
check "inference: utilisation at or under the ceiling, capacity limit named" 201 \
	'.plans[0].utilization <= .assumptions.max_utilization and (.plans[0].capacity.limited_by | type) == "string" and .assumptions.load_value == 2'
check "inference: basis names the serving profile and its source" 201 \
	'.basis.serving.engine == "vllm" and .basis.serving.kv_reserve == "fraction_of_total" and .basis.serving.max_num_seqs == 1024 and (.basis.serving.source | test("arg_utils"))'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-70b","weight_precision":"fp8","prompt_tokens":1024,"output_tokens":256,"tp":1,"gpu":"h100-sxm5-80gb","serving":"tensorrt-llm"}'
trt_fit=$(jq '[.plans[] | select(.pp == 1)][0].max_batch_fit' "$T/body")
check "inference: tensorrt-llm reserves KV from the free memory" 201 '.basis.serving.kv_reserve == "fraction_of_free" and .basis.serving.chunked_prefill == false'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-70b","weight_precision":"fp8","prompt_tokens":1024,"output_tokens":256,"tp":1,"gpu":"h100-sxm5-80gb","serving":"vllm"}'
vllm_fit=$(jq '[.plans[] | select(.pp == 1)][0].max_batch_fit' "$T/body")
[ "$trt_fit" -gt $((2 * vllm_fit)) ] && ok "inference: 70B fp8 on one 80 GB GPU holds far more sequences under TensorRT-LLM's rule ($trt_fit vs $vllm_fit)" ||
	not_ok "inference: KV reservation differs by profile" "$trt_fit vs $vllm_fit"
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","serving":"ollama"}'
check_problem "inference: an unknown serving profile is a 400" 400 serving
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","max_utilization":1.5}'
check_problem "inference: max_utilization above 1 is a 400" 400 max_utilization
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":100000,"output_tokens":128,"gpu":"h100-sxm5-80gb"}'
check "inference: a prompt beyond the model's context warns and says what was assumed" 201 '[.warnings[] | select(test("exceed the model.s context"))] | length == 1'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-2-7b","prompt_tokens":512,"output_tokens":128,"gpu":"h100-sxm5-80gb","max_batch":8,"max_num_batched_tokens":4096,"chunked_prefill":false,"memory_utilization":0.8}'
check "inference: profile overrides are applied and shown" 201 \
	'.basis.serving.max_num_seqs == 8 and .basis.serving.max_num_batched_tokens == 4096 and .basis.serving.chunked_prefill == false and .basis.serving.memory_fraction == 0.8 and .plans[0].capacity.batch <= 8.5'
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-70b","prompt_tokens":1024,"output_tokens":256,"requests_per_s":10,"tpot_ms":50},"gpus":["h100-sxm5-80gb","h200-sxm-141gb","l40s-48gb","a100-sxm4-80gb"]}'
check "compare inference: the cheapest row has the lowest cost per hour of serving the load" 201 \
	'([.rows[] | select(.ok) | .cost_per_hour] | min) as $m | [.rows[] | select(.cheapest) | .cost_per_hour] == [$m] and (.cost_basis | test("cost_per_hour"))'
check "compare inference: every row meets the targets at the load" 201 '[.rows[] | select(.ok) | .meets_targets and .tpot_ms <= 50] | all'
check "compare inference: cost ratios in verdicts are cost per hour ratios" 201 \
	'([.rows[] | select(.cheapest) | .cost_per_hour][0]) as $c | [.rows[] | select(.ok) | ((.cost_vs_cheapest - .cost_per_hour / $c) | fabs) < 0.01] | all'

# Exactly 1000 GPUs cannot take the default batch (1024 sequences at 4K):
# valid, infeasible, naming gpus — the client sent no global_batch_size.
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","gpus":1000}'
check_problem "training: the default batch on 1000 GPUs is a 422 naming gpus" 422 gpus
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","gpus":1000,"global_batch_size":1024}'
check_problem "training: a given batch that 1000 GPUs cannot split is a 400 naming it" 400 global_batch_size

# --- compare
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e11,"max_gpus":64},"gpus":["a100-sxm4-80gb","h100-sxm5-80gb","rtx-4090-24gb"],"prices":{"h100-sxm5-80gb":3.2}}'
check "compare: one row per GPU type with ratios and verdicts" 201 \
	'(.rows | length) == 3 and ([.rows[] | select(.ok) | .verdict | length > 10] | all) and (.verdict | length > 10)
	 and ([.rows[] | select(.cheapest)] | length) == 1 and ([.rows[] | select(.fastest)] | length) == 1
	 and ([.rows[] | select(.gpu == "h100-sxm5-80gb") | .price_per_gpu_hour] == [3.2])'
jq -e '[.rows[] | select(.cheapest) | .cost_vs_cheapest] == [1]' "$T/body" >/dev/null && ok "compare: the cheapest row has cost ratio 1" || not_ok "compare: the cheapest row has cost ratio 1"
# A price or limit for no compared GPU (a typo, or an alias of a GPU the
# list names by its catalog name) is a 400, not silently left unapplied.
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e10},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"],"prices":{"h100":9},"power_limits":{"a100-sxm-80gb":300}}'
check_problem "compare: a prices key naming no compared GPU is a 400" 400 prices.h100
jq -e '[.errors[].field] == ["prices.h100", "power_limits.a100-sxm-80gb"]' "$T/body" >/dev/null &&
	ok "compare: every unmatched prices/power_limits key is named" || not_ok "compare: every unmatched prices/power_limits key is named" "$(body)"
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e10},"gpus":["h100","a100-sxm4-80gb"],"prices":{"h100":9,"a100-sxm4-80gb":1}}'
check "compare: a prices key as gpus lists it (an alias) applies" 201 '[.rows[].price_per_gpu_hour] == [9, 1]'
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e10},"gpus":["h100","a100-sxm4-80gb","H100-SXM5-80GB"]}'
check_problem "compare: one GPU type under two spellings is a 400 (not two rows, one cheapest)" 400 'gpus[2]'
# Without a load each type is compared at its own capacity, and the answer
# says so rather than "for this load".
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":1024,"output_tokens":256},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"]}'
check "compare inference without a load: verdicts say at capacity, time is one request alone" 201 \
	'(.time_basis | test("^latency_alone_ms")) and ([.rows[] | select(.ok) | .verdict] | any(test("at capacity")) and all(test("this load") | not))'
# review s23b F1: one output token has no TPOT (0): at a load the rows rank
# by TTFT at the load, where every type had been refused as "not a finite
# number" while /v1/sizing/inference sized the job on each
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-2-7b","prompt_tokens":128,"output_tokens":1,"output_tokens_per_s":4380},"gpus":["h100-nvl-94gb","a100-sxm4-40gb"]}'
check "compare inference of one output token at a load: ranked by TTFT at the load" 201 \
	'(.time_basis | test("^ttft_ms")) and ([.rows[] | select(.ok)] | length) == 2 and (.verdict | length) > 0'
# review s16a F1: without a load "fastest" is one request on an idle replica,
# not TPOT at capacity (how full the cache runs: H100 was 1.57x "faster"
# than H200 and faster than B200)
# (datasheet: other tests of the suite post probe reports of these types)
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":1024,"output_tokens":256,"calibration":"datasheet"},"gpus":["h100-sxm5-80gb","h200-sxm-141gb","b200-sxm-180gb"]}'
check "compare without a load: B200 fastest, H200 ahead of H100, ranked by latency_alone_ms" 201 \
	'(.rows | map({(.gpu): .}) | add) as $r | $r["b200-sxm-180gb"].fastest and $r["h200-sxm-141gb"].latency_alone_ms < $r["h100-sxm5-80gb"].latency_alone_ms and $r["h200-sxm-141gb"].speedup_vs_fastest > $r["h100-sxm5-80gb"].speedup_vs_fastest'
# review s16a F2: under a concurrency each row serves its own throughput:
# cost per token, not per hour
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":1024,"output_tokens":256,"concurrent_sequences":64},"gpus":["h100-sxm5-80gb","l4-24gb","rtx-4090-24gb"]}'
check "compare with concurrent_sequences: cheapest by cost per million tokens" 201 \
	'(.cost_basis | test("^cost_per_million_output_tokens at the stated concurrency")) and ([.rows[] | select(.cheapest)][0].cost_per_million_output_tokens == ([.rows[] | select(.ok) | .cost_per_million_output_tokens] | min))'
# review s16a F6: on equal time the cheaper is fastest, whatever the order
for order in '"a100-sxm4-80gb","a800-sxm4-80gb"' '"a800-sxm4-80gb","a100-sxm4-80gb"'; do
	req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64},"gpus":['"$order"']}'
	check "compare, equal times ($order): the cheaper row is fastest" 201 \
		'([.rows[] | select(.fastest)][0]) as $f | all(.rows[] | select(.ok and .days == $f.days); .cost >= $f.cost)'
done
# review s17a F1: under objective cost each row is its cheapest plan, on
# its own GPU count: the verdicts name the counts, time_basis the objective
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e11,"max_gpus":64,"objective":"cost"},"gpus":["h100-sxm5-80gb","l40s-48gb"]}'
check "training compare under objective cost: counts differ, and every verdict names each row's GPU count" 201 \
	'(.time_basis | test("cheapest plan \\(objective cost\\)")) and ([.rows[].gpus] | unique | length) == 2 and all(.rows[]; . as $r | $r.verdict | contains("\($r.gpu) on \($r.gpus) GPUs")) and (.verdict | test(" on [0-9]+ GPUs"))'
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e11,"max_gpus":64},"gpus":["h100-sxm5-80gb","l40s-48gb"]}'
check "training compare on equal counts: no counts in the verdicts" 201 \
	'([.rows[].gpus] | unique | length) == 1 and all(.rows[]; .verdict | test(" GPUs") | not)'
# review s17a F8: the bandwidth efficiencies in basis are the request's to
# set; a request's own network figure is labelled as such
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"train_tokens":1e10,"top":1,"inter_node_gbps":100,"calibration":"datasheet"}'
check "inter_node_gbps given: request×efficiency, default efficiency 0.75" 201 \
	'.basis.inter_node_gbps | .source == "request×efficiency" and .efficiency == 0.75 and .efficiency_source == "default" and .value == 9.375'
step0=$(jq '.plans[0].time_s.step' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"train_tokens":1e10,"top":1,"inter_node_gbps":100,"inter_node_efficiency":1,"hbm_efficiency":0.6,"intra_node_efficiency":0.5,"calibration":"datasheet"}'
check "efficiencies given (datasheet path: probe medians would replace them): applied and named as the request's" 201 \
	'.basis | .inter_node_gbps.value == 12.5 and .inter_node_gbps.efficiency_source == "request" and .hbm_gbps.efficiency == 0.6 and .hbm_gbps.value == 2010 and .hbm_gbps.efficiency_source == "request" and .intra_node_gbps.value == 225 and (.gemm_tflops | has("efficiency_source") | not)'
for f in hbm_efficiency intra_node_efficiency inter_node_efficiency; do
	req POST /v1/sizing/inference "${J[@]}" -d "{\"model\":\"llama-3-8b\",\"gpu\":\"h100\",\"prompt_tokens\":512,\"output_tokens\":128,\"$f\":1.5}"
	check_problem "$f 1.5: 400 naming it" 400 "$f"
done
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":512,"output_tokens":128,"hbm_efficiency":0.5},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"]}'
check "compare: a job's hbm_efficiency applies to every row" 201 'all(.rows[]; .ok)'

# review s17a F5: when the default batch, not the GPUs, limits scale, the
# answer says so (and not when a batch large enough is given)
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"gpu":"h100-sxm5-80gb","max_gpus":16384,"train_tokens":15.6e12,"top":1}'
check "405B on up to 16,384 H100s, default batch: half the GPUs, and a warning names the batch" 201 \
	'.plans[0].gpus <= 8192 and ([.checks.warnings[] | select(startswith("the global batch (512 sequences, the 4M-token default) limits scale"))] | length) == 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":8192,"gpu":"h100-sxm5-80gb","max_gpus":16384,"train_tokens":15.6e12,"global_batch_tokens":16777216,"top":1}'
check "the same with Meta's 16M-token batch: all 16,384 GPUs, no batch warning" 201 \
	'.plans[0].gpus == 16384 and ([.checks.warnings[] | select(contains("limits scale"))] | length) == 0'
# review s17a F12: day counts in warnings keep the digits that matter
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"train_tokens":1e10,"max_days":0.001,"objective":"cost","top":1}'
check "max_days 0.001: the warning says 0.001 days and the fastest plan's days as the plan prints them" 201 \
	'.plans[0].days as $d | [.checks.warnings[] | select(contains("max_days (0.001 days)")) | capture("the fastest takes (?<x>[0-9.]+) days").x | tonumber | select(. == $d)] | length == 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"train_tokens":1e10,"deadline_days":0.04,"top":1}'
check "deadline 0.04 days: named as such, not 0.0, and the best plan's days as it prints them" 201 \
	'.plans[0].days as $d | [.checks.warnings[] | select(startswith("no plan meets the deadline of 0.04 days; the best takes \($d) days"))] | length == 1'
# review s18c F2: a 35-second deadline is not "0.000 days"
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb","max_gpus":16,"train_tokens":1e10,"deadline_days":0.0004,"top":1}'
check "deadline 0.0004 days: printed as given" 201 '[.checks.warnings[] | select(startswith("no plan meets the deadline of 0.0004 days"))] | length == 1'
# review s18c F3: LoRA timed slower than full fine-tuning on its layout says so
LB='{"model":"llama-2-7b","gpu":"l40s-48gb","calibration":"datasheet","top":1,"seq_len":8192,"train_tokens":1e10,"global_batch_size":16,"stack":"hf-peft-bnb4","precision":"bf16","gpus":8,"strategies":{"tp":1,"pp":1,"dp":8,"zero":3,"micro_batch":2,"recompute":"full","offload":"none"}'
req POST /v1/sizing/training "${J[@]}" -d "$LB,\"method\":\"full\"}"
full_step=$(jq '.plans[0].time_s.step' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d "$LB,\"method\":\"lora\"}"
check "LoRA slower than full fine-tuning on a pinned layout: a warning quotes both steps" 201 \
	'.plans[0].time_s.step as $s | [.checks.warnings[] | select(startswith("lora is slower than full fine-tuning on this layout (\($s) s against '"$full_step"' s"))] | length == 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","gpu":"h100-sxm5-80gb","calibration":"datasheet","top":1,"seq_len":4096,"train_tokens":1e10,"method":"lora","max_gpus":8}'
check "... and none where LoRA is the faster" 201 '[.checks.warnings[] | select(startswith("lora is slower"))] | length == 0'
# review s18b F8: the KV warning names the tokens a sequence holds as the fit counts them
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-70b","gpu":"h100-sxm5-80gb","prompt_tokens":512,"output_tokens":2048,"calibration":"datasheet","top":1,"tp":4,"serving":"vllm"}'
check "vllm KV warning: max_batch_fit sequences of prompt + half the output (1536 tokens)" 201 \
	'.plans[0].max_batch_fit as $n | [.warnings[] | select(startswith("capacity limited by KV-cache memory: \($n) sequences of on average 1536 tokens (prompt + half the output"))] | length == 1'
# review s18b F2: the step model's launch gaps and workspace are shown and set by the request
IB='{"model":"llama-3-70b","gpu":"h100-sxm5-80gb","prompt_tokens":512,"output_tokens":128,"tp":8,"top":1,"calibration":"datasheet"'
req POST /v1/sizing/inference "${J[@]}" -d "$IB}"
check "inference basis.serving shows the defaults: 5 us x 10 kernels a layer, 0.5 GiB workspace" 201 \
	'.basis.serving | .kernel_launch_us == 5 and .kernels_per_layer == 10 and .workspace_gib == 0.5 and .overheads_source == "default"'
alone=$(jq '.plans[0].latency_alone_ms' "$T/body")
ws=$(jq '.plans[0].memory_gib.workspace' "$T/body")
req POST /v1/sizing/inference "${J[@]}" -d "$IB,\"kernel_launch_us\":0,\"workspace_gib\":2}"
check "kernel_launch_us 0 and workspace_gib 2: no launch gaps (faster alone), 1.5 GiB more workspace, source request" 201 \
	'.basis.serving.overheads_source == "request" and .basis.serving.kernel_launch_us == 0
	 and .plans[0].latency_alone_ms < '"$alone"' and ((.plans[0].memory_gib.workspace - '"$ws"' - 1.5) | fabs < 0.01)'
req POST /v1/sizing/inference "${J[@]}" -d "$IB,\"kernels_per_layer\":-1}"
check_problem "kernels_per_layer -1: 400 naming it" 400 kernels_per_layer
# review s18b F7: one output token never needs more capacity than two (generic had
# given each 16-token prompt an iteration of its own: 45 against 1089 req/s)
# at_most NAME BODY_A BODY_B JQ: ok when JQ of the inference answer to
# BODY_A is at most that of BODY_B
at_most() {
	local a b
	req POST /v1/sizing/inference "${J[@]}" -d "$2"
	a=$(jq "$4" "$T/body")
	req POST /v1/sizing/inference "${J[@]}" -d "$3"
	b=$(jq "$4" "$T/body")
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "null" && b != "null" && a + 0 <= b + 0) }' &&
		ok "$1 ($a <= $b)" || not_ok "$1" "$a vs $b"
}
GQ='{"model":"qwen2.5-7b","gpu":"l40s-48gb","prompt_tokens":16,"serving":"generic","calibration":"datasheet","top":1,"tp":1,"output_tokens":'
at_most "generic, 16-token prompts: capacity with 2 output tokens at most with 1" "${GQ}2}" "${GQ}1}" '.plans[0].capacity.requests_per_s'
# review s18d F2: ... nor at a rate with prompts four times the token budget
LQ='{"model":"llama-3-8b","gpu":"l40s-48gb","prompt_tokens":8192,"requests_per_s":10,"calibration":"datasheet","top":1,"output_tokens":'
at_most "8K-token prompts at 10 req/s on L40S: one output token on no more GPUs than two" "${LQ}1}" "${LQ}2}" '.plans[0].gpus'
# review s18b F1: with one output token a prompt's further chunks are iterations at a load too
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"mistral-7b","gpu":"l4-24gb","prompt_tokens":8192,"output_tokens":1,"requests_per_s":0.01,"calibration":"datasheet","top":3}'
check "one output token, prompt over the budget: TTFT at a light load >= latency_alone_ms on every plan" 201 \
	'[.plans[] | .ttft_ms >= .latency_alone_ms] | all'
# review s18b F4: on 16-GPU nodes stages of 8 are offered, as on 8-GPU nodes
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"deepseek-v3","gpu":"l40s-48gb","prompt_tokens":128,"output_tokens":64,"calibration":"datasheet","top":1,"serving":"vllm","output_tokens_per_s":30000,"gpus_per_node":16}'
check "16 GPUs a node: sized with pipeline stages" 201 '.plans[0] | .pp > 1'
# review s18d F4: hand-offs between stages of one node go over its link, so a wider node never costs GPUs
DQ='{"model":"deepseek-v3","gpu":"l40s-48gb","prompt_tokens":128,"output_tokens":64,"calibration":"datasheet","top":1,"serving":"vllm","output_tokens_per_s":30000,"gpus_per_node":'
at_most "... on no more GPUs than with 8 GPUs a node" "${DQ}16}" "${DQ}8}" '.plans[0].gpus'
# review s18d F3: a closed loop never gets more replicas than sequences in flight
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","serving":"vllm","prompt_tokens":2048,"output_tokens":1,"concurrent_sequences":16,"top":1,"calibration":"datasheet"}'
check "16 concurrent one-token requests: at most 16 replicas, each holding its sequence, and a warning that the ceiling is passed" 201 \
	'.plans[0].replicas <= 16 and ((.plans[0].batch * .plans[0].replicas - 16) | fabs < 0.01)
	 and ([.warnings[] | select(test("concurrent sequences keep each of the"))] | length) == 1'
# review s18d F5: 6-GPU nodes get pipeline stages too (4 wide); F7: a workspace too large is named
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","gpu":"h100-sxm5-80gb","prompt_tokens":512,"output_tokens":128,"calibration":"datasheet","top":1,"gpus_per_node":6}'
check "405B on 6-GPU nodes: sized with pipeline stages" 201 '.plans[0] | .pp > 1'
# review s18e F3: a wider node never costs more (TP 2 x PP 4 of L40S had been 2-GPU nodes' alone)
NQ='{"model":"llama-3-70b","gpu":"l40s-48gb","prompt_tokens":512,"output_tokens":128,"concurrent_sequences":64,"calibration":"datasheet","top":1,"gpus_per_node":'
at_most "70B on L40S, 64 in flight: 8-GPU nodes on no more GPUs than 2-GPU nodes" "${NQ}8}" "${NQ}2}" '.plans[0].gpus'
# review s18e F4: with tp pinned, a workspace too large is still named
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":512,"output_tokens":128,"workspace_gib":75,"tp":1}'
check_problem "workspace_gib 75 with tp 1 pinned: 422 naming workspace_gib" 422 workspace_gib
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":512,"output_tokens":128,"workspace_gib":75}'
check_problem "workspace_gib 75 on an 80 GiB part: 422 naming workspace_gib" 422 workspace_gib
# review s18e F1, F2: below one sequence one replica too; a sequence alone meets what was not asked
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":2048,"output_tokens":1,"concurrent_sequences":0.9,"top":1,"calibration":"datasheet"}'
check "0.9 concurrent sequences: one replica, meets_targets true (no targets)" 201 '.plans[0] | .replicas == 1 and .meets_targets == true'
# review s17c F7: equal time and equal cost break on the name
for order in '"h800-sxm5-80gb","h100-sxm5-80gb"' '"h100-sxm5-80gb","h800-sxm5-80gb"'; do
	req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":512,"output_tokens":128,"requests_per_s":10,"calibration":"datasheet"},"gpus":['"$order"'],"prices":{"h800-sxm5-80gb":2.75,"h100-sxm5-80gb":2.75}}'
	check "compare, equal time and cost ($order): the verdict names h100 either way" 201 \
		'(.verdict | startswith("h100-sxm5-80gb is both the fastest and the cheapest")) and ([.rows[] | select(.fastest or .cheapest) | .gpu] | unique == ["h100-sxm5-80gb"])'
done
req POST /v1/sizing/compare "${J[@]}" -H 'Accept: text/csv' -d '{"inference":{"model":"llama-3-70b","prompt_tokens":2048,"output_tokens":512,"requests_per_s":10}}'
ct=$(header Content-Type)
[[ $STATUS == 201 && $ct == text/csv* ]] && head -n 1 "$T/body" | grep -q '"gpu","ok","gpus"' &&
	ok "compare: Accept text/csv answers CSV" || not_ok "compare: Accept text/csv answers CSV" "$STATUS $ct"
rows=$(($(wc -l <"$T/body") - 1))
[ "$rows" -ge 15 ] && ok "compare: the default list is every priced catalog GPU ($rows)" || not_ok "compare: the default list is every priced catalog GPU" "$rows"
# Accept is negotiated by q (RFC 9110): text/csv;q=0 refuses CSV, and a
# lower q for JSON prefers it.
for a in 'text/csv;q=0|application/json' 'application/json;q=0.5, text/csv|text/csv' 'text/csv, application/json|application/json'; do
	req POST /v1/sizing/compare "${J[@]}" -H "Accept: ${a%|*}" -d '{"inference":{"model":"llama-3-8b","prompt_tokens":1024,"output_tokens":256},"gpus":["h100-sxm5-80gb"]}'
	ct=$(header Content-Type)
	[[ $STATUS == 201 && $ct == "${a#*|}"* ]] && ok "compare: Accept ${a%|*} answers ${a#*|}" ||
		not_ok "compare: Accept ${a%|*} answers ${a#*|}" "$STATUS $ct"
done
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"gpu":"h100-sxm5-80gb"},"gpus":["h100-sxm5-80gb"]}'
check_problem "compare: a job naming its own gpu is a 400" 400 training.gpu
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096},"inference":{},"gpus":["h100-sxm5-80gb"]}'
check_problem "compare: both jobs at once is a 400" 400
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":-1},"gpus":["h100-sxm5-80gb"]}'
check_problem "compare: the job's bad fields are named under training." 400 training.seq_len
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11},"gpus":["h100-sxm5-80gb","nope"]}'
check_problem "compare: an unknown GPU names gpus[1]" 400 'gpus[1]'
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-7b","seq_len":4096},"gpus":["h100-sxm5-80gb"]}'
check_problem "compare: a training job needs train_tokens" 400 training.train_tokens

# --- parameter counts: a sizing answer's model.params are /v1/models' own
# exact integers (issue 16: the answer rounded them to 6 digits)
for m in llama-3-8b llama-3-70b mixtral-8x7b deepseek-v3; do
	req GET "/v1/models/$m"
	cp "$T/body" "$T/model.json"
	req POST /v1/sizing/inference "${J[@]}" -d "{\"model\":\"$m\",\"prompt_tokens\":512,\"output_tokens\":64,\"gpu\":\"h200-sxm-141gb\",\"max_gpus\":64}"
	cp "$T/body" "$T/inf.json"
	req POST /v1/sizing/training "${J[@]}" -d "{\"model\":\"$m\",\"seq_len\":4096,\"gpu\":\"h200-sxm-141gb\",\"top\":1}"
	if jq -e -s '.[0].params as $p | ($p.total | . == floor) and ($p.active | . == floor)
		and all(.[1:][]; .model.params == {total: $p.total, active: $p.active})' \
		"$T/model.json" "$T/inf.json" "$T/body" >/dev/null 2>&1 &&
		grep -q "\"total\":$(jq -r .params.total "$T/model.json")," "$T/body"; then
		ok "$m: sizing answers give /v1/models' exact parameter counts ($(jq -r .params.total "$T/model.json"))"
	else
		not_ok "$m: sizing answers give /v1/models' exact parameter counts" \
			"models $(jq -c .params "$T/model.json"); inference $(jq -c .model.params "$T/inf.json"); training $(jq -c .model.params "$T/body")"
	fi
done

# --- history
req GET '/v1/recommendations?kind=training&model=llama-2-70b&limit=1'
check "history: filter by kind and model" 200 '(.items | length) == 1 and all(.items[]; .kind == "training" and .model == "llama-2-70b") and (.next_cursor | type) == "string"'
cur=$(jq -r .next_cursor "$T/body")
first_ids=$(jq -r '[.items[].id] | join(",")' "$T/body")
req GET "/v1/recommendations?kind=training&model=llama-2-70b&limit=1&cursor=$cur"
check "history: the cursor continues where the page ended" 200 '(.items | length) >= 1'
jq -e --arg ids "$first_ids" '[.items[].id] as $b | ($ids | split(",")) as $a | ($a - $b) == $a' "$T/body" >/dev/null &&
	ok "history: pages do not repeat items" || not_ok "history: pages do not repeat items"
req GET '/v1/recommendations?gpu=h100-sxm5-80gb&kind=compare'
check "history: compare answers are found by any of their GPUs" 200 '(.items | length) >= 1'
req GET "/v1/recommendations?since=2099-01-01T00:00:00Z"
check "history: since in the future is empty" 200 '.items == [] and .next_cursor == null'

# --- retention: the DELETEs docs/OPERATIONS.md gives operators prune
# recommendations older than the cut and keep the rest.
db=$(sed -n 's/.*dbname=\([^ ]*\).*/\1/p' <<<"$DATABASE_URL")
psql_q() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "$1"; }
ids=()
for i in 1 2 3; do
	req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"datasheet"}'
	ids+=("$(jq -r .id "$T/body")")
done
backdate() { psql_q "UPDATE recommendations SET created_at = now() - interval '200 days' WHERE id = '$1'" >/dev/null; }
one=$(grep -m1 '^DELETE FROM recommendations WHERE created_at' "$TOP/docs/OPERATIONS.md")
batch=$(sed -n '/^DELETE FROM recommendations WHERE id IN/,/;$/p' "$TOP/docs/OPERATIONS.md")
[ -n "$one" ] && [ -n "$batch" ] && ok "docs/OPERATIONS.md gives the retention DELETEs" ||
	not_ok "docs/OPERATIONS.md gives the retention DELETEs" "one='$one' batch='$batch'"
backdate "${ids[0]}"
psql_q "$one" >/dev/null || not_ok "the documented DELETE runs"
req GET "/v1/recommendations/${ids[0]}"
check_problem "retention: the documented DELETE removes a recommendation past the cut (404)" 404
backdate "${ids[1]}"
psql_q "$batch" >/dev/null || not_ok "the documented batched DELETE runs"
req GET "/v1/recommendations/${ids[1]}"
check_problem "retention: so does the batched one" 404
req GET "/v1/recommendations/${ids[2]}"
check "retention: a recent recommendation stays" 200 ".id == \"${ids[2]}\""

# review s14: a token budget below the sequence cap is what limits capacity,
# and limited_by says so (it said max_num_seqs). SGLang runs so; vLLM
# refuses to start with a budget below max_num_seqs (review s17c F8).
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","serving":"sglang","prompt_tokens":512,"output_tokens":100,"max_num_batched_tokens":16,"top":1}'
check "max_num_batched_tokens 16 (SGLang): capacity limited_by the token budget, binding scheduler" 201 \
	'.plans[0] | .capacity.limited_by == "max_num_batched_tokens" and .binding == "scheduler" and .decode_batch <= 16'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":512,"output_tokens":100,"max_num_batched_tokens":16,"top":1}'
check_problem "max_num_batched_tokens 16 under vLLM (max_num_seqs 1024): 422 naming it" 422 max_num_batched_tokens
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":512,"output_tokens":100,"max_num_batched_tokens":16,"max_batch":16,"top":1}'
check "... and with max_batch 16 it runs" 201 '.plans[0].capacity.limited_by != null'
# and one request alone pays each further chunk as an iteration
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"a100-sxm4-80gb","prompt_tokens":32000,"output_tokens":16,"concurrent_sequences":1,"top":1}'
check "a 32K prompt over vLLM's 2,048 budget on A100: latency_alone_ms is within 1 % of the load of one" 201 \
	'.plans[0] as $p | ($p.latency_alone_ms / ($p.ttft_ms + 15 * $p.tpot_ms)) | (. > 0.99 and . < 1.01)'
# review s16a F3: with no target and the prompts taking most of the
# replica's time, prefill compute is the limit, not the cache
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","prompt_tokens":1024,"output_tokens":1,"tp":1,"top":1}'
check "one output token, no targets: limited_by prefill, binding compute, no KV advice, a queueing warning" 201 \
	'.plans[0].capacity.limited_by == "prefill" and .plans[0].binding == "compute" and ([.warnings[] | select(test("KV-cache"))] | length) == 0 and ([.warnings[] | select(test("^no latency targets: capacity is the saturation"))] | length) == 1 and .plans[0].latency_alone_ms > 0'
# review s16c F11: that TTFT is set by the engine's saturation (99.9 % of
# the prefill rate), which the warning names, and it quotes the figures as
# the fields print them
check "one output token, no targets: the warning names the 99.9 % saturation and quotes the fields' TTFT and latency_alone_ms" 201 \
	'.plans[0] as $p | [.warnings[] | select(test("prefill 99.9 % busy")) | select(contains("TTFT (\($p.capacity.ttft_ms) ms)")) | select(contains("latency_alone_ms \($p.latency_alone_ms) "))] | length == 1'

# review s14 F5: SGLang's 8,192-token budget with 16-token prompts: TTFT is
# missed past capacity only for the chunks the decode batch took from the
# prompt, so the token budget binds (it said ttft_ms at 377 of 500 ms);
# since review s18d F2 at 8192 x 127 / 143 = 7,276 decoding, the prompts'
# tokens counted in the budget too
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"mixtral-8x22b","gpu":"b200-sxm-180gb","serving":"sglang","weight_precision":"fp16","kv_cache_precision":"bf16","prompt_tokens":16,"output_tokens":128,"output_tokens_per_s":100000,"ttft_ms":500,"max_utilization":0.95,"top":5}'
check "SGLang, 16-token prompts: plans at the token budget say max_num_batched_tokens (or prefill, past half the time), their TTFT within target" 201 \
	'[.plans[] | select(.capacity.batch > 7000)] as $p | ($p | length) > 0
	 and any($p[]; .capacity.limited_by == "max_num_batched_tokens" and .binding == "scheduler")
	 and all($p[]; ((.capacity.limited_by == "max_num_batched_tokens" and .binding == "scheduler")
	               or (.capacity.limited_by == "prefill" and .binding == "compute")) and .capacity.ttft_ms <= 500)'

# review s15 F13: a run is whole steps: below one sequence, or below one
# step of a pinned batch, is a 400 naming train_tokens; below the default
# batch, the whole run is one step (it was 10 us of a 43 s step)
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1,"gpu":"h100","gpus":8,"top":1}'
check_problem "train_tokens 1: 400, below one sequence" 400 train_tokens
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e6,"global_batch_size":1024,"gpu":"h100","gpus":8,"top":1}'
check_problem "train_tokens 1e6 with a 4M-token batch pinned: 400" 400 train_tokens
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e6,"gpu":"h100","gpus":8,"top":1}'
check "train_tokens 1e6, default batch: 192 of its 244 sequences a step (a multiple of 64), the run no shorter than a step" 201 \
	'.plans[0].global_batch_size == 192 and .plans[0].steady_state_days * 86400 >= .plans[0].time_s.step * 0.999
	 and (.assumptions.global_batch | test("less than the default batch"))'

# review s14: a trade-off names each plan's pipeline stages, and without a
# load says "at capacity"
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-70b","gpu":"a100-sxm4-80gb","prompt_tokens":8000,"output_tokens":2000,"top":4}'
check "inference trade-offs: PP named where a plan has it, 'at capacity' without a load" 201 \
	'[.plans[1:][] | select(.pp > 1)] as $p | ($p | length) > 0 and all($p[]; .tradeoff | test("TP [0-9]+ PP [0-9]+ x")) and all(.plans[1:][]; .tradeoff | test("at capacity"))'

# review s14: without chunked prefill a prompt beyond the token budget
# cannot be scheduled; the answer says so
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":20000,"output_tokens":100,"chunked_prefill":false,"max_num_batched_tokens":8192,"top":1}'
check_problem "chunked_prefill false, a 20,000-token prompt over an 8,192 budget: 422 naming the budget (review s16a F5)" 422 max_num_batched_tokens
# review s16c F1: vLLM without chunking and without a budget takes the
# context as its budget (SchedulerConfig): served, not refused
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-8b","gpu":"a100-sxm4-80gb","prompt_tokens":4096,"output_tokens":128,"chunked_prefill":false,"top":1}'
check "vLLM, chunked_prefill false, no budget given: the budget is the context, the 4K prompt served" 201 \
	'.basis.serving.chunked_prefill == false and .basis.serving.max_num_batched_tokens >= 4224 and (.plans | length) > 0'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-8b","gpu":"h100-sxm5-80gb","prompt_tokens":16384,"output_tokens":256,"serving":"tensorrt-llm","requests_per_s":2,"top":1}'
check "tensorrt-llm's default (no chunking) with a 16K prompt: the budget is the prompt, and the answer says so" 201 \
	'.basis.serving.max_num_batched_tokens == 16384 and ([.warnings[] | select(test("^tensorrt-llm without chunked context: max_num_tokens taken as the 16384-token prompt"))] | length) == 1'
# review s16a F7: when no plan meets the deadline the plans rank by time,
# and the ranking sentence says so (it said "the cheapest first")
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-2-7b","gpu":"l4-24gb","seq_len":2048,"train_tokens":1e11,"deadline_days":1,"max_gpus":16,"top":3}'
check "no plan meets the deadline: ranking says the fastest first, and the plans are" 201 \
	'(.assumptions.deadline.ranking | test("^no plan meets the deadline: the fastest first")) and ([.plans[].days] == ([.plans[].days] | sort)) and all(.plans[]; .meets_deadline == false)'
# review s16a F8: the inference basis states the attention rate it used
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":32768,"output_tokens":1,"requests_per_s":0.001,"tp":1,"top":1}'
check "inference basis names the attention rate (kernel, value, share of the peak)" 201 \
	'.basis.attention_tflops.kernel == "fa2" and .basis.attention_tflops.value > 0 and .basis.attention_tflops.efficiency_of_16bit_peak > 0 and .basis.attention_tflops.efficiency_of_16bit_peak < 1'
# review s16a F4: int8 is weight-only (16-bit GEMMs): served where int4 is
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"b200-sxm-180gb","prompt_tokens":512,"output_tokens":128,"weight_precision":"int8","top":1}'
check "weight_precision int8 on a part without an int8 rate: sized" 201 '.plans | length > 0'

# review s14: compare rows carry every factor of their GPUs (cp, and ep and
# zero beside), inference rows their pipeline stages
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":131072,"train_tokens":1e10,"max_gpus":256},"gpus":["h100","a100-sxm4-80gb"]}'
check "compare training rows: gpus = tp x pp x dp x cp, ep and zero given" 201 \
	'all(.rows[] | select(.ok); .gpus == .tp * .pp * .dp * .cp and (.ep | type) == "number" and (.zero | type) == "number") and any(.rows[]; .cp > 1)'
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3.1-405b","prompt_tokens":2048,"output_tokens":512,"requests_per_s":1},"gpus":["h100","a100-sxm4-80gb"]}'
check "compare inference rows: gpus = tp x pp x replicas" 201 \
	'all(.rows[] | select(.ok); .gpus == .tp * .pp * .replicas)'
# review s14: NVIDIA-only software on a GPU without CUDA is said to be so
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-70b","gpu":"mi300x-192gb","prompt_tokens":2048,"output_tokens":512,"serving":"tensorrt-llm","top":1}'
check "tensorrt-llm on MI300X: warned" 201 '[.warnings[] | select(test("TensorRT-LLM runs on NVIDIA GPUs only"))] | length == 1'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":8192,"gpu":"mi300x-192gb","gpus":8,"stack":"megatron-core","top":1}'
check "megatron-core's cuDNN attention on MI300X: warned" 201 '[.checks.warnings[] | select(test("attention kernel cudnn is NVIDIA"))] | length == 1'
# review s24b F3: a plan of the list (not the first) above the ceiling
# was not said to be
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100-sxm5-80gb","serving":"generic","prompt_tokens":32000,"output_tokens":256,"concurrent_sequences":64,"ttft_ms":500,"tpot_ms":30,"top":2}'
check "closed loop: a later plan above max_utilization is named in a warning" 201 \
	'.plans[0].utilization <= 0.8 and .plans[1].utilization > 0.8 and ([.warnings[] | select(test("^plan 2 of the list runs each replica above max_utilization 0.8"))] | length == 1)'
# review s24b F2: compare ranked such rows (an MI300X "cheapest" under
# tensorrt-llm, beside its own warning that it cannot run it)
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3-70b","prompt_tokens":2048,"output_tokens":512,"serving":"tensorrt-llm","concurrent_sequences":64},"gpus":["h100-sxm5-80gb","mi300x-192gb"]}'
check "compare tensorrt-llm: the MI300X row is not ok, and says why" 201 \
	'(.rows[] | select(.gpu == "mi300x-192gb") | .ok == false and (.reason | test("^serving: TensorRT-LLM runs on NVIDIA GPUs only")))'
check "compare tensorrt-llm: the verdict names the H100 alone" 201 \
	'(.verdict | test("mi300x") | not) and (.rows[] | select(.gpu == "h100-sxm5-80gb") | .cheapest and .fastest)'
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":1e10,"max_gpus":16,"stack":"megatron-core"},"gpus":["h100-sxm5-80gb","mi300x-192gb"]}'
check "compare megatron-core (cuDNN attention): the MI300X row is not ok" 201 \
	'(.rows[] | select(.gpu == "mi300x-192gb") | .ok == false and (.reason | test("^stack: stack megatron-core.s attention kernel cudnn is NVIDIA")))'
# review s24e F3: the job's own mistake stays every row's 400
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":8192,"train_tokens":10,"max_gpus":16,"stack":"megatron-core"},"gpus":["h100-sxm5-80gb","mi300x-192gb"]}'
check_problem "compare: a bad train_tokens beside a stack one GPU cannot run is a 400 naming it" 400 training.train_tokens
# review s24e F4: a default stack the client did not name (MoE's
# megatron-core) is sized as a what-if on AMD, not dropped
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"mixtral-8x7b","seq_len":4096,"train_tokens":1e10,"max_gpus":64},"gpus":["h100-sxm5-80gb","mi300x-192gb"]}'
check "compare MoE without a stack: the MI300X row is ranked, with the kernel warning" 201 \
	'(.rows[] | select(.gpu == "mi300x-192gb") | .ok and ([.warnings[] | select(test("attention kernel cudnn is NVIDIA"))] | length == 1))'

# review s14: an unknown GPU is listed with the other bad fields
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":-4,"gpu":"nope2"}'
check "training: bad seq_len and unknown gpu, both listed at once" 400 '[.errors[].field] | index("seq_len") != null and index("gpu") != null'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","prompt_tokens":-1,"output_tokens":10,"gpu":"nope2"}'
check "inference: bad prompt_tokens and unknown gpu, both listed at once" 400 '[.errors[].field] | index("prompt_tokens") != null and index("gpu") != null'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":-4,"gpu":"H100"}'
check "an alias of a catalog GPU is not called unknown" 400 '[.errors[].field] == ["seq_len"]'
req POST /v1/sizing/compare "${J[@]}" -d '{"gpus":["H100","nope2"],"training":{"model":"llama-3-8b","seq_len":-4,"train_tokens":1e9}}'
check "compare: a bad job field and an unknown gpus[1], both listed; the alias is not" 400 \
	'[.errors[].field] == ["training.seq_len", "gpus[1]"]'
# review s24f F3: an unknown GPU beside another bad field had no suggestions
req POST /v1/sizing/training "${J[@]}" -d '{"model":"lama-70","seq_len":4096,"gpu":"h1000"}'
check "training: an unknown model and GPU each get their closest names" 400 \
	'(.errors[] | select(.field == "gpu") | .did_you_mean | index("h100-sxm5-80gb") != null) and (.errors[] | select(.field == "model") | .did_you_mean | length > 0)'

# review s14: an inference answer whose replicas span nodes states the
# inter-node rate; one whose replicas stay in a node does not
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","gpu":"h100","prompt_tokens":2048,"output_tokens":512,"requests_per_s":1,"top":2}'
check "405B on H100 (replicas of pipeline stages): basis.inter_node_gbps given" 201 \
	'any(.plans[]; .pp > 1) and (.basis.inter_node_gbps.value > 0)'
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","prompt_tokens":2048,"output_tokens":512,"top":1}'
check "8B on H100 (one stage): no inter_node_gbps" 201 '.plans[0].pp == 1 and (.basis | has("inter_node_gbps") | not)'

# review s15 F7: a latency 422 names the replica that reaches each best
# figure, pipeline stages as pp; with one output token there is no TPOT
req POST /v1/sizing/inference "${J[@]}" -d '{"model":"llama-3.1-405b","gpu":"l4-24gb","prompt_tokens":2048,"output_tokens":1,"serving":"sglang","max_gpus":64,"ttft_ms":100}'
check_problem "405B on L4 with a 100 ms TTFT: 422 naming ttft_ms" 422 ttft_ms
jq -e '.detail | test("best achievable ttft is [0-9.]+ ms \\(tp 8 x pp 8, one request; rounded up to 0.1 ms\\)") and (test("tpot") | not)' "$T/body" >/dev/null &&
	ok "the 422 names tp 8 x pp 8 and no TPOT" || not_ok "the 422 names tp 8 x pp 8 and no TPOT" "$(jq -c .detail "$T/body")"

# review s15 F11: history filters refuse what sizing refuses, once nothing
# is stored under the name either
req GET '/v1/recommendations?gpu=a100-sxm4'
check_problem "history ?gpu=a100-sxm4 (two entries): 400 naming gpu" 400 gpu
jq -e '.errors[0].did_you_mean | index("a100-sxm4-80gb") != null' "$T/body" >/dev/null &&
	ok "with did_you_mean" || not_ok "with did_you_mean" "$(body)"
req GET '/v1/recommendations?model='
check_problem "history ?model= (empty): 400 naming model" 400 model
req GET '/v1/recommendations?gpu=h100'
check "history ?gpu=h100: the alias still filters" 200 '(.items | length) > 0'

# review s15b G6-G8: a job mistake in a compare is the job's 400; a compare
# no type can run names every type's reason; a refusal's layout shows cp
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":4096,"train_tokens":100,"max_gpus":64},"gpus":["h100","a100"]}'
check_problem "compare, train_tokens below one sequence: 400 naming training.train_tokens" 400 training.train_tokens
req POST /v1/sizing/compare "${J[@]}" -d '{"inference":{"model":"llama-3.1-405b","prompt_tokens":32768,"output_tokens":1,"ttft_ms":10},"gpus":["l4","a100"]}'
check_problem "compare no type can run: 422" 422 gpus
jq -e '.detail | test("l4-24gb: ttft_ms: .* ms \\(tp 8 x pp 8, one request; rounded up to 0.1 ms\\); a100-sxm4-80gb: ttft_ms")' "$T/body" >/dev/null &&
	ok "the 422 gives every type its reason, whole" || not_ok "the 422 gives every type its reason, whole" "$(jq -c .detail "$T/body")"
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3.1-405b","seq_len":32768,"gpu":"l4","gpus":16,"strategies":{"cp":[2]}}'
check_problem "405B on 16 L4 with cp 2: does not fit" 422 gpus
jq -e '.detail | test("16 GPUs, tp [0-9]+ pp [0-9]+ cp 2 dp [0-9]+")' "$T/body" >/dev/null &&
	ok "the refusal's layout names cp" || not_ok "the refusal's layout names cp" "$(jq -c .detail "$T/body")"

# the CP search default is stated in the answer, with its bound here
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":32768,"gpu":"h100","gpus":8,"top":1}'
check "assumptions.context_parallel states the rule and up to cp 8 at 32K" 201 \
	'.assumptions.context_parallel | test("at least 4096 tokens") and test("up to cp 8 here")'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":32768,"gpu":"h100","gpus":8,"top":1,"strategies":{"cp":[1,2]}}'
check "with strategies.cp there is nothing to state" 201 '.assumptions | has("context_parallel") | not'

# review s19b F1: a deadline set to the plan's printed days is met (it was
# "missed" by the digits not shown, beside a warning that the best "takes
# 0.2451 days" of 0.2451)
req POST /v1/sizing/training "${J[@]}" -d '{"model":"mistral-7b","gpu":"h100-sxm5-80gb","seq_len":8192,"train_tokens":1e11,"top":1,"max_gpus":512}'
dl=$(jq '.plans[0].days' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d '{"model":"mistral-7b","gpu":"h100-sxm5-80gb","seq_len":8192,"train_tokens":1e11,"top":1,"max_gpus":512,"deadline_days":'"$dl"'}'
check "a deadline equal to the plan's printed days ($dl) is met, and no warning says otherwise" 201 \
	'.plans[0].meets_deadline and .plans[0].days <= .request.deadline_days
	 and ([.checks.warnings[] | select(test("no plan meets the deadline"))] | length) == 0'
# review s19b F6, F7: a LoRA request that leaves the batch to its default
# (16 sequences) is told when full fine-tuning is faster on its layout, as
# one spelling the batch out is; and the batch warning names that default
req POST /v1/sizing/training "${J[@]}" -d '{"model":"gpt-1.7b","gpu":"l4-24gb","seq_len":2048,"train_tokens":1e9,"top":1,"calibration":"datasheet","method":"lora","max_gpus":8,"stack":"pytorch-fsdp2-fa2"}'
cp "$T/body" "$T/lora_default"
req POST /v1/sizing/training "${J[@]}" -d '{"model":"gpt-1.7b","gpu":"l4-24gb","seq_len":2048,"train_tokens":1e9,"top":1,"calibration":"datasheet","method":"lora","max_gpus":8,"stack":"pytorch-fsdp2-fa2","global_batch_size":16}'
jq -e --slurpfile d "$T/lora_default" '$d[0].global_batch_size == 16
	and ($d[0].checks.warnings | map(select(test("slower than full fine-tuning"))))
	    == (.checks.warnings | map(select(test("slower than full fine-tuning"))))
	and (.checks.warnings | map(select(test("slower than full fine-tuning"))) | length) == 1' "$T/body" >/dev/null &&
	ok "lora slower than full fine-tuning is said with the default batch as with it spelled out" ||
	not_ok "lora slower than full fine-tuning is said with the default batch as with it spelled out" \
		"$(jq -c .checks.warnings "$T/lora_default") / $(jq -c .checks.warnings "$T/body")"
req POST /v1/sizing/training "${J[@]}" -d '{"model":"gpt-3-175b","gpu":"mi300x-192gb","seq_len":1024,"train_tokens":1e9,"top":1,"max_gpus":4096,"method":"qlora","stack":"megatron-core"}'
check "a QLoRA batch warning names the fine-tuning default, not the 4M-token one" 201 \
	'[.checks.warnings[] | select(test("global batch [(]16 sequences"))] | length == 1
	 and (.[0] | test("the fine-tuning default")) and (.[0] | test("4M-token") | not)'

# review s19b F8: offload with a lighter recompute is timed, not only
# where nothing fits without offload: the search's best is never slower
# than a fitting plan pinned beside it (zero 1 was never timed with
# offload, and 251.3 s beat nothing faster than 247.0 s)
OB='"model":"llama-2-13b","gpu":"l40s-48gb","seq_len":8192,"train_tokens":1e12,"top":1,"calibration":"datasheet","stack":"torchtitan","gpus":8'
req POST /v1/sizing/training "${J[@]}" -d "{$OB}"
best=$(jq '.plans[0].time_s.step' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d "{$OB,\"strategies\":{\"zero\":1,\"recompute\":\"selective\",\"offload\":\"optimizer\"}}"
check "the search's best step ($best s) is no slower than zero 1 with selective recompute and the optimizer offloaded" 201 \
	".plans[0].time_s.step >= $best"

# review s19b F9: smaller contradictions
req POST /v1/sizing/training "${J[@]}" -d '{"model":"deepseek-v3","gpu":"h100-sxm5-80gb","seq_len":4096,"train_tokens":1e12,"top":1,"max_gpus":2048,"stack":"megatron-core","method":"lora"}'
check "a MoE LoRA plan carries the MoE caveat, as every MoE plan" 201 \
	'[.checks.warnings[] | select(test("^mixture of experts"))] | length == 1'
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-3-8b","seq_len":4096,"train_tokens":1e11,"max_gpus":64,"calibration":"measured"},"gpus":["h100","l4"]}'
check_problem "compare: a job's calibration that nothing measured is named under the job" 422 training.calibration
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","seq_len":4096,"train_tokens":1e10,"gpus":8,"top":1,"stack":{"name":null,"dp_overlap":0.5}}'
check "stack.name null is the default profile, with the override" 201 \
	'.basis.stack.name == "megatron-lm-2021" and .basis.stack.dp_overlap == 0.5'
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","seq_len":4096,"train_tokens":1e10,"max_gpus":64,"global_batch_size":1024,"top":1,"strategies":{"micro_batch":3}}'
check_problem "a pinned micro_batch that cannot divide the batch is named" 400 strategies.micro_batch
# review s19e F4: ... but not where micro-batches of one fail as well
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","seq_len":4096,"train_tokens":1e10,"gpus":3,"global_batch_size":64,"top":1,"strategies":{"micro_batch":[2]}}'
check_problem "micro_batch 2 on 3 GPUs with a batch of 64: the batch is named, as with micro_batch 1" 400 global_batch_size
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","gpu":"h100","seq_len":4096,"train_tokens":1e10,"gpus":8,"top":1,"strategies":{"tp":1,"pp":1,"sequence_parallel":true,"stage_rebalance":true}}'
check "pinned sequence_parallel at tp 1 and stage_rebalance at pp 1 are said not to apply" 201 \
	'([.checks.warnings[] | select(test("sequence_parallel true is not applied at tp 1"))] | length == 1)
	 and ([.checks.warnings[] | select(test("stage_rebalance true is not applied at pp 1"))] | length == 1)'

# review s21c F1: selective and partial may each beat the other: every
# recompute mode allowed is never slower than a subset of them
RB='"model":"mpt-7b","seq_len":16384,"train_tokens":1e10,"gpu":"a100-sxm4-80gb","max_gpus":64,"top":1,"calibration":"datasheet"'
req POST /v1/sizing/training "${J[@]}" -d "{$RB,\"strategies\":{\"flash_attention\":false,\"recompute\":[\"none\",\"partial\",\"full\"]}}"
sub=$(jq '.plans[0].time_s.step' "$T/body")
req POST /v1/sizing/training "${J[@]}" -d "{$RB,\"strategies\":{\"flash_attention\":false}}"
check "every recompute mode allowed: no slower than none, partial and full alone ($sub s)" 201 \
	".plans[0].time_s.step <= $sub"
# review s21c F2: a step mostly weight-offload stalls is bound by
# communication (the host link), its stalls in their own field, and the
# low-MFU warning names them
req POST /v1/sizing/training "${J[@]}" -d '{"gpu":"h100","model":"llama-2-13b","seq_len":4096,"train_tokens":1e10,"gpus":16,"calibration":"datasheet","stack":{"name":"deepspeed","offload_overlap":0.2},"strategies":{"offload":"optimizer+weights","zero":3,"recompute":"none","micro_batch":2,"tp":1},"host_link_gbps":1,"top":1}'
check "host-link stalls: their own time field, bound by communication, named by the low-MFU warning" 201 \
	'.plans[0].binding == "communication" and .plans[0].time_s.host_link_exposed > 0.5 * .plans[0].time_s.step
	 and .plans[0].time_s.optimizer < 0.1 * .plans[0].time_s.step
	 and ([.checks.warnings[] | select(test("low efficiency.*host link"))] | length == 1)
	 and ((.plans[0].time_s | [.compute, .tp_comm, .pp_bubble, .pp_p2p // 0, .dp_comm_exposed, .ep_comm // 0,
	       .cp_comm_exposed // 0, .optimizer // 0, .host_link_exposed // 0] | add) - .plans[0].time_s.step | fabs)
	     < 0.01 * .plans[0].time_s.step'
# review s21c F4: an object's forgiven stack name is echoed as the profile's
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpus":8,"gpu":"h100","calibration":"datasheet","stack":{"name":"mcore","dp_overlap":0.5}}'
check "stack {name: mcore}: the echoed request names megatron-core, with the override" 201 \
	'.request.stack.name == "megatron-core" and .request.stack.dp_overlap == 0.5'
# review s21c F5: every allowed value is listed
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"gpu":"h100","gpus":8,"strategies":{"recompute":"partially"}}'
check "a bad recompute value: the message lists all four modes" 400 \
	'.errors[0].field == "strategies.recompute" and (.detail | test("none, selective, partial, full"))'
# review s21c F6: compare rows show micro-batch, recompute and offload
req POST /v1/sizing/compare "${J[@]}" -d '{"training":{"model":"llama-2-13b","seq_len":4096,"train_tokens":1e10,"max_gpus":16,"stack":"deepspeed","calibration":"datasheet","strategies":{"offload":"optimizer+weights","zero":3}},"gpus":["l40s-48gb","h100-sxm5-80gb"]}'
check "compare rows: micro_batch, recompute and offload" 201 \
	'[.rows[] | select(.ok) | has("micro_batch") and has("recompute") and .offload == "optimizer+weights"] | all and length > 0'
# review s21e: allowed values are a set; a repeat ranks no plan twice
req POST /v1/sizing/training "${J[@]}" -d '{"model":"llama-3-8b","seq_len":4096,"global_batch_size":512,"gpu":"h100","gpus":16,"top":4,"calibration":"datasheet","stack":"megatron-core","strategies":{"zero":[1,1],"tp":[2,2]}}'
check "zero [1, 1] and tp [2, 2]: each plan listed once" 201 \
	'(.plans | length) > 1 and ([.plans[] | del(.basis)] | unique | length) == (.plans | length)'

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"


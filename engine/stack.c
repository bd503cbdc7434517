/* stack.c - software-stack profiles (see stack.h, MODEL.md §4a). */
#include "stack.h"

#include <string.h>

const char *const stack_fp8_recipe_names[STACK_FP8_RECIPE_COUNT + 1] = {
    [STACK_FP8_DELAYED] = "delayed",
    [STACK_FP8_CURRENT] = "current",
    [STACK_FP8_MXFP8] = "mxfp8",
    [STACK_FP8_RECIPE_COUNT] = NULL,
};

const char *const stack_reduce_names[STACK_REDUCE_COUNT + 1] = {
    [STACK_REDUCE_GRAD] = "grad",
    [STACK_REDUCE_BF16] = "bf16",
    [STACK_REDUCE_FP32] = "fp32",
    [STACK_REDUCE_COUNT] = NULL,
};

const char *const stack_offload_names[STACK_OFFLOAD_COUNT + 1] = {
    [STACK_OFFLOAD_NONE] = "none",
    [STACK_OFFLOAD_OPTIMIZER] = "optimizer",
    [STACK_OFFLOAD_OPTIMIZER_WEIGHTS] = "optimizer+weights",
    [STACK_OFFLOAD_COUNT] = NULL,
};

const char *const stack_sac_names[STACK_SAC_COUNT + 1] = {
    [STACK_SAC_ATTENTION] = "attention",
    [STACK_SAC_OP] = "op",
    [STACK_SAC_COUNT] = NULL,
};

const char *stack_fp8_recipe_name(enum stack_fp8_recipe r)
{
	if ((unsigned)r >= STACK_FP8_RECIPE_COUNT)
		return "?";
	return stack_fp8_recipe_names[r];
}

/* Values and their sources (MODEL.md §4a):
 *  dp_overlap 0.8: the engine's DP overlap since issue 3 (NCCL kernels
 *   take SMs and HBM bandwidth), kept for every stack that overlaps DP.
 *  cp_overlap 0.8: the same share for ring attention's K/V sends behind
 *   the attention kernels (Transformer Engine's context parallelism and
 *   PyTorch's context_parallel both send the next chunk while the current
 *   one computes); an assumption, not a measurement, shown and editable
 *   since review s19b F4.
 *  offload_overlap: the weight transfers of offload optimizer+weights
 *   behind a micro-batch. 0.8 (the same assumption) where the stack
 *   prefetches them (DeepSpeed ZeRO-3 offload_param with
 *   stage3_prefetch_bucket_size; FSDP's CPU offload on its unshard
 *   stream); 0 for hf-peft-bnb4: Accelerate's AlignDevicesHook.pre_forward
 *   (accelerate/hooks.py) copies a module's weights to the GPU with
 *   set_module_tensor_to_device when the module runs, on the compute
 *   stream, with no prefetch (review s19b F8: with the search timing
 *   offload beside lighter recompute, a 0.8 overlap ranked QLoRA 70B
 *   with its 4-bit weights streamed from host first).
 *  tp_comm_overlap 0.75: TE userbuffers as NeMo/Megatron-Bridge configure
 *   it (tp_overlap_configs/userbuffers.py): ring-exchange all-gathers,
 *   bulk overlap in the backward, the reduce-scatter of proj/fc2 fprop
 *   pipelined in num_splits = 4 chunks, whose last chunk stays exposed:
 *   1 - 1/4, taken for all TP traffic.
 *  param_gather_overlap: the ZeRO-1/2 all-gather of the updated weights
 *   runs after the optimizer step, so it can hide only behind the next
 *   step's forward. 1 where the stack overlaps it: Megatron-Core
 *   DistributedDataParallelConfig.overlap_param_gather ("overlap param
 *   all-gather with forward compute"; default False, set True with the
 *   distributed optimizer by NeMo's MegatronCommOverlapCallback at DP > 1
 *   and by the Megatron-Bridge recipes), FSDP2 (implicit forward
 *   prefetching, always on: torch docs notes/fsdp.rst). 0 where it is
 *   synchronous: DeepSpeed stage_1_and_2.py step() calls
 *   all_gather_dp_groups after the update, Megatron-LM 2021-22 (plain DDP;
 *   its 2022 distributed optimizer gathered after the step), HF/PEFT on
 *   DDP or DeepSpeed.
 *  reduce_dtype fp32: torchtitan's default MixedPrecisionPolicy
 *   (param_dtype bf16, reduce_dtype fp32; torchtitan docs/fsdp.md),
 *   Megatron-Core's grad_reduce_in_fp32 in NeMo recipes is False (bf16)
 *   but its default DDP config reduces in the gradient dtype: "grad".
 *  fp8_weight_cache: Megatron-Core passes is_first_microbatch to TE
 *   (weights cast once per step); torchtitan's float8 (torchao) and
 *   HF accelerate cast per forward.
 *  fp8_param_all_gather: torchtitan's float8 docs (docs/float8.md)
 *   launch with --float8.enable_fsdp_float8_all_gather ("cast
 *   Float8Linear.weight from high precision to float8 before FSDP
 *   all-gather so we can communicate in float8 to save bandwidth"; "We
 *   cast high precision weights (1/N on each rank) into float8"), and
 *   the torchtitan rows that state it run it (torchao float8 README
 *   "tensorwise with float8 all-gather"; the H200 benchmark). torchao
 *   implements it for FSDP2 only (float8/fsdp_utils.py
 *   WeightWithDynamicFloat8CastTensor.fsdp_pre_all_gather), so every
 *   other profile gathers 16-bit weights.
 *  selective_recompute "op" for torchtitan: its "selective" is per-op
 *   SAC (selective_ac_option = "op", the llama3 tomls' default and the
 *   benchmarks' setting). Its policy (torchtitan parallelize_llama.py,
 *   _apply_ac_to_transformer_block, 2024): "Saves output of all compute
 *   ops, except every second mm" with _save_list = {aten.mm,
 *   _scaled_dot_product_{efficient,flash}_attention,
 *   _c10d_functional.reduce_scatter_tensor}; everything else,
 *   PREFER_RECOMPUTE, is recomputed, also under torch.compile (the
 *   partitioner's must_recompute() takes PREFER_RECOMPUTE as must).
 *   torchao's float8 linears call torch.mm on Float8 tensor subclasses,
 *   so the policy sees aten.mm in FP8 runs too. "attention" (Megatron's
 *   selective, Korthikanti et al. 2022) everywhere else.
 *  hf-peft-bnb4: PyTorch eager kernels (elementwise factor 4.2 from the
 *   op count of transformers' LlamaRMSNorm, rotary and SwiGLU, MODEL.md
 *   §4a), ~320 kernels per layer (80 forward, 2x backward, 80
 *   recomputed) at the 2 us launch gap MODEL.md §4 quotes, SDPA with the
 *   FA2 backend (PyTorch >= 2.2), no DP overlap assumed beyond DDP's 0.8.
 *   PEFT's fp32 LoRA adapters (get_peft_model's autocast_adapter_dtype
 *   default), the Trainer's fp32 parameters under autocast and gradients
 *   made by the backward (zero_grad(set_to_none=True)): MODEL.md §3, §4a,
 *   measured on our H200 (BENCHMARKS.md, 2026-11-26).
 *  megatron-deepspeed: deepspeed-zero with dp_overlap 0. DeepSpeed's
 *   pipeline engine reduces the gradients after the last micro-batch
 *   (runtime/pipe/schedule.py TrainSchedule: ReduceGrads after the
 *   schedule's last step; engine.py _exec_reduce_grads), whatever
 *   overlap_comm says; Megatron-DeepSpeed trains through it (MT-NLG, BLOOM).
 *  gemm_clock_derate 1 everywhere: no citable sustained-clock figure
 *   was found (MODEL.md §4a); the field is editable per profile.
 *  max_zero_stage, max_zero_stage_pp: what the stack can run.
 *   Megatron-LM 2021-23 replicates everything (DDP) or, with
 *   --use-distributed-optimizer (2022), shards the optimizer state:
 *   ZeRO-1 at most, with or without PP; it has no gradient or weight
 *   sharding (megatron/arguments.py of those releases). Megatron-Core
 *   and NeMo add Megatron FSDP (--data-parallel-sharding-strategy
 *   optim / optim_grads / optim_grads_params: ZeRO-1/2/3) and run the
 *   distributed optimizer under PP: 3, 1. DeepSpeed's pipeline engine
 *   refuses ZeRO-2/3 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline
 *   parallelism", runtime/pipe/engine.py); without PP every stage: 3, 1.
 *   PyTorch FSDP2 and torchtitan shard to ZeRO-3 and, under PP, keep
 *   the weights after the forward (reshard_after_forward False,
 *   ZeRO-2): 3, 2. Hugging Face + PEFT runs DDP, DeepSpeed ZeRO or FSDP
 *   through accelerate and has no pipeline schedule: 3, 2 (no source
 *   to narrow it).
 *  max_offload: Megatron-LM 2021-23 keeps everything on the GPU (no
 *   offload option): none. Megatron-Core and NeMo offload the optimizer
 *   (--optimizer-cpu-offload, the HybridDeviceOptimizer): optimizer.
 *   DeepSpeed offloads the optimizer state from ZeRO-1 (ZeRO-Offload) and
 *   the weights at ZeRO-3 (offload_param, ZeRO-Infinity); FSDP2's
 *   CPUOffloadPolicy and torchtitan's --training.enable_cpu_offload move
 *   the sharded weights, gradients and optimizer state; Hugging Face
 *   reaches either through accelerate: optimizer+weights (the weights
 *   only under ZeRO-3, training_search.c).
 *  expert_parallel: Megatron-Core and NeMo (--expert-model-parallel-
 *   size), DeepSpeed and Megatron-DeepSpeed (DeepSpeed-MoE's ep_size,
 *   deepspeed/moe/layer.py), torchtitan (expert_parallel_degree) and
 *   FSDP2 trainers (NeMo Automodel's ep_size on its device mesh) shard
 *   the experts: true. Megatron-LM 2021-23 has no MoE layers (they came
 *   with Megatron-Core), and Hugging Face Transformers + PEFT runs every
 *   expert of a block in a loop on each rank (modeling_mixtral.py
 *   MixtralSparseMoeBlock; bitsandbytes 4-bit weights are not split by
 *   expert): false, experts sized as replicated modules.
 *  pipeline_parallel: every profile runs a pipeline schedule (Megatron's
 *   1F1B and interleaved, DeepSpeed's PipelineEngine, torch.distributed.
 *   pipelining in torchtitan and FSDP2 trainers) but Hugging Face
 *   Transformers + PEFT: the Trainer and accelerate train data-parallel
 *   (DDP, FSDP, DeepSpeed ZeRO), with no pipeline schedule: false.
 *  tensor_parallel: every profile splits layers over a tensor-parallel
 *   group (Megatron's column/row-parallel layers, DeepSpeed through
 *   Megatron's, torch's DTensor parallelize_module in torchtitan and FSDP2
 *   trainers) but Hugging Face Transformers + PEFT with bitsandbytes
 *   4-bit weights: the multi-GPU QLoRA recipes PEFT documents shard
 *   data-parallel (FSDP-QLoRA, DeepSpeed ZeRO-3; PEFT docs
 *   accelerate/fsdp.md, "Use PEFT QLoRA and FSDP for finetuning large
 *   models on multiple GPUs"), Transformers documents its tp_plan for
 *   multi-GPU inference (docs perf_infer_gpu_multi.md), and tp_plan on
 *   bitsandbytes 4-bit weights was reported failing
 *   (huggingface/transformers issue 38122, 2025-05): false.
 *  ep_overlap 0 everywhere: no profile's stack hides the expert
 *   all-to-all by default. Megatron-Core's batch-level overlap of it with
 *   another micro-batch's dense compute is opt-in
 *   (--overlap-moe-expert-parallel-comm with --delay-wgrad-compute, 0.14,
 *   megatron/core/transformer/moe/README.md); torchtitan's DeepEP
 *   dispatcher and DeepSpeed-MoE run it on the critical path. A stack that
 *   hides it sets up to 1: DeepSeek-V3's DualPipe reports "near-zero
 *   all-to-all communication overhead" (arXiv 2412.19437 §3.2.1).
 *  ep_dispatcher alltoall and ep_dispatch_fp8 false everywhere: the
 *   profiles' default dispatchers send a row per (token, routed expert)
 *   pair in the activations' dtype - Megatron-Core's
 *   MoEAlltoAllTokenDispatcher (--moe-token-dispatcher-type alltoall, the
 *   recipes' default; megatron/core/transformer/moe/token_dispatcher.py
 *   permutes routing_map.sum() rows), torchtitan's and FSDP2 trainers'
 *   all_to_all_single over per-expert token counts, DeepSpeed-MoE's
 *   capacity-padded all-to-all. DeepEP (Megatron-Core's flex dispatcher
 *   with --moe-enable-deepep, torchtitan's deepep flavours, NeMo
 *   Automodel) sends a token once per destination rank, and once per
 *   destination node over the NICs, forwarded over NVLink; its dispatch
 *   takes FP8 tokens with 1x128 scales (DeepSeek-V3 report §3.3: the
 *   dispatch and the gradient before the down-projection in FP8, the
 *   combine in BF16). A run on it sets ep_dispatcher deepep, and
 *   ep_dispatch_fp8 where it dispatches in FP8.
 *  partial_recompute (recompute partial: whole layers recomputed for the
 *   first k of each pipeline chunk, none for the rest): the Megatron-LM
 *   family's --recompute-method block with --recompute-num-layers k
 *   ("recompute the input activations of only a set number of individual
 *   Transformer layers per pipeline stage and do the rest without any
 *   recomputing", megatron/training/arguments.py; --activations-
 *   checkpoint-method before 2022, which the 2021 paper's scripts pass;
 *   Megatron-Core's TransformerBlock applies it per model chunk, so per
 *   virtual stage; NeMo's "partial transformer layer recomputation",
 *   docs activation_recomputation.html, 24.07-25.02): true for
 *   megatron-lm-2021, megatron-core and nemo. False elsewhere: DeepSpeed
 *   and the BigScience Megatron-DeepSpeed fork checkpoint every layer
 *   (--checkpoint-activations; --checkpoint-num-layers groups layers per
 *   checkpoint, it does not leave any out), Hugging Face
 *   gradient_checkpointing_enable wraps every decoder layer, FSDP2
 *   recipes wrap every block, and torchtitan's layer-level option
 *   checkpoints every n-th block (selective_ac_option = "n"), a
 *   different set the engine does not model.
 *  nf4_base_weights (QLoRA's 4-bit NF4 frozen base weights): Hugging Face
 *   + PEFT (bitsandbytes Linear4bit), NeMo (24.x nlp/modules/common/
 *   megatron/adapters/qlora.py: NF4 wrappers of Megatron-Core's linear
 *   layers, "Tensor Parallel is not supported"), FSDP2 trainers (torchtune
 *   lora_finetune_distributed with torchao NF4Tensor: llama2/70B_qlora,
 *   llama3_1/405B_qlora) and DeepSpeed (PEFT docs accelerate/deepspeed.md:
 *   QLoRA with ZeRO-3): true. Megatron-LM, Megatron-Core and Megatron-
 *   DeepSpeed have no 4-bit base layers, and torchtitan trains no
 *   adapters: false. */
/* Bytes per logit live at the loss's peak (loss_logit_bytes).
 *  4: Megatron's vocabulary-parallel cross-entropy (Megatron-LM 2021-22
 *   vocab_parallel_cross_entropy on output.float(), Megatron-Core
 *   fused_cross_entropy.py) turns the fp32 logits into the softmax in
 *   place, saves it and writes the gradient into it. Megatron-DeepSpeed
 *   (deepspeed-zero's large runs) calls the same function.
 *  12: torchtitan's loss is F.cross_entropy(pred.flatten(0, 1).float(),
 *   ...) (components/loss.py; the trainer deletes pred before the
 *   backward): log_softmax saves its fp32 output (4 B), and the backward
 *   holds it with nll_loss's dense fp32 gradient (4 B) while
 *   log_softmax's backward writes the input gradient (4 B). Hugging Face
 *   Transformers and plain FSDP2 trainers call the same loss on
 *   upcast logits (at least as much: not counted beyond 12). A compiled
 *   loss holds about the bf16 logits and their gradient, 4 (torchtitan
 *   with --training.compile since April 2025, PR #1033): the profile
 *   keeps the larger value; such a run sets 4 (MODEL.md §3). */
#define LOSS_FUSED_BYTES 4.0
#define LOSS_TORCH_BYTES 12.0
/* Bytes per logit the loss moves, forward and backward, with 16-bit logits
 * (loss_pass_bytes; the engine's time model until 2026-11-26 had the fused
 * figure for every stack).
 *  16: a fused cross-entropy reads the 16-bit logits (2), writes and reads
 *   the fp32 softmax it keeps (4 + 4), writes the gradient in place and
 *   reads it back to 16 bits (4 + 2).
 *  48: F.cross_entropy(logits.float(), ...) as torchtitan
 *   (components/loss.py) and Hugging Face transformers (ForCausalLMLoss)
 *   call it: the upcast (read 2, write 4); log_softmax's forward over rows
 *   too long to keep on chip (PyTorch's cunn_SoftMaxForward: a read for
 *   the max, one for the sum of exponentials, one more with the write:
 *   16); nll_loss's backward writes a dense fp32 gradient (4);
 *   log_softmax's backward reads it for the sum, then it and the saved
 *   output with the write (16); the upcast's backward (read 4, write 2).
 *   Measured on one H100 (2026-11-26, tools/gpu_terms.py loss): the path
 *   takes 17.85 ms for 8,192 x 128,256 logits, which at the engine's HBM
 *   rate (0.85 x 3,350 GB/s) is 48.4 B a logit; 47.7-48.4 at 32,000 and
 *   128,256 entries and 8,192-16,384 tokens. */
#define LOSS_FUSED_PASS_BYTES 16.0
#define LOSS_TORCH_PASS_BYTES 48.0

const struct eng_stack stack_builtin[STACK_BUILTIN_COUNT] = {
    {.name = "megatron-lm-2021",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.8,
     .param_gather_overlap = 0.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_DELAYED,
     .fp8_weight_cache = true,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_FUSED_BYTES,
     .loss_pass_bytes = LOSS_FUSED_PASS_BYTES,
     .max_zero_stage = 1,
     .max_zero_stage_pp = 1,
     .max_offload = STACK_OFFLOAD_NONE,
     .expert_parallel = false,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = true,
     .nf4_base_weights = false},
    {.name = "megatron-core",
     .attn_kernel = ATTN_CUDNN,
     .tp_comm_overlap = 0.75,
     .dp_overlap = 0.8,
     .param_gather_overlap = 1.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_DELAYED,
     .fp8_weight_cache = true,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_FUSED_BYTES,
     .loss_pass_bytes = LOSS_FUSED_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 1,
     .max_offload = STACK_OFFLOAD_OPTIMIZER,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = true,
     .nf4_base_weights = false},
    {.name = "nemo",
     .attn_kernel = ATTN_CUDNN,
     .tp_comm_overlap = 0.75,
     .dp_overlap = 0.8,
     .param_gather_overlap = 1.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_DELAYED,
     .fp8_weight_cache = true,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_FUSED_BYTES,
     .loss_pass_bytes = LOSS_FUSED_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 1,
     .max_offload = STACK_OFFLOAD_OPTIMIZER,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = true,
     .nf4_base_weights = true},
    {.name = "pytorch-fsdp2-fa2",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.8,
     .param_gather_overlap = 1.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_FP32,
     .fp8_recipe = STACK_FP8_CURRENT,
     .fp8_weight_cache = false,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_TORCH_BYTES,
     .loss_pass_bytes = LOSS_TORCH_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 2,
     .max_offload = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = false,
     .nf4_base_weights = true},
    {.name = "deepspeed-zero",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.8,
     .param_gather_overlap = 0.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_DELAYED,
     .fp8_weight_cache = false,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_FUSED_BYTES,
     .loss_pass_bytes = LOSS_FUSED_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 1,
     .max_offload = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = false,
     .nf4_base_weights = true},
    {.name = "megatron-deepspeed",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.0,
     .param_gather_overlap = 0.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_DELAYED,
     .fp8_weight_cache = false,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_FUSED_BYTES,
     .loss_pass_bytes = LOSS_FUSED_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 1,
     .max_offload = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = false,
     .nf4_base_weights = false},
    {.name = "torchtitan",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.8,
     .param_gather_overlap = 1.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.8,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_FP32,
     .fp8_recipe = STACK_FP8_CURRENT,
     .fp8_weight_cache = false,
     .fp8_param_all_gather = true,
     .selective_recompute = STACK_SAC_OP,
     .gemm_clock_derate = 1.0,
     .elementwise_bytes_factor = 1.0,
     .loss_logit_bytes = LOSS_TORCH_BYTES,
     .loss_pass_bytes = LOSS_TORCH_PASS_BYTES,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 2,
     .max_offload = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
     .expert_parallel = true,
     .pipeline_parallel = true,
     .tensor_parallel = true,
     .partial_recompute = false,
     .nf4_base_weights = false},
    {.name = "hf-peft-bnb4",
     .attn_kernel = ATTN_FA2,
     .tp_comm_overlap = 0.0,
     .dp_overlap = 0.8,
     .param_gather_overlap = 0.0,
     .cp_overlap = 0.8,
     .offload_overlap = 0.0,
     .ep_overlap = 0.0,
     .ep_dispatcher = MOE_DISPATCH_ALLTOALL,
     .ep_dispatch_fp8 = false,
     .reduce_dtype = STACK_REDUCE_GRAD,
     .fp8_recipe = STACK_FP8_CURRENT,
     .fp8_weight_cache = false,
     .gemm_clock_derate = 1.0,
     .kernel_launch_us = 2.0,
     .kernels_per_layer = 320.0,
     .elementwise_bytes_factor = 4.2,
     .loss_logit_bytes = LOSS_TORCH_BYTES,
     .loss_pass_bytes = LOSS_TORCH_PASS_BYTES,
     .lora_fp32_adapters = true,
     .autocast_fp32_params = true,
     .grads_in_backward = true,
     .max_zero_stage = 3,
     .max_zero_stage_pp = 2,
     .max_offload = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
     .expert_parallel = false,
     .pipeline_parallel = false,
     .tensor_parallel = false,
     .partial_recompute = false,
     .nf4_base_weights = true},
};

double stack_attn_seq_factor(const struct eng_stack *s, const struct hw_spec *g,
			     double seq_len, bool backward)
{
	double stated =
	    backward ? s->attn_bwd_efficiency : s->attn_fwd_efficiency;

	return stated > 0.0 ? 1.0
			    : attn_seq_factor(attn_kernel_on(s->attn_kernel, g),
					      seq_len, backward);
}

const struct eng_stack *stack_builtin_find(const char *name)
{
	for (int i = 0; name && i < STACK_BUILTIN_COUNT; i++)
		if (!strcmp(stack_builtin[i].name, name))
			return &stack_builtin[i];
	return NULL;
}

void stack_builtin_or_default(const char *name, struct eng_stack *out)
{
	const struct eng_stack *s = stack_builtin_find(name);

	*out = s ? *s : *stack_builtin_find(STACK_DEFAULT_NAME);
}

void stack_default(struct eng_stack *out)
{
	stack_builtin_or_default(STACK_DEFAULT_NAME, out);
}

int stack_check(const struct eng_stack *s, const char **field)
{
	const struct {
		const char *name;
		double v, lo, hi;
	} r[] = {
	    {"attn_fwd_efficiency", s->attn_fwd_efficiency, 0.0, 1.0},
	    {"attn_bwd_efficiency", s->attn_bwd_efficiency, 0.0, 1.0},
	    {"tp_comm_overlap", s->tp_comm_overlap, 0.0, 1.0},
	    {"dp_overlap", s->dp_overlap, 0.0, 1.0},
	    {"param_gather_overlap", s->param_gather_overlap, 0.0, 1.0},
	    {"cp_overlap", s->cp_overlap, 0.0, 1.0},
	    {"offload_overlap", s->offload_overlap, 0.0, 1.0},
	    {"ep_overlap", s->ep_overlap, 0.0, 1.0},
	    {"ep_dispatcher", (unsigned)s->ep_dispatcher, 0,
	     MOE_DISPATCH_COUNT - 1},
	    {"ep_dispatch_fp8", s->ep_dispatch_fp8, 0, 1},
	    {"gemm_clock_derate", s->gemm_clock_derate, 0.1, 1.0},
	    {"kernel_launch_us", s->kernel_launch_us, 0.0, 1000.0},
	    {"kernels_per_layer", s->kernels_per_layer, 0.0, 100000.0},
	    {"elementwise_bytes_factor", s->elementwise_bytes_factor, 1.0,
	     100.0},
	    {"loss_logit_bytes", s->loss_logit_bytes, 2.0, 32.0},
	    {"loss_pass_bytes", s->loss_pass_bytes, 8.0, 128.0},
	    /* enums as their index (a negative one wraps far out) */
	    {"attn_kernel", (unsigned)s->attn_kernel, 0, ATTN_KERNEL_COUNT - 1},
	    {"fp8_recipe", (unsigned)s->fp8_recipe, 0,
	     STACK_FP8_RECIPE_COUNT - 1},
	    {"selective_recompute", (unsigned)s->selective_recompute, 0,
	     STACK_SAC_COUNT - 1},
	    {"reduce_dtype", (unsigned)s->reduce_dtype, 0,
	     STACK_REDUCE_COUNT - 1},
	    {"max_zero_stage", s->max_zero_stage, 0, 3},
	    {"max_zero_stage_pp", s->max_zero_stage_pp, 0, 2},
	    {"max_offload", (unsigned)s->max_offload, 0,
	     STACK_OFFLOAD_COUNT - 1},
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!(r[i].v >= r[i].lo && r[i].v <= r[i].hi)) {
			*field = r[i].name;
			return -1;
		}
	return 0;
}

int stack_zero_stage_max(const struct eng_stack *s, int pp)
{
	if (pp > 1 && s->max_zero_stage_pp < s->max_zero_stage)
		return s->max_zero_stage_pp;
	return s->max_zero_stage;
}

/* Activations and output gradients (MODEL.md §4a). Current scaling: the
 * amax is a by-product of the kernel that writes the 16-bit tensor, so
 * the cast is the same read 2 + write 1 + 1 as under delayed scaling:
 * Transformer Engine's activation kernels compute it in the same pass for
 * a Float8CurrentScalingQuantizer (pytorch/csrc/extensions/activation.cpp,
 * Impl::FUSED_ACTIVATION_AMAX_FP8, then quantize_with_amax), and torchao's
 * own traffic model of its compiled tensorwise recipe charges the input
 * and grad_output casts with fuse_with_prev=True: 2 + 2 x 1 B
 * (torchao/float8/roofline_utils.py, get_float8_mem_sympy). It was 6 B
 * (a separate amax read), which made a torchtitan Float8 step slower
 * against its BF16 step than measured (issue 13). */
double stack_fp8_cast_bytes(enum stack_fp8_recipe r)
{
	double b = 2.0 + 1.0 + 1.0;

	if (r == STACK_FP8_MXFP8)
		b += 2.0 / 32.0;
	return b;
}

/* Weights: torchao charges the weight's amax read separately
 * (fuse_with_prev=False, same function): 2 + 2 + 2 x 1 B. */
double stack_fp8_weight_cast_bytes(enum stack_fp8_recipe r)
{
	double b = stack_fp8_cast_bytes(r);

	if (r == STACK_FP8_CURRENT)
		b += 2.0;
	return b;
}

/* FP8 all-gather (torchao float8/fsdp_utils.py): fsdp_pre_all_gather casts
 * the local shard (1/dp of the weight) with hp_tensor_to_float8_dynamic, or
 * with the scale precomputed once per step, to one row-major FP8 tensor;
 * cuBLAS FP8 GEMMs on Hopper take the second operand column-major only
 * (cublasLt FP8 "TN" layout requirement), so the backward's input-gradient
 * GEMM reads a transposed copy of the gathered weight. The amax read is
 * kept per cast (no precomputed scale), the conservative choice. */
double stack_fp8_gathered_weight_bytes(enum stack_fp8_recipe r, double dp)
{
	double shard = stack_fp8_weight_cast_bytes(r) - 1.0;

	if (dp < 1.0)
		dp = 1.0;
	return 2.0 * shard / dp + 2.0;
}

/* torchtitan counts aten.mm calls per block forward from 1 and saves the
 * odd ones (parallelize_llama.py: meta[mm_count_key] % 2 == 0 is
 * recomputed); its Attention.forward calls wq, wk, wv, then wo, its
 * FeedForward w2(silu(w1(x)) * w3(x)): mm 2, 4 and 6 are wk, wo and w3
 * (gated) or w2 (w1 w2 only). */
double stack_sac_op_mm_share(double w_q, double w_k, double w_v, double w_o,
			     double w_up, double w_down, bool gated)
{
	double all = w_q + w_k + w_v + w_o + w_up + w_down;
	double again = w_k + w_o + (gated ? w_up / 2.0 : w_down);

	return all > 0.0 ? again / all : 0.0;
}

/* stack.h - the software stack a training job runs on (issue 13): the
 * kernels, overlaps and FP8 recipe its step time depends on, as one
 * profile. Pure data and lookups; docs/MODEL.md §4a cites every value.
 *
 * The named profiles below are the engine's built-in table; the catalog
 * (migrations/0015_stacks.sql completed by 0019, 0023, 0027 and 0028,
 * megatron-deepspeed by 0025; GET/PUT /v1/stacks) is seeded with the same
 * values
 * (tests/unit/test_engine_stack.c checks the seed against this table).
 */
#ifndef GPUSIZER_ENGINE_STACK_H
#define GPUSIZER_ENGINE_STACK_H

#include <stdbool.h>

#include "attention.h"
#include "hw.h"
#include "moe_dispatch.h"

enum stack_fp8_recipe {
	STACK_FP8_DELAYED, /* per-tensor scale from the amax history */
	STACK_FP8_CURRENT, /* per-tensor scale from this tensor's amax */
	STACK_FP8_MXFP8,   /* 32-element blocks, E8M0 scales (Blackwell) */
	STACK_FP8_RECIPE_COUNT
};
extern const char *const stack_fp8_recipe_names[STACK_FP8_RECIPE_COUNT + 1];
const char *stack_fp8_recipe_name(enum stack_fp8_recipe r);

/* reduce_dtype values: "grad" (the request's gradient_precision), "bf16",
 * "fp32". */
enum stack_reduce {
	STACK_REDUCE_GRAD,
	STACK_REDUCE_BF16,
	STACK_REDUCE_FP32,
	STACK_REDUCE_COUNT
};
extern const char *const stack_reduce_names[STACK_REDUCE_COUNT + 1];

/* What a stack moves to host memory (max_offload): nothing, the
 * optimizer state, or the optimizer state and the weights; the order and
 * names of training.h's trn_offload. */
enum stack_offload {
	STACK_OFFLOAD_NONE,
	STACK_OFFLOAD_OPTIMIZER,
	STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
	STACK_OFFLOAD_COUNT
};
extern const char *const stack_offload_names[STACK_OFFLOAD_COUNT + 1];

/* What recompute "selective" recomputes: "attention" the attention core
 * (Korthikanti et al. 2022: Megatron); "op" torchtitan's per-op selective
 * activation checkpointing: every op but attention and every second
 * matmul of a block (their outputs are saved). */
enum stack_sac { STACK_SAC_ATTENTION, STACK_SAC_OP, STACK_SAC_COUNT };
extern const char *const stack_sac_names[STACK_SAC_COUNT + 1];

#define STACK_NAME_LEN 64

/* The share of TP collectives torchtitan's async TP hides
 * (--parallelism.enable_async_tensor_parallel: torch's micro-pipelined
 * collective matmul), for a torchtitan run's tp_comm_overlap; its
 * `torchtitan` profile runs vanilla TP (0). Derived from torchtitan's own
 * same-hardware measurement of Llama 3.1 8B at FSDP 8 x TP 8 (pytorch/
 * torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md: bf16
 * 4,378 -> 4,809 tok/s/GPU, float8 5,078 -> 5,570): the step time async TP
 * saved over the engine's TP time for those runs, 0.39 and 0.34 (a
 * configuration no validation row has). Megatron-Core's userbuffers
 * overlap hides twice as much (0.75). */
#define STACK_TORCHTITAN_ASYNC_TP_OVERLAP 0.37

struct eng_stack {
	char name[STACK_NAME_LEN];
	enum attn_kernel attn_kernel;
	/* fused attention efficiency, fraction of the dense 16-bit peak at
	 * head dim 128; 0: the kernel class's default (attention.h) */
	double attn_fwd_efficiency, attn_bwd_efficiency;
	/* share of TP collective time hidden behind the layer's GEMMs
	 * (Megatron-Core --tp-comm-overlap), 0..1 */
	double tp_comm_overlap;
	/* share of the compute window DP traffic can hide behind, 0..1 */
	double dp_overlap;
	/* ZeRO-1/2: share of the post-step all-gather of the updated weights
	 * that hides behind the next step's forward (Megatron-Core
	 * overlap_param_gather, FSDP2's forward prefetch), 0..1; 0: it runs
	 * synchronously after the optimizer step (DeepSpeed ZeRO-1/2) */
	double param_gather_overlap;
	/* share of the attention time that hides context parallelism's
	 * ring sends of K and V, 0..1 (review s19b F4: a fixed 0.8) */
	double cp_overlap;
	/* share of a micro-batch's time that hides the weight transfers of
	 * offload optimizer+weights, 0..1: 0 where the stack moves each
	 * module's weights synchronously as it runs (Accelerate's hooks) */
	double offload_overlap;
	/* share of the expert all-to-all (MoE dispatch and combine) hidden
	 * behind the layer's compute, 0..1 (stack.c) */
	double ep_overlap;
	/* what the expert all-to-all sends: a copy per routed expert, or
	 * DeepEP's one per destination rank and node (moe_dispatch.h) */
	enum moe_dispatcher ep_dispatcher;
	/* true: tokens are dispatched in FP8 with 1x128 scales, the
	 * combine (and the dispatch's gradient) in 16 bits */
	bool ep_dispatch_fp8;
	enum stack_reduce reduce_dtype;
	enum stack_fp8_recipe fp8_recipe;
	/* true: FP8 weights are cast once per step and reused by every
	 * micro-batch (TE is_first_microbatch); false: every micro-batch */
	bool fp8_weight_cache;
	/* true: under FSDP (ZeRO-3) the FP8 GEMMs' weights are cast to FP8
	 * on each rank's shard before the all-gather, which then moves 1 B
	 * per parameter instead of 2 (torchao enable_fsdp_float8_all_gather;
	 * torchtitan docs/float8.md); false: gathered in 16-bit and cast
	 * after */
	bool fp8_param_all_gather;
	enum stack_sac selective_recompute;
	/* true: the stack recomputes whole layers for some layers of each
	 * pipeline chunk and not the rest (recompute partial: Megatron-LM's
	 * --recompute-method block); false: its full recompute checkpoints
	 * every layer (Hugging Face gradient_checkpointing), and the search
	 * offers no partial recompute, a pinned one is sized with a warning */
	bool partial_recompute;
	/* share of the GEMM rate kept on power-limited parts (compute
	 * capability >= 9.0) in sustained multi-GPU training; 1: none */
	double gemm_clock_derate;
	/* per-kernel launch gap (microseconds) x kernels per layer per
	 * micro-batch (forward + backward) */
	double kernel_launch_us, kernels_per_layer;
	/* bytes of the norm, rotary and activation kernels relative to the
	 * fused kernels of MODEL.md §4 (1: fused; eager PyTorch more) */
	double elementwise_bytes_factor;
	/* bytes per logit (vocabulary entry x token, / t) live at the loss's
	 * peak: 4, Megatron's fused vocabulary-parallel cross-entropy (fp32
	 * softmax saved, gradient in place); 12, PyTorch's F.cross_entropy
	 * on fp32 logits (saved log-softmax output, then its gradient and
	 * the input gradient) - stack.c */
	double loss_logit_bytes;
	/* bytes moved per logit by the loss's forward and backward, for
	 * 16-bit logits (the logits' own read and gradient write scale with
	 * the activation width): 16, a fused cross-entropy; 48, PyTorch's
	 * F.cross_entropy on upcast logits - stack.c */
	double loss_pass_bytes;
	/* true: LoRA adapters are kept in fp32 under autocast and the
	 * 16-bit input is cast to them (PEFT's autocast_adapter_dtype
	 * default): the casts' bytes and a saved 16-bit copy of each
	 * adapter's input (training_ctx.c adapter_kernels); false: adapters
	 * in the compute dtype */
	bool lora_fp32_adapters;
	/* true: the parameters stay fp32 and the step runs under
	 * torch.autocast with eager modules (the Hugging Face Trainer's
	 * bf16=True): full fine-tuning saves more per layer than fused
	 * kernels (training_ctx.c eager_amp_bytes, MODEL.md §3) */
	bool autocast_fp32_params;
	/* true: gradients are allocated by the backward as it frees the
	 * activations (zero_grad(set_to_none=True), no preallocated gradient
	 * buffer): the peak holds the larger of the two, not both */
	bool grads_in_backward;
	/* the highest ZeRO stage the stack shards to (0: replicated DDP,
	 * 1: optimizer state, 2: and gradients, 3: and weights), and the
	 * highest it combines with pipeline stages (at most 2: the engine
	 * never pairs ZeRO-3 with PP). The search offers no stage above
	 * them; a pinned one is kept with a warning (stack.c) */
	int max_zero_stage, max_zero_stage_pp;
	/* the most the stack offloads to host memory; the search offers no
	 * more, a pinned offload beyond it is sized with a warning */
	enum stack_offload max_offload;
	/* true: the stack shards the experts of a mixture-of-experts model
	 * over an expert-parallel group (ep > 1); false: every data-parallel
	 * rank holds all of them (/ tp). The search offers ep 1 only; a
	 * pinned ep > 1 is sized with a warning (stack.c) */
	bool expert_parallel;
	/* true: the stack runs a pipeline schedule (pp > 1); false: the
	 * search offers pp 1 only, a pinned pp > 1 is sized with a warning */
	bool pipeline_parallel;
	/* true: the stack splits layers over a tensor-parallel group (tp >
	 * 1); false: the search offers tp 1 only, a pinned tp > 1 is sized
	 * with a warning */
	bool tensor_parallel;
	/* true: the stack quantizes QLoRA's frozen base weights to 4-bit
	 * NF4; false: a QLoRA request on it is sized as asked, with a
	 * warning (stack.c) */
	bool nf4_base_weights;
};

/* The built-in profiles. */
#define STACK_BUILTIN_COUNT 8
extern const struct eng_stack stack_builtin[STACK_BUILTIN_COUNT];
/* The profile a request without "stack" gets: megatron-lm-2021, the
 * stack of the runs the engine is calibrated on (MODEL.md §4a). */
#define STACK_DEFAULT_NAME "megatron-lm-2021"
/* The profile a QLoRA request without "stack" gets: hf-peft-bnb4. QLoRA's
 * NF4 base weights are bitsandbytes' (Dettmers et al. 2023, whose
 * implementation is Hugging Face PEFT + bitsandbytes); Megatron-LM has no
 * 4-bit base layers, so its profile cannot be the stack such a job runs. */
#define STACK_QLORA_DEFAULT_NAME "hf-peft-bnb4"
/* The profile a mixture-of-experts request without "stack" gets (QLoRA
 * aside): megatron-core. Megatron-LM 2021-23 has no MoE layers or expert
 * parallelism, so its profile cannot be the stack such a job runs; every
 * MoE pre-training run we score ran Megatron-Core or FSDP2
 * (docs/VALIDATION.md, "Mixture of experts"), most of them Megatron-Core. */
#define STACK_MOE_DEFAULT_NAME "megatron-core"

/* The attention sequence-length factor (attention.h attn_seq_factor) the
 * profile's kernel takes at seq_len on GPU type g (attn_kernel_on; NULL:
 * the kernel as named), forward or backward; 1 where the profile states
 * that direction's efficiency, which is then the run's. */
double stack_attn_seq_factor(const struct eng_stack *s, const struct hw_spec *g,
			     double seq_len, bool backward);

/* The built-in profile named name, or NULL. */
const struct eng_stack *stack_builtin_find(const char *name);
/* *out = the default profile. */
void stack_default(struct eng_stack *out);
/* *out = the built-in profile named name, else the default profile. */
void stack_builtin_or_default(const char *name, struct eng_stack *out);

/* The highest ZeRO stage s offers a layout with pp pipeline stages. */
int stack_zero_stage_max(const struct eng_stack *s, int pp);

/* 0 when every value of s is in range, else -1 with *field naming the
 * first one out of range. */
int stack_check(const struct eng_stack *s, const char **field);

/* Per-element bytes of an FP8 cast of a 16-bit activation or output
 * gradient to both the row-wise and the column-wise (transposed) FP8
 * copies the forward and backward GEMMs read: read 2 + write 1 + 1, for
 * every recipe; current scaling takes the amax in the kernel that
 * produced the tensor (TE FUSED_ACTIVATION_AMAX_FP8, torchao
 * fuse_with_prev), not in a pass of its own; MXFP8 writes one E8M0 scale
 * per 32 values per copy. */
double stack_fp8_cast_bytes(enum stack_fp8_recipe r);
/* The same for a weight: no kernel produces it in the step, so current
 * scaling reads it once more for its amax (+2). */
double stack_fp8_weight_cast_bytes(enum stack_fp8_recipe r);
/* The same per micro-batch when the weights are all-gathered in FP8
 * (fp8_param_all_gather) over dp ranks, per element of the gathered
 * weight: each of the micro-batch's two all-gathers (forward, backward)
 * first casts the rank's 1/dp shard, writing the row-wise copy only
 * (the weight cast bytes less 1), and the backward's column-major copy
 * is a transpose of the gathered FP8 weight (read 1 + write 1). */
double stack_fp8_gathered_weight_bytes(enum stack_fp8_recipe r, double dp);

/* Per-op selective checkpointing: the share of a block's linear forward
 * FLOPs in the matmuls it recomputes, every second one in forward order
 * (torchtitan's blocks: wq wk wv wo, then w1 w3 w2 gated or w1 w2):
 * wk + wo + (w3 or w2), for weights w_q, w_k, w_v, w_o, w_up (both gated
 * halves), w_down. */
double stack_sac_op_mm_share(double w_q, double w_k, double w_v, double w_o,
			     double w_up, double w_down, bool gated);

#endif

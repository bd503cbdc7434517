/* training.h - size a training or fine-tuning job (issue 3, docs/MODEL.md
 * §2-6).
 *
 * Usage: trn_request_init(&rq); fill rq (model, gpu, workload, limits);
 * trn_size(&rq, &res, &err). Pure: no I/O, no globals, no allocation; safe
 * to call from many threads at once. The result is a plain struct (a few
 * KiB); caller owns it.
 */
#ifndef GPUSIZER_ENGINE_TRAINING_H
#define GPUSIZER_ENGINE_TRAINING_H

#include <stdbool.h>
#include <stddef.h>

#include "budget.h"
#include "errors.h"
#include "formulas.h"
#include "hw.h"
#include "model.h"
#include "stack.h"

enum trn_optimizer {
	TRN_ADAMW,
	TRN_ADAMW_8BIT,
	TRN_SGD, /* with momentum */
	TRN_ADAFACTOR,
	TRN_OPTIMIZER_COUNT
};
enum trn_method { TRN_FULL, TRN_LORA, TRN_QLORA, TRN_METHOD_COUNT };
/* CPU offload (ZeRO-Offload / ZeRO-Infinity): optimizer state, or optimizer
 * state and weights. The scale of a stack's max_offload (stack.h), which a
 * layout's offload compares with; named by stack_offload_names. */
enum trn_offload {
	TRN_OFFLOAD_NONE = STACK_OFFLOAD_NONE,
	TRN_OFFLOAD_OPTIMIZER = STACK_OFFLOAD_OPTIMIZER,
	TRN_OFFLOAD_OPTIMIZER_WEIGHTS = STACK_OFFLOAD_OPTIMIZER_WEIGHTS,
	TRN_OFFLOAD_COUNT = STACK_OFFLOAD_COUNT
};
enum trn_objective { TRN_OBJ_TIME, TRN_OBJ_COST, TRN_OBJ_GPUS, TRN_OBJ_COUNT };
enum eng_binding {
	ENG_BIND_COMPUTE,
	ENG_BIND_MEMORY,
	ENG_BIND_COMMUNICATION,
	ENG_BIND_DEADLINE,
	ENG_BIND_BANDWIDTH,	  /* inference: HBM bandwidth */
	ENG_BIND_LATENCY,	  /* inference: latency target */
	ENG_BIND_PIPELINE_BUBBLE, /* training: the pipeline's idle slots */
	ENG_BIND_SCHEDULER, /* inference: the serving engine's sequence cap */
	ENG_BIND_COUNT
};

/* Names as they appear in JSON, indexed by the enum and NULL-terminated:
 * the vocabulary the handlers validate requests against (the one copy). */
extern const char *const trn_optimizer_names[TRN_OPTIMIZER_COUNT + 1];
extern const char *const trn_method_names[TRN_METHOD_COUNT + 1];
extern const char *const trn_objective_names[TRN_OBJ_COUNT + 1];
const char *trn_optimizer_name(enum trn_optimizer o);
const char *trn_method_name(enum trn_method m);
const char *trn_offload_name(enum trn_offload o);
const char *trn_objective_name(enum trn_objective o);
const char *eng_binding_name(enum eng_binding b);

/* An allowed-value list; n == 0 lets the engine choose (see MODEL.md §6).
 * recompute holds enum eng_recompute, offload enum trn_offload,
 * sequence_parallel / flash_attention / stage_rebalance hold 0/1. */
#define TRN_MAX_CHOICES 24
struct trn_choices {
	int n;
	int v[TRN_MAX_CHOICES];
};

struct trn_strategies {
	struct trn_choices tp, pp, dp, ep, cp, vp, zero, recompute,
	    sequence_parallel, flash_attention, micro_batch, offload,
	    stage_rebalance;
};

/* The documented range of each integer of a training request: openapi.yaml
 * states these numbers, handlers/sizing_training.c refuses a value outside
 * them with a 400 naming the field, and trn_size with ENG_EINVAL (the one
 * copy of each). */
#define TRN_SEQ_LEN_MAX	      (1L << 22) /* tokens */
#define TRN_GPUS_MAX	      (1L << 20) /* gpus, max_gpus */
#define TRN_GPUS_PER_NODE_MAX 1024
/* Goodput inputs: up to one interruption per 100 GPU-hours (450x Llama
 * 3's rate), 1 MB/s to 10 TB/s per GPU, a restart up to a day; max_days
 * from about a minute to 100,000 days. */
#define TRN_FAILURES_PER_GPU_HOUR_MAX 0.01
#define TRN_CHECKPOINT_GBPS_MIN	      1e-3
#define TRN_CHECKPOINT_GBPS_MAX	      1e4
#define TRN_RESTART_MINUTES_MAX	      1440.0
#define TRN_MAX_DAYS_MIN	      1e-3
#define TRN_MAX_DAYS_MAX	      1e5

/* The longest run objective cost (or gpus) picks without a deadline: 90
 * days, a quarter. Llama 3 405B, the longest pre-training run with
 * published figures, took 30.84M H100-hours (Llama 3.1 model card) on
 * 16,384 GPUs: 78 days. Beyond a quarter the hardware, the price and the
 * model plan itself change before the run ends; the cheapest plan of
 * all is usually the slowest, years on a handful of GPUs (issue 13). */
#define TRN_DEFAULT_MAX_DAYS 90.0

/* memory_headroom_fraction: a share of GPU memory no plan may use, on top
 * of the modelled overheads (MODEL.md §3); default 0, at most 0.5. Plans
 * above TRN_NEAR_FULL of the GPU's memory are flagged in a warning. */
#define TRN_HEADROOM_MAX 0.5
#define TRN_NEAR_FULL	 0.95

/* The modelled memory overheads (MODEL.md §3), each a request field:
 * memory_fixed_overhead_gib per GPU (CUDA context and cuBLAS workspaces
 * 1 GiB + NCCL buffers 0.5 GiB), and memory_fragmentation_fraction of the
 * rest (PyTorch's caching allocator; 5 %, the low end of what GMLake and
 * arXiv:2507.16274 measured). */
#define TRN_DEFAULT_FIXED_OVERHEAD_GIB 1.5
#define TRN_FIXED_OVERHEAD_MAX_GIB     64.0
#define TRN_DEFAULT_FRAGMENTATION      0.05
#define TRN_FRAGMENTATION_MAX	       1.0

/* Offload (MODEL.md §4): the host link's rate per GPU and direction,
 * GB/s, is the request's host_link_gbps, else the GPU's PCIe generation
 * and width, else TRN_DEFAULT_HOST_LINK_GBPS (PCIe 4.0 x16's ~25 GB/s),
 * at TRN_HOST_LINK_EFFICIENCY of it; the CPU optimizer (ZeRO-Offload's
 * CPU Adam) moves cpu_optimizer_gbps of optimizer state per GPU. */
#define TRN_DEFAULT_HOST_LINK_GBPS     25.0
#define TRN_HOST_LINK_EFFICIENCY       0.8
#define TRN_DEFAULT_CPU_OPTIMIZER_GBPS 10.0
#define TRN_HOST_RATE_MAX_GBPS	       10000.0

/* Each integer allowed-value list of struct trn_strategies: its JSON member
 * of "strategies", its range, and where it lives. pp is further bounded by
 * model.layers, micro_batch by nothing else. */
struct trn_int_list {
	const char *key;
	int min, max;
	size_t offset; /* of its struct trn_choices in struct trn_strategies */
};
#define TRN_INT_LISTS 8
extern const struct trn_int_list trn_int_lists[TRN_INT_LISTS];

struct trn_request {
	struct model_arch model;
	long seq_len;
	double train_tokens;	    /* 0: per-step figures only */
	long global_batch_size;	    /* sequences; 0: from tokens */
	double global_batch_tokens; /* 0: engine default (~4M tokens) */
	enum eng_dtype precision;   /* fp32|tf32|fp16|bf16|fp8 */
	enum trn_optimizer optimizer;
	enum eng_dtype
	    gradient_precision; /* bf16 (default, 16 B/param) | fp32 */
	enum trn_method method;
	long lora_rank; /* default 16 */
	/* Dropout in training (masks stored, applied by elementwise kernels):
	 * -1 the model's default (on with linear biases: GPT-era Megatron
	 * recipes; off for Llama-style models), 0 off, 1 on. MODEL.md §3. */
	int dropout;
	double memory_headroom_fraction; /* 0..TRN_HEADROOM_MAX */
	/* 0..TRN_FIXED_OVERHEAD_MAX_GIB, 0..TRN_FRAGMENTATION_MAX; defaults
	 * TRN_DEFAULT_FIXED_OVERHEAD_GIB, TRN_DEFAULT_FRAGMENTATION */
	double memory_fixed_overhead_gib, memory_fragmentation_fraction;
	/* 0: the GPU's PCIe rate (hw_spec.host_link_gbps), else
	 * TRN_DEFAULT_HOST_LINK_GBPS */
	double host_link_gbps;
	/* the share of it transfers reach; 0: TRN_HOST_LINK_EFFICIENCY
	 * (review s19b F4: a request could not state it) */
	double host_link_efficiency;
	double cpu_optimizer_gbps; /* default TRN_DEFAULT_CPU_OPTIMIZER_GBPS */
	struct hw_spec gpu;
	int gpus_per_node;	   /* 0: gpu.max_gpus_per_node */
	long gpus;		   /* fixed count, or 0 */
	long max_gpus;		   /* upper bound when gpus == 0 */
	double deadline_days;	   /* 0: none */
	double price_per_gpu_hour; /* 0: gpu.price_per_gpu_hour */
	double inter_node_gbps;	   /* 0: gpu.inter_node_gbps */
	/* Goodput of whole-run figures (MODEL.md §4, engine/goodput.h):
	 * interruptions per GPU-hour (0: none), checkpoint write rate per
	 * GPU (GB/s), restart time. trn_request_init sets the defaults. */
	double failures_per_gpu_hour;
	double checkpoint_gbps_per_gpu;
	double restart_minutes;
	/* The longest run objective cost or gpus may pick without a
	 * deadline (plans above it rank after, by time); 0: the default. */
	double max_days;
	struct trn_strategies strategies;
	/* the software stack (stack.h); trn_request_init sets the default
	 * profile */
	struct eng_stack stack;
	int top; /* plans to return, 1..TRN_MAX_TOP (default 5) */
	enum trn_objective objective;
	/* Bounds the search (budget.h); NULL: unbounded. Not owned; its
	 * units are reset and spent by trn_size. */
	struct eng_budget *budget;
};

/* The largest global batch in sequences (validation): 2^40. No number
 * below it has more than 6,720 divisors (the highly composite number
 * 963,761,198,400; OEIS A002182), so dp's candidates fit the array. */
#define TRN_MAX_GLOBAL_BATCH  (1L << 40)
#define TRN_MAX_DP_CANDIDATES 8192

/* One layout to evaluate (what a plan is made of). */
struct trn_layout {
	int tp, pp, dp, ep, cp, vp, zero;
	enum eng_recompute recompute;
	/* recompute partial: the layers of each pipeline chunk (a stage's
	 * layers / vp) run again in the backward, the first of the chunk's
	 * (Megatron-LM --recompute-num-layers with --recompute-method
	 * block); 0 otherwise. The search takes the fewest that fit. */
	int recompute_layers;
	bool sequence_parallel, flash_attention;
	/* Embedding and LM head each count as one layer of the pipeline
	 * split (Llama 3 §3.3.2; Megatron-LM --account-for-embedding-in-
	 * pipeline-split / --account-for-loss-in-pipeline-split). */
	bool stage_rebalance;
	int micro_batch;
	enum trn_offload offload;
};

struct trn_memory {
	double weights_gib, gradients_gib, optimizer_gib, activations_gib,
	    overhead_gib, total_gib, capacity_gib;
	double usable_gib; /* capacity less the request's headroom */
	double host_gib;   /* host memory per GPU when offloading */
};

struct trn_time {
	double compute_s; /* layers + LM head, all micro-batches */
	/* parts of compute_s: fused/unfused attention kernels, and the
	 * memory-bound kernels (norms, residuals, activations, rotary,
	 * softmax, loss) priced at HBM bandwidth (MODEL.md §4) */
	double attention_s;
	double memory_bound_s;
	double tp_comm_s;
	double pp_bubble_s;
	double pp_p2p_s;
	double dp_comm_exposed_s; /* incl. ZeRO-3 gathers not hidden */
	double ep_comm_s;
	double cp_comm_exposed_s;
	double optimizer_s; /* optimizer step (+ its offload transfers) */
	/* the weight-offload transfers' stalls the step waits on the host
	 * link, beyond the DP time charged in them (MODEL.md §4) */
	double host_link_exposed_s;
	double step_s;
};

struct trn_plan {
	long gpus, nodes;
	struct trn_layout layout;
	long grad_accum; /* micro-batches per step per pipeline */
	long global_batch_size;
	bool uneven_stages;
	int layers_per_stage_max;
	struct trn_memory memory;
	struct trn_time time;
	double tokens_per_s, tokens_per_s_per_gpu;
	double mfu, hfu; /* model / hardware FLOPs over datasheet peak */
	double hardware_flops_per_token;
	/* Whole-run figures with goodput (days, gpu_hours, cost), and the
	 * steady state without interruptions or checkpoints. */
	double days, gpu_hours, cost;
	double steady_days, steady_gpu_hours, steady_cost;
	struct trn_goodput {
		double fraction;	      /* steady / whole-run time */
		double mtbi_hours;	      /* job's mean time between
						 interruptions; 0: none */
		double interruptions;	      /* expected over the run */
		double checkpoint_write_s;    /* one checkpoint */
		double checkpoint_interval_s; /* work between them */
	} goodput;
	bool fits, meets_deadline;
	bool within_max_days; /* days <= the max_days that applied */
	enum eng_binding binding;
};

#define TRN_MAX_TOP	 16
#define ENG_MAX_WARNINGS 12

/* The global batch of a LoRA/QLoRA fine-tune when the request gives none:
 * 16 sequences, the QLoRA authors' Guanaco recipes for 7B to 65B
 * (artidoro/qlora scripts/finetune_guanaco_*.sh: 4 per device x 4
 * accumulation steps). Pre-training keeps ~4M tokens (MODEL.md §6). */
/* The fewest tokens of a sequence the default search leaves a context-
 * parallel rank: 4,096, the smallest chunk of the published runs that
 * chose CP (NeMo's 8K Llama 3 recipes at cp 2; Llama 3's 128K at cp 16
 * kept 8K a rank). MODEL.md §6; the answer's assumptions.context_parallel
 * states it, strategies.cp overrides it. */
#define TRN_CP_MIN_RANK_TOKENS 4096
/* The largest cp the default search offers at seq_len: a power of two up
 * to 16 that leaves each rank TRN_CP_MIN_RANK_TOKENS and splits the
 * sequence into 2 cp chunks; it offers every power of two up to it. */
long trn_cp_max_default(long seq_len);
#define TRN_FINETUNE_BATCH_SEQS 16
/* Tokens of the default global batch of rq's method: about 4M (pre-
 * training), TRN_FINETUNE_BATCH_SEQS sequences (fine-tuning); the batch
 * itself is a multiple of 64 sequences (a power of two below 64) near it,
 * or at most the run when train_tokens is less (MODEL.md §6). */
double trn_default_batch_tokens(const struct trn_request *rq);

/* Warning thresholds (MODEL.md §6). Well-run dense training reaches MFU
 * 0.35-0.55 (Megatron-LM 2021-22, Llama 2/3 reports, MosaicML): below
 * 0.20 most of a step is overhead. Doubling the data-parallel GPUs should
 * buy at least 1.5x (75 % scaling); less is money spent for little time. */
#define TRN_LOW_MFU 0.20
/* Above it, a plan is flagged as likely optimistic: the best MFU of the
 * published training runs we score is 0.642 (MosaicML llm-foundry,
 * MPT-7B on 8 A100s; docs/VALIDATION.md), and the engine is known to be
 * 10-50 % optimistic on A100 plans without recompute (its compute model
 * alone allows 0.72). A warning, not a change of the figures. */
#define TRN_HIGH_MFU		 0.65
#define TRN_MIN_DOUBLING_SPEEDUP 1.5
/* Below it, the goodput warning spells out what restarts and checkpoints
 * add: the Llama 3 405B run kept more than 90 % effective training time
 * through 466 interruptions in 54 days (Llama 3 paper §3.3.4), so a plan
 * losing more than a tenth is worse than that run and should say why. */
#define TRN_LOW_GOODPUT 0.90
/* Above this share of the step, the pipeline bubble is flagged: a fifth
 * idle is where interleaving or a larger global batch pays (Narayanan et
 * al. 2021 §2.2: the bubble (p-1)/m is kept small with m >> p). */
#define TRN_HIGH_BUBBLE 0.20
#define ENG_WARNING_LEN 480

struct trn_tmax_check {
	double t_max;	    /* 6h / (B * peak / bw) */
	double peak_tflops; /* the rate used: datasheet dense for precision */
	double link_gbps;   /* intra-node, one direction */
	char rate_name[64]; /* e.g. "bf16 dense (FP32 accumulate)" */
	int tp_of_best_plan;
	bool ok;
};

struct trn_result {
	struct model_params params;
	double model_flops_per_token, model_flops_total;
	double hardware_flops_per_token, hardware_flops_total; /* best plan */
	long global_batch_size; /* resolved, sequences */
	long min_gpus; /* fewest GPUs of any plan that fits, CPU offload
			  included (MODEL.md §6) */
	long min_gpus_no_offload; /* fewest GPUs of a plan that fits with
				     no offload; 0 when none does within
				     the limits (or offload was required) */
	int n_plans;
	struct trn_plan plans[TRN_MAX_TOP];
	struct trn_tmax_check t_max;
	enum eng_binding binding; /* of the best plan */
	bool dropout;		  /* as resolved (trn_request.dropout) */
	double memory_headroom_fraction;
	int n_warnings;
	char warnings[ENG_MAX_WARNINGS][ENG_WARNING_LEN];
	struct hw_basis basis;
	long layouts_evaluated;
	double checkpoint_gib; /* one checkpoint: weights + optimizer state
				  (LoRA: adapters) */
	double max_days;       /* applied (objective cost/gpus, no deadline),
				  or 0 */
};

/* Defaults: bf16, adamw, bf16 gradients, full, rank 16, top 5, time. */
void trn_request_init(struct trn_request *rq);

/* 0 when rq's stack runs on rq's GPU type, else ENG_EUNSUPPORTED with
 * err naming `stack`: cuDNN and FlashAttention-3 attention are CUDA
 * kernels, which a type without a CUDA compute capability (AMD's) runs
 * not. trn_size sizes such a request anyway, with a warning (a what-if);
 * compare does not rank it (MODEL.md §8, review s24b F2). */
int trn_runs_on(const struct trn_request *rq, struct eng_error *err);

/* Validates, searches, ranks. 0, or ENG_EINVAL / ENG_EINFEASIBLE /
 * ENG_EUNSUPPORTED with err naming the request field. */
int trn_size(const struct trn_request *rq, struct trn_result *res,
	     struct eng_error *err);

/* Evaluates one layout for rq (memory and time, fits or not); global batch
 * and divisibility are checked. Used for what-if answers and tests. */
int trn_evaluate(const struct trn_request *rq, const struct trn_layout *lay,
		 struct trn_plan *plan, struct eng_error *err);

/* Bytes per parameter of the optimizer state (incl. fp32 master weights
 * when the weights are 16-bit), for weight bytes wb; h = hidden size (for
 * Adafactor's factored moments). docs/MODEL.md §3; ZeRO (Rajbhandari et
 * al. 2020) §3 for the 16 B/param of mixed-precision Adam. */
double trn_optimizer_bytes_per_param(enum trn_optimizer o, double wb, double h);

/* Bytes one dequantisation of a frozen base weight moves per parameter
 * and GEMM pass: QLoRA reads NF4 + scales and writes 16-bit (0.5 +
 * 0.127/8 + 2; MODEL.md §4a); 0 for the other methods. */
double trn_dequant_bytes_per_param(enum trn_method m);

/* The host link's datasheet rate per GPU and direction, GB/s, the request
 * applies: its host_link_gbps, else the GPU's, else the default. */
double trn_host_link_gbps(const struct trn_request *rq);
/* The share of it offload transfers reach: the request's, else
 * TRN_HOST_LINK_EFFICIENCY. */
double trn_host_link_efficiency(const struct trn_request *rq);

/* Bytes the memory-bound kernels around LoRA adapters move per value
 * (MODEL.md §4a "LoRA adapters"): per adapter output value (scale, add)
 * and per adapter input value (the input gradients' sum; with fp32
 * adapters, the input's casts), forward and backward, and saved per input
 * value. fp32_cast: the profile's lora_fp32_adapters applied (method lora
 * in a 16-bit precision). All 0 for method full. */
struct trn_adapter_bytes {
	bool fp32_cast;
	double out_fwd, out_bwd, in_fwd, in_bwd, in_saved;
};
void trn_adapter_bytes_of(const struct trn_request *rq,
			  struct trn_adapter_bytes *out);

/* What eager modules under autocast with fp32 parameters save beyond the
 * fused activation count, per token per layer at t = 1 (MODEL.md §3): the
 * h-wide part (norms' fp32 input and output, autocast's per-consumer
 * copies; 18h with a gated MLP, 16h without), the f-wide part (the SwiGLU's
 * silu output, 2f), and the stored layer input's extra under full
 * recompute (the fp32 residual, 2h). All 0 unless the profile's
 * autocast_fp32_params applies: method full in bf16, fp16 or fp8. And
 * autocast's cast of each fp32 weight to 16-bit per forward pass, bytes a
 * parameter (read 4 + write 2; bf16 and fp16 only: FP8 GEMMs cast their
 * own). */
struct trn_amp_extra {
	double h_bytes, f_bytes, input_bytes;
	double weight_cast_bytes;
};
void trn_amp_extra_of(const struct trn_request *rq, struct trn_amp_extra *out);

#endif

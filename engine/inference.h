/* inference.h - size a serving deployment (issue 4, docs/MODEL.md §7).
 *
 * Usage: inf_request_init(&rq); fill; inf_size(&rq, &res, &err). Pure, no
 * I/O, no globals, no allocation; thread-safe.
 */
#ifndef GPUSIZER_ENGINE_INFERENCE_H
#define GPUSIZER_ENGINE_INFERENCE_H

#include <stdbool.h>

#include "errors.h"
#include "hw.h"
#include "model.h"
#include "training.h" /* enum eng_binding, ENG_MAX_WARNINGS */

enum inf_load_kind {
	INF_LOAD_NONE, /* the operating point is capacity (max throughput) */
	INF_LOAD_REQUESTS_PER_S,
	INF_LOAD_CONCURRENT_SEQUENCES,
	INF_LOAD_OUTPUT_TOKENS_PER_S,
	INF_LOAD_COUNT
};

/* Serving engines whose memory and scheduling rules the engine knows
 * (docs/MODEL.md §7, each default cited there). */
enum inf_serving_engine {
	INF_SERVING_VLLM,
	INF_SERVING_TRTLLM,
	INF_SERVING_SGLANG,
	INF_SERVING_GENERIC,
	INF_SERVING_COUNT
};

/* How the KV-cache pool is sized: a fraction of the GPU's total memory
 * (weights, activations and KV inside it: vLLM gpu_memory_utilization,
 * SGLang mem_fraction_static) or a fraction of what is free once weights
 * and activations are loaded (TensorRT-LLM free_gpu_memory_fraction). */
enum inf_kv_reserve { INF_KV_OF_TOTAL, INF_KV_OF_FREE, INF_KV_RESERVE_COUNT };

/* One serving engine's rules as applied to a plan (profile defaults with
 * the request's overrides). */
struct inf_serving {
	enum inf_serving_engine engine;
	enum inf_kv_reserve kv_reserve;
	double memory_fraction;
	long max_num_seqs;	     /* sequences per iteration; 0 = memory */
	long max_num_batched_tokens; /* tokens per iteration; 0 = no cap */
	bool chunked_prefill;
	/* the budget was raised to the prompt (TensorRT-LLM without chunked
	 * context: an engine built with max_num_tokens >= max_input_len) */
	bool budget_is_prompt;
	/* true: admission reserves KV for prompt + every output token
	 * (TensorRT-LLM GUARANTEED_NO_EVICT); false: blocks on demand, so a
	 * sequence holds prompt + half its output on average (PagedAttention,
	 * SGLang's radix cache). */
	bool kv_full_output;
	/* Decode steps per scheduler call (vLLM --num-scheduler-steps, multi-
	 * step scheduling): a request that arrives waits for the running
	 * window of this many steps before its prefill. 1 in every
	 * profile's default (MODEL.md §7.3). */
	int scheduler_steps;
	/* The step model's constants as applied (inf_request's overrides
	 * or the defaults below), and whether the request set any. */
	double kernel_launch_us, kernels_per_layer, workspace_gib;
	bool overheads_given;
};

/* Decode launches ~10 kernels per layer (norms, QKV, rope, attention, O,
 * residual, norm, gate/up, act, down), each with ~5 us of launch and tail
 * latency even under CUDA graphs; this is why batch-1 decode reaches only
 * 50-60 % of roofline bandwidth (Databricks MBU; MODEL.md §7). */
#define INF_KERNELS_PER_LAYER 10.0
#define INF_KERNEL_LAUNCH_US  5.0
/* Runtime workspace: CUDA context, cuBLAS/NCCL buffers (MODEL.md §7). */
#define INF_WORKSPACE_GIB 0.5

/* What limits a replica's capacity. */
enum inf_limit {
	INF_LIMIT_KV_CACHE,
	INF_LIMIT_MAX_NUM_SEQS,
	INF_LIMIT_MAX_BATCH,
	INF_LIMIT_TPOT,
	INF_LIMIT_TTFT,
	/* the token budget per iteration (max_num_batched_tokens) caps the
	 * decode batch under chunked prefill */
	INF_LIMIT_MAX_NUM_BATCHED_TOKENS,
	/* the prompts' compute: past half the replica's time in prefill,
	 * more sequences (KV, a larger cap) buy less than faster prefill */
	INF_LIMIT_PREFILL,
	INF_LIMIT_COUNT
};

struct inf_request {
	struct model_arch model;
	enum eng_dtype weight_precision; /* fp32|bf16|fp16|fp8|int8|int4 */
	enum eng_dtype kv_precision;	 /* ENG_DTYPE_COUNT: default (16-bit,
					    fp8 with fp8 weights) */
	long prompt_tokens, output_tokens;
	enum inf_load_kind load_kind;
	double load_value;
	double ttft_ms, tpot_ms; /* targets; 0 = none */
	enum inf_serving_engine serving;
	/* Overrides of the serving profile; 0 (chunked_prefill: -1) = the
	 * profile's value. memory_utilization is the profile's memory
	 * fraction (of total or of free memory, as the profile reserves). */
	double memory_utilization;
	long max_batch; /* max_num_seqs */
	long max_num_batched_tokens;
	int chunked_prefill;
	int scheduler_steps; /* 0: the profile's (1); 1..INF_MAX_SCHED_STEPS */
	/* Replicas are added before load / capacity passes this; 0 = the
	 * default (0.8, MODEL.md §7). */
	double max_utilization;
	/* Overrides of the step model's defaults (review s18b F2): the
	 * launch and tail gap of each kernel (us), kernels per layer and
	 * decode step, and the runtime's fixed workspace (GiB); 0 = the
	 * default (INF_KERNEL_LAUNCH_US ...), < 0 = none at all. */
	double kernel_launch_us, kernels_per_layer, workspace_gib;
	struct hw_spec gpu;
	int gpus_per_node; /* 0: gpu.max_gpus_per_node */
	long max_gpus;	   /* 0: no limit */
	double price_per_gpu_hour;
	int tp;	 /* 0: searched; else the pinned tensor-parallel
		    degree (a power of two dividing heads) */
	int top; /* default 5 */
};

/* One replica at one load: the continuous-batching steady state. */
struct inf_point {
	double requests_per_s;	    /* arrivals per replica */
	double batch;		    /* mean sequences in flight (Little) */
	double decode_batch;	    /* mean sequences decoding */
	double ttft_ms, tpot_ms;    /* means */
	double output_tokens_per_s; /* delivered: requests_per_s x output */
	double prefill_share;	    /* GPU time spent on prefill */
	double cost_per_million_output_tokens;
	bool stable; /* false: the load exceeds what the replica sustains */
};

struct inf_plan {
	int tp, pp;
	/* at the stated load, per replica (capacity when no load) */
	double batch; /* mean sequences in flight */
	double decode_batch;
	double requests_per_s;
	double utilization; /* load / capacity */
	double ttft_ms, tpot_ms;
	double output_tokens_per_s;	  /* delivered per replica */
	double total_output_tokens_per_s; /* all replicas */
	long replicas, gpus;
	double cost_per_hour, cost_per_million_output_tokens; /* at load */
	/* one request alone on an idle replica: its prefill and every
	 * output token's decode step at batch 1, ms (no queueing: the
	 * replica's speed on this model, which the compare ranks by when no
	 * load is given) */
	double latency_alone_ms;
	struct inf_point capacity; /* the most one replica sustains within
				      the targets */
	enum inf_limit capacity_limit;
	double weights_gib, kv_cache_gib, workspace_gib, total_gib,
	    usable_gib;	    /* per GPU */
	long max_batch_fit; /* sequences whose KV fits in memory */
	double mbu;	    /* decode bandwidth utilisation at the load */
	enum eng_binding
	    binding; /* memory | scheduler | latency: capacity's bound */
	enum eng_binding decode_bound; /* memory_bandwidth | compute */
	bool meets_targets;
	struct inf_serving serving;
};

#define INF_MAX_TOP		    16
#define INF_DEFAULT_MAX_UTILIZATION 0.8
/* Prefill utilisation at which a replica serving one output token (no
 * decode batch to cap it) is saturated when no target binds. M/D/1 waits
 * grow as rho / (1 - rho), so the TTFT there is set by this value (about
 * 500 prefill times at 0.999), not by the workload: the answer says so,
 * and a ttft_ms target sizes for latency instead (review s16c F11). */
#define INF_SATURATION_UTILISATION 0.999
/* Longest prompt and output the engine sizes (tokens). */
#define INF_MAX_TOKENS 10000000L
/* vLLM's multi-step scheduling ran 1 to a few tens of steps per call */
#define INF_MAX_SCHED_STEPS 64
/* Most replicas one answer may need (a load beyond is refused). */
#define INF_MAX_REPLICAS 1000000000L
/* A fleet above this many GPUs is sized but flagged when the request set
 * no max_gpus: more than Llama 3 405B's whole training cluster (16,384
 * H100s; Dubey et al. 2024, arXiv:2407.21783 §3.3), so a mistyped load
 * (per day for per second, say) does not come back as a plain answer. */
#define INF_FLEET_WARN_GPUS 16384L

struct inf_result {
	struct model_params params;
	double weights_bytes;	      /* whole model, incl. scales */
	double kv_bytes_per_token;    /* whole model (tp = 1) */
	double kv_bytes_per_sequence; /* prompt + output */
	int min_tp;		      /* smallest tp (x pp) that fits */
	double max_utilization;	      /* the ceiling applied */
	int n_plans;
	struct inf_plan plans[INF_MAX_TOP];
	int n_warnings;
	char warnings[ENG_MAX_WARNINGS][ENG_WARNING_LEN];
	struct hw_basis basis;
	/* the fused-attention rate prefill and decode attention run at
	 * (TFLOP/s): FlashAttention-2 class, forward, the model's head
	 * dimension (attention.h); the share of the peak it is */
	double attn_tflops, attn_efficiency;
};

void inf_request_init(struct inf_request *rq);
/* 0 when rq's serving software runs on rq's GPU type, else
 * ENG_EUNSUPPORTED with err naming `serving`: TensorRT-LLM builds CUDA
 * engines, so a type without a CUDA compute capability (AMD's) runs none.
 * inf_size sizes such a request anyway, with a warning (a what-if);
 * compare does not rank it (MODEL.md §8, review s24b F2). */
int inf_runs_on(const struct inf_request *rq, struct eng_error *err);
int inf_size(const struct inf_request *rq, struct inf_result *res,
	     struct eng_error *err);

/* One (tp, pp) replica with a static batch of `batch` sequences (every
 * sequence prefills together, then decodes together: the setting of
 * static-batch benchmarks such as TensorRT-LLM's gptSessionBenchmark;
 * MODEL.md §7). Fills *p even when the batch does not fit
 * (p->max_batch_fit says). Continuous batching at a load is inf_size's. */
int inf_evaluate(const struct inf_request *rq, int tp, int pp, long batch,
		 struct inf_plan *p, struct eng_error *err);

/* Weight bytes of the whole model at dtype w, incl. quantisation scales;
 * embeddings and LM head stay 16-bit under int8/int4/fp8 (MODEL.md §7). */
double inf_weight_bytes(const struct model_arch *m, enum eng_dtype w);

/* The profile's rules for a replica of tensor-parallel degree tp, with
 * the request's overrides applied. */
void inf_serving_resolve(const struct inf_request *rq, int tp,
			 struct inf_serving *out);
/* Where a profile's defaults come from (documentation or code, cited). */
const char *inf_serving_source(enum inf_serving_engine e);

const char *inf_load_kind_name(enum inf_load_kind k);
const char *inf_serving_name(enum inf_serving_engine e);
/* 0 and *out on a known name ("vllm", "tensorrt-llm", "sglang",
 * "generic"), else -1. */
int inf_serving_parse(const char *name, enum inf_serving_engine *out);
const char *inf_kv_reserve_name(enum inf_kv_reserve r);
const char *inf_limit_name(enum inf_limit l);

/* The KV cache's dtype: the request's kv_cache_precision, else fp8 with
 * fp8 weights (but 16-bit under vllm and sglang, whose "auto" is the
 * activations' dtype), fp32 with fp32 weights, else fp16. */
enum eng_dtype inf_kv_dtype(const struct inf_request *rq);

/* The dtype a request's GEMMs run in: fp8 for fp8 weights, bf16 for bf16,
 * tf32 (where the part has it) for fp32; fp16, int8 and int4 weights run
 * fp16 where the part has it, else bf16. */
enum eng_dtype inf_compute_dtype(const struct inf_request *rq);

#endif

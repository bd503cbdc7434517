/* inference_serving.c - what a serving replica holds: weight and KV
 * dtypes, the serving engines' profiles (vLLM, TensorRT-LLM, SGLang,
 * generic) and the per-GPU memory of a (tp, pp) replica under a profile
 * (docs/MODEL.md §7). Shared with the other parts of the inference engine
 * through inference_int.h.
 */
#include "inference_int.h"

#include <math.h>
#include <string.h>

static const char *const load_names[INF_LOAD_COUNT] = {
    "none", "requests_per_s", "concurrent_sequences", "output_tokens_per_s"};

const char *inf_load_kind_name(enum inf_load_kind k)
{
	return (unsigned)k < INF_LOAD_COUNT ? load_names[k] : "?";
}

/* Weight storage per parameter and quantisation scale overhead: int4 with
 * group size 128 and fp16 scale + zero (AWQ/GPTQ) adds 4 B per 128. */
const struct inf_weight_format inf_weight_table[ENG_DTYPE_COUNT] = {
    [ENG_FP32] = {true, 0.0}, [ENG_FP16] = {true, 0.0},
    [ENG_BF16] = {true, 0.0}, [ENG_FP8] = {true, 0.0},
    [ENG_INT8] = {true, 0.0}, [ENG_INT4] = {true, 4.0 / 128.0},
};

double inf_weight_bytes(const struct model_arch *m, enum eng_dtype w)
{
	struct model_params p;
	double b = eng_dtype_bytes(w), side;
	double eb = w == ENG_FP32 ? 4.0 : 2.0; /* embeddings, LM head */

	model_count_params(m, &p);
	side = p.embedding + p.lm_head;
	if ((unsigned)w >= ENG_DTYPE_COUNT)
		return 0.0;
	return (p.total - side) * (b + inf_weight_table[w].scale_bytes) +
	       side * eb;
}

enum eng_dtype inf_kv_dtype(const struct inf_request *rq)
{
	if (rq->kv_precision < ENG_DTYPE_COUNT)
		return rq->kv_precision;
	/* FP8 weights quantise the KV cache too, except where the engine's
	 * default says otherwise: vLLM's and SGLang's kv_cache_dtype "auto"
	 * is the model's activation dtype, 16-bit for FP8 checkpoints (an FP8
	 * KV there is --kv-cache-dtype fp8, which a request states as
	 * kv_cache_precision). TensorRT-LLM's FP8 checkpoints (ModelOpt,
	 * kv_cache_quant_algo FP8) and the generic profile keep FP8. */
	if (rq->weight_precision == ENG_FP8 &&
	    rq->serving != INF_SERVING_VLLM &&
	    rq->serving != INF_SERVING_SGLANG)
		return ENG_FP8;
	if (rq->weight_precision == ENG_FP32)
		return ENG_FP32;
	return ENG_FP16;
}

/* Dtype the GEMMs run in: FP8 on FP8 tensor cores; int8/int4 weight-only
 * quantisation dequantises into 16-bit GEMMs; fp32 serves on TF32 tensor
 * cores (prefill runs on tensor cores, docs/MODEL.md §7.2). */
enum eng_dtype inf_compute_dtype(const struct inf_request *rq)
{
	switch (rq->weight_precision) {
	case ENG_FP8:
		return ENG_FP8;
	case ENG_FP32:
		return rq->gpu.peak_tflops[ENG_TF32] > 0 ? ENG_TF32 : ENG_FP32;
	case ENG_BF16:
		return ENG_BF16;
	default:
		return rq->gpu.peak_tflops[ENG_FP16] > 0 ? ENG_FP16 : ENG_BF16;
	}
}

/* ---- serving profiles ------------------------------------------------ */

static const char *const serving_names[INF_SERVING_COUNT] = {
    "vllm", "tensorrt-llm", "sglang", "generic"};
static const char *const kv_reserve_names[INF_KV_RESERVE_COUNT] = {
    "fraction_of_total", "fraction_of_free"};
static const char *const limit_names[INF_LIMIT_COUNT] = {
    "kv_cache", "max_num_seqs",		  "max_batch", "tpot_ms",
    "ttft_ms",	"max_num_batched_tokens", "prefill"};

/* Each engine's defaults, from its own code (MODEL.md §7 cites each):
 * - vLLM V1 (vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults and
 *   CacheConfig): gpu_memory_utilization 0.9 of total memory; OpenAI API
 *   server max_num_seqs 1024 and max_num_batched_tokens 8192 on GPUs with
 *   >= 70 GiB other than A100, else 256 and 2048; chunked prefill on;
 *   PagedAttention allocates KV blocks on demand.
 * - TensorRT-LLM (tensorrt_llm/llmapi/llm_args.py KvCacheConfig,
 *   BuildConfig): free_gpu_memory_fraction 0.9 of the memory left after
 *   weights and activations; max_batch_size 2048; max_num_tokens 8192;
 *   chunked context off; capacity scheduler GUARANTEED_NO_EVICT reserves
 *   KV for the whole output at admission.
 * - SGLang (python/sglang/srt/server_args.py): mem_fraction_static of
 *   total memory for weights + KV pool, 0.88 / 0.87 / 0.85 / 0.81 / 0.79
 *   at tp 1 / 2 / 4 / 8 / 16; chunked_prefill_size 8192 (2048 below 25 GB);
 *   max_running_requests derived from the pool.
 * - generic: this engine before serving profiles: 0.9 of total, KV for
 *   prompt + output, no sequence or token cap, no chunking. */
static const struct {
	enum inf_kv_reserve kv_reserve;
	double memory_fraction;
	bool chunked_prefill, kv_full_output;
	const char *source;
} profile_table[INF_SERVING_COUNT] = {
    [INF_SERVING_VLLM] = {INF_KV_OF_TOTAL, 0.9, true, false,
			  "vLLM V1 defaults (vllm/engine/arg_utils.py "
			  "get_batch_defaults, CacheConfig)"},
    [INF_SERVING_TRTLLM] = {INF_KV_OF_FREE, 0.9, false, true,
			    "TensorRT-LLM LLM API defaults "
			    "(tensorrt_llm/llmapi/llm_args.py KvCacheConfig, "
			    "BuildConfig)"},
    [INF_SERVING_SGLANG] = {INF_KV_OF_TOTAL, 0.88, true, false,
			    "SGLang defaults (python/sglang/srt/"
			    "server_args.py)"},
    [INF_SERVING_GENERIC] = {INF_KV_OF_TOTAL, 0.9, false, true,
			     "gpusizer generic: 0.9 of memory, static KV "
			     "reservation, no caps"},
};

const char *inf_serving_name(enum inf_serving_engine e)
{
	return (unsigned)e < INF_SERVING_COUNT ? serving_names[e] : "?";
}

int inf_serving_parse(const char *name, enum inf_serving_engine *out)
{
	for (int i = 0; name && i < INF_SERVING_COUNT; i++)
		if (strcmp(name, serving_names[i]) == 0) {
			*out = (enum inf_serving_engine)i;
			return 0;
		}
	return -1;
}

const char *inf_kv_reserve_name(enum inf_kv_reserve r)
{
	return (unsigned)r < INF_KV_RESERVE_COUNT ? kv_reserve_names[r] : "?";
}

const char *inf_limit_name(enum inf_limit l)
{
	return (unsigned)l < INF_LIMIT_COUNT ? limit_names[l] : "?";
}

const char *inf_serving_source(enum inf_serving_engine e)
{
	return (unsigned)e < INF_SERVING_COUNT ? profile_table[e].source : "?";
}

static bool big_non_a100(const struct hw_spec *g)
{
	char lower[sizeof(g->name)];
	size_t i;

	for (i = 0; i + 1 < sizeof(lower) && g->name[i]; i++)
		lower[i] = (char)(g->name[i] >= 'A' && g->name[i] <= 'Z'
				      ? g->name[i] - 'A' + 'a'
				      : g->name[i]);
	lower[i] = '\0';
	return g->memory_gib >= 70.0 && !strstr(lower, "a100");
}

/* SGLang's mem_fraction_static by tensor-parallel size (server_args.py,
 * above), largest first: the first row whose min_tp the tp reaches. The
 * last row, tp 1, is the profile table's default. */
static const struct {
	int min_tp;
	double fraction;
} sglang_fractions[] = {{16, 0.79}, {8, 0.81}, {4, 0.85}, {2, 0.87}};

static double sglang_fraction(int tp)
{
	for (size_t i = 0;
	     i < sizeof(sglang_fractions) / sizeof(sglang_fractions[0]); i++)
		if (tp >= sglang_fractions[i].min_tp)
			return sglang_fractions[i].fraction;
	return profile_table[INF_SERVING_SGLANG].memory_fraction;
}

/* A request's override: 0 the default, below 0 none at all. */
static double overhead_of(double given, double dflt)
{
	return given > 0.0 ? given : given < 0.0 ? 0.0 : dflt;
}

void inf_serving_resolve(const struct inf_request *rq, int tp,
			 struct inf_serving *out)
{
	enum inf_serving_engine e = (unsigned)rq->serving < INF_SERVING_COUNT
					? rq->serving
					: INF_SERVING_VLLM;

	memset(out, 0, sizeof(*out));
	out->engine = e;
	out->kv_reserve = profile_table[e].kv_reserve;
	out->memory_fraction = profile_table[e].memory_fraction;
	out->chunked_prefill = profile_table[e].chunked_prefill;
	out->kv_full_output = profile_table[e].kv_full_output;
	out->kernel_launch_us =
	    overhead_of(rq->kernel_launch_us, INF_KERNEL_LAUNCH_US);
	out->kernels_per_layer =
	    overhead_of(rq->kernels_per_layer, INF_KERNELS_PER_LAYER);
	out->workspace_gib = overhead_of(rq->workspace_gib, INF_WORKSPACE_GIB);
	out->overheads_given = rq->kernel_launch_us != 0.0 ||
			       rq->kernels_per_layer != 0.0 ||
			       rq->workspace_gib != 0.0;
	switch (e) {
	case INF_SERVING_VLLM:
		out->max_num_seqs = big_non_a100(&rq->gpu) ? 1024 : 256;
		out->max_num_batched_tokens =
		    big_non_a100(&rq->gpu) ? 8192 : 2048;
		break;
	case INF_SERVING_TRTLLM:
		out->max_num_seqs = 2048;
		out->max_num_batched_tokens = 8192;
		break;
	case INF_SERVING_SGLANG:
		out->memory_fraction = sglang_fraction(tp);
		out->max_num_batched_tokens =
		    rq->gpu.memory_gib * GIB < 25e9 ? 2048 : 8192;
		break;
	default:
		break;
	}
	if (rq->memory_utilization > 0)
		out->memory_fraction = rq->memory_utilization;
	if (rq->max_batch > 0)
		out->max_num_seqs = rq->max_batch;
	if (rq->max_num_batched_tokens > 0)
		out->max_num_batched_tokens = rq->max_num_batched_tokens;
	if (rq->chunked_prefill >= 0)
		out->chunked_prefill = rq->chunked_prefill != 0;
	if (out->max_num_batched_tokens <= 0)
		out->chunked_prefill = false; /* no budget to chunk to */
	/* vLLM without chunking schedules a prompt whole: its budget becomes
	 * max(max_model_len, 2048) unless given (SchedulerConfig), taken
	 * here as the model's context or the request's length, whichever is
	 * longer; SGLang is taken the same way (review s16c F1: a 4K prompt
	 * on A100 was refused under vLLM's chunked budget of 2,048). */
	if (!out->chunked_prefill && rq->max_num_batched_tokens <= 0 &&
	    (e == INF_SERVING_VLLM || e == INF_SERVING_SGLANG)) {
		long len = rq->prompt_tokens + rq->output_tokens;
		long ctx =
		    rq->model.max_seq_len > len ? rq->model.max_seq_len : len;
		out->max_num_batched_tokens = ctx > 2048 ? ctx : 2048;
	}
	/* TensorRT-LLM without chunked context needs max_num_tokens >=
	 * max_input_len (trtllm-build; trtllm-bench sizes both to its
	 * dataset): a prompt longer than the default budget is served by an
	 * engine built for it, so the budget is the prompt unless one is
	 * given (its published 20,000-token runs ran so) */
	if (!out->chunked_prefill && rq->max_num_batched_tokens <= 0 &&
	    e == INF_SERVING_TRTLLM &&
	    rq->prompt_tokens > out->max_num_batched_tokens) {
		out->max_num_batched_tokens = rq->prompt_tokens;
		out->budget_is_prompt = true;
	}
	out->scheduler_steps =
	    rq->scheduler_steps > 0 ? rq->scheduler_steps : 1;
}

/* Per-GPU memory of a (tp, pp) replica under the serving profile. */
void inf_memory_of(const struct ictx *c, int tp, int pp,
		   const struct inf_serving *sv, struct mem_plan *m)
{
	const struct inf_request *rq = c->rq;
	double side = pp > 1 ? c->W_side / 2.0 : c->W_side;
	double kv_tok =
	    model_kv_bytes_per_token(&rq->model, c->kvB, tp) / (double)pp;
	double I = (double)rq->prompt_tokens, O = (double)rq->output_tokens;
	/* Activations of the largest iteration: the token budget, or the
	 * whole prompt when prefill is not chunked; hidden states and the
	 * FFN intermediate in 16-bit (the profiling run vLLM and SGLang do,
	 * TensorRT-LLM's max_num_tokens buffers). */
	double act_tokens = sv->max_num_batched_tokens > 0
				? (double)sv->max_num_batched_tokens
				: I;
	if (!sv->chunked_prefill)
		act_tokens = fmax(act_tokens, I);

	memset(m, 0, sizeof(*m));
	m->weights = (c->W_layers / (double)pp + side) / (double)tp;
	m->workspace =
	    sv->workspace_gib * GIB +
	    act_tokens * (8.0 * c->h + 4.0 * c->f_width / (double)tp);
	if (sv->kv_reserve == INF_KV_OF_FREE) {
		double free_b = c->capacity - m->weights - m->workspace;
		m->kv_room = free_b > 0 ? sv->memory_fraction * free_b : 0.0;
		m->usable = m->weights + m->workspace + m->kv_room;
	} else {
		m->usable = c->capacity * sv->memory_fraction;
		m->kv_room = m->usable - m->weights - m->workspace;
	}
	m->kv_seq = kv_tok * (sv->kv_full_output ? I + O : I + O / 2.0);
	m->fit = m->kv_room > 0 ? (long)floor(m->kv_room / m->kv_seq) : 0;
}

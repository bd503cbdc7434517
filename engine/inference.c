/* inference.c - serving sizing: memory, the step-time model, and the
 * continuous-batching operating point at a load (docs/MODEL.md §7). */
#include "inference.h"

#include "collective.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0
/* Runtime workspace: CUDA context, cuBLAS/NCCL buffers (MODEL.md §7). */
#define WORKSPACE_FIXED_BYTES (0.5 * GIB)
/* Decode launches ~10 kernels per layer (norms, QKV, rope, attention, O,
 * residual, norm, gate/up, act, down), each with ~5 us of launch and tail
 * latency even under CUDA graphs; this is why batch-1 decode reaches only
 * 50-60 % of roofline bandwidth (Databricks MBU; MODEL.md §7). */
#define KERNELS_PER_LAYER 10.0
#define KERNEL_OVERHEAD_S 5e-6
/* Pipeline stage hand-off: one point-to-point send (NCCL, one hop). */
#define P2P_LATENCY_S 10e-6
/* Causal attention computes half of the score blocks (flash kernels skip
 * the masked ones), as in the training engine (MODEL.md §4). */
#define CAUSAL_FRACTION 0.5

static const char *const load_names[INF_LOAD_COUNT] = {
    "none", "requests_per_s", "concurrent_sequences", "output_tokens_per_s"};

const char *inf_load_kind_name(enum inf_load_kind k)
{
	return (unsigned)k < INF_LOAD_COUNT ? load_names[k] : "?";
}

/* Weight storage per parameter and quantisation scale overhead: int4 with
 * group size 128 and fp16 scale + zero (AWQ/GPTQ) adds 4 B per 128. */
static const struct {
	bool allowed;
	double scale_bytes;
} weight_table[ENG_DTYPE_COUNT] = {
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
	return (p.total - side) * (b + weight_table[w].scale_bytes) + side * eb;
}

static enum eng_dtype kv_dtype(const struct inf_request *rq)
{
	if (rq->kv_precision < ENG_DTYPE_COUNT)
		return rq->kv_precision;
	if (rq->weight_precision == ENG_FP8)
		return ENG_FP8;
	if (rq->weight_precision == ENG_FP32)
		return ENG_FP32;
	return ENG_FP16;
}

/* Dtype the GEMMs run in: FP8 on FP8 tensor cores; int8/int4 weight-only
 * quantisation dequantises into 16-bit GEMMs; fp32 serves on TF32 tensor
 * cores (prefill runs on tensor cores, docs/MODEL.md §7.2). */
static enum eng_dtype compute_dtype(const struct inf_request *rq)
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
    "kv_cache", "max_num_seqs", "max_batch", "tpot_ms", "ttft_ms"};

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

static double sglang_fraction(int tp)
{
	return tp >= 16	 ? 0.79
	       : tp >= 8 ? 0.81
	       : tp >= 4 ? 0.85
	       : tp >= 2 ? 0.87
			 : 0.88;
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
	out->scheduler_steps =
	    rq->scheduler_steps > 0 ? rq->scheduler_steps : 1;
}

/* ---- the replica model ------------------------------------------------ */

struct ictx {
	const struct inf_request *rq;
	struct model_params P;
	double W, W_side, W_layers, W_routed; /* bytes */
	double kvB, R, R_attn, hbm, intra, inter, capacity, price;
	double h, L, f_width;
	int gpn;
};

static void ictx_init(struct ictx *c, const struct inf_request *rq)
{
	const struct model_arch *m = &rq->model;
	double b = eng_dtype_bytes(rq->weight_precision) +
		   weight_table[rq->weight_precision].scale_bytes;

	memset(c, 0, sizeof(*c));
	c->rq = rq;
	model_count_params(m, &c->P);
	c->W = inf_weight_bytes(m, rq->weight_precision);
	c->W_side = c->W - (c->P.total - c->P.embedding - c->P.lm_head) * b;
	c->W_layers = c->W - c->W_side;
	c->W_routed = c->P.routed_expert * b;
	c->kvB = eng_dtype_bytes(kv_dtype(rq));
	c->R = hw_gemm_rate(&rq->gpu, compute_dtype(rq)).value * 1e12;
	/* attention runs in 16-bit fused kernels at the training engine's
	 * forward rate (hw_attn_tflops, MODEL.md §5), FP8 recipes included */
	c->R_attn = hw_attn_tflops(&rq->gpu, false) * 1e12;
	if (!(c->R_attn > 0))
		c->R_attn = c->R;
	c->hbm = hw_hbm_rate(&rq->gpu).value * 1e9;
	c->intra = hw_intra_rate(&rq->gpu).value * 1e9;
	c->capacity = rq->gpu.memory_gib * GIB;
	c->price = rq->price_per_gpu_hour > 0 ? rq->price_per_gpu_hour
					      : rq->gpu.price_per_gpu_hour;
	c->h = (double)m->hidden_size;
	c->L = (double)m->layers;
	c->f_width = m->moe.experts > 0 ? (double)m->moe.expert_ffn_hidden_size
					: (double)m->ffn_hidden_size;
	c->gpn = rq->gpus_per_node > 0 ? rq->gpus_per_node
				       : rq->gpu.max_gpus_per_node;
	if (c->gpn <= 0)
		c->gpn = 1;
	c->inter = hw_inter_rate(&rq->gpu, 0.0, c->gpn).value * 1e9;
}

/* Weight bytes one tp-rank reads per decode step, over all its pipeline
 * stages. MoE: only experts some token of the batch routes to are read:
 * E * (1 - (1 - k/E)^b) of them per layer (uniform routing). */
static double weights_read(const struct ictx *c, int tp, double b)
{
	const struct model_moe *moe = &c->rq->model.moe;
	double w = c->W / (double)tp;

	if (moe->experts > 0 && c->W_routed > 0) {
		double E = (double)moe->experts, k = (double)moe->top_k;
		double touched = 1.0 - pow(1.0 - k / E, b);
		w -= c->W_routed * (1.0 - touched) / (double)tp;
	}
	return w;
}

/* Per step: kernel launch/tail overhead, 2 TP all-reduces of the hidden
 * states per layer (NCCL's model, engine/collective.h), and the stage
 * hand-offs of a pipeline across nodes. */
static double fixed_overhead(const struct ictx *c, int tp, int pp,
			     double tokens)
{
	double bytes = tokens * c->h * 2.0;
	double o = c->L * KERNELS_PER_LAYER * KERNEL_OVERHEAD_S;

	o += 2.0 * c->L *
	     coll_time_s(COLL_AR, bytes, tp, 1.0, c->intra,
			 c->rq->gpu.intra_node_link);
	if (pp > 1)
		o += (pp - 1) * (P2P_LATENCY_S +
				 bytes / (c->inter > 0 ? c->inter : c->intra));
	return o;
}

/* Prefill of n_seq prompts of I tokens on tensor cores. GEMMs and
 * attention are separate kernels, so their times add; each GEMM pass is
 * never faster than one read of the weights. */
static double prefill_s(const struct ictx *c, int tp, int pp, double n_seq)
{
	double I = (double)c->rq->prompt_tokens, n = n_seq * I;
	double gemm_flops = 2.0 * c->P.matmul_active * n;
	double attn_flops = n *
			    model_attn_fwd_flops_per_token(&c->rq->model, I) *
			    CAUSAL_FRACTION;
	double f =
	    hw_gemm_shape_factor(fmin(n, fmin(c->h, c->f_width / (double)tp)));
	double t_gemm = fmax(gemm_flops / (double)tp / (c->R * f),
			     weights_read(c, tp, n) / c->hbm);
	double t_attn = attn_flops / (double)tp / c->R_attn;

	return t_gemm + t_attn + fixed_overhead(c, tp, pp, n);
}

/* One decode step for b sequences at mean context ctx: the GEMM kernels
 * (weights read once, 2*N*b FLOPs at the skinny-GEMM shape factor of b
 * rows) and the attention kernels (KV read, scores) each run at
 * max(memory, compute) and add (MODEL.md §7). */
static double decode_s(const struct ictx *c, int tp, int pp, double b,
		       double ctx, double *t_mem_out, double *t_comp_out)
{
	double kv = model_kv_bytes_per_token(&c->rq->model, c->kvB, tp);
	double w = weights_read(c, tp, b), kvb = b * ctx * kv;
	double gemm_flops = 2.0 * c->P.matmul_active * b / (double)tp;
	double attn_flops =
	    b * model_attn_fwd_flops_per_token(&c->rq->model, ctx) / (double)tp;
	double f =
	    hw_gemm_shape_factor(fmin(b, fmin(c->h, c->f_width / (double)tp)));
	double gm = w / c->hbm, gc = gemm_flops / (c->R * f);
	double am = kvb / c->hbm, ac = attn_flops / c->R_attn;

	if (t_mem_out)
		*t_mem_out = gm + am;
	if (t_comp_out)
		*t_comp_out = gc + ac;
	return fmax(gm, gc) + fmax(am, ac) + fixed_overhead(c, tp, pp, b);
}

/* Per-GPU memory of a (tp, pp) replica under the serving profile. */
struct mem_plan {
	double weights, workspace, usable, kv_room; /* bytes per GPU */
	double kv_seq; /* bytes one sequence holds, on average */
	long fit;      /* sequences whose KV fits */
};

static void memory_of(const struct ictx *c, int tp, int pp,
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
	    WORKSPACE_FIXED_BYTES +
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

/* A replica and the numbers its operating point is built from. */
struct replica {
	const struct ictx *c;
	int tp, pp;
	struct inf_serving sv;
	struct mem_plan mem;
	double n_cap; /* most sequences decoding at once */
	enum inf_limit cap_limit;
	double t_pf; /* prefill latency of one prompt, alone */
	double w_pf; /* GPU time one prompt's prefill takes */
	double ctx;  /* mean context of a decoding sequence */
};

static void replica_init(struct replica *r, const struct ictx *c, int tp,
			 int pp)
{
	const struct inf_request *rq = c->rq;
	double I = (double)rq->prompt_tokens;

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->tp = tp;
	r->pp = pp;
	inf_serving_resolve(rq, tp, &r->sv);
	memory_of(c, tp, pp, &r->sv, &r->mem);
	r->n_cap = (double)r->mem.fit;
	r->cap_limit = INF_LIMIT_KV_CACHE;
	if (r->sv.max_num_seqs > 0 && (double)r->sv.max_num_seqs < r->n_cap) {
		r->n_cap = (double)r->sv.max_num_seqs;
		r->cap_limit = rq->max_batch > 0 ? INF_LIMIT_MAX_BATCH
						 : INF_LIMIT_MAX_NUM_SEQS;
	}
	/* each decoding sequence takes one token of the iteration budget */
	if (r->sv.chunked_prefill && r->sv.max_num_batched_tokens > 0 &&
	    (double)r->sv.max_num_batched_tokens < r->n_cap) {
		r->n_cap = (double)r->sv.max_num_batched_tokens;
		r->cap_limit = INF_LIMIT_MAX_NUM_SEQS;
	}
	r->t_pf = prefill_s(c, tp, pp, 1.0);
	/* A prompt's prefill shares its iterations with the decode batch
	 * and with other prompts (in-flight batching in every profile:
	 * TensorRT-LLM mixes context and generation requests in one step,
	 * vLLM and SGLang chunk or batch prompts up to the token budget), so
	 * the weight read and launch overhead are paid by the iteration,
	 * not by each prompt: a prompt costs its compute (GEMMs at full
	 * shape, attention, collectives). Its latency alone stays t_pf. */
	{
		double n = I;
		double f = hw_gemm_shape_factor(
		    fmin(n, fmin(c->h, c->f_width / (double)tp)));
		r->w_pf =
		    2.0 * c->P.matmul_active * n / (double)tp / (c->R * f) +
		    n * model_attn_fwd_flops_per_token(&rq->model, I) *
			CAUSAL_FRACTION / (double)tp / c->R_attn +
		    2.0 * c->L *
			coll_time_s(COLL_AR, n * c->h * 2.0, tp, 1.0, c->intra,
				    rq->gpu.intra_node_link);
	}
	r->ctx = I + (double)rq->output_tokens / 2.0;
}

/* Step time with n sequences decoding; a step always carries at least one
 * sequence (it runs only when one is there). */
static double step_s(const struct replica *r, double n)
{
	return decode_s(r->c, r->tp, r->pp, fmax(n, 1.0), r->ctx, NULL, NULL);
}

/* Arrival rate at which n sequences decode on average: Little's law on
 * the decode phase, n = lambda * (O - 1) * TPOT, with TPOT = step /
 * (1 - lambda * w_pf) (decode steps stretch by the prefill share), solved
 * for lambda. Non-decreasing in n (step(n)/n never rises). */
static double lambda_of(const struct replica *r, double n)
{
	double O1 = (double)r->c->rq->output_tokens - 1.0;

	if (n <= 0)
		return 0.0;
	return n / (O1 * step_s(r, n) + n * r->w_pf);
}

/* The steady state at arrival rate lambda with n sequences decoding
 * (n = 0 when the output is one token). TTFT = queueing for the prefill
 * (M/D/1: lambda w^2 / (2 (1 - rho)), Pollaczek-Khinchine) + the rest of
 * the running iteration (half a step, when one runs: P = 1 - e^-n, the
 * M/G/inf occupancy; with multi-step scheduling, half a window of
 * scheduler_steps steps) + the prefill itself (with chunking, one more
 * iteration per further chunk of the token budget). MODEL.md §7. */
static void point_at(const struct replica *r, double lambda, double n,
		     struct inf_point *pt)
{
	const struct inf_request *rq = r->c->rq;
	double I = (double)rq->prompt_tokens, O = (double)rq->output_tokens;
	double rho = lambda * r->w_pf, t_step, tpot, wq, resid, lat;

	memset(pt, 0, sizeof(*pt));
	pt->requests_per_s = lambda;
	pt->stable = rho < 1.0 && n <= r->n_cap * (1.0 + 1e-9);
	if (rho >= 1.0)
		rho = 1.0 - 1e-12;
	t_step = O > 1.0 ? step_s(r, n) : 0.0;
	tpot = O > 1.0 ? t_step / (1.0 - rho) : 0.0;
	wq = lambda * r->w_pf * r->w_pf / (2.0 * (1.0 - rho));
	/* the rest of the running scheduler window: one step, or the
	 * scheduler_steps of multi-step scheduling */
	resid = (1.0 - exp(-n)) * r->sv.scheduler_steps * t_step / 2.0;
	lat = r->t_pf;
	if (r->sv.chunked_prefill) {
		double chunk =
		    fmax(1.0, (double)r->sv.max_num_batched_tokens - n);
		lat += (ceil(I / chunk) - 1.0) * t_step;
	}
	pt->decode_batch = n;
	pt->prefill_share = lambda * r->w_pf;
	pt->tpot_ms = tpot * 1e3;
	pt->ttft_ms = (wq + resid + lat) * 1e3;
	pt->batch = lambda * (wq + resid + lat + (O - 1.0) * tpot);
	pt->output_tokens_per_s = lambda * O;
}

/* Operating point at arrival rate lambda: n solves lambda_of(n) = lambda
 * (bisection: lambda_of is monotone). */
static void point_at_rate(const struct replica *r, double lambda,
			  struct inf_point *pt)
{
	double lo = 0.0, hi = r->n_cap;

	if (r->c->rq->output_tokens <= 1) {
		point_at(r, lambda, 0.0, pt);
		return;
	}
	if (lambda >= lambda_of(r, hi)) {
		point_at(r, lambda, hi, pt);
		pt->stable = lambda <= lambda_of(r, hi) * (1.0 + 1e-9);
		return;
	}
	for (int i = 0; i < 60 && hi - lo > 1e-9 * (1.0 + hi); i++) {
		double mid = 0.5 * (lo + hi);
		if (lambda_of(r, mid) < lambda)
			lo = mid;
		else
			hi = mid;
	}
	point_at(r, lambda, hi, pt);
}

static bool meets(const struct inf_request *rq, const struct inf_point *pt)
{
	return pt->stable && (rq->tpot_ms <= 0 || pt->tpot_ms <= rq->tpot_ms) &&
	       (rq->ttft_ms <= 0 || pt->ttft_ms <= rq->ttft_ms);
}

/* Smallest load the search considers: a request every 1e6 s. */
#define LAMBDA_FLOOR 1e-6

/* The most a replica sustains within the targets: bisection on the decode
 * batch (O > 1) or the rate (O = 1); every latency rises with load.
 * Returns false when even the lightest load misses a target (*pt then
 * holds that lightest point). */
static bool capacity_of(const struct replica *r, struct inf_point *pt,
			enum inf_limit *limit)
{
	const struct inf_request *rq = r->c->rq;
	bool by_rate = rq->output_tokens <= 1;
	double hi = by_rate ? (1.0 - 1e-3) / r->w_pf : r->n_cap, lo;
	struct inf_point p;

	*limit = r->cap_limit;
	if (by_rate)
		point_at(r, hi, 0.0, &p);
	else
		point_at(r, lambda_of(r, hi), hi, &p);
	if (meets(rq, &p)) {
		*pt = p;
		return true;
	}
	*limit = rq->tpot_ms > 0 && p.tpot_ms > rq->tpot_ms ? INF_LIMIT_TPOT
							    : INF_LIMIT_TTFT;
	lo = by_rate ? LAMBDA_FLOOR : fmin(1e-6, hi);
	if (by_rate)
		point_at(r, lo, 0.0, pt);
	else
		point_at(r, lambda_of(r, lo), lo, pt);
	if (!meets(rq, pt))
		return false;
	for (int i = 0; i < 60 && hi - lo > 1e-6 * lo; i++) {
		double mid = 0.5 * (lo + hi);
		if (by_rate)
			point_at(r, mid, 0.0, &p);
		else
			point_at(r, lambda_of(r, mid), mid, &p);
		if (meets(rq, &p)) {
			lo = mid;
			*pt = p;
		} else {
			hi = mid;
		}
	}
	return true;
}

/* Arrival rate per replica at which `inflight` sequences are in flight
 * (closed-loop concurrency), within (0, lambda_max]. */
static double rate_for_inflight(const struct replica *r, double inflight,
				double lambda_max)
{
	double lo = 0.0, hi = lambda_max;
	struct inf_point p;

	for (int i = 0; i < 60; i++) {
		double mid = 0.5 * (lo + hi);
		point_at_rate(r, mid, &p);
		if (p.batch < inflight)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Replicas for `need` replicas' worth of load: at least one, and at most
 * INF_MAX_REPLICAS (beyond it the count would not fit a long; inf_size
 * refuses such a load). */
static long replicas_for(double need)
{
	if (!(need < (double)INF_MAX_REPLICAS))
		return INF_MAX_REPLICAS;
	return (long)fmax(1.0, ceil(need - 1e-9));
}

/* Fills the plan at the request's load; false when the replica cannot
 * meet the targets at any load. */
static bool plan_of(const struct ictx *c, const struct replica *r, double u_max,
		    struct inf_plan *p)
{
	const struct inf_request *rq = c->rq;
	double O = (double)rq->output_tokens, lam_total = 0.0, lam_r;
	struct inf_point cap, at;
	enum inf_limit limit;

	memset(p, 0, sizeof(*p));
	p->tp = r->tp;
	p->pp = r->pp;
	p->serving = r->sv;
	p->weights_gib = r->mem.weights / GIB;
	p->workspace_gib = r->mem.workspace / GIB;
	p->usable_gib = r->mem.usable / GIB;
	p->max_batch_fit = r->mem.fit;
	if (!capacity_of(r, &cap, &limit)) {
		p->capacity = cap; /* the lightest load, for the error */
		return false;
	}
	p->capacity = cap;
	p->capacity_limit = limit;
	p->binding = limit == INF_LIMIT_TPOT || limit == INF_LIMIT_TTFT
			 ? ENG_BIND_LATENCY
			 : ENG_BIND_MEMORY;
	switch (rq->load_kind) {
	case INF_LOAD_REQUESTS_PER_S:
		lam_total = rq->load_value;
		break;
	case INF_LOAD_OUTPUT_TOKENS_PER_S:
		lam_total = rq->load_value / O;
		break;
	default:
		break;
	}
	if (rq->load_kind == INF_LOAD_NONE) {
		p->replicas = 1;
		at = cap;
	} else if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES) {
		struct inf_point ceil_pt;
		point_at_rate(r, u_max * cap.requests_per_s, &ceil_pt);
		p->replicas = replicas_for(rq->load_value / ceil_pt.batch);
		lam_r =
		    rate_for_inflight(r, rq->load_value / (double)p->replicas,
				      u_max * cap.requests_per_s);
		point_at_rate(r, lam_r, &at);
	} else {
		p->replicas =
		    replicas_for(lam_total / (u_max * cap.requests_per_s));
		lam_r = lam_total / (double)p->replicas;
		point_at_rate(r, lam_r, &at);
	}
	p->gpus = p->replicas * p->tp * p->pp;
	p->requests_per_s = at.requests_per_s;
	p->utilization = at.requests_per_s / cap.requests_per_s;
	p->batch = at.batch;
	p->decode_batch = at.decode_batch;
	p->ttft_ms = at.ttft_ms;
	p->tpot_ms = at.tpot_ms;
	p->output_tokens_per_s = at.output_tokens_per_s;
	p->total_output_tokens_per_s =
	    at.output_tokens_per_s * (double)p->replicas;
	p->cost_per_hour = (double)p->gpus * c->price;
	p->cost_per_million_output_tokens =
	    p->total_output_tokens_per_s > 0
		? p->cost_per_hour / (p->total_output_tokens_per_s * 3600.0) *
		      1e6
		: 0.0;
	p->capacity.cost_per_million_output_tokens =
	    cap.output_tokens_per_s > 0
		? (double)(p->tp * p->pp) * c->price /
		      (cap.output_tokens_per_s * 3600.0) * 1e6
		: 0.0;
	/* KV held by sequences past their queueing wait */
	{
		double holding = fmin(fmax(at.decode_batch, 0.0) +
					  at.requests_per_s * r->t_pf,
				      (double)r->mem.fit);
		p->kv_cache_gib = holding * r->mem.kv_seq / GIB;
	}
	p->total_gib = p->weights_gib + p->kv_cache_gib + p->workspace_gib;
	{
		double tm, tc, n = fmax(at.decode_batch, 1.0);
		double t = decode_s(c, r->tp, r->pp, n, r->ctx, &tm, &tc);
		p->mbu =
		    (weights_read(c, r->tp, n) +
		     n * r->ctx *
			 model_kv_bytes_per_token(&rq->model, c->kvB, r->tp)) /
		    t / (rq->gpu.memory_bandwidth_gbps * 1e9);
		p->decode_bound =
		    tm >= tc ? ENG_BIND_BANDWIDTH : ENG_BIND_COMPUTE;
	}
	p->meets_targets = meets(rq, &at);
	return true;
}

/* ---- validation, static evaluation, search ---------------------------- */

static int validate(const struct inf_request *rq, struct eng_error *err)
{
	char msg[256];

	if (model_validate(&rq->model, msg, sizeof(msg))) {
		char field[64];
		size_t n = strcspn(msg, ":");
		if (n >= sizeof(field))
			n = sizeof(field) - 1;
		memcpy(field, msg, n);
		field[n] = '\0';
		return eng_fail(err, ENG_EINVAL, field, "%s", msg);
	}
	if ((unsigned)rq->weight_precision >= ENG_DTYPE_COUNT ||
	    !weight_table[rq->weight_precision].allowed)
		return eng_fail(err, ENG_EINVAL, "weight_precision",
				"must be fp32, bf16, fp16, fp8, int8 or int4");
	if (rq->kv_precision != ENG_DTYPE_COUNT &&
	    (rq->kv_precision != ENG_FP32 && rq->kv_precision != ENG_FP16 &&
	     rq->kv_precision != ENG_BF16 && rq->kv_precision != ENG_FP8 &&
	     rq->kv_precision != ENG_INT8))
		return eng_fail(err, ENG_EINVAL, "kv_cache_precision",
				"must be fp32, bf16, fp16, fp8 or int8");
	if (rq->prompt_tokens < 1 || rq->prompt_tokens > INF_MAX_TOKENS)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"must be between 1 and %ld", INF_MAX_TOKENS);
	if (rq->output_tokens < 1 || rq->output_tokens > INF_MAX_TOKENS)
		return eng_fail(err, ENG_EINVAL, "output_tokens",
				"must be between 1 and %ld", INF_MAX_TOKENS);
	if (rq->model.learned_pos_emb &&
	    rq->prompt_tokens + rq->output_tokens > rq->model.max_seq_len)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"prompt + output exceed model.max_seq_len");
	if (!(rq->memory_utilization >= 0.0 && rq->memory_utilization <= 1.0))
		return eng_fail(err, ENG_EINVAL, "memory_utilization",
				"must be in (0, 1]");
	if (!(rq->max_utilization >= 0.0 && rq->max_utilization <= 1.0))
		return eng_fail(err, ENG_EINVAL, "max_utilization",
				"must be in (0, 1]");
	if ((unsigned)rq->serving >= INF_SERVING_COUNT)
		return eng_fail(err, ENG_EINVAL, "serving",
				"must be vllm, tensorrt-llm, sglang or "
				"generic");
	if (rq->scheduler_steps < 0 ||
	    rq->scheduler_steps > INF_MAX_SCHED_STEPS)
		return eng_fail(err, ENG_EINVAL, "scheduler_steps",
				"must be between 1 and %d",
				INF_MAX_SCHED_STEPS);
	if (rq->chunked_prefill > 1 || rq->max_num_batched_tokens < 0)
		return eng_fail(err, ENG_EINVAL,
				rq->chunked_prefill > 1
				    ? "chunked_prefill"
				    : "max_num_batched_tokens",
				"out of range");
	if ((unsigned)rq->load_kind >= INF_LOAD_COUNT)
		return eng_fail(err, ENG_EINVAL, "load", "unknown load kind");
	if (rq->load_kind != INF_LOAD_NONE &&
	    !(isfinite(rq->load_value) && rq->load_value > 0.0))
		return eng_fail(err, ENG_EINVAL,
				inf_load_kind_name(rq->load_kind),
				"must be a positive finite number");
	if (!(isfinite(rq->ttft_ms) && rq->ttft_ms >= 0.0))
		return eng_fail(err, ENG_EINVAL, "ttft_ms",
				"must be a finite number >= 0");
	if (!(isfinite(rq->tpot_ms) && rq->tpot_ms >= 0.0))
		return eng_fail(err, ENG_EINVAL, "tpot_ms",
				"must be a finite number >= 0");
	if (rq->tp < 0 || (rq->tp > 0 && ((rq->tp & (rq->tp - 1)) ||
					  rq->model.heads % rq->tp)))
		return eng_fail(err, ENG_EINVAL, "tp",
				"must be a power of two dividing the %ld "
				"attention heads",
				rq->model.heads);
	if (rq->max_gpus < 0 || rq->max_batch < 0)
		return eng_fail(err, ENG_EINVAL,
				rq->max_gpus < 0 ? "max_gpus" : "max_batch",
				"must not be negative");
	if (!(isfinite(rq->price_per_gpu_hour) && rq->price_per_gpu_hour >= 0))
		return eng_fail(err, ENG_EINVAL, "price_per_gpu_hour",
				"must be a finite number >= 0");
	if (rq->top < 0 || rq->top > INF_MAX_TOP)
		return eng_fail(err, ENG_EINVAL, "top",
				"must be between 1 and %d", INF_MAX_TOP);
	if (!(rq->gpu.memory_gib > 0) || !(rq->gpu.memory_bandwidth_gbps > 0))
		return eng_fail(err, ENG_EINVAL, "gpu",
				"memory_gib and memory_bandwidth_gbps must be "
				"positive");
	if (!hw_supports(&rq->gpu, rq->weight_precision) ||
	    hw_gemm_rate(&rq->gpu, compute_dtype(rq)).value <= 0) {
		if (rq->weight_precision == ENG_FP8)
			return eng_fail(
			    err, ENG_EUNSUPPORTED, "weight_precision",
			    "fp8 needs FP8 tensor cores (Ada sm_89, Hopper "
			    "sm_90, Blackwell); %s (compute capability "
			    "%d.%d) has none - use fp16, int8 or int4",
			    rq->gpu.name, rq->gpu.cc_major, rq->gpu.cc_minor);
		return eng_fail(err, ENG_EUNSUPPORTED, "weight_precision",
				"%s has no %s rate", rq->gpu.name,
				eng_dtype_name(rq->weight_precision));
	}
	return 0;
}

void inf_request_init(struct inf_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->weight_precision = ENG_BF16;
	rq->kv_precision = ENG_DTYPE_COUNT;
	rq->prompt_tokens = 512;
	rq->output_tokens = 256;
	rq->serving = INF_SERVING_VLLM;
	rq->chunked_prefill = -1;
	rq->top = 5;
}

int inf_evaluate(const struct inf_request *rq, int tp, int pp, long batch,
		 struct inf_plan *p, struct eng_error *err)
{
	struct ictx c;
	struct mem_plan m;
	double I, O, b = (double)batch, tm, tc, tpot, batch_pf;
	int rc;

	eng_error_clear(err);
	memset(p, 0, sizeof(*p));
	if ((rc = validate(rq, err)))
		return rc;
	if (tp < 1 || rq->model.heads % tp)
		return eng_fail(err, ENG_EINVAL, "tp",
				"model.heads (%ld) is not divisible by tp %d",
				rq->model.heads, tp);
	if (pp < 1 || pp > rq->model.layers || batch < 1)
		return eng_fail(err, ENG_EINVAL, pp < 1 ? "pp" : "batch",
				"must be positive");
	ictx_init(&c, rq);
	I = (double)rq->prompt_tokens;
	O = (double)rq->output_tokens;
	inf_serving_resolve(rq, tp, &p->serving);
	memory_of(&c, tp, pp, &p->serving, &m);
	tpot = decode_s(&c, tp, pp, b, I + O / 2.0, &tm, &tc);
	batch_pf = prefill_s(&c, tp, pp, b);
	p->tp = tp;
	p->pp = pp;
	p->batch = b;
	p->decode_batch = b;
	p->replicas = 1;
	p->gpus = (long)tp * pp;
	p->weights_gib = m.weights / GIB;
	p->workspace_gib = m.workspace / GIB;
	p->usable_gib = m.usable / GIB;
	p->max_batch_fit = m.fit;
	p->kv_cache_gib = b * m.kv_seq / GIB;
	p->total_gib = p->weights_gib + p->kv_cache_gib + p->workspace_gib;
	p->tpot_ms = tpot * 1e3;
	p->ttft_ms = prefill_s(&c, tp, pp, 1.0) * 1e3;
	/* static batch: the batch prefills together, then decodes O steps */
	p->output_tokens_per_s = b * O / (batch_pf + O * tpot);
	p->total_output_tokens_per_s = p->output_tokens_per_s;
	p->requests_per_s = p->output_tokens_per_s / O;
	p->mbu = (weights_read(&c, tp, b) +
		  b * (I + O / 2.0) *
		      model_kv_bytes_per_token(&rq->model, c.kvB, tp)) /
		 tpot / (rq->gpu.memory_bandwidth_gbps * 1e9);
	p->decode_bound = tm >= tc ? ENG_BIND_BANDWIDTH : ENG_BIND_COMPUTE;
	p->binding = batch >= m.fit ? ENG_BIND_MEMORY : ENG_BIND_LATENCY;
	p->cost_per_hour = (double)p->gpus * c.price;
	p->cost_per_million_output_tokens =
	    p->cost_per_hour / (p->output_tokens_per_s * 3600.0) * 1e6;
	p->meets_targets = (rq->tpot_ms <= 0 || p->tpot_ms <= rq->tpot_ms) &&
			   (rq->ttft_ms <= 0 || p->ttft_ms <= rq->ttft_ms);
	return 0;
}

/* Warnings go to the result's fixed table (engine/errors.h). */
#define iwarn(r, ...)                                                          \
	eng_warn(&(r)->warnings[0][0], &(r)->n_warnings, ENG_MAX_WARNINGS,     \
		 ENG_WARNING_LEN, __VA_ARGS__)

/* With a load: the fewest GPUs (the cost per hour of serving it), then
 * the lower TPOT at that load. Without one: the cost per million output
 * tokens at capacity. */
static bool plan_better(const struct inf_request *rq, const struct inf_plan *a,
			const struct inf_plan *b)
{
	if (rq->load_kind != INF_LOAD_NONE && a->gpus != b->gpus)
		return a->gpus < b->gpus;
	if (rq->load_kind == INF_LOAD_NONE &&
	    a->cost_per_million_output_tokens !=
		b->cost_per_million_output_tokens)
		return a->cost_per_million_output_tokens <
		       b->cost_per_million_output_tokens;
	return a->tpot_ms < b->tpot_ms;
}

static void insert_top(const struct inf_request *rq, struct inf_result *res,
		       int top, const struct inf_plan *p)
{
	int pos = res->n_plans < top ? res->n_plans++ : top;

	if (pos == top) {
		if (!plan_better(rq, p, &res->plans[top - 1]))
			return;
		pos = top - 1;
	}
	while (pos > 0 && plan_better(rq, p, &res->plans[pos - 1])) {
		res->plans[pos] = res->plans[pos - 1];
		pos--;
	}
	res->plans[pos] = *p;
}

static void add_warnings(const struct inf_request *rq, struct inf_result *res)
{
	const struct inf_plan *b = &res->plans[0];
	long seq = rq->prompt_tokens + rq->output_tokens;

	if (rq->model.max_seq_len > 0 && seq > rq->model.max_seq_len)
		iwarn(res,
		      "prompt + output (%ld tokens) exceed the model's context "
		      "of %ld tokens: sized as if the model served them (a "
		      "long-context variant or RoPE scaling is assumed); the "
		      "stock model truncates or refuses such requests",
		      seq, rq->model.max_seq_len);
	if (b->capacity_limit == INF_LIMIT_KV_CACHE)
		iwarn(res,
		      "capacity limited by KV-cache memory: %ld sequences of "
		      "%ld tokens fit; more GPUs per replica or a smaller KV "
		      "dtype raise it",
		      b->max_batch_fit, seq);
	if (rq->weight_precision == ENG_INT4 ||
	    rq->weight_precision == ENG_INT8)
		iwarn(res,
		      "%s is weight-only quantisation: GEMMs run in 16-bit, "
		      "decode reads fewer bytes",
		      eng_dtype_name(rq->weight_precision));
	if (b->pp > 1)
		iwarn(res,
		      "pipeline across %d nodes: latency adds stage by stage "
		      "and stages are not overlapped (throughput is a lower "
		      "bound)",
		      b->pp);
	if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES)
		iwarn(res, "concurrent_sequences is read as a closed loop "
			   "with no think time: the arrival rate is the one "
			   "that keeps that many requests in flight");
}

int inf_size(const struct inf_request *rq, struct inf_result *res,
	     struct eng_error *err)
{
	struct ictx c;
	int rc, top = rq->top > 0 ? rq->top : 5;
	bool any_fit = false;
	double best_tpot = INFINITY, best_ttft = INFINITY;
	double u_max = rq->max_utilization > 0 ? rq->max_utilization
					       : INF_DEFAULT_MAX_UTILIZATION;
	int best_tp = 0;
	long gmax = rq->max_gpus;
	struct inf_plan over = {0};
	bool have_over = false;

	eng_error_clear(err);
	memset(res, 0, sizeof(*res));
	if ((rc = validate(rq, err)))
		return rc;
	ictx_init(&c, rq);
	res->params = c.P;
	res->weights_bytes = c.W;
	res->max_utilization = u_max;
	res->kv_bytes_per_token =
	    model_kv_bytes_per_token(&rq->model, c.kvB, 1);
	res->kv_bytes_per_sequence =
	    res->kv_bytes_per_token *
	    (double)(rq->prompt_tokens + rq->output_tokens);
	res->basis.gemm_tflops = hw_gemm_rate(&rq->gpu, compute_dtype(rq));
	res->basis.gemm_efficiency_basis = rq->gpu.efficiency_basis;
	res->basis.hbm_gbps = hw_hbm_rate(&rq->gpu);
	res->basis.intra_node_gbps = hw_intra_rate(&rq->gpu);

	/* tp inside one node (powers of two dividing heads); pp across nodes
	 * only when a whole node of tp is not enough. */
	for (int pp = 1; pp <= 64 && pp <= rq->model.layers; pp *= 2) {
		bool fit_this_pp = false;
		for (int tp = 1; tp <= c.gpn; tp *= 2) {
			struct replica r;
			struct inf_plan p;

			if (rq->model.heads % tp)
				continue;
			if (rq->tp > 0 && tp != rq->tp)
				continue;
			if (gmax > 0 && (long)tp * pp > gmax)
				break;
			if (pp > 1 && tp < c.gpn)
				continue;
			replica_init(&r, &c, tp, pp);
			if (r.n_cap < 1.0)
				continue;
			fit_this_pp = any_fit = true;
			if (res->min_tp == 0)
				res->min_tp = tp * pp;
			if (!plan_of(&c, &r, u_max, &p)) {
				if (p.capacity.tpot_ms < best_tpot) {
					best_tpot = p.capacity.tpot_ms;
					best_tp = tp * pp;
				}
				best_ttft = fmin(best_ttft, p.capacity.ttft_ms);
				continue;
			}
			if ((gmax > 0 && p.gpus > gmax) ||
			    p.replicas >= INF_MAX_REPLICAS) {
				if (!have_over || p.gpus < over.gpus)
					over = p;
				have_over = true;
				continue;
			}
			insert_top(rq, res, top, &p);
		}
		if (fit_this_pp && res->n_plans > 0)
			break;
	}

	if (!any_fit) {
		struct inf_serving sv;
		inf_serving_resolve(rq, 1, &sv);
		return eng_fail(
		    err, ENG_EINFEASIBLE, gmax > 0 ? "max_gpus" : "model",
		    "does not fit: weights need %.1f GiB plus KV "
		    "cache for one %ld-token sequence; %s%ld GPUs "
		    "x %.1f GiB (%s %.2f under %s) are not enough",
		    c.W / GIB, rq->prompt_tokens + rq->output_tokens,
		    gmax > 0 ? "" : "up to ", gmax > 0 ? gmax : 64L * c.gpn,
		    rq->gpu.memory_gib, inf_kv_reserve_name(sv.kv_reserve),
		    sv.memory_fraction, inf_serving_name(sv.engine));
	}
	if (res->n_plans == 0 && !have_over) {
		bool tpot_bad = rq->tpot_ms > 0 && best_tpot > rq->tpot_ms;
		return eng_fail(err, ENG_EINFEASIBLE,
				tpot_bad ? "tpot_ms" : "ttft_ms",
				"no load meets the latency targets: the best "
				"achievable is tpot %.1f ms (tp %d, one "
				"sequence) and ttft %.1f ms",
				best_tpot, best_tp, best_ttft);
	}
	if (res->n_plans == 0 && over.replicas >= INF_MAX_REPLICAS)
		return eng_fail(err, ENG_EINFEASIBLE,
				inf_load_kind_name(rq->load_kind),
				"the load needs %ld or more replicas of tp %d "
				"(each sustains %.3g requests/s within the "
				"targets): split it or relax the targets",
				(long)INF_MAX_REPLICAS, over.tp * over.pp,
				over.capacity.requests_per_s);
	if (res->n_plans == 0)
		return eng_fail(err, ENG_EINFEASIBLE, "max_gpus",
				"the load needs %ld GPUs (%ld replicas of tp "
				"%d at %.0f %% of their capacity) but "
				"max_gpus is %ld",
				over.gpus, over.replicas, over.tp * over.pp,
				100.0 * u_max, gmax);
	add_warnings(rq, res);
	return 0;
}

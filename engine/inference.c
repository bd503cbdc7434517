/* inference.c - serving sizing (SIZING.md §6, §9; docs/MODEL.md §7). */
#include "inference.h"

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
#define KERNELS_PER_LAYER	   10.0
#define KERNEL_OVERHEAD_S	   5e-6
#define ALLREDUCE_LATENCY_S	   10e-6
#define DEFAULT_MEMORY_UTILIZATION 0.9
/* Fused attention kernels reach ~85 % of the GEMM rate (training.c). */
#define ATTN_FACTOR 0.85

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
 * cores (prefill runs on tensor cores, SIZING.md §9). */
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

struct ictx {
	const struct inf_request *rq;
	struct model_params P;
	double W, W_side, W_layers, W_routed; /* bytes */
	double kvB, R, R_attn, hbm, intra, capacity, price;
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
	{
		enum eng_dtype cd = compute_dtype(rq);
		enum eng_dtype ad = cd == ENG_FP8 ? ENG_BF16 : cd;
		c->R_attn = hw_gemm_rate(&rq->gpu, ad).value * 1e12;
	}
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

static double ring(double bytes, int t, double bw)
{
	if (t <= 1)
		return 0.0;
	return 2.0 * (t - 1.0) / t * bytes / bw + ALLREDUCE_LATENCY_S;
}

static double fixed_overhead(const struct ictx *c, int tp, int pp,
			     double tokens)
{
	double o = c->L * KERNELS_PER_LAYER * KERNEL_OVERHEAD_S;

	o += 2.0 * c->L * ring(tokens * c->h * 2.0, tp, c->intra);
	o += (pp - 1) * (ALLREDUCE_LATENCY_S + tokens * c->h * 2.0 / c->intra);
	return o;
}

/* Prefill of n_seq prompts of I tokens on tensor cores. GEMMs and
 * attention are separate kernels, so their times add; each GEMM pass is
 * never faster than one read of the weights. */
static double prefill_s(const struct ictx *c, int tp, int pp, double n_seq)
{
	double I = (double)c->rq->prompt_tokens, n = n_seq * I;
	double gemm_flops = 2.0 * c->P.matmul_active * n;
	/* causal attention: half the blocks are computed */
	double attn_flops =
	    n * model_attn_fwd_flops_per_token(&c->rq->model, I) * 0.5;
	double f =
	    hw_gemm_shape_factor(fmin(n, fmin(c->h, c->f_width / (double)tp)));
	double t_gemm = fmax(gemm_flops / (double)tp / (c->R * f),
			     weights_read(c, tp, n) / c->hbm);
	double t_attn = attn_flops / (double)tp / (c->R_attn * ATTN_FACTOR);

	return t_gemm + t_attn + fixed_overhead(c, tp, pp, n);
}

/* One decode step for b sequences at mean context ctx: the GEMM kernels
 * (weights read once, 2*N*b FLOPs) and the attention kernels (KV read,
 * scores) each run at max(memory, compute) and add (SIZING.md §6). */
static double decode_s(const struct ictx *c, int tp, int pp, double b,
		       double ctx, double *t_mem_out, double *t_comp_out)
{
	double kv = model_kv_bytes_per_token(&c->rq->model, c->kvB, tp);
	double w = weights_read(c, tp, b), kvb = b * ctx * kv;
	double gemm_flops = 2.0 * c->P.matmul_active * b / (double)tp;
	double attn_flops =
	    b * model_attn_fwd_flops_per_token(&c->rq->model, ctx) / (double)tp;
	double f = hw_gemm_shape_factor(fmin(c->h, c->f_width / (double)tp));
	double gm = w / c->hbm, gc = gemm_flops / (c->R * f);
	double am = kvb / c->hbm, ac = attn_flops / (c->R_attn * ATTN_FACTOR);

	if (t_mem_out)
		*t_mem_out = gm + am;
	if (t_comp_out)
		*t_comp_out = gc + ac;
	return fmax(gm, gc) + fmax(am, ac) + fixed_overhead(c, tp, pp, b);
}

static void memory_point(const struct ictx *c, int tp, int pp,
			 struct inf_plan *p)
{
	const struct inf_request *rq = c->rq;
	double util = rq->memory_utilization > 0 ? rq->memory_utilization
						 : DEFAULT_MEMORY_UTILIZATION;
	double side = pp > 1 ? c->W_side / 2.0 : c->W_side;
	double w = (c->W_layers / (double)pp + side) / (double)tp;
	double kv_tok =
	    model_kv_bytes_per_token(&rq->model, c->kvB, tp) / (double)pp;
	double seq = (double)(rq->prompt_tokens + rq->output_tokens);
	/* prefill activations of one prompt: hidden states and the FFN
	 * intermediate in 16-bit, plus the workspace */
	double ws = WORKSPACE_FIXED_BYTES +
		    (double)rq->prompt_tokens *
			(8.0 * c->h + 4.0 * c->f_width / (double)tp);
	double usable = c->capacity * util;
	double room = usable - w - ws;

	p->weights_gib = w / GIB;
	p->workspace_gib = ws / GIB;
	p->usable_gib = usable / GIB;
	p->max_batch_fit = room > 0 ? (long)floor(room / (kv_tok * seq)) : 0;
	p->kv_cache_gib = 0.0;
}

static void perf_point(const struct ictx *c, int tp, int pp, long batch,
		       struct inf_plan *p)
{
	const struct inf_request *rq = c->rq;
	double I = (double)rq->prompt_tokens, O = (double)rq->output_tokens;
	double b = (double)batch, tm, tc;
	double kv_tok =
	    model_kv_bytes_per_token(&rq->model, c->kvB, tp) / (double)pp;
	double tpot = decode_s(c, tp, pp, b, I + O / 2.0, &tm, &tc);
	double ttft = prefill_s(c, tp, pp, 1.0);
	double batch_pf = prefill_s(c, tp, pp, b);

	p->tp = tp;
	p->pp = pp;
	p->batch = batch;
	p->kv_cache_gib = b * kv_tok * (I + O) / GIB;
	p->total_gib = p->weights_gib + p->kv_cache_gib + p->workspace_gib;
	p->tpot_ms = tpot * 1e3;
	p->ttft_ms = ttft * 1e3;
	/* Steady state, static or continuous batching: each sequence costs
	 * its share of a batched prefill plus O decode steps. */
	p->output_tokens_per_s = b * O / (batch_pf + O * tpot);
	p->mbu = (weights_read(c, tp, b) +
		  b * (I + O / 2.0) *
		      model_kv_bytes_per_token(&rq->model, c->kvB, tp)) /
		 tpot / (rq->gpu.memory_bandwidth_gbps * 1e9);
	p->decode_bound = tm >= tc ? ENG_BIND_BANDWIDTH : ENG_BIND_COMPUTE;
	p->meets_targets = (rq->tpot_ms <= 0 || p->tpot_ms <= rq->tpot_ms) &&
			   (rq->ttft_ms <= 0 || p->ttft_ms <= rq->ttft_ms);
}

static void finish_load(const struct ictx *c, struct inf_plan *p)
{
	const struct inf_request *rq = c->rq;
	double O = (double)rq->output_tokens;
	double per = p->output_tokens_per_s, need = 1.0;

	switch (rq->load_kind) {
	case INF_LOAD_REQUESTS_PER_S:
		need = rq->load_value * O / per;
		break;
	case INF_LOAD_CONCURRENT_SEQUENCES:
		need = rq->load_value / (double)p->batch;
		break;
	case INF_LOAD_OUTPUT_TOKENS_PER_S:
		need = rq->load_value / per;
		break;
	default:
		break;
	}
	p->replicas = (long)fmax(1.0, ceil(need - 1e-9));
	p->gpus = p->replicas * p->tp * p->pp;
	p->total_output_tokens_per_s = per * (double)p->replicas;
	p->cost_per_hour = (double)p->gpus * c->price;
	p->cost_per_million_output_tokens =
	    p->cost_per_hour / (p->total_output_tokens_per_s * 3600.0) * 1e6;
}

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
	if (rq->prompt_tokens < 1 || rq->prompt_tokens > 10000000)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"must be between 1 and 10000000");
	if (rq->output_tokens < 1 || rq->output_tokens > 10000000)
		return eng_fail(err, ENG_EINVAL, "output_tokens",
				"must be between 1 and 10000000");
	if (rq->model.learned_pos_emb &&
	    rq->prompt_tokens + rq->output_tokens > rq->model.max_seq_len)
		return eng_fail(err, ENG_EINVAL, "prompt_tokens",
				"prompt + output exceed model.max_seq_len");
	if (!(rq->memory_utilization >= 0.0 && rq->memory_utilization <= 1.0))
		return eng_fail(err, ENG_EINVAL, "memory_utilization",
				"must be in (0, 1]");
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
	rq->memory_utilization = DEFAULT_MEMORY_UTILIZATION;
	rq->top = 5;
}

int inf_evaluate(const struct inf_request *rq, int tp, int pp, long batch,
		 struct inf_plan *p, struct eng_error *err)
{
	struct ictx c;
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
	memory_point(&c, tp, pp, p);
	perf_point(&c, tp, pp, batch, p);
	p->binding =
	    batch >= p->max_batch_fit ? ENG_BIND_MEMORY : ENG_BIND_LATENCY;
	finish_load(&c, p);
	return 0;
}

/* Warnings go to the result's fixed table (engine/errors.h). */
#define iwarn(r, ...)                                                          \
	eng_warn(&(r)->warnings[0][0], &(r)->n_warnings, ENG_MAX_WARNINGS,     \
		 ENG_WARNING_LEN, __VA_ARGS__)

static bool plan_better(const struct inf_request *rq, const struct inf_plan *a,
			const struct inf_plan *b)
{
	if (rq->load_kind != INF_LOAD_NONE && a->gpus != b->gpus)
		return a->gpus < b->gpus;
	if (a->cost_per_million_output_tokens !=
	    b->cost_per_million_output_tokens)
		return a->cost_per_million_output_tokens <
		       b->cost_per_million_output_tokens;
	return a->tpot_ms < b->tpot_ms;
}

int inf_size(const struct inf_request *rq, struct inf_result *res,
	     struct eng_error *err)
{
	struct ictx c;
	int rc, top = rq->top > 0 ? rq->top : 5;
	bool any_fit = false;
	double best_tpot = INFINITY, best_ttft = INFINITY;
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
	res->kv_bytes_per_token =
	    model_kv_bytes_per_token(&rq->model, c.kvB, 1);
	res->kv_bytes_per_sequence =
	    res->kv_bytes_per_token *
	    (double)(rq->prompt_tokens + rq->output_tokens);
	res->basis.gemm_tflops = hw_gemm_rate(&rq->gpu, compute_dtype(rq));
	res->basis.hbm_gbps = hw_hbm_rate(&rq->gpu);
	res->basis.intra_node_gbps = hw_intra_rate(&rq->gpu);

	/* tp inside one node (powers of two dividing heads); pp across nodes
	 * only when a whole node of tp is not enough. */
	for (int pp = 1; pp <= 64 && pp <= rq->model.layers; pp *= 2) {
		bool fit_this_pp = false;
		for (int tp = 1; tp <= c.gpn; tp *= 2) {
			struct inf_plan p = {0};
			long lo, hi, upper;

			if (rq->model.heads % tp)
				continue;
			if (rq->tp > 0 && tp != rq->tp)
				continue;
			if (gmax > 0 && (long)tp * pp > gmax)
				break;
			if (pp > 1 && tp < c.gpn)
				continue;
			memory_point(&c, tp, pp, &p);
			if (p.max_batch_fit < 1)
				continue;
			fit_this_pp = any_fit = true;
			if (res->min_tp == 0)
				res->min_tp = tp * pp;
			upper = p.max_batch_fit;
			if (rq->max_batch > 0 && rq->max_batch < upper)
				upper = rq->max_batch;
			if (rq->load_kind == INF_LOAD_CONCURRENT_SEQUENCES &&
			    rq->load_value < (double)upper)
				upper = (long)fmax(1.0, ceil(rq->load_value));
			/* tpot rises with batch: largest batch meeting it */
			perf_point(&c, tp, pp, 1, &p);
			if (p.tpot_ms < best_tpot) {
				best_tpot = p.tpot_ms;
				best_tp = tp * pp;
			}
			best_ttft = fmin(best_ttft, p.ttft_ms);
			if (!p.meets_targets)
				continue;
			lo = 1;
			hi = upper;
			while (lo < hi) {
				long mid = lo + (hi - lo + 1) / 2;
				struct inf_plan q = p;
				perf_point(&c, tp, pp, mid, &q);
				if (q.meets_targets)
					lo = mid;
				else
					hi = mid - 1;
			}
			perf_point(&c, tp, pp, lo, &p);
			p.binding = lo >= p.max_batch_fit ? ENG_BIND_MEMORY
							  : ENG_BIND_LATENCY;
			if (lo < p.max_batch_fit && lo == upper)
				p.binding =
				    ENG_BIND_MEMORY; /* capped by load */
			finish_load(&c, &p);
			if (gmax > 0 && p.gpus > gmax) {
				if (!have_over || p.gpus < over.gpus)
					over = p;
				have_over = true;
				continue;
			}
			/* insert into top list */
			{
				int pos =
				    res->n_plans < top ? res->n_plans++ : top;
				if (pos == top) {
					if (!plan_better(rq, &p,
							 &res->plans[top - 1]))
						continue;
					pos = top - 1;
				}
				while (
				    pos > 0 &&
				    plan_better(rq, &p, &res->plans[pos - 1])) {
					res->plans[pos] = res->plans[pos - 1];
					pos--;
				}
				res->plans[pos] = p;
			}
		}
		if (fit_this_pp && res->n_plans > 0)
			break;
	}

	if (!any_fit)
		return eng_fail(
		    err, ENG_EINFEASIBLE, gmax > 0 ? "max_gpus" : "model",
		    "does not fit: weights need %.1f GiB plus KV "
		    "cache for one %ld-token sequence; %s%ld GPUs "
		    "x %.1f GiB x %.2f usable are not enough",
		    c.W / GIB, rq->prompt_tokens + rq->output_tokens,
		    gmax > 0 ? "" : "up to ", gmax > 0 ? gmax : 64L * c.gpn,
		    rq->gpu.memory_gib,
		    rq->memory_utilization > 0 ? rq->memory_utilization
					       : DEFAULT_MEMORY_UTILIZATION);
	if (res->n_plans == 0 && !have_over) {
		bool tpot_bad = rq->tpot_ms > 0 && best_tpot > rq->tpot_ms;
		return eng_fail(err, ENG_EINFEASIBLE,
				tpot_bad ? "tpot_ms" : "ttft_ms",
				"no batch meets the latency targets: the best "
				"achievable is tpot %.1f ms (tp %d, batch 1) "
				"and ttft %.1f ms",
				best_tpot, best_tp, best_ttft);
	}
	if (res->n_plans == 0)
		return eng_fail(err, ENG_EINFEASIBLE, "max_gpus",
				"the load needs %ld GPUs (%ld replicas of tp "
				"%d) but max_gpus is %ld",
				over.gpus, over.replicas, over.tp * over.pp,
				gmax);

	{
		const struct inf_plan *b = &res->plans[0];
		if (b->binding == ENG_BIND_MEMORY &&
		    b->batch == b->max_batch_fit)
			iwarn(res,
			      "batch limited by memory: %ld sequences of %ld "
			      "tokens fill the KV cache; more GPUs per "
			      "replica or a smaller KV dtype raise it",
			      b->batch, rq->prompt_tokens + rq->output_tokens);
		if (rq->weight_precision == ENG_INT4 ||
		    rq->weight_precision == ENG_INT8)
			iwarn(res,
			      "%s is weight-only quantisation: GEMMs run "
			      "in 16-bit, decode reads fewer bytes",
			      eng_dtype_name(rq->weight_precision));
		if (b->pp > 1)
			iwarn(res,
			      "pipeline across %d nodes: latency adds "
			      "stage by stage",
			      b->pp);
	}
	return 0;
}

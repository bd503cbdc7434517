/* training.c - training/fine-tuning sizing: memory, time, plan search.
 *
 * Formulas, refinements and every default: docs/MODEL.md
 * (section numbers below refer to it). Everything here is static except
 * the functions declared in training.h.
 */
#include "training.h"

#include "budget.h"
#include "collective.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0

/* Engine-chosen default global batch when neither size nor tokens is given:
 * 4M tokens (Llama 2/3, GPT-3 175B used 2-4M). MODEL.md §6. */
#define DEFAULT_BATCH_TOKENS 4194304.0
/* Fixed per-GPU overhead: CUDA context + cuBLAS/NCCL workspaces (MODEL.md §3).
 */
#define OVERHEAD_FIXED_BYTES (1.0 * GIB)
#define OVERHEAD_COMM_BYTES  (0.5 * GIB)
/* PyTorch caching allocator fragmentation, fraction of the rest. */
#define OVERHEAD_FRAG 0.05
/* Point-to-point / all-to-all launch latency, seconds (NCCL, one hop). */
#define COLL_LATENCY_S 10e-6
/* Share of a compute window that communication can hide behind (NCCL
 * kernels take SMs and HBM bandwidth). */
#define OVERLAP_EFF 0.8
/* FlashAttention's backward pass does 2.5x the forward FLOPs (it
 * recomputes QK^T; FlashAttention-2 paper and benchmarks). */
#define FLASH_BWD_FLOPS 2.5
/* CPU optimizer step (ZeRO-Offload CPU Adam) bytes/s per GPU's share of
 * the host, and the default host link when the spec has none. */
#define HOST_OPT_BPS	       10e9
#define HOST_LINK_DEFAULT_GBPS 25.0

/* ---- names ------------------------------------------------------------ */

const char *const trn_optimizer_names[TRN_OPTIMIZER_COUNT + 1] = {
    "adamw", "adamw_8bit", "sgd", "adafactor", NULL};
const char *const trn_method_names[TRN_METHOD_COUNT + 1] = {"full", "lora",
							    "qlora", NULL};
const char *const trn_offload_names[TRN_OFFLOAD_COUNT + 1] = {
    "none", "optimizer", "optimizer+weights", NULL};
const char *const trn_objective_names[TRN_OBJ_COUNT + 1] = {"time", "cost",
							    "gpus", NULL};
static const char *const binding_names[ENG_BIND_COUNT] = {
    "compute",	"memory",	    "communication",
    "deadline", "memory_bandwidth", "latency"};

const struct trn_int_list trn_int_lists[TRN_INT_LISTS] = {
    {"tp", 1, 1024, offsetof(struct trn_strategies, tp)},
    {"pp", 1, 1024, offsetof(struct trn_strategies, pp)},
    {"dp", 1, 1 << 20, offsetof(struct trn_strategies, dp)},
    {"ep", 1, 1024, offsetof(struct trn_strategies, ep)},
    {"cp", 1, 1024, offsetof(struct trn_strategies, cp)},
    {"vp", 1, 64, offsetof(struct trn_strategies, vp)},
    {"zero", 0, 3, offsetof(struct trn_strategies, zero)},
    {"micro_batch", 1, 65536, offsetof(struct trn_strategies, micro_batch)},
};

static const char *name_of(const char *const *t, int n, int i)
{
	return (i >= 0 && i < n) ? t[i] : "?";
}

const char *trn_optimizer_name(enum trn_optimizer o)
{
	return name_of(trn_optimizer_names, TRN_OPTIMIZER_COUNT, (int)o);
}
const char *trn_method_name(enum trn_method m)
{
	return name_of(trn_method_names, TRN_METHOD_COUNT, (int)m);
}
const char *trn_offload_name(enum trn_offload o)
{
	return name_of(trn_offload_names, TRN_OFFLOAD_COUNT, (int)o);
}
const char *trn_objective_name(enum trn_objective o)
{
	return name_of(trn_objective_names, TRN_OBJ_COUNT, (int)o);
}
const char *eng_binding_name(enum eng_binding b)
{
	return name_of(binding_names, ENG_BIND_COUNT, (int)b);
}

/* ---- optimizer state table (MODEL.md §3) -------------------------------- */

static const struct {
	double state_bytes; /* per parameter, beyond weights and gradients */
	bool factored;	    /* Adafactor: 4*(rows+cols) B per matrix */
} optimizer_table[TRN_OPTIMIZER_COUNT] = {
    [TRN_ADAMW] = {8.0, false},	     /* m, v in fp32 */
    [TRN_ADAMW_8BIT] = {2.0, false}, /* m, v blockwise 8-bit */
    [TRN_SGD] = {4.0, false},	     /* fp32 momentum */
    [TRN_ADAFACTOR] = {0.0, true},   /* factored v, no momentum */
};

double trn_optimizer_bytes_per_param(enum trn_optimizer o, double wb, double h)
{
	double master = wb < 4.0 ? 4.0 : 0.0; /* fp32 master copy */
	double b;

	if ((unsigned)o >= TRN_OPTIMIZER_COUNT)
		return 0.0;
	b = master + optimizer_table[o].state_bytes;
	if (optimizer_table[o].factored && h > 0)
		b += 8.0 / h;
	return b;
}

/* Frozen base weight bytes per parameter for LoRA (16-bit) and QLoRA (NF4
 * 0.5 B + double-quantised scales ~0.127 bit/param, Dettmers et al. 2023). */
static const double lora_base_bytes[TRN_METHOD_COUNT] = {
    [TRN_FULL] = 0.0, [TRN_LORA] = 2.0, [TRN_QLORA] = 0.5 + 0.127 / 8.0};

/* ---- request context --------------------------------------------------- */

struct ctx {
	const struct trn_request *rq;
	struct model_params P;
	int gpn;
	long gbs;
	double s, h, a, d, k, V, L;
	double wb, gb, ob, act_b; /* bytes: weight, grad, optimizer, act */
	bool lora;
	double base_b, adapter_layer;		      /* LoRA */
	double nonexp_layer, exp_layer, active_layer; /* per layer, mean */
	double emb, head;
	double moe_frac, a2a_token_bytes; /* MoE dispatch bytes per token */
	double mlp_act;			  /* per token per layer, before /t */
	double dqk, dv, kv_lora_cols;
	bool mla;
	double attn_fwd_layer_token; /* attention fwd FLOPs, ctx = s */
	double r_lin, r_attn;	     /* achieved large-GEMM rates, FLOP/s */
	double r_fa_fwd, r_fa_bwd;   /* fused attention rates, FLOP/s */
	/* Memory-bound kernels, bytes per token per layer (MODEL.md §4):
	 * h-wide (norms, residual adds, dropout; /t with SP) and split
	 * over TP (rotary, MLP activation, MoE permutes), forward and
	 * backward; unfused softmax/dropout bytes per score element; loss. */
	double ew_repl_fwd, ew_repl_bwd, ew_par_fwd, ew_par_bwd;
	double ew_score_fwd, ew_score_bwd;
	double loss_token;		/* fp32 cross-entropy, per token */
	double hbm, intra, inter, host; /* B/s */
	double peak;			/* datasheet FLOP/s for MFU */
	double model_flops_token;
	double capacity;
	double price;
	/* linear-layer weights per GEMM family (active, one layer, t = 1) */
	double w_qkv, w_o, w_up, w_down;
	double n_qkv, n_o, n_up, n_down; /* output/inner dims at t = 1 */
	double ffn_width;		 /* f or f_e (for shape) */
};

static double lin_shape_factor(const struct ctx *c, int t, double tokens)
{
	double tt = (double)t;
	double dims[4] = {c->n_qkv / tt, c->n_o / tt, c->n_up / tt,
			  c->n_down / tt};
	double w[4] = {c->w_qkv, c->w_o, c->w_up, c->w_down};
	double sum_w = 0.0, sum_t = 0.0;

	/* Flops-weighted harmonic mean: time adds up, not rates. */
	for (int i = 0; i < 4; i++) {
		double md = fmin(fmin(dims[i], c->h), tokens);
		sum_w += w[i];
		sum_t += w[i] / hw_gemm_shape_factor(md);
	}
	return sum_t > 0 ? sum_w / sum_t : 1.0;
}

/* Bytes moved by the memory-bound kernels of one layer, per token, forward
 * and backward (MODEL.md §4 derives each term). ab = bytes per activation
 * value (2, or 4 for fp32 training); masks are 1 byte.
 *  h-wide, replicated unless SP: 2 norms (fwd read x + write y = 2h values,
 *  bwd read dy, x + write dx = 3h), 2 residual adds (fwd read 2 + write 1 =
 *  3h, bwd the gradient sum 3h), GPT-style bias-dropout-add masks (1 B,
 *  written fwd, read bwd) when the model has linear biases.
 *  split over TP: rotary on Q and K (read + write, fwd and bwd) unless the
 *  model has learned positions; SwiGLU fwd read gate, up + write = 3f, bwd
 *  read dy, gate, up + write 2 = 5f; GeLU fwd 2f, bwd 3f; MoE: per routed
 *  expert plus the dispatch and combine permutes (read + write h, each,
 *  fwd and bwd).
 *  unfused attention, per score element: softmax fwd read + write, bwd read
 *  dy, y + write; attention dropout fwd read + write + mask, bwd the same.
 *  loss: fp32 cross-entropy over V (read logits, write fp32 probabilities,
 *  one reduction pass, backward read + write the logit gradient). */
static void ew_bytes_init(struct ctx *c)
{
	const struct model_arch *m = &c->rq->model;
	double ab = c->act_b, h = c->h;
	bool dropout = m->linear_biases;
	double rope_cols, mlp_f, mlp_b, moe_f, moe_b, fe;

	c->ew_repl_fwd = 2.0 * 2.0 * h * ab + 2.0 * 3.0 * h * ab;
	c->ew_repl_bwd = 2.0 * 3.0 * h * ab + 2.0 * 3.0 * h * ab;
	if (dropout) {
		c->ew_repl_fwd += 2.0 * h;
		c->ew_repl_bwd += 2.0 * h;
	}
	if (m->learned_pos_emb)
		rope_cols = 0.0;
	else if (c->mla)
		rope_cols = (c->a + 1.0) * (double)m->mla.qk_rope_head_dim;
	else
		rope_cols = (c->a + c->k) * c->d;
	c->ew_par_fwd = 2.0 * rope_cols * ab;
	c->ew_par_bwd = 2.0 * rope_cols * ab;

	/* MLP activation, per unit of FFN width */
	mlp_f = (m->gated_mlp ? 3.0 : 2.0) * ab;
	mlp_b = (m->gated_mlp ? 5.0 : 3.0) * ab;
	fe = (double)m->moe.expert_ffn_hidden_size;
	moe_f = (double)m->moe.top_k * (mlp_f * fe + 2.0 * 2.0 * h * ab) +
		(double)m->moe.shared_experts * mlp_f * fe;
	moe_b = (double)m->moe.top_k * (mlp_b * fe + 2.0 * 2.0 * h * ab) +
		(double)m->moe.shared_experts * mlp_b * fe;
	c->ew_par_fwd +=
	    (1.0 - c->moe_frac) * mlp_f * (double)m->ffn_hidden_size +
	    c->moe_frac * moe_f;
	c->ew_par_bwd +=
	    (1.0 - c->moe_frac) * mlp_b * (double)m->ffn_hidden_size +
	    c->moe_frac * moe_b;

	c->ew_score_fwd = 2.0 * ab + (dropout ? 2.0 * ab + 1.0 : 0.0);
	c->ew_score_bwd = 3.0 * ab + (dropout ? 2.0 * ab + 1.0 : 0.0);
	c->loss_token = (2.0 * ab + 12.0) * c->V;
}

static int ctx_init(struct ctx *c, const struct trn_request *rq)
{
	const struct model_arch *m = &rq->model;
	struct hw_rate r;
	double moe_layers;

	memset(c, 0, sizeof(*c));
	c->rq = rq;
	model_count_params(m, &c->P);
	c->gpn = rq->gpus_per_node > 0 ? rq->gpus_per_node
				       : rq->gpu.max_gpus_per_node;
	if (c->gpn <= 0)
		c->gpn = 1;
	c->s = (double)rq->seq_len;
	c->h = (double)m->hidden_size;
	c->a = (double)m->heads;
	c->d = (double)model_head_dim(m);
	c->k = (double)model_kv_heads(m);
	c->V = (double)m->vocab_size;
	c->L = (double)m->layers;
	c->mla = m->mla.kv_lora_rank > 0;
	c->dqk =
	    c->mla ? (double)(m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim)
		   : c->d;
	c->dv = c->mla ? (double)m->mla.v_head_dim : c->d;
	c->kv_lora_cols =
	    (double)(m->mla.kv_lora_rank + m->mla.qk_rope_head_dim);

	/* bytes per parameter (MODEL.md §3): FP8 training keeps 16-bit
	 * weights (Transformer Engine casts per GEMM). */
	c->wb = eng_dtype_bytes(rq->precision);
	if (rq->precision == ENG_FP8)
		c->wb = 2.0;
	c->act_b = c->wb >= 4.0 ? 4.0 : 2.0;
	c->gb = fmax(eng_dtype_bytes(rq->gradient_precision), c->wb);
	c->ob = trn_optimizer_bytes_per_param(rq->optimizer, c->wb, c->h);
	c->lora = rq->method != TRN_FULL;
	c->base_b = lora_base_bytes[rq->method];

	moe_layers =
	    m->moe.experts > 0 ? c->L - (double)m->moe.dense_layers : 0;
	c->moe_frac = moe_layers / c->L;
	c->exp_layer = c->P.routed_expert / c->L;
	c->nonexp_layer = (c->P.layers - c->P.routed_expert) / c->L;
	c->active_layer = c->P.layers_active / c->L;
	c->emb = c->P.embedding;
	c->head = c->V * c->h;

	/* Per-token MLP activation bytes (Korthikanti's 19 generalised):
	 * input 2h and mask h are in the replicated 10h; here GeLU in/out
	 * 4f, or SwiGLU gate, up and product 6f. MoE: per routed expert plus
	 * the permuted token copy 2h. */
	{
		double per_f = m->gated_mlp ? 6.0 : 4.0;
		double dense = per_f * (double)m->ffn_hidden_size;
		double fe = (double)m->moe.expert_ffn_hidden_size;
		double moe = (double)m->moe.top_k * (per_f * fe + 2.0 * c->h) +
			     (double)m->moe.shared_experts * per_f * fe;
		c->mlp_act = (1.0 - c->moe_frac) * dense + c->moe_frac * moe;
		c->a2a_token_bytes = (double)m->moe.top_k * c->h * c->act_b;
	}

	/* GEMM families of one layer, active weights and split dims. */
	{
		double up_mult = m->gated_mlp ? 2.0 : 1.0;
		double f = (double)m->ffn_hidden_size;
		double act_ffn = 0.0;

		if (m->moe.experts > 0) {
			double fe = (double)m->moe.expert_ffn_hidden_size;
			double ne =
			    (double)(m->moe.top_k + m->moe.shared_experts);
			act_ffn =
			    c->moe_frac * ne * fe + (1.0 - c->moe_frac) * f;
			c->ffn_width = fe;
		} else {
			act_ffn = f;
			c->ffn_width = f;
		}
		if (c->mla) {
			c->w_qkv = c->P.attn_layer - c->a * c->dv * c->h;
			c->n_qkv = fmax((double)m->mla.kv_lora_rank * 4.0,
					c->a * c->dqk);
		} else {
			c->w_qkv = c->h * (c->a + 2.0 * c->k) * c->d;
			c->n_qkv = (c->a + 2.0 * c->k) * c->d;
		}
		c->w_o = c->a * c->dv * c->h;
		c->n_o = c->a * c->dv;
		c->w_up = up_mult * c->h * act_ffn;
		c->n_up = up_mult * c->ffn_width;
		c->w_down = c->h * act_ffn;
		c->n_down = c->ffn_width;
	}

	c->attn_fwd_layer_token =
	    model_attn_fwd_flops_per_token(m, c->s) / c->L;

	r = hw_gemm_rate(&rq->gpu, rq->precision);
	c->r_lin = r.value * 1e12;
	/* Attention scores run in 16-bit even in FP8 recipes (TE). */
	{
		enum eng_dtype at =
		    rq->precision == ENG_FP8 ? ENG_BF16 : rq->precision;
		c->r_attn = hw_gemm_rate(&rq->gpu, at).value * 1e12;
	}
	/* Fused attention runs at its own efficiency (hw.c); the FP32/TF32
	 * recipes scale it by their peak relative to 16-bit. */
	{
		const struct hw_spec *g = &rq->gpu;
		double p16 = g->peak_tflops[ENG_BF16] > 0.0
				 ? g->peak_tflops[ENG_BF16]
				 : g->peak_tflops[ENG_FP16];
		double scale = 1.0;
		if ((rq->precision == ENG_FP32 || rq->precision == ENG_TF32) &&
		    p16 > 0.0)
			scale = g->peak_tflops[rq->precision] / p16;
		c->r_fa_fwd = hw_attn_tflops(g, false) * scale * 1e12;
		c->r_fa_bwd = hw_attn_tflops(g, true) * scale * 1e12;
	}
	ew_bytes_init(c);
	c->hbm = hw_hbm_rate(&rq->gpu).value * 1e9;
	c->intra = hw_intra_rate(&rq->gpu).value * 1e9;
	c->inter =
	    hw_inter_rate(&rq->gpu, rq->inter_node_gbps, c->gpn).value * 1e9;
	c->host = (rq->gpu.host_link_gbps > 0 ? rq->gpu.host_link_gbps
					      : HOST_LINK_DEFAULT_GBPS) *
		  1e9 * 0.8;
	c->peak = rq->gpu.peak_tflops[rq->precision] * 1e12;
	c->capacity = rq->gpu.memory_gib * GIB;
	c->price = rq->price_per_gpu_hour > 0 ? rq->price_per_gpu_hour
					      : rq->gpu.price_per_gpu_hour;

	/* LoRA adapters on every linear layer: r*(d_in + d_out) each. */
	if (c->lora) {
		double rk = (double)rq->lora_rank;
		double f = m->moe.experts > 0
			       ? (double)m->moe.expert_ffn_hidden_size
			       : (double)m->ffn_hidden_size;
		double qkv = c->h + (c->a + 2.0 * c->k) * c->d;
		double o = c->a * c->dv + c->h;
		double mlp = (m->gated_mlp ? 3.0 : 2.0) * (c->h + f);
		c->adapter_layer = rk * (qkv + o + mlp);
	}
	/* Model FLOPs per token (MODEL.md §2). LoRA skips weight gradients
	 * of the frozen base: 4N instead of 6N (MODEL.md §2). */
	c->model_flops_token = (c->lora ? 4.0 : 6.0) * c->P.matmul_active +
			       3.0 * model_attn_fwd_flops_per_token(m, c->s);
	if (c->lora)
		c->model_flops_token += 6.0 * c->adapter_layer * c->L;
	return 0;
}

/* ---- one layout -------------------------------------------------------- */

static double ceil_div(double a, double b)
{
	return ceil(a / b - 1e-12);
}

/* Activation bytes of one layer, one micro-batch, per GPU (Korthikanti
 * Table 2 generalised to GQA/MLA/SwiGLU/MoE, MODEL.md §3). tokens = b*s/cp.
 * want_traffic: the no-recompute tensors (for elementwise traffic). */
static double act_layer_bytes(const struct ctx *c, const struct trn_layout *l,
			      double tokens, enum eng_recompute rc)
{
	double t = (double)l->tp;
	double repl = 10.0 * c->h, par, scores = 0.0;
	double kv_heads_gpu = ceil_div(c->k, t);

	if (rc == ENG_RC_FULL)
		return tokens * 2.0 * c->h / (l->sequence_parallel ? t : 1.0) *
		       c->act_b / 2.0;
	if (l->sequence_parallel)
		repl /= t;
	par = 2.0 * c->a * c->dqk / t + 2.0 * c->a * c->dv / t;
	if (c->mla)
		par +=
		    2.0 * c->a * (c->dqk + c->dv) / t + 2.0 * c->kv_lora_cols;
	else
		par += 4.0 * kv_heads_gpu * c->d;
	par += c->mlp_act / t;
	if (!l->flash_attention && rc == ENG_RC_NONE)
		scores = 5.0 * c->a * c->s / t;
	return tokens * (repl + par + scores) * c->act_b / 2.0;
}

struct stage_params {
	double nonexp, exp, trainable; /* parameters on the worst GPU */
};

static struct stage_params stage_params(const struct ctx *c,
					const struct trn_layout *l, int ls)
{
	struct stage_params sp;
	double t = (double)l->tp;
	double emb_stage;

	if (l->pp == 1)
		emb_stage =
		    c->emb + (c->rq->model.tied_embeddings ? 0 : c->head);
	else /* first stage: embedding; last: head (a copy when tied) */
		emb_stage = fmax(c->emb, c->head);
	sp.nonexp = ((double)ls * c->nonexp_layer + emb_stage) / t;
	sp.exp = (double)ls * c->exp_layer / (t * (double)l->ep);
	sp.trainable =
	    c->lora ? (double)ls * c->adapter_layer / t : sp.nonexp + sp.exp;
	return sp;
}

/* The parts of a layout's memory that ZeRO, offload and recompute do not
 * change, computed once per layout so that the search's inner loops are
 * additions (the same arithmetic as a single evaluation, so results are
 * bit-identical either way). */
struct mem_fixed {
	int ls; /* layers on the fullest stage */
	struct stage_params sp;
	double act[ENG_RC_COUNT]; /* activation bytes per recompute mode */
};

static void mem_fixed_of(const struct ctx *c, const struct trn_layout *l,
			 long m_micro, struct mem_fixed *mf)
{
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;
	double in_flight = 1.0, logits, emb_out;

	mf->ls = (int)ceil_div(c->L, (double)l->pp);
	mf->sp = stage_params(c, l, mf->ls);
	/* Activations (MODEL.md §3; Korthikanti et al. 2022 Table 2): the first
	 * stage holds min(m, p) micro-batches of its layers, x (1 + (p-1)/(p
	 * v)) interleaved; the last stage holds one plus the fp32 logits
	 * 4*s*b*V/t. */
	if (l->pp > 1) {
		in_flight = fmin((double)m_micro, (double)l->pp);
		if (l->vp > 1)
			in_flight *= 1.0 + (double)(l->pp - 1) /
					       ((double)l->pp * (double)l->vp);
	}
	logits = 4.0 * tokens * c->V / (double)l->tp;
	emb_out = in_flight * tokens * c->h * c->act_b * 1.5;
	for (int rc = 0; rc < ENG_RC_COUNT; rc++) {
		double per_layer = act_layer_bytes(c, l, tokens, rc);
		double first = in_flight * (double)mf->ls * per_layer + emb_out;
		double last = (double)mf->ls * per_layer + logits;

		mf->act[rc] = l->pp == 1 ? first + logits : fmax(first, last);
		if (rc == ENG_RC_FULL) /* one layer rebuilt at a time */
			mf->act[rc] +=
			    act_layer_bytes(c, l, tokens, ENG_RC_NONE);
	}
}

/* Weights, gradients and optimizer state on the GPU (w, g, o) and on the
 * host, for the layout's ZeRO stage and offload. */
struct mem_state {
	double w, g, o, host;
};

static struct mem_state mem_state_of(const struct ctx *c,
				     const struct trn_layout *l,
				     const struct mem_fixed *mf)
{
	struct mem_state m = {0};
	double dp = (double)l->dp, edp = dp / (double)l->ep;
	double all = mf->sp.nonexp + mf->sp.exp;
	double shard = mf->sp.nonexp / dp + mf->sp.exp / edp; /* ZeRO shard */
	double tshard = c->lora ? mf->sp.trainable / dp : shard;

	if (c->lora) {
		m.w = all * c->base_b + mf->sp.trainable * 2.0;
		m.g = mf->sp.trainable * c->gb;
		m.o = mf->sp.trainable * c->ob;
		if (l->zero >= 1)
			m.o = tshard * c->ob;
		if (l->zero >= 2)
			m.g = tshard * c->gb;
		if (l->zero >= 3)
			m.w = shard * c->base_b + tshard * 2.0;
	} else {
		m.w = all * c->wb;
		m.g = all * c->gb;
		m.o = all * c->ob;
		if (l->zero >= 1)
			m.o = shard * c->ob;
		if (l->zero >= 2)
			m.g = shard * c->gb;
		if (l->zero >= 3)
			m.w = shard * c->wb;
	}
	if (l->offload >= TRN_OFFLOAD_OPTIMIZER) {
		m.host += m.o;
		m.o = 0.0;
	}
	if (l->offload >= TRN_OFFLOAD_OPTIMIZER_WEIGHTS) {
		/* Only two layers' weights stay resident (prefetch). */
		double resident = fmin(m.w, 2.0 * m.w / (double)mf->ls);
		m.host += m.w - resident;
		m.w = resident;
	}
	return m;
}

/* NCCL buffers counted always, so that adding data-parallel ranks never
 * raises memory per GPU. */
static double mem_overhead(double wgoa)
{
	return OVERHEAD_FIXED_BYTES + OVERHEAD_COMM_BYTES +
	       OVERHEAD_FRAG * wgoa;
}

static double mem_total(const struct mem_state *m, double act)
{
	double wgoa = m->w + m->g + m->o + act;

	return wgoa + mem_overhead(wgoa);
}

static void memory_fill(const struct ctx *c, const struct trn_layout *l,
			const struct mem_fixed *mf, struct trn_plan *p)
{
	struct mem_state m = mem_state_of(c, l, mf);
	double act = mf->act[l->recompute];
	double total = mem_total(&m, act);

	p->memory.weights_gib = m.w / GIB;
	p->memory.gradients_gib = m.g / GIB;
	p->memory.optimizer_gib = m.o / GIB;
	p->memory.activations_gib = act / GIB;
	p->memory.overhead_gib = mem_overhead(m.w + m.g + m.o + act) / GIB;
	p->memory.total_gib = total / GIB;
	p->memory.capacity_gib = c->capacity / GIB;
	p->memory.host_gib = m.host / GIB;
	p->fits = total <= c->capacity;
	p->layers_per_stage_max = mf->ls;
	p->uneven_stages = (c->rq->model.layers % l->pp) != 0;
}

/* Bandwidth (B/s) of a group whose members span `span` consecutive ranks:
 * inside a node it rides the intra-node link, otherwise each GPU's share of
 * the node's NICs (MODEL.md §4). */
static double group_bw(const struct ctx *c, long span)
{
	return span <= c->gpn ? c->intra : c->inter;
}

/* Nodes a group of n ranks, `stride` ranks apart (Megatron order tp-cp-dp-
 * pp), spans. */
static double group_nodes(const struct ctx *c, double n, long stride)
{
	double per_node =
	    stride >= c->gpn ? 1.0 : floor((double)c->gpn / (double)stride);

	if (per_node < 1.0)
		per_node = 1.0;
	return ceil(n / per_node - 1e-12);
}

/* One collective over n ranks on `nodes` nodes: NCCL's cost model, shared
 * with the inference engine (engine/collective.h, MODEL.md §4). */
static double coll_s(const struct ctx *c, enum coll_kind k, double bytes,
		     double n, double nodes, double bw)
{
	return coll_time_s(k, bytes, n, nodes, bw, c->rq->gpu.intra_node_link);
}

/* Per layer, per micro-batch, per GPU (MODEL.md §4). */
struct layer_cost {
	double gemm, attn, mem; /* compute parts, s */
	double tp;		/* tensor-parallel collectives, s */
	double attn_hide;	/* attention time CP traffic can hide behind */
};

static void layer_time(const struct ctx *c, const struct trn_layout *l,
		       double tokens, struct layer_cost *lc)
{
	double t = (double)l->tp;
	double f_lin = lin_shape_factor(c, l->tp, tokens);
	double lin_fwd =
	    2.0 * tokens * c->active_layer / t / (c->r_lin * f_lin);
	double attn_fwd_flops = tokens * c->attn_fwd_layer_token / t;
	double attn_f, attn_b, lin_passes, attn_fwd_passes = 1.0;
	double repl = l->sequence_parallel ? t : 1.0;
	double ew_f, ew_b, score_f = 0.0, score_b = 0.0;

	if (l->flash_attention) {
		/* Causal flash attention skips the masked half of the
		 * blocks; the FLOP accounting (MFU) keeps the full count. */
		attn_fwd_flops *= 0.5;
		attn_f = attn_fwd_flops / c->r_fa_fwd;
		attn_b = FLASH_BWD_FLOPS * attn_fwd_flops / c->r_fa_bwd;
	} else {
		/* Unfused: batched GEMMs at the shape factor of d, the full
		 * s x s scores, and the softmax/dropout kernels. */
		double r =
		    c->r_attn * hw_gemm_shape_factor(fmin(c->dqk, c->dv));
		double elems = tokens * c->a * c->s / t;
		attn_f = attn_fwd_flops / r;
		attn_b = 2.0 * attn_fwd_flops / r;
		score_f = elems * c->ew_score_fwd;
		score_b = elems * c->ew_score_bwd;
	}
	ew_f = tokens * (c->ew_repl_fwd / repl + c->ew_par_fwd / t) + score_f;
	ew_b = tokens * (c->ew_repl_bwd / repl + c->ew_par_bwd / t) + score_b;

	/* forward 1 + backward 2 (LoRA: input gradients only, 1). */
	lin_passes = c->lora ? 2.0 : 3.0;
	if (l->recompute == ENG_RC_FULL) {
		lin_passes += 1.0;
		attn_fwd_passes += 1.0;
		ew_b += ew_f;
	} else if (l->recompute == ENG_RC_SELECTIVE) {
		attn_fwd_passes += 1.0;
		ew_b += score_f;
	}
	lc->gemm = lin_passes * lin_fwd;
	lc->attn = attn_fwd_passes * attn_f + attn_b;
	lc->mem = (ew_f + ew_b) / c->hbm;
	lc->attn_hide = attn_f + attn_b;

	lc->tp = 0.0;
	if (l->tp > 1) {
		/* 2 all-reduces forward, 2 backward (+2 recomputed forward) of
		 * b*s*h values; SP turns each into reduce-scatter + all-gather
		 * of the same volume (Korthikanti et al. 2022 §4.2.2; MODEL.md
		 * §4). */
		double n = l->recompute == ENG_RC_FULL ? 6.0 : 4.0;
		double bytes = tokens * c->h * c->act_b;
		double one =
		    l->sequence_parallel
			? coll_s(c, COLL_RS, bytes, t, 1.0, c->intra) +
			      coll_s(c, COLL_AG, bytes, t, 1.0, c->intra)
			: coll_s(c, COLL_AR, bytes, t, 1.0, c->intra);
		lc->tp = n * one;
	}
}

/* LM head per micro-batch on the last stage: 2*tokens*V*h/t forward, plus
 * the fp32 cross-entropy over the vocabulary (memory-bound). */
static void head_time(const struct ctx *c, const struct trn_layout *l,
		      double tokens, double *gemm, double *mem)
{
	double t = (double)l->tp;
	double f = hw_gemm_shape_factor(fmin(c->V / t, fmin(c->h, tokens)));
	double fwd = 2.0 * tokens * c->head / t / (c->r_lin * f);

	*gemm = (c->lora ? 2.0 : 3.0) * fwd;
	*mem = tokens * c->loss_token / t / c->hbm;
}

/* The compute of one micro-batch on the fullest stage: per layer, and the
 * LM head. ZeRO and offload do not change it, so the search computes it
 * once per layout and recompute mode. */
struct mb_cost {
	struct layer_cost lc;
	double head_g, head_m;
};

static void mb_cost_of(const struct ctx *c, const struct trn_layout *l,
		       struct mb_cost *mc)
{
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;

	layer_time(c, l, tokens, &mc->lc);
	head_time(c, l, tokens, &mc->head_g, &mc->head_m);
}

/* A lower bound on a plan's step time: its compute, tensor-parallel
 * collectives and the part of the bubble they make; every other term of
 * time_of's step_s is >= 0 and is added after these, in the same order, so
 * the bound holds in floating point too. */
static double step_lower_bound_s(const struct trn_layout *l, long m_micro,
				 int ls, const struct mb_cost *mc)
{
	const struct layer_cost *lc = &mc->lc;
	double m = (double)m_micro, L_s = (double)ls;
	double lcomp = lc->gemm + lc->attn + lc->mem;
	double head = mc->head_g + mc->head_m;
	double t_mb = L_s * (lcomp + lc->tp) + head; /* lep, lcp >= 0 */

	return m * (L_s * lcomp + head) + m * L_s * lc->tp +
	       (double)(l->pp - 1) / (double)l->vp * t_mb;
}

static void time_of(const struct ctx *c, const struct trn_layout *l,
		    long m_micro, const struct mb_cost *mc, struct trn_plan *p)
{
	int ls = p->layers_per_stage_max;
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;
	double m = (double)m_micro, L_s = (double)ls;
	double head_g = mc->head_g, head_m = mc->head_m, head, t_mb, lep = 0.0,
	       lcp = 0.0, cp_hidden = 0.0;
	double lcomp, window, nic_busy = 0.0;
	struct layer_cost lc = mc->lc;
	struct stage_params sp = stage_params(c, l, ls);
	struct trn_time *T = &p->time;
	long span_tc = (long)l->tp * l->cp;
	double dp = (double)l->dp;
	bool ep_inter = false, cp_inter = span_tc > c->gpn;

	memset(T, 0, sizeof(*T));
	head = head_g + head_m;
	lcomp = lc.gemm + lc.attn + lc.mem;

	/* MoE: dispatch + combine all-to-all, forward and backward (+ the
	 * recomputed forward), over the EP group (inside dp). */
	if (l->ep > 1 && c->moe_frac > 0) {
		double n = l->recompute == ENG_RC_FULL ? 6.0 : 4.0;
		double bytes = tokens * c->a2a_token_bytes / (double)l->tp;
		double bw = group_bw(c, span_tc * l->ep);
		ep_inter = span_tc * l->ep > c->gpn;
		lep = c->moe_frac * n *
		      (bytes * ((double)l->ep - 1.0) / (double)l->ep / bw +
		       COLL_LATENCY_S);
	}
	/* Context parallel (ring attention): K and V chunks travel cp-1
	 * hops forward, twice that backward; hidden behind attention. */
	if (l->cp > 1) {
		double kvb = c->mla ? c->kv_lora_cols
				    : 2.0 * ceil_div(c->k, l->tp) * c->d;
		double bytes = tokens * kvb * c->act_b;
		double comm =
		    3.0 * ((double)l->cp - 1.0) * bytes / group_bw(c, span_tc);
		lcp = fmax(0.0, comm - OVERLAP_EFF * lc.attn_hide);
		cp_hidden = comm - lcp;
	}

	t_mb = L_s * (lcomp + lc.tp + lep + lcp) + head;
	T->compute_s = m * (L_s * lcomp + head);
	T->attention_s = m * L_s * lc.attn;
	T->memory_bound_s = m * (L_s * lc.mem + head_m);
	T->tp_comm_s = m * L_s * lc.tp;
	T->ep_comm_s = m * L_s * lep;
	T->cp_comm_exposed_s = m * L_s * lcp;
	/* Bubble (p-1)/v micro-batch slots of the slowest stage. */
	T->pp_bubble_s = (double)(l->pp - 1) / (double)l->vp * t_mb;
	if (l->pp > 1) {
		/* activations forward + gradients backward per boundary,
		 * scatter/gather over TP (Narayanan 2021 §4.1). Not overlapped,
		 * so it never shares a window with DP traffic on the NIC. */
		double bytes = tokens * c->h * c->act_b / (double)l->tp;
		double bw = group_bw(c, span_tc * l->dp * 2);
		T->pp_p2p_s =
		    m * (double)l->vp * 2.0 * (bytes / bw + COLL_LATENCY_S);
	}

	/* Data parallel (MODEL.md §4). All DP traffic of a step
	 * shares one link (the node's NICs, or NVLink inside a node): its
	 * total time can hide behind at most OVERLAP_EFF of the compute it
	 * may overlap, less what ring attention already hides there when it
	 * rides the same NICs. Phases where the NIC is busy on the critical
	 * path (inter-node EP all-to-all) are not part of the window. */
	if (l->dp > 1) {
		double bw = group_bw(c, span_tc * l->dp);
		double edp = dp / (double)l->ep;
		double nodes = group_nodes(c, dp, span_tc);
		double enodes = group_nodes(c, edp, span_tc);
		double gb_ne = (c->lora ? sp.trainable : sp.nonexp) * c->gb;
		double gb_ex = c->lora ? 0.0 : sp.exp * c->gb;
		double per_layer_ne = gb_ne / L_s, per_layer_ex = gb_ex / L_s;
		double mb_window = t_mb - (ep_inter ? L_s * lep : 0.0);
		double traffic;

		if (l->zero >= 3) {
			/* per micro-batch and layer (FSDP units): all-gather
			 * the weights forward and backward, reduce-scatter
			 * the gradients; everything prefetched behind the
			 * micro-batch's compute. */
			double wb = c->lora ? c->base_b : c->wb;
			double w_ne = sp.nonexp * wb;
			double w_ex = sp.exp * wb;
			double per =
			    2.0 *
				coll_s(c, COLL_AG, w_ne / L_s, dp, nodes, bw) +
			    coll_s(c, COLL_RS, per_layer_ne, dp, nodes, bw);
			if (w_ex > 0.0)
				per += 2.0 * coll_s(c, COLL_AG, w_ex / L_s, edp,
						    enodes, bw) +
				       coll_s(c, COLL_RS, per_layer_ex, edp,
					      enodes, bw);
			traffic = m * L_s * per;
			window = m * mb_window;
		} else if (l->zero == 2) {
			/* gradients partitioned: reduce-scatter every
			 * micro-batch's backward (DeepSpeed ZeRO-2); the
			 * updated weights all-gathered once per step, behind
			 * the next forward. */
			double wb = c->lora ? 2.0 : c->wb;
			double per =
			    coll_s(c, COLL_RS, per_layer_ne, dp, nodes, bw) +
			    coll_s(c, COLL_RS, per_layer_ex, edp, enodes, bw);
			double ag = coll_s(c, COLL_AG, gb_ne / c->gb * wb / L_s,
					   dp, nodes, bw) +
				    coll_s(c, COLL_AG, gb_ex / c->gb * wb / L_s,
					   edp, enodes, bw);
			traffic = L_s * (m * per + ag);
			window = m * (2.0 / 3.0) * mb_window +
				 (1.0 / 3.0) * mb_window;
		} else {
			/* one all-reduce per step (ZeRO-1: reduce-scatter +
			 * all-gather, the same volume), bucketed per layer,
			 * behind the last micro-batch's backward. */
			double per =
			    coll_s(c, COLL_AR, per_layer_ne, dp, nodes, bw) +
			    coll_s(c, COLL_AR, per_layer_ex, edp, enodes, bw);
			traffic = L_s * per;
			window = (2.0 / 3.0) * mb_window;
		}
		if (cp_inter && bw == c->inter)
			nic_busy = m * L_s * cp_hidden;
		T->dp_comm_exposed_s = fmax(
		    0.0, traffic - fmax(0.0, OVERLAP_EFF * window - nic_busy));
	}

	/* Optimizer step: memory-bound over the shard this GPU updates. */
	{
		double n_upd = c->lora ? sp.trainable : sp.nonexp + sp.exp;
		if (l->zero >= 1)
			n_upd = c->lora ? sp.trainable / dp
					: sp.nonexp / dp +
					      sp.exp / (dp / (double)l->ep);
		if (l->offload >= TRN_OFFLOAD_OPTIMIZER) {
			/* gradients down, weights up over PCIe; CPU Adam. */
			T->optimizer_s = n_upd * (c->gb + c->wb) / c->host +
					 n_upd * 2.0 * c->ob / HOST_OPT_BPS;
		} else {
			T->optimizer_s = n_upd *
					 (2.0 * c->wb + c->gb + 2.0 * c->ob) /
					 c->hbm;
		}
		if (l->offload >= TRN_OFFLOAD_OPTIMIZER_WEIGHTS) {
			double wbytes = (sp.nonexp + sp.exp) *
					(c->lora ? c->base_b : c->wb);
			T->optimizer_s += m * fmax(0.0, 2.0 * wbytes / c->host -
							    OVERLAP_EFF * t_mb);
		}
	}

	T->step_s = T->compute_s + T->tp_comm_s + T->pp_bubble_s + T->pp_p2p_s +
		    T->dp_comm_exposed_s + T->ep_comm_s + T->cp_comm_exposed_s +
		    T->optimizer_s;

	/* Throughput and FLOP utilisation (MFU: model FLOPs; HFU: with
	 * recompute; both over the datasheet dense peak of the precision). */
	{
		double tokens_step = (double)p->global_batch_size * c->s;
		double hw = c->model_flops_token;
		double G = (double)p->gpus;
		double fwd_layers =
		    2.0 * c->P.layers_active + c->L * c->attn_fwd_layer_token;

		if (l->recompute == ENG_RC_FULL)
			hw += fwd_layers;
		else if (l->recompute == ENG_RC_SELECTIVE)
			hw += c->L * c->attn_fwd_layer_token;
		p->hardware_flops_per_token = hw;
		p->tokens_per_s = tokens_step / T->step_s;
		p->tokens_per_s_per_gpu = p->tokens_per_s / G;
		p->mfu = c->model_flops_token * p->tokens_per_s / (G * c->peak);
		p->hfu = hw * p->tokens_per_s / (G * c->peak);
		if (c->rq->train_tokens > 0) {
			double secs = c->rq->train_tokens / p->tokens_per_s;
			p->days = secs / 86400.0;
			p->gpu_hours = secs / 3600.0 * G;
			p->cost = p->gpu_hours * c->price;
		}
	}
}

/* The memory part of a plan for layout l, m_micro micro-batches per step,
 * the layout's fixed memory already in mf. */
static void plan_memory(const struct ctx *c, const struct trn_layout *l,
			long m_micro, const struct mem_fixed *mf,
			struct trn_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->layout = *l;
	p->gpus = (long)l->tp * l->pp * l->dp * l->cp;
	p->nodes = (p->gpus + c->gpn - 1) / c->gpn;
	p->global_batch_size = c->gbs;
	p->grad_accum = m_micro;
	memory_fill(c, l, mf, p);
}

/* Micro-batches per step for layout l; -1 when the layout breaks a
 * divisibility rule (why in *why). */
static long micro_batches(const struct ctx *c, const struct trn_layout *l,
			  const char **why)
{
	long per_dp, m_micro;

	if (c->gbs % l->dp != 0) {
		*why = "global_batch_size";
		return -1;
	}
	per_dp = c->gbs / l->dp;
	if (per_dp % l->micro_batch != 0) {
		*why = "global_batch_size";
		return -1;
	}
	m_micro = per_dp / l->micro_batch;
	if (l->vp > 1 && m_micro % l->pp != 0) {
		*why = "strategies.vp"; /* Megatron: m multiple of p */
		return -1;
	}
	return m_micro;
}

/* Fills a plan for layout l; returns 0, or -1 when the layout breaks a
 * divisibility rule (why in *why). Memory always; time only when want_time
 * (the search skips timing of layouts that do not fit). */
static int plan_of(const struct ctx *c, const struct trn_layout *l,
		   struct trn_plan *p, bool want_time, const char **why)
{
	long m_micro = micro_batches(c, l, why);
	struct mem_fixed mf;

	if (m_micro < 0)
		return -1;
	mem_fixed_of(c, l, m_micro, &mf);
	plan_memory(c, l, m_micro, &mf, p);
	if (want_time) {
		struct mb_cost mc;

		mb_cost_of(c, l, &mc);
		time_of(c, l, m_micro, &mc, p);
	}
	return 0;
}

/* ---- validation ------------------------------------------------------- */

static int fail_model(struct eng_error *err, const char *msg)
{
	char field[64];
	size_t n = strcspn(msg, ":");

	if (n >= sizeof(field))
		n = sizeof(field) - 1;
	memcpy(field, msg, n);
	field[n] = '\0';
	return eng_fail(err, ENG_EINVAL, field, "%s", msg);
}

static int check_list(const struct trn_choices *ch, const char *field, int lo,
		      int hi, struct eng_error *err)
{
	if (ch->n < 0 || ch->n > TRN_MAX_CHOICES)
		return eng_fail(err, ENG_EINVAL, field,
				"at most %d values allowed", TRN_MAX_CHOICES);
	for (int i = 0; i < ch->n; i++)
		if (ch->v[i] < lo || ch->v[i] > hi)
			return eng_fail(err, ENG_EINVAL, field,
					"value %d out of range %d..%d",
					ch->v[i], lo, hi);
	return 0;
}

static bool finite_nonneg(double x)
{
	return isfinite(x) && x >= 0.0;
}

static int validate(const struct trn_request *rq, struct eng_error *err)
{
	char msg[256];
	const struct model_arch *m = &rq->model;
	const struct trn_strategies *st = &rq->strategies;
	const struct hw_spec *g = &rq->gpu;
	int gpn =
	    rq->gpus_per_node > 0 ? rq->gpus_per_node : g->max_gpus_per_node;
	int rc;

	if (model_validate(m, msg, sizeof(msg)))
		return fail_model(err, msg);
	if (rq->seq_len <= 0 || rq->seq_len > TRN_SEQ_LEN_MAX)
		return eng_fail(err, ENG_EINVAL, "seq_len",
				"must be between 1 and %ld", TRN_SEQ_LEN_MAX);
	if (m->learned_pos_emb && rq->seq_len > m->max_seq_len)
		return eng_fail(err, ENG_EINVAL, "seq_len",
				"exceeds model.max_seq_len (%ld) of a model "
				"with learned positions",
				m->max_seq_len);
	if (!finite_nonneg(rq->train_tokens))
		return eng_fail(err, ENG_EINVAL, "train_tokens",
				"must be a finite number >= 0");
	if (rq->global_batch_size < 0)
		return eng_fail(err, ENG_EINVAL, "global_batch_size",
				"must be positive");
	if (!finite_nonneg(rq->global_batch_tokens))
		return eng_fail(err, ENG_EINVAL, "global_batch_tokens",
				"must be a finite number >= 0");
	switch (rq->precision) {
	case ENG_FP32:
	case ENG_TF32:
	case ENG_FP16:
	case ENG_BF16:
	case ENG_FP8:
		break;
	default:
		return eng_fail(err, ENG_EINVAL, "precision",
				"must be fp32, tf32, fp16, bf16 or fp8");
	}
	if (rq->gradient_precision != ENG_BF16 &&
	    rq->gradient_precision != ENG_FP32 &&
	    rq->gradient_precision != ENG_FP16)
		return eng_fail(err, ENG_EINVAL, "gradient_precision",
				"must be bf16 or fp32");
	if ((unsigned)rq->optimizer >= TRN_OPTIMIZER_COUNT)
		return eng_fail(err, ENG_EINVAL, "optimizer",
				"must be adamw, adamw_8bit, sgd or adafactor");
	if ((unsigned)rq->method >= TRN_METHOD_COUNT)
		return eng_fail(err, ENG_EINVAL, "method",
				"must be full, lora or qlora");
	if (rq->method != TRN_FULL &&
	    (rq->lora_rank <= 0 || rq->lora_rank > m->hidden_size))
		return eng_fail(err, ENG_EINVAL, "lora_rank",
				"must be between 1 and hidden_size");
	if ((unsigned)rq->objective >= TRN_OBJ_COUNT)
		return eng_fail(err, ENG_EINVAL, "objective",
				"must be time, cost or gpus");
	if (rq->top < 0 || rq->top > TRN_MAX_TOP)
		return eng_fail(err, ENG_EINVAL, "top",
				"must be between 1 and %d", TRN_MAX_TOP);
	if (!(g->memory_gib > 0) || !isfinite(g->memory_gib))
		return eng_fail(err, ENG_EINVAL, "gpu.memory_gib",
				"must be positive");
	if (!(g->memory_bandwidth_gbps > 0))
		return eng_fail(err, ENG_EINVAL, "gpu.memory_bandwidth_gbps",
				"must be positive");
	if (gpn <= 0 || gpn > TRN_GPUS_PER_NODE_MAX)
		return eng_fail(err, ENG_EINVAL, "gpus_per_node",
				"must be between 1 and %d",
				TRN_GPUS_PER_NODE_MAX);
	if (rq->gpus < 0 || rq->max_gpus < 0 || rq->gpus > TRN_GPUS_MAX ||
	    rq->max_gpus > TRN_GPUS_MAX)
		return eng_fail(err, ENG_EINVAL, rq->gpus ? "gpus" : "max_gpus",
				"must be between 1 and %ld", TRN_GPUS_MAX);
	if (rq->gpus == 0 && rq->max_gpus == 0)
		return eng_fail(err, ENG_EINVAL, "max_gpus",
				"give gpus or max_gpus");
	if (!finite_nonneg(rq->deadline_days))
		return eng_fail(err, ENG_EINVAL, "deadline_days",
				"must be a finite number >= 0");
	if (!finite_nonneg(rq->price_per_gpu_hour))
		return eng_fail(err, ENG_EINVAL, "price_per_gpu_hour",
				"must be a finite number >= 0");
	if (!finite_nonneg(rq->inter_node_gbps))
		return eng_fail(err, ENG_EINVAL, "inter_node_gbps",
				"must be a finite number >= 0");
	if (!hw_supports(g, rq->precision)) {
		if (rq->precision == ENG_FP8)
			return eng_fail(
			    err, ENG_EUNSUPPORTED, "precision",
			    "fp8 needs FP8 tensor cores (Ada sm_89, Hopper "
			    "sm_90, Blackwell); %s (compute capability "
			    "%d.%d) has none - use bf16",
			    g->name, g->cc_major, g->cc_minor);
		return eng_fail(err, ENG_EUNSUPPORTED, "precision",
				"%s has no datasheet %s rate", g->name,
				eng_dtype_name(rq->precision));
	}

	for (int i = 0; i < TRN_INT_LISTS; i++) {
		const struct trn_int_list *l = &trn_int_lists[i];
		const struct trn_choices *c =
		    (const struct trn_choices *)((const char *)st + l->offset);
		char field[32];
		snprintf(field, sizeof(field), "strategies.%s", l->key);
		if ((rc = check_list(c, field, l->min, l->max, err)))
			return rc;
	}
	if ((rc = check_list(&st->pp, "strategies.pp", 1, (int)m->layers,
			     err)) ||
	    (rc = check_list(&st->recompute, "strategies.recompute", 0,
			     ENG_RC_COUNT - 1, err)) ||
	    (rc = check_list(&st->sequence_parallel,
			     "strategies.sequence_parallel", 0, 1, err)) ||
	    (rc = check_list(&st->flash_attention, "strategies.flash_attention",
			     0, 1, err)) ||
	    (rc = check_list(&st->offload, "strategies.offload", 0,
			     TRN_OFFLOAD_COUNT - 1, err)))
		return rc;
	for (int i = 0; i < st->tp.n; i++) {
		int t = st->tp.v[i];
		if (m->heads % t != 0)
			return eng_fail(err, ENG_EINVAL, "strategies.tp",
					"model.heads (%ld) is not divisible by "
					"tp %d",
					m->heads, t);
		if (t > gpn)
			return eng_fail(
			    err, ENG_EINVAL, "strategies.tp",
			    "tp %d exceeds gpus_per_node %d: tensor "
			    "parallelism stays inside one node",
			    t, gpn);
	}
	for (int i = 0; i < st->ep.n; i++) {
		int e = st->ep.v[i];
		if (e > 1 && (m->moe.experts == 0 || m->moe.experts % e != 0))
			return eng_fail(err, ENG_EINVAL, "strategies.ep",
					"model.moe.experts (%ld) is not "
					"divisible by ep %d",
					m->moe.experts, e);
	}
	for (int i = 0; i < st->cp.n; i++)
		if (rq->seq_len % st->cp.v[i] != 0)
			return eng_fail(err, ENG_EINVAL, "strategies.cp",
					"seq_len (%ld) is not divisible by cp "
					"%d",
					rq->seq_len, st->cp.v[i]);
	return 0;
}

static long resolve_gbs(const struct trn_request *rq)
{
	double tok;

	if (rq->global_batch_size > 0)
		return rq->global_batch_size;
	if (rq->global_batch_tokens <= 0 && rq->method != TRN_FULL)
		return TRN_FINETUNE_BATCH_SEQS;
	tok = rq->global_batch_tokens > 0 ? rq->global_batch_tokens
					  : DEFAULT_BATCH_TOKENS;
	/* clamped so the conversion is defined; validation refuses it */
	return (long)fmin((double)TRN_MAX_GLOBAL_BATCH + 1.0,
			  fmax(1.0, floor(tok / (double)rq->seq_len + 0.5)));
}

/* ---- search ----------------------------------------------------------- */

static void push(struct trn_choices *c, int v)
{
	for (int i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return;
	if (c->n < TRN_MAX_CHOICES)
		c->v[c->n++] = v;
}

static void sort_choices(struct trn_choices *c)
{
	for (int i = 1; i < c->n; i++)
		for (int j = i; j > 0 && c->v[j - 1] > c->v[j]; j--) {
			int x = c->v[j];
			c->v[j] = c->v[j - 1];
			c->v[j - 1] = x;
		}
}

struct lists {
	struct trn_choices tp, pp, ep, cp, vp, zero, rc, sp, fa, mb, off;
};

/* Engine defaults for lists the request left empty (MODEL.md §6). */
static void default_lists(const struct ctx *c, struct lists *L)
{
	const struct trn_request *rq = c->rq;
	const struct trn_strategies *st = &rq->strategies;
	const struct model_arch *m = &rq->model;
	long gmax = rq->gpus > 0 ? rq->gpus : rq->max_gpus;

	memset(L, 0, sizeof(*L));
	L->tp = st->tp;
	if (!L->tp.n)
		for (int t = 1; t <= c->gpn && t <= m->heads && t <= gmax;
		     t *= 2)
			if (m->heads % t == 0)
				push(&L->tp, t);
	L->pp = st->pp;
	if (!L->pp.n) {
		for (long p = 1; p <= m->layers && p <= gmax; p *= 2)
			push(&L->pp, (int)p);
		for (long p = 3; p <= m->layers && p <= gmax; p++)
			if (m->layers % p == 0)
				push(&L->pp, (int)p);
		/* 126 layers on 16 stages style: uneven stages allowed */
	}
	sort_choices(&L->pp);
	L->ep = st->ep;
	if (!L->ep.n) {
		push(&L->ep, 1);
		for (long e = 2; m->moe.experts > 0 && e <= m->moe.experts &&
				 e <= gmax && e <= 256;
		     e *= 2)
			if (m->moe.experts % e == 0)
				push(&L->ep, (int)e);
	}
	L->cp = st->cp;
	if (!L->cp.n) {
		push(&L->cp, 1);
		for (long cp = 2; rq->seq_len >= 32768 && cp <= 16; cp *= 2)
			if (rq->seq_len % cp == 0)
				push(&L->cp, (int)cp);
	}
	L->vp = st->vp;
	if (!L->vp.n) {
		static const int vps[] = {1, 2, 3, 4, 6, 8};
		for (size_t i = 0; i < sizeof(vps) / sizeof(vps[0]); i++)
			push(&L->vp, vps[i]);
	}
	L->zero = st->zero;
	if (!L->zero.n)
		for (int z = 0; z <= 3; z++)
			push(&L->zero, z);
	sort_choices(&L->zero);
	L->rc = st->recompute;
	if (!L->rc.n)
		for (int r = 0; r < ENG_RC_COUNT; r++)
			push(&L->rc, r);
	sort_choices(&L->rc);
	L->sp = st->sequence_parallel;
	if (!L->sp.n)
		push(&L->sp, 1);
	L->fa = st->flash_attention;
	if (!L->fa.n)
		push(&L->fa, 1);
	L->mb = st->micro_batch;
	if (!L->mb.n)
		for (int b = 1; b <= 16; b *= 2)
			push(&L->mb, b);
	L->off = st->offload;
	if (!L->off.n)
		for (int o = 0; o < TRN_OFFLOAD_COUNT; o++)
			push(&L->off, o);
	sort_choices(&L->off);
}

/* Interleaving (v > 1) needs p > 1 and at least one layer per chunk, and
 * must not enlarge the worst stage: v * ceil(L/(p v)) <= ceil(L/p). Even
 * splits (L % (p v) == 0) always pass; 126 layers on 16 stages take v = 2,
 * 4 or 8 with 7-8 layers per stage, as Llama 3 405B did (MODEL.md §6). */
static bool vp_ok(long L, int p, int v)
{
	long chunks = (long)p * v;

	if (v <= 1)
		return true;
	if (p <= 1 || L < chunks)
		return false;
	return (long)v * ((L + chunks - 1) / chunks) <= (L + p - 1) / p;
}

struct search {
	const struct ctx *c;
	int top;
	int n;
	struct trn_plan best[TRN_MAX_TOP];
	double key[TRN_MAX_TOP][3];
	long evaluated, divisible, fitting, min_gpus, min_gpus_no_offload;
	bool have_small;
	struct trn_layout smallest; /* least memory of all, for the error */
	double smallest_bytes;
	bool need_inter_skipped;
	struct eng_budget *budget; /* the request's, or NULL */
	int rc;			   /* a budget's stop: ENG_EBUDGET/ECANCELLED */
	/* dp candidates: the divisors of the global batch up to the GPU
	 * limit, ascending (only they split it; MODEL.md §6) */
	int n_dps;
	long dps[TRN_MAX_DP_CANDIDATES];
};

/* The ranking key of a plan: (misses the deadline, then by objective). */
static void plan_key(const struct ctx *c, bool meets_deadline,
		     double tokens_per_s, long gpus, double k[3])
{
	double miss = meets_deadline ? 0.0 : 1.0;
	double spt = 1.0 / tokens_per_s; /* seconds per token */

	k[0] = miss;
	/* A plan that misses the deadline should miss it by as little as
	 * possible: those rank by time whatever the objective (else cost
	 * would pick the slowest, cheapest plan of all). */
	switch (miss > 0 && c->rq->deadline_days > 0 ? TRN_OBJ_TIME
						     : c->rq->objective) {
	case TRN_OBJ_COST:
		k[1] = spt * (double)gpus; /* GPU-seconds per token */
		k[2] = spt;
		break;
	case TRN_OBJ_GPUS:
		k[1] = (double)gpus;
		k[2] = spt;
		break;
	default:
		k[1] = spt;
		k[2] = (double)gpus;
		break;
	}
}

static bool meets_deadline(const struct ctx *c, double tokens_per_s)
{
	double days = 0.0;

	if (c->rq->train_tokens > 0) /* as time_of computes p->days */
		days = c->rq->train_tokens / tokens_per_s / 86400.0;
	return c->rq->deadline_days <= 0 || days <= c->rq->deadline_days;
}

static bool key_less(const double a[3], const double b[3])
{
	for (int i = 0; i < 3; i++) {
		if (a[i] < b[i])
			return true;
		if (a[i] > b[i])
			return false;
	}
	return false;
}

static void consider(struct search *S, const struct trn_plan *p)
{
	double k[3];
	int pos;

	plan_key(S->c, p->meets_deadline, p->tokens_per_s, p->gpus, k);
	if (S->n == S->top && !key_less(k, S->key[S->n - 1]))
		return;
	pos = S->n < S->top ? S->n++ : S->n - 1;
	while (pos > 0 && key_less(k, S->key[pos - 1])) {
		S->best[pos] = S->best[pos - 1];
		memcpy(S->key[pos], S->key[pos - 1], sizeof(k));
		pos--;
	}
	S->best[pos] = *p;
	memcpy(S->key[pos], k, sizeof(k));
}

/* Whether a plan whose step takes at least step_lb_s could enter the top:
 * its key is bounded below component by component (each is monotone in the
 * step time), so a bound that does not beat the worst kept key means the
 * plan would not either, and timing it can be skipped without changing the
 * result (branch and bound). */
static bool may_enter(const struct search *S, long gpus, double step_lb_s)
{
	double k[3], tokens_per_s;

	if (S->n < S->top)
		return true;
	tokens_per_s = (double)S->c->gbs * S->c->s / step_lb_s;
	plan_key(S->c, meets_deadline(S->c, tokens_per_s), tokens_per_s, gpus,
		 k);
	return key_less(k, S->key[S->n - 1]);
}

/* For one (tp, cp, pp, vp, dp, ep, mb, sp, fa): each ZeRO stage with the
 * cheapest recompute that fits; offload only when nothing fits without.
 * Memory is summed from the layout's fixed part (once) and the ZeRO/offload
 * part (once per pair); a plan is built and timed only when it fits. */
static void try_layout(struct search *S, const struct lists *L,
		       struct trn_layout *l)
{
	const struct ctx *c = S->c;
	const char *why = NULL;
	bool explicit_zero = c->rq->strategies.zero.n > 0;
	long m_micro = micro_batches(c, l, &why);
	long gpus = (long)l->tp * l->pp * l->dp * l->cp;
	struct mem_fixed mf;
	struct mb_cost mc[ENG_RC_COUNT];
	bool have_mc[ENG_RC_COUNT] = {false};

	if (m_micro < 0)
		return;
	mem_fixed_of(c, l, m_micro, &mf);
	for (int zi = 0; zi < L->zero.n; zi++) {
		bool found = false;

		l->zero = L->zero.v[zi];
		if (l->zero > 0 && l->dp == 1 && !explicit_zero)
			continue; /* same as ZeRO-0 */
		if (l->zero >= 2 && l->pp > 1)
			continue; /* ZeRO-2/3 do not combine with PP */
		for (int oi = 0; oi < L->off.n && !found; oi++) {
			struct mem_state ms;

			l->offload = (enum trn_offload)L->off.v[oi];
			ms = mem_state_of(c, l, &mf);
			for (int ri = 0; ri < L->rc.n; ri++) {
				struct trn_plan p;
				double total;

				l->recompute = (enum eng_recompute)L->rc.v[ri];
				if ((S->rc = eng_budget_spend(S->budget, 1)))
					return;
				total = mem_total(&ms, mf.act[l->recompute]);
				S->evaluated++;
				S->divisible++;
				if (!S->have_small ||
				    total < S->smallest_bytes) {
					S->smallest = *l;
					S->smallest_bytes = total;
					S->have_small = true;
				}
				if (total > c->capacity)
					continue;
				S->fitting++;
				if (S->min_gpus == 0 || gpus < S->min_gpus)
					S->min_gpus = gpus;
				if (l->offload == TRN_OFFLOAD_NONE &&
				    (S->min_gpus_no_offload == 0 ||
				     gpus < S->min_gpus_no_offload))
					S->min_gpus_no_offload = gpus;
				found = true;
				if (!have_mc[l->recompute]) {
					mb_cost_of(c, l, &mc[l->recompute]);
					have_mc[l->recompute] = true;
				}
				if (!may_enter(
					S, gpus,
					step_lower_bound_s(l, m_micro, mf.ls,
							   &mc[l->recompute])))
					break;
				plan_memory(c, l, m_micro, &mf, &p);
				time_of(c, l, m_micro, &mc[l->recompute], &p);
				p.meets_deadline =
				    meets_deadline(c, p.tokens_per_s);
				consider(S, &p);
				break;
			}
		}
	}
}

/* The dp candidates into S: the divisors of gbs up to gmax, ascending.
 * Divisors below sqrt(gbs) are found by trial, the rest as their
 * cofactors; when gmax is below sqrt(gbs) every wanted divisor is a small
 * one. Validation keeps gbs <= TRN_MAX_GLOBAL_BATCH, whose divisor count
 * fits the array. */
static void dp_candidates(struct search *S, long gbs, long gmax)
{
	int n_low;

	S->n_dps = 0;
	for (long d = 1; d <= gmax && d <= gbs / d; d++)
		if (gbs % d == 0 && S->n_dps < TRN_MAX_DP_CANDIDATES)
			S->dps[S->n_dps++] = d;
	n_low = S->n_dps;
	for (int i = n_low - 1; i >= 0; i--) {
		long e = gbs / S->dps[i];
		if (e != S->dps[i] && e <= gmax &&
		    S->n_dps < TRN_MAX_DP_CANDIDATES)
			S->dps[S->n_dps++] = e;
	}
}

static void search_all(struct search *S, const struct lists *L)
{
	const struct ctx *c = S->c;
	const struct trn_request *rq = c->rq;
	long gbs = c->gbs;
	long gmax = rq->gpus > 0 ? rq->gpus : rq->max_gpus;
	struct trn_layout l;

	memset(&l, 0, sizeof(l));
	for (int ti = 0; ti < L->tp.n; ti++) {
		l.tp = L->tp.v[ti];
		for (int ci = 0; ci < L->cp.n; ci++) {
			l.cp = L->cp.v[ci];
			for (int pi = 0; pi < L->pp.n; pi++) {
				long mp;
				l.pp = L->pp.v[pi];
				mp = (long)l.tp * l.cp * l.pp;
				if (mp > gmax)
					break;
				for (int vi = 0; vi < L->vp.n; vi++) {
					l.vp = L->vp.v[vi];
					if (!vp_ok(rq->model.layers, l.pp,
						   l.vp))
						continue;
					/* dp candidates: divisors of gbs */
					for (int di = 0;
					     di < S->n_dps &&
					     S->dps[di] <= gmax / mp;
					     di++) {
						long dp = S->dps[di];
						long g = mp * dp;
						if ((S->rc = eng_budget_spend(
							 S->budget, 1)))
							return;
						if (rq->gpus > 0 &&
						    g != rq->gpus)
							continue;
						if (rq->strategies.dp.n) {
							bool ok = false;
							for (int i = 0;
							     i < rq->strategies
								     .dp.n;
							     i++)
								ok |=
								    rq->strategies
									.dp
									.v[i] ==
								    dp;
							if (!ok)
								continue;
						}
						if (g > c->gpn &&
						    c->inter <= 0) {
							S->need_inter_skipped =
							    true;
							continue;
						}
						l.dp = (int)dp;
						for (int ei = 0; ei < L->ep.n;
						     ei++) {
							l.ep = L->ep.v[ei];
							if (dp % l.ep)
								continue;
							if ((S->rc =
								 eng_budget_spend(
								     S->budget,
								     1)))
								return;
							for (int bi = 0;
							     bi < L->mb.n;
							     bi++) {
								l.micro_batch =
								    L->mb.v[bi];
								if ((gbs / dp) %
								    l.micro_batch)
									continue;
								for (int si = 0;
								     si <
								     L->sp.n;
								     si++) {
									l.sequence_parallel =
									    L->sp
										.v[si] &&
									    l.tp >
										1;
									if (l.tp ==
										1 &&
									    si >
										0)
										continue;
									for (
									    int fi =
										0;
									    fi <
									    L->fa
										.n;
									    fi++) {
										l.flash_attention =
										    L->fa
											.v[fi];
										try_layout(
										    S,
										    L,
										    &l);
										if (S->rc)
											return;
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

/* ---- result ----------------------------------------------------------- */

/* Warnings go to the result's fixed table (engine/errors.h). */
#define warn(r, ...)                                                           \
	eng_warn(&(r)->warnings[0][0], &(r)->n_warnings, ENG_MAX_WARNINGS,     \
		 ENG_WARNING_LEN, __VA_ARGS__)

static enum eng_binding plan_binding(const struct ctx *c,
				     const struct trn_plan *p)
{
	const struct trn_time *T = &p->time;
	double comm = T->tp_comm_s + T->pp_p2p_s + T->dp_comm_exposed_s +
		      T->ep_comm_s + T->cp_comm_exposed_s + T->pp_bubble_s;

	if (!p->meets_deadline)
		return ENG_BIND_DEADLINE;
	if (p->layout.recompute == ENG_RC_FULL || p->layout.zero == 3 ||
	    p->layout.offload != TRN_OFFLOAD_NONE ||
	    p->memory.total_gib > 0.9 * p->memory.capacity_gib)
		return ENG_BIND_MEMORY;
	if (comm > 0.25 * T->step_s)
		return ENG_BIND_COMMUNICATION;
	(void)c;
	return ENG_BIND_COMPUTE;
}

/* The best plan on half its data-parallel GPUs: when the second half buys
 * less than TRN_MIN_DOUBLING_SPEEDUP, say so with both figures, so a user
 * who raised max_gpus far sees what the last GPUs cost (issue 16). Only
 * when the request left the GPU count free. */
static void diminishing_returns(const struct ctx *c, struct trn_result *r)
{
	const struct trn_plan *b = &r->plans[0];
	struct trn_layout half = b->layout;
	struct trn_plan h;
	const char *why = NULL;
	double speedup;

	if (c->rq->gpus > 0 || b->layout.dp < 2 || b->layout.dp % 2)
		return;
	half.dp /= 2;
	if (half.ep > half.dp || half.dp % half.ep)
		return;
	memset(&h, 0, sizeof(h));
	if (plan_of(c, &half, &h, true, &why) != 0 ||
	    h.memory.total_gib > h.memory.capacity_gib || b->time.step_s <= 0)
		return;
	speedup = h.time.step_s / b->time.step_s;
	if (speedup < TRN_MIN_DOUBLING_SPEEDUP)
		warn(r,
		     "diminishing returns: %ld GPUs run %.2fx as fast as %ld "
		     "(the same layout at dp %d), for %.0f %% more GPU-hours "
		     "per token",
		     b->gpus, speedup, h.gpus, half.dp,
		     100.0 * (2.0 / speedup - 1.0));
}

static void fill_tmax(const struct ctx *c, struct trn_result *r)
{
	const struct trn_request *rq = c->rq;
	struct trn_tmax_check *t = &r->t_max;
	bool geforce_like = rq->gpu.intra_node_link == HW_LINK_PCIE &&
			    rq->gpu.cc_major == 8 && rq->gpu.cc_minor >= 6;

	t->peak_tflops = rq->gpu.peak_tflops[rq->precision];
	t->link_gbps = rq->gpu.intra_node_gbps;
	t->t_max = t->link_gbps > 0 ? fx_tp_t_max(c->h, c->act_b,
						  t->peak_tflops, t->link_gbps)
				    : 0.0;
	snprintf(t->rate_name, sizeof(t->rate_name), "%s dense datasheet%s",
		 eng_dtype_name(rq->precision),
		 geforce_like ? " (FP32 accumulate)" : "");
	t->tp_of_best_plan = r->n_plans ? r->plans[0].layout.tp : 0;
	t->ok = t->tp_of_best_plan <= 1 || t->tp_of_best_plan <= t->t_max;
}

void trn_request_init(struct trn_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->precision = ENG_BF16;
	rq->optimizer = TRN_ADAMW;
	rq->gradient_precision = ENG_BF16;
	rq->method = TRN_FULL;
	rq->lora_rank = 16;
	rq->top = 5;
	rq->objective = TRN_OBJ_TIME;
}

int trn_evaluate(const struct trn_request *rq, const struct trn_layout *lay,
		 struct trn_plan *plan, struct eng_error *err)
{
	struct ctx c;
	const char *why = NULL;
	int rc;
	struct trn_layout l = *lay;

	eng_error_clear(err);
	if ((rc = validate(rq, err)))
		return rc;
	ctx_init(&c, rq);
	c.gbs = resolve_gbs(rq);
	if (l.tp < 1 || rq->model.heads % l.tp)
		return eng_fail(err, ENG_EINVAL, "strategies.tp",
				"model.heads (%ld) is not divisible by tp %d",
				rq->model.heads, l.tp);
	if (l.pp < 1 || l.pp > rq->model.layers)
		return eng_fail(err, ENG_EINVAL, "strategies.pp",
				"must be between 1 and model.layers");
	if (l.dp < 1 || l.cp < 1 || l.micro_batch < 1 || l.zero < 0 ||
	    l.zero > 3)
		return eng_fail(err, ENG_EINVAL, "strategies",
				"dp, cp, micro_batch must be >= 1, zero 0..3");
	if (l.ep < 1)
		l.ep = 1;
	if (l.vp < 1)
		l.vp = 1;
	if (l.dp % l.ep)
		return eng_fail(err, ENG_EINVAL, "strategies.ep",
				"ep %d must divide dp %d", l.ep, l.dp);
	if (l.tp == 1)
		l.sequence_parallel = false;
	if (plan_of(&c, &l, plan, true, &why))
		return eng_fail(
		    err, ENG_EINVAL, why,
		    "global batch %ld is not divisible by dp (%d) x "
		    "micro_batch (%d)%s",
		    c.gbs, l.dp, l.micro_batch,
		    strcmp(why, "strategies.vp") == 0
			? " x pp for the interleaved schedule"
			: "");
	plan->meets_deadline =
	    rq->deadline_days <= 0 || plan->days <= rq->deadline_days;
	plan->binding = plan_binding(&c, plan);
	return 0;
}

/* The request field a too-large search names: the lists the request
 * gave, else the GPU limit that sets dp's range. */
static const char *search_field(const struct trn_request *rq)
{
	const struct trn_strategies *st = &rq->strategies;

	if (st->tp.n || st->pp.n || st->cp.n || st->vp.n || st->ep.n ||
	    st->micro_batch.n || st->dp.n)
		return "strategies";
	return rq->gpus > 0 ? "gpus" : "max_gpus";
}

int trn_size(const struct trn_request *rq, struct trn_result *res,
	     struct eng_error *err)
{
	struct ctx c;
	struct lists L;
	struct search S;
	int rc;

	eng_error_clear(err);
	memset(res, 0, sizeof(*res));
	if ((rc = validate(rq, err)))
		return rc;
	ctx_init(&c, rq);
	c.gbs = resolve_gbs(rq);
	if (c.gbs > TRN_MAX_GLOBAL_BATCH)
		return eng_fail(err, ENG_EINVAL,
				rq->global_batch_size ? "global_batch_size"
						      : "global_batch_tokens",
				"the global batch of %ld sequences exceeds "
				"2^40",
				c.gbs);
	default_lists(&c, &L);

	memset(&S, 0, sizeof(S));
	S.c = &c;
	S.top = rq->top > 0 ? rq->top : 5;
	S.budget = rq->budget;
	if (S.budget)
		S.budget->units = 0;
	dp_candidates(&S, c.gbs, rq->gpus > 0 ? rq->gpus : rq->max_gpus);
	search_all(&S, &L);
	if (S.rc == ENG_EBUDGET)
		return eng_fail(
		    err, ENG_EBUDGET, search_field(rq),
		    "the layout search is larger than this server's limit "
		    "of %ld steps per search (it stopped after evaluating "
		    "%ld layouts): narrow strategies.tp, pp, cp, vp, ep or "
		    "micro_batch, lower max_gpus, or give gpus",
		    S.budget->max_units, S.evaluated);
	if (S.rc)
		return eng_fail(err, ENG_ECANCELLED, "request",
				"the layout search was stopped before it "
				"ended (%ld layouts evaluated)",
				S.evaluated);

	res->params = c.P;
	res->global_batch_size = c.gbs;
	res->model_flops_per_token = c.model_flops_token;
	res->model_flops_total = c.model_flops_token * rq->train_tokens;
	res->basis.gemm_tflops = hw_gemm_rate(&rq->gpu, rq->precision);
	res->basis.gemm_efficiency_basis = rq->gpu.efficiency_basis;
	res->basis.hbm_gbps = hw_hbm_rate(&rq->gpu);
	res->basis.intra_node_gbps = hw_intra_rate(&rq->gpu);
	res->basis.inter_node_gbps =
	    hw_inter_rate(&rq->gpu, rq->inter_node_gbps, c.gpn);
	res->layouts_evaluated = S.evaluated;

	if (S.divisible == 0) {
		if (S.need_inter_skipped)
			return eng_fail(
			    err, ENG_EINVAL, "inter_node_gbps",
			    "the job needs more than one node of %d "
			    "GPUs but no inter-node bandwidth is "
			    "known",
			    c.gpn);
		if (rq->gpus > 0)
			return eng_fail(
			    err, ENG_EINVAL, "global_batch_size",
			    "global batch %ld sequences cannot be split "
			    "into dp x micro_batch for any allowed layout "
			    "on %ld GPUs",
			    c.gbs, rq->gpus);
		return eng_fail(err, ENG_EINVAL, "global_batch_size",
				"global batch %ld sequences cannot be split "
				"into dp x micro_batch for any allowed layout "
				"up to %ld GPUs",
				c.gbs, rq->max_gpus);
	}
	if (S.fitting == 0) {
		struct trn_plan sp;
		const struct trn_plan *p = &sp;
		const char *why = NULL;

		plan_of(&c, &S.smallest, &sp, false, &why);
		return eng_fail(
		    err, ENG_EINFEASIBLE, rq->gpus ? "gpus" : "max_gpus",
		    "does not fit even at the largest allowed scale: the "
		    "smallest plan needs %.1f GiB per GPU (%ld GPUs, tp %d "
		    "pp %d dp %d zero %d, recompute %s, offload %s) vs "
		    "%.1f GiB capacity",
		    p->memory.total_gib, p->gpus, p->layout.tp, p->layout.pp,
		    p->layout.dp, p->layout.zero,
		    eng_recompute_name(p->layout.recompute),
		    trn_offload_name(p->layout.offload),
		    p->memory.capacity_gib);
	}

	res->n_plans = S.n;
	for (int i = 0; i < S.n; i++) {
		res->plans[i] = S.best[i];
		res->plans[i].binding = plan_binding(&c, &res->plans[i]);
	}
	res->min_gpus = S.min_gpus;
	res->min_gpus_no_offload = S.min_gpus_no_offload;
	res->hardware_flops_per_token = res->plans[0].hardware_flops_per_token;
	res->hardware_flops_total =
	    res->hardware_flops_per_token * rq->train_tokens;
	res->binding = res->plans[0].binding;
	fill_tmax(&c, res);

	/* warnings, plain language */
	{
		const struct trn_plan *b = &res->plans[0];
		if (!res->t_max.ok)
			warn(res,
			     "TP %d across %s starves %s: t_max ~ %.1f at "
			     "their %.0f TFLOP/s %s rate",
			     b->layout.tp,
			     hw_link_name(rq->gpu.intra_node_link),
			     rq->gpu.name, res->t_max.t_max,
			     res->t_max.peak_tflops, res->t_max.rate_name);
		if (!b->meets_deadline)
			warn(res,
			     "no plan meets the %.1f-day deadline; the best "
			     "takes %.1f days",
			     rq->deadline_days, b->days);
		if (b->uneven_stages)
			warn(res,
			     "uneven pipeline: %ld layers on %d stages; the "
			     "largest stage (%d layers) sets memory and time",
			     rq->model.layers, b->layout.pp,
			     b->layers_per_stage_max);
		if (b->layout.offload != TRN_OFFLOAD_NONE)
			warn(res,
			     "%s offloaded to host memory: %.1f GiB of host "
			     "RAM per GPU, transfers over the host link each "
			     "step",
			     trn_offload_name(b->layout.offload),
			     b->memory.host_gib);
		if (b->time.pp_bubble_s > 0.2 * b->time.step_s)
			warn(res,
			     "pipeline bubble is %.0f %% of the step: raise "
			     "the global batch or interleave stages",
			     100.0 * b->time.pp_bubble_s / b->time.step_s);
		if (rq->precision == ENG_FP8)
			warn(res, "fp8 speeds up the linear-layer GEMMs only; "
				  "attention and elementwise work stay 16-bit");
		if (rq->gpu.intra_node_link == HW_LINK_PCIE && b->gpus > 1)
			warn(res,
			     "PCIe-only GPUs scale worse: 8-GPU Llama-2-7B "
			     "training scaled 90.8 %% on RTX 4090 and 85.9 %% "
			     "on RTX 3090 (arXiv 2311.03687)");
		if (rq->model.max_seq_len > 0 &&
		    rq->seq_len > rq->model.max_seq_len)
			warn(res,
			     "seq_len %ld exceeds the model's context length "
			     "(%ld): assumed trained at %ld tokens (context "
			     "extension, e.g. RoPE scaling); memory and time "
			     "are computed at seq_len",
			     rq->seq_len, rq->model.max_seq_len, rq->seq_len);
		if (b->mfu < TRN_LOW_MFU)
			warn(res,
			     "low efficiency: MFU %.3f (well-run dense "
			     "training reaches 0.35-0.55); most of each step "
			     "is communication, pipeline bubble or "
			     "memory-bound work",
			     b->mfu);
		diminishing_returns(&c, res);
	}
	return 0;
}

/* training_memory.c - a training layout's memory per GPU (MODEL.md §3):
 * activations, weights, gradients, optimizer state, overheads, and the
 * divisibility of the global batch into micro-batches.
 */
#include "training_int.h"

#include <math.h>
#include <string.h>

/* Per-op SAC (stack.h STACK_SAC_OP, torchtitan): what a block keeps
 * between its forward and its backward is the policy's saved set, every
 * other op being recomputed (the time model charges that recompute,
 * training_time.c). The set, in values per token per GPU: the block's
 * input (the checkpoint's), the flash SDPA output, and the odd aten.mm
 * outputs of the block's order (stack.c stack_sac_op_mm_share): wq, wv,
 * w1 and, gated, w2 - a row-parallel output before its reduce-scatter
 * (h), whose reduce-scatter output (h/t, _c10d_functional in the save
 * list) is kept as well. torchtitan parallelize_llama.py (2024),
 * _apply_ac_to_transformer_block; MODEL.md §3. Dense attention blocks
 * with flash attention only: MLA and MoE blocks call other matmuls, and
 * keep Korthikanti's selective set. */
static bool sac_op_memory(const struct ctx *c, const struct trn_layout *l)
{
	return c->sac_mm > 0.0 && l->flash_attention && !c->mla &&
	       c->moe_frac == 0.0;
}

static double sac_op_values(const struct ctx *c, const struct trn_layout *l)
{
	double t = (double)l->tp;
	double v = c->h / (l->sequence_parallel ? t : 1.0) /* input */
		   + c->a * c->dv / t			   /* SDPA out */
		   + c->a * c->dqk / t			   /* wq: mm 1 */
		   + trn_ceil_div(c->k, t) * c->dv	   /* wv: mm 3 */
		   + c->ffn_width / t;			   /* w1: mm 5 */

	if (c->rq->model.gated_mlp) /* w2: mm 7 (w3 is mm 6) */
		v += c->h + (t > 1.0 ? c->h / t : 0.0);
	return v;
}

/* Activation bytes of one layer, one micro-batch, per GPU (Korthikanti et
 * al. 2022, arXiv:2205.05198, Table 2 and §4.2: 34sbh + 5as^2b per layer,
 * all of it / t with TP + SP; generalised to GQA/MLA/SwiGLU/MoE, MODEL.md
 * §3). tokens = b*s/cp. Without dropout (Llama-style models) the two
 * 1-byte masks after attention and MLP (2sbh of the 34) and the attention
 * dropout's mask and output (3as^2b of the 5) are not stored. */
static double act_layer_bytes(const struct ctx *c, const struct trn_layout *l,
			      double tokens, enum eng_recompute rc)
{
	double t = (double)l->tp;
	double repl = (c->dropout ? 10.0 : 8.0) * c->h, par, scores = 0.0;
	double kv_heads_gpu = trn_ceil_div(c->k, t);

	if (rc == ENG_RC_FULL)
		return tokens *
		       (2.0 * c->h * c->act_b / 2.0 + c->amp.input_bytes) /
		       (l->sequence_parallel ? t : 1.0);
	if (rc == ENG_RC_SELECTIVE && sac_op_memory(c, l))
		return tokens * sac_op_values(c, l) * c->act_b;
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
		scores = (c->dropout ? 5.0 : 2.0) * c->a * c->s / t;
	/* + LoRA adapters' saved input copies and the eager autocast
	 * extras (training_ctx.c) */
	return tokens * ((repl + par + scores) * c->act_b / 2.0 +
			 (c->lora ? c->adapter_saved / t : 0.0) +
			 c->amp.h_bytes / (l->sequence_parallel ? t : 1.0) +
			 c->amp.f_bytes / t);
}

/* Layers on the fullest stage of layout l: ceil(L/p), or with stage
 * rebalancing ceil((L+2)/p) units of which the first and last stage give
 * one to the embedding and the head (MODEL.md §3). */
static int trn_stage_layers(const struct ctx *c, const struct trn_layout *l)
{
	double q;

	if (!l->stage_rebalance || l->pp < 2)
		return (int)trn_ceil_div(c->L, (double)l->pp);
	q = trn_ceil_div(c->L + 2.0, (double)l->pp);
	return (int)(l->pp > 2 ? q : q - 1.0);
}

/* Parameters on the worst GPU of stage-size ls (trn_stage_layers). With
 * rebalancing, the first (last) stage has one layer fewer plus the
 * embedding (head), a middle stage ls layers: the larger of the two. */
struct stage_params trn_stage_params(const struct ctx *c,
				     const struct trn_layout *l, int ls)
{
	struct stage_params sp;
	double t = (double)l->tp;
	double emb_stage, layers = (double)ls, dense;

	if (l->pp == 1)
		emb_stage =
		    c->emb + (c->rq->model.tied_embeddings ? 0 : c->head);
	else /* first stage: embedding; last: head (a copy when tied) */
		emb_stage = fmax(c->emb, c->head);
	dense = layers * c->nonexp_layer + emb_stage;
	if (l->stage_rebalance && l->pp > 1) {
		double end = trn_ceil_div(c->L + 2.0, (double)l->pp) - 1.0;
		dense = end * c->nonexp_layer + emb_stage;
		if (l->pp > 2)
			dense = fmax(dense, layers * c->nonexp_layer);
	}
	sp.nonexp = dense / t;
	sp.exp = layers * c->exp_layer / (t * (double)l->ep);
	sp.trainable =
	    c->lora ? layers * c->adapter_layer / t : sp.nonexp + sp.exp;
	return sp;
}

/* Micro-batches pipeline rank r holds at the peak of a step, following
 * Megatron-Core's schedules.py: 1F1B runs min(p-r-1, m) warm-up forwards;
 * the interleaved schedule 2(p-r-1) + (v-1)p, and when that reaches the
 * m*v forwards of the step, all of them before any backward
 * ("all_warmup_microbatches"; older Megatron-LM did so whenever m = p).
 * Then each forward is followed by a backward, so the rank holds warm-up
 * + 1 chunk-passes after each forward (`all`; for r = 0 and v > 1
 * Korthikanti et al. 2022 §4.2.3's p(1 + (p-1)/(pv)) stages' worth when
 * the step is longer). Which chunks those are moves step by step (forward
 * k runs chunk (k mod pv) div p, backward k chunk v-1 - (k mod pv) div p;
 * m is a multiple of p): s_min and s_max count the fewest and most
 * passes of the one chunk that differs - rank 0's first, which holds the
 * embedding: 2p - 1 at the first steady forward, then 2p until its
 * backwards begin, and so on; rank p-1's last, which holds the head: 1,
 * and 0 between its backward and its next forward when m > p. */
static struct in_flight in_flight_of(long p, long v, long m, long r)
{
	long warm = v > 1 ? 2 * (p - r - 1) + (v - 1) * p : p - r - 1;
	struct in_flight f;

	if (warm >= m * v) {
		f.all = m * v;
		f.s_min = f.s_max = m;
		return f;
	}
	f.all = warm + 1;
	f.s_min = f.s_max = f.all; /* 1F1B: the only chunk */
	if (v > 1 && r == 0) {
		f.s_min = 2 * p - 1;
		f.s_max = 2 * p;
	} else if (v > 1) { /* r = p-1 (middle ranks: equal chunks) */
		f.s_min = m > p ? 0 : 1;
		f.s_max = 1;
	}
	return f;
}

/* Bytes rank r holds at its peak: chunk-passes of `chunk` bytes (1/v of
 * a full stage), one chunk, s, holding `s_bytes` instead (1F1B: the only
 * chunk). */
static double rank_peak_bytes(const struct in_flight *f, double chunk,
			      double s_bytes)
{
	double d = s_bytes - chunk;

	return (double)f->all * chunk +
	       d * (double)(d > 0.0 ? f->s_max : f->s_min);
}

double trn_chunk_layers(const struct ctx *c, const struct trn_layout *l)
{
	double v = l->vp > 1 ? (double)l->vp : 1.0;

	/* A chunk holds 1/v of a full stage's layers. With rebalancing
	 * (ceil((L+2)/p) units a stage) the first chunk of rank 0 and the
	 * last of rank p-1 give one layer's place to the embedding and the
	 * head (Megatron-Core get_transformer_layer_offset: the embedding and
	 * the loss count as layers of the split, per virtual stage). */
	if (l->stage_rebalance && l->pp > 1)
		return trn_ceil_div(c->L + 2.0, (double)l->pp) / v;
	return (double)trn_stage_layers(c, l) / v;
}

int trn_partial_max_layers(const struct ctx *c, const struct trn_layout *l)
{
	double chunk = trn_chunk_layers(c, l);

	/* rebalanced on two stages without interleaving, each stage is one
	 * end chunk, a layer short of the units (review s20a F1) */
	if (l->stage_rebalance && l->pp == 2 && l->vp <= 1)
		chunk -= 1.0;
	return (int)floor(chunk + 1e-9) - 1;
}

/* Partial: k layers of each of the v chunks of the fullest stage's
 * trn_stage_layers. */
double trn_recomputed_share(const struct ctx *c, const struct trn_layout *l)
{
	double v = l->vp > 1 ? (double)l->vp : 1.0;

	if (l->recompute == ENG_RC_FULL)
		return 1.0;
	if (l->recompute != ENG_RC_PARTIAL)
		return 0.0;
	return fmin(1.0, (double)l->recompute_layers * v /
			     (double)trn_stage_layers(c, l));
}

/* Bytes at the peak of the fullest rank, layers holding per_layer bytes
 * each, those of the end chunks (one layer fewer with rebalancing)
 * per_end_layer, and end_rebuilt on top on the end ranks (before the one
 * layer a full recompute rebuilds): rank 0 (the embedding's chunk), rank
 * p-1 (the head's) and, beyond two stages, rank 1, the fullest of the
 * equal middle ranks. */
static double act_peak(const struct act_shape *sh, double per_layer,
		       double per_end_layer, double end_rebuilt)
{
	double chunk = sh->layers * per_layer;
	double a;

	if (sh->p == 1)
		return chunk + sh->first_extra + sh->last_extra + end_rebuilt;
	a = end_rebuilt +
	    fmax(rank_peak_bytes(&sh->f0, chunk,
				 sh->ends * per_end_layer + sh->first_extra),
		 rank_peak_bytes(&sh->fl, chunk,
				 sh->ends * per_end_layer + sh->last_extra));
	if (sh->p > 2)
		a = fmax(a, (double)sh->f1.all * chunk);
	return a;
}

/* No layer rebuilt on top where a chunk keeps a stored layer: Megatron's
 * block method checkpoints the first layers of a chunk, so the backward
 * reaches them after freeing a stored layer of the same chunk, whose bytes
 * the rebuilt one takes (megatron/core/transformer/transformer_block.py
 * _checkpointed_forward). A rebalanced end chunk, a layer short, is
 * recomputed whole when k reaches its layers, and then its rebuild sits on
 * top on the end ranks, as under full (review s20a F2). */
double trn_act_partial(const struct mem_fixed *mf, int layers)
{
	const struct act_shape *sh = &mf->shape;
	double k = (double)layers;
	double share = fmin(1.0, k / sh->layers);
	double share_end = sh->ends > 0.0 ? fmin(1.0, k / sh->ends) : 1.0;

	return act_peak(
	    sh, share * mf->layer_full + (1.0 - share) * mf->layer_none,
	    share_end * mf->layer_full + (1.0 - share_end) * mf->layer_none,
	    share_end >= 1.0 ? mf->layer_none : 0.0);
}

/* The activation bytes of layout l's recompute mode (partial: its
 * recompute_layers). */
static double trn_act_of(const struct mem_fixed *mf, const struct trn_layout *l)
{
	if (l->recompute != ENG_RC_PARTIAL)
		return mf->act[l->recompute];
	return trn_act_partial(mf, l->recompute_layers);
}

void trn_mem_fixed_of(const struct ctx *c, const struct trn_layout *l,
		      long m_micro, struct mem_fixed *mf)
{
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;
	double t = (double)l->tp, sp_div = l->sequence_parallel ? t : 1.0;
	double logits, out_layer, emb_mask;
	long p = l->pp, v = l->vp > 1 ? l->vp : 1;
	struct act_shape *sh = &mf->shape;

	mf->ls = trn_stage_layers(c, l);
	mf->sp = trn_stage_params(c, l, mf->ls);
	sh->p = p;
	sh->layers = trn_chunk_layers(c, l);
	sh->ends = l->stage_rebalance && p > 1 ? sh->layers - 1.0 : sh->layers;
	sh->partial_max = trn_partial_max_layers(c, l);
	/* Beside the layers (Korthikanti §4.3): the input embedding's dropout
	 * mask, 1 byte per value, per micro-batch (/t with SP); none without
	 * dropout, as the embedding's output is the first layer's stored
	 * input, counted there. The head: final norm and output-projection
	 * inputs 4sbh/t and the logits at the loss's peak, the stack's
	 * loss_logit_bytes per logit /t: 4 for the fp32 softmax of Megatron's
	 * vocabulary-parallel cross-entropy (Megatron-Core
	 * fused_cross_entropy.py upcasts the logits to fp32 and saves
	 * exp_logits for the backward), 12 for PyTorch's F.cross_entropy on
	 * fp32 logits (stack.c). */
	emb_mask = c->dropout ? tokens * c->h / sp_div : 0.0;
	out_layer = 4.0 * tokens * c->h / sp_div * c->act_b / 2.0;
	logits = c->rq->stack.loss_logit_bytes * tokens * c->V / t;
	sh->first_extra = emb_mask;
	sh->last_extra = out_layer + logits;
	/* rank 0 warms up longest, rank 1 is the fullest of the equal
	 * middle ranks (more warm-up than ranks 2 .. p-2), rank p-1 holds
	 * the head */
	sh->f0 = in_flight_of(p, v, m_micro, 0);
	sh->f1 = in_flight_of(p, v, m_micro, 1);
	sh->fl = in_flight_of(p, v, m_micro, p - 1);
	mf->layer_none = act_layer_bytes(c, l, tokens, ENG_RC_NONE);
	mf->layer_full = act_layer_bytes(c, l, tokens, ENG_RC_FULL);
	for (int rc = 0; rc < ENG_RC_COUNT; rc++) {
		double per_layer = act_layer_bytes(c, l, tokens, rc);

		if (rc == ENG_RC_PARTIAL) { /* per share: trn_act_partial */
			mf->act[rc] = 0.0;
			continue;
		}
		mf->act[rc] = act_peak(sh, per_layer, per_layer, 0.0);
		/* one layer rebuilt at a time: all of it (full), what the
		 * per-op policy did not keep (SAC) */
		if (rc == ENG_RC_FULL)
			mf->act[rc] += mf->layer_none;
		else if (rc == ENG_RC_SELECTIVE && sac_op_memory(c, l))
			mf->act[rc] += fmax(0.0, mf->layer_none - per_layer);
	}
}

struct mem_state trn_mem_state_of(const struct ctx *c,
				  const struct trn_layout *l,
				  const struct mem_fixed *mf)
{
	struct mem_state m = {.g_in_backward = c->rq->stack.grads_in_backward};
	double dp = (double)trn_zero_ranks(l), edp = dp / (double)l->ep;
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

/* The request's fixed overhead (CUDA context, cuBLAS workspaces, NCCL
 * buffers: counted always, so that adding data-parallel ranks never raises
 * memory per GPU) and the allocator's fragmentation, a fraction of the
 * rest (training.h, MODEL.md §3). */
static double mem_overhead(const struct ctx *c, double wgoa)
{
	return c->rq->memory_fixed_overhead_gib * GIB +
	       c->rq->memory_fragmentation_fraction * wgoa;
}

/* Weights, gradients, optimizer state and activations at the step's
 * peak. Gradients allocated by the backward (grads_in_backward) appear as
 * it frees the activations, layer by layer from the last: at its start
 * the activations (and the loss) are all held and no gradient, at its end
 * every gradient and no activation, so the peak holds the larger of the
 * two. A preallocated gradient buffer (Megatron's, DDP's buckets,
 * DeepSpeed's) holds both. */
static double mem_peak_sum(const struct mem_state *m, double act)
{
	return m->w + m->o + (m->g_in_backward ? fmax(m->g, act) : m->g + act);
}

double trn_mem_total(const struct ctx *c, const struct mem_state *m, double act)
{
	double wgoa = mem_peak_sum(m, act);

	return wgoa + mem_overhead(c, wgoa);
}

static void memory_fill(const struct ctx *c, const struct trn_layout *l,
			const struct mem_fixed *mf, struct trn_plan *p)
{
	struct mem_state m = trn_mem_state_of(c, l, mf);
	double act = trn_act_of(mf, l);
	double total = trn_mem_total(c, &m, act);

	p->memory.weights_gib = m.w / GIB;
	p->memory.gradients_gib = m.g / GIB;
	p->memory.optimizer_gib = m.o / GIB;
	p->memory.activations_gib = act / GIB;
	p->memory.overhead_gib = mem_overhead(c, mem_peak_sum(&m, act)) / GIB;
	p->memory.total_gib = total / GIB;
	p->memory.capacity_gib = c->gpu_bytes / GIB;
	p->memory.usable_gib = c->capacity / GIB;
	p->memory.host_gib = m.host / GIB;
	p->fits = total <= c->capacity;
	p->layers_per_stage_max = mf->ls;
	p->uneven_stages =
	    ((c->rq->model.layers + (l->stage_rebalance && l->pp > 1 ? 2 : 0)) %
	     l->pp) != 0;
}

/* The memory part of a plan for layout l, m_micro micro-batches per step,
 * the layout's fixed memory already in mf. */
void trn_plan_memory(const struct ctx *c, const struct trn_layout *l,
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
long trn_micro_batches(const struct ctx *c, const struct trn_layout *l,
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

/* training_time.c - a training layout's step time (MODEL.md §4): GEMMs,
 * attention, memory-bound kernels, collectives, pipeline bubble, optimizer
 * step; and the whole plan of one layout.
 */
#include "training_int.h"

#include "collective.h"
#include "gemm.h"

#include <math.h>
#include <string.h>

/* Point-to-point / all-to-all launch latency, seconds (NCCL, one hop). */
#define COLL_LATENCY_S 10e-6
/* FlashAttention's backward pass does 2.5x the forward FLOPs (it
 * recomputes QK^T; FlashAttention-2 paper and benchmarks). */
#define FLASH_BWD_FLOPS 2.5

/* The stack all-gathers this layout's FSDP weights in FP8. */
static bool fp8_gather(const struct ctx *c, const struct trn_layout *l)
{
	return c->fp8_ag_layer > 0.0 && l->zero >= 3 && trn_zero_ranks(l) > 1;
}

/* The flops-weighted shape factor of a layer's linear GEMMs (engine/gemm.h:
 * the smallest of each GEMM's dimensions). A routed expert's GEMMs see
 * the rows routed to it: each of the ep ranks of its group sends it
 * tokens * k / E under uniform routing (at least one), so with 64 experts
 * a GPU a micro-batch of 4,096 tokens, top 8, EP 8 is 64 GEMMs of 512 rows,
 * not of 4,096 (VALIDATION.md MoE: a gap named there; the prefill and
 * decode use the same rows, inference_replica.c gemm_compute_s). */
static double lin_shape_factor(const struct ctx *c, const struct trn_layout *l,
			       double tokens, enum eng_dtype dt)
{
	double tt = (double)l->tp;
	double expert_rows = fmax(1.0, tokens * c->routed_rows * (double)l->ep);
	double dims[6] = {c->n_qkv / tt,  c->n_o / tt,	c->n_up / tt,
			  c->n_down / tt, c->n_up / tt, c->n_down / tt};
	double rows[6] = {tokens, tokens,      tokens,
			  tokens, expert_rows, expert_rows};
	double w[6] = {c->w_qkv,
		       c->w_o,
		       c->w_up - c->w_up_routed,
		       c->w_down - c->w_down_routed,
		       c->w_up_routed,
		       c->w_down_routed};
	double sum_w = 0.0, sum_t = 0.0;

	/* Flops-weighted harmonic mean: time adds up, not rates. */
	for (int i = 0; i < 6; i++) {
		double md = fmin(fmin(dims[i], c->h), rows[i]);
		if (!(w[i] > 0.0))
			continue;
		sum_w += w[i];
		sum_t += w[i] / gemm_shape_factor(md, dt);
	}
	return sum_t > 0 ? sum_w / sum_t : 1.0;
}

/* Bandwidth (B/s) of a group whose members span `span` consecutive ranks:
 * inside a node it rides the intra-node link, otherwise each GPU's share of
 * the node's NICs (MODEL.md §4). */
static double group_bw(const struct ctx *c, long span)
{
	return span <= c->gpn ? c->intra : c->inter;
}

/* A group's ranks on one node when they sit `stride` ranks apart. */
static double node_ranks(const struct ctx *c, long stride)
{
	double per_node =
	    stride >= c->gpn ? 1.0 : floor((double)c->gpn / (double)stride);

	return per_node < 1.0 ? 1.0 : per_node;
}

/* Nodes a group of n ranks, `stride` ranks apart (Megatron order tp-cp-dp-
 * pp), spans. */
static double group_nodes(const struct ctx *c, double n, long stride)
{
	return ceil(n / node_ranks(c, stride) - 1e-12);
}

/* One all-to-all over ep ranks, `stride` ranks apart, in which each
 * sends its tokens' copies (moe_dispatch.h: one per routed expert, or
 * DeepEP's one per rank and node), `copy_bytes` each: the copies for
 * peers on its own node ride the intra-node link and those for other
 * nodes the NICs, at the same time (NCCL sends each peer's chunk over the
 * P2P transport inside a node and the network across). Until 2026-11-26
 * every byte of a group that spanned nodes was charged at the NIC rate. */
static double a2a_s(const struct ctx *c, double copy_bytes, long ep,
		    long stride)
{
	double local = node_ranks(c, stride);
	struct moe_copies k;

	if (c->rq->stack.ep_dispatcher == MOE_DISPATCH_DEEPEP)
		moe_copies_cached(c->a2a_memo, &c->routing, MOE_DISPATCH_DEEPEP,
				  ep, (long)local, &k);
	else /* a few multiplications a node: not kept */
		moe_dispatch_copies(&c->routing, c->rq->stack.ep_dispatcher,
				    (double)ep, local, &k);
	return fmax(copy_bytes * k.intra / c->intra,
		    copy_bytes * k.inter / c->inter);
}

/* One collective over n ranks on `nodes` nodes: NCCL's cost model, shared
 * with the inference engine (engine/collective.h, MODEL.md §4). */
static double coll_s(const struct ctx *c, enum coll_kind k, double bytes,
		     double n, double nodes, double bw)
{
	return coll_time_s(k, bytes, n, nodes, bw, c->rq->gpu.intra_node_link);
}

/* Traffic hidden behind `compute` seconds and then `stalls` seconds of
 * weight-offload stalls (MODEL.md §4 "DP"): what is left exposed without
 * the stalls (the plan's DP field) and with them. */
static void hide_in(double traffic, double compute, double stalls,
		    double *alone, double *with_stalls)
{
	*alone = fmax(0.0, traffic - compute);
	*with_stalls = fmax(0.0, *alone - stalls);
}

/* LoRA adapters (MODEL.md §4a "LoRA adapters"): their GEMMs, forward
 * 2*tokens*adapter_layer/t FLOPs and three passes (forward, input and
 * weight gradients; + 1 under full recompute, + the recomputed share of
 * layers under partial), every one with the rank as
 * its smallest dimension, in 16-bit (an FP8 recipe leaves adapters in
 * BF16); and their memory-bound kernels (training_ctx.c adapter_kernels),
 * the forward ones again under full recompute. */
static void adapter_time(const struct ctx *c, const struct trn_layout *l,
			 double tokens, struct layer_cost *lc)
{
	double t = (double)l->tp;
	double r16 = c->r_lin16 > 0.0 ? c->r_lin16 : c->r_lin;
	double again = trn_recomputed_share(c, l);
	double fwd = gemm_time_s(2.0 * tokens * c->adapter_layer / t,
				 (double)c->rq->lora_rank, ENG_BF16, r16, 0.0);

	lc->gemm += (3.0 + again) * fwd;
	lc->mem += tokens *
		   ((1.0 + again) * c->adapter_ew_fwd + c->adapter_ew_bwd) / t /
		   c->hbm;
}

static void layer_time(const struct ctx *c, const struct trn_layout *l,
		       double tokens, struct layer_cost *lc)
{
	double t = (double)l->tp;
	enum eng_dtype dt = c->rq->precision;
	double f_lin = lin_shape_factor(c, l, tokens, dt);
	double lin_fwd =
	    2.0 * tokens * c->active_layer / t / (c->r_lin * f_lin);
	double attn_fwd_flops = tokens * c->attn_fwd_layer_token / t;
	double attn_f, attn_b, lin_passes, attn_fwd_passes = 1.0;
	double repl = l->sequence_parallel ? t : 1.0;
	double ew_f, ew_b, score_f = 0.0, score_b = 0.0;
	/* the share of layers run again whole (full 1, partial its
	 * recompute_layers of a chunk), and the share whose forward
	 * elementwise kernels, casts and TP gathers run again (per-op SAC
	 * too) */
	double again = trn_recomputed_share(c, l);
	double again_fwd =
	    l->recompute == ENG_RC_SELECTIVE && c->sac_mm > 0.0 ? 1.0 : again;

	/* FP8 GEMMs are never slower than the same GEMM in 16-bit (a
	 * recipe keeps a layer too small to gain in BF16; gemm.h). */
	if (c->r_lin16 > 0.0)
		lin_fwd = fmin(lin_fwd,
			       2.0 * tokens * c->active_layer / t /
				   (c->r_lin16 *
				    lin_shape_factor(c, l, tokens, ENG_BF16)));
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
	if (again > 0.0) {
		lin_passes += again;
		attn_fwd_passes += again;
		ew_b += again * ew_f;
	} else if (l->recompute == ENG_RC_SELECTIVE && c->sac_mm > 0.0) {
		/* per-op SAC (stack.h): attention and every second matmul
		 * saved, the other matmuls and every elementwise kernel run
		 * again in the backward */
		lin_passes += c->sac_mm;
		ew_b += ew_f;
		/* unfused attention's batched matmuls are not aten.mm */
		if (!l->flash_attention)
			attn_fwd_passes += 1.0;
	} else if (l->recompute == ENG_RC_SELECTIVE) {
		attn_fwd_passes += 1.0;
		ew_b += score_f;
	}
	lc->gemm = lin_passes * lin_fwd;
	lc->attn = attn_fwd_passes * attn_f + attn_b;
	lc->mem = (ew_f + ew_b) / c->hbm;
	if (c->lora)
		adapter_time(c, l, tokens, lc);
	lc->attn_hide = attn_f + attn_b;
	lc->launch = c->launch_layer;
	lc->fp8_wcast = 0.0;
	/* autocast's weight casts, per forward pass (training_ctx.c) */
	if (c->amp_wcast_layer > 0.0)
		lc->mem += (1.0 + again_fwd) * c->amp_wcast_layer / t / c->hbm;
	/* QLoRA: one dequantisation of the layer's weights per GEMM pass. */
	if (c->dequant_layer > 0.0)
		lc->mem += lin_passes * c->dequant_layer / t / c->hbm;
	if (c->fp8_cast_b > 0.0) {
		/* FP8 casts (+ transposes, amax) of the GEMM inputs forward
		 * (again with full recompute) and of the output gradients
		 * backward, memory-bound; the weights' cast is per step or
		 * per micro-batch (trn_time_of). MODEL.md §4a. */
		double in = c->fp8_in_col / repl + c->fp8_in_row / t;
		double out = c->fp8_out_col / t + c->fp8_out_row / repl;
		double passes_in = 1.0 + again_fwd;
		lc->mem +=
		    tokens * (passes_in * in + out) * c->fp8_cast_b / c->hbm;
		lc->fp8_wcast = (c->w_qkv + c->w_o + c->w_up + c->w_down) / t *
				c->fp8_wcast_b / c->hbm;
	}

	lc->tp = 0.0;
	if (l->tp > 1) {
		/* 2 all-reduces forward, 2 backward (+2 recomputed forward) of
		 * b*s*h values; SP turns each into reduce-scatter + all-gather
		 * of the same volume (Korthikanti et al. 2022 §4.2.2; MODEL.md
		 * §4). */
		double n = 4.0 + 2.0 * again;
		double bytes = tokens * c->h * c->act_b;
		double one =
		    l->sequence_parallel
			? coll_s(c, COLL_RS, bytes, t, 1.0, c->intra) +
			      coll_s(c, COLL_AG, bytes, t, 1.0, c->intra)
			: coll_s(c, COLL_AR, bytes, t, 1.0, c->intra);
		lc->tp = n * one;
		/* per-op SAC saves reduce-scatter outputs, not all-gathers
		 * or all-reduces: the forward's two run again */
		if (l->recompute == ENG_RC_SELECTIVE && c->sac_mm > 0.0)
			lc->tp +=
			    2.0 *
			    (l->sequence_parallel
				 ? coll_s(c, COLL_AG, bytes, t, 1.0, c->intra)
				 : coll_s(c, COLL_AR, bytes, t, 1.0, c->intra));
		/* the stack's TP overlap hides that share behind the
		 * layer's GEMMs, never more than they last */
		lc->tp -= fmin(c->tp_overlap * lc->tp, lc->gemm);
	}
}

/* LM head per micro-batch on the last stage: 2*tokens*V*h/t forward, plus
 * the fp32 cross-entropy over the vocabulary (memory-bound). */
static void head_time(const struct ctx *c, const struct trn_layout *l,
		      double tokens, double *gemm, double *mem)
{
	double t = (double)l->tp;
	double md = fmin(c->V / t, fmin(c->h, tokens));
	/* FP8 recipes keep the LM head in 16-bit: Megatron-Core's
	 * output_layer is a plain ColumnParallelLinear, not a TE module;
	 * torchtitan's float8 filter_fqns default leaves "output" out. */
	double fwd = c->r_lin16 > 0.0
			 ? gemm_time_s(2.0 * tokens * c->head / t, md, ENG_BF16,
				       c->r_lin16, 0.0)
			 : gemm_time_s(2.0 * tokens * c->head / t, md,
				       c->rq->precision, c->r_lin, 0.0);

	*gemm = (c->lora ? 2.0 : 3.0) * fwd;
	*mem = tokens * c->loss_token / t / c->hbm;
}

void trn_mb_cost_of(const struct ctx *c, const struct trn_layout *l,
		    struct mb_cost *mc)
{
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;

	layer_time(c, l, tokens, &mc->lc);
	head_time(c, l, tokens, &mc->head_g, &mc->head_m);
}

/* A lower bound on a plan's step time: its compute, tensor-parallel
 * collectives and the part of the bubble they make; every other term of
 * trn_time_of's step_s is >= 0 and is added after these, in the same order, so
 * the bound holds in floating point too. */
double trn_step_lower_bound_s(const struct trn_layout *l, long m_micro, int ls,
			      const struct mb_cost *mc)
{
	const struct layer_cost *lc = &mc->lc;
	double m = (double)m_micro, L_s = (double)ls;
	double lcomp = lc->gemm + lc->attn + lc->mem + lc->launch;
	double head = mc->head_g + mc->head_m;
	double t_mb = L_s * (lcomp + lc->tp) + head; /* lep, lcp >= 0 */

	return m * (L_s * lcomp + head) + m * L_s * lc->tp +
	       (double)(l->pp - 1) / (double)l->vp * t_mb;
}

void trn_time_of(const struct ctx *c, const struct trn_layout *l, long m_micro,
		 const struct mb_cost *mc, struct trn_plan *p)
{
	int ls = p->layers_per_stage_max;
	double tokens = (double)l->micro_batch * c->s / (double)l->cp;
	double m = (double)m_micro, L_s = (double)ls;
	double head_g = mc->head_g, head_m = mc->head_m, head, t_mb, lep = 0.0,
	       lep_all = 0.0, lcp = 0.0, cp_hidden = 0.0;
	double lcomp, nic_busy = 0.0, off_mb = 0.0, dp_in_stalls = 0.0;
	struct layer_cost lc = mc->lc;
	struct stage_params sp = trn_stage_params(c, l, ls);
	struct trn_time *T = &p->time;
	long span_tc = (long)l->tp * l->cp;
	/* the ranks that reduce gradients and share ZeRO state (data x
	 * context parallel: trn_zero_ranks) */
	double dp = (double)trn_zero_ranks(l);
	bool ep_inter = false, cp_inter = span_tc > c->gpn;

	memset(T, 0, sizeof(*T));
	head = head_g + head_m;
	lcomp = lc.gemm + lc.attn + lc.mem + lc.launch;

	/* Context parallel (ring attention): K and V chunks travel cp-1
	 * hops forward, twice that backward; hidden behind attention. */
	if (l->cp > 1) {
		double kvb = c->mla ? c->kv_lora_cols
				    : 2.0 * trn_ceil_div(c->k, l->tp) * c->d;
		double bytes = tokens * kvb * c->act_b;
		double comm =
		    3.0 * ((double)l->cp - 1.0) * bytes / group_bw(c, span_tc);
		lcp = fmax(0.0, comm - c->rq->stack.cp_overlap * lc.attn_hide);
		cp_hidden = comm - lcp;
	}
	/* MoE: dispatch + combine all-to-all, forward and backward (+ the
	 * recomputed forward), over the EP group (inside dp). */
	if (l->ep > 1 && c->moe_frac > 0) {
		double n = 4.0 + 2.0 * trn_recomputed_share(c, l);
		double bytes = tokens * c->a2a_copy_bytes / (double)l->tp;
		/* the compute it may hide behind: the stack's ep_overlap
		 * pairs one micro-batch's all-to-all with another's compute
		 * (Megatron-Core's batch-level overlap, DualPipe), so m - 1
		 * of a step's m micro-batches have a partner; and where the
		 * ring's hidden sends already hold the NICs during that
		 * compute, not that part of it (review s20c F2, F5) */
		double room = lcomp;

		ep_inter = span_tc * l->ep > c->gpn;
		lep_all = c->moe_frac * n *
			  (a2a_s(c, bytes, l->ep, span_tc) + COLL_LATENCY_S);
		if (ep_inter && cp_inter)
			room = fmax(0.0, room - cp_hidden);
		lep = lep_all -
		      fmin(c->rq->stack.ep_overlap * (m - 1.0) / m * lep_all,
			   room);
	}

	t_mb = L_s * (lcomp + lc.tp + lep + lcp) + head;
	T->compute_s = m * (L_s * lcomp + head);
	if (lc.fp8_wcast > 0.0) {
		double casts = c->rq->stack.fp8_weight_cache ? 1.0 : m;
		double wcast = lc.fp8_wcast;

		/* FP8 all-gather: the cast moves onto the shard, before each
		 * of the micro-batch's two gathers (stack.h) */
		if (fp8_gather(c, l)) {
			casts = m;
			wcast *= stack_fp8_gathered_weight_bytes(
				     c->rq->stack.fp8_recipe, dp) /
				 c->fp8_wcast_b;
		}
		T->compute_s += casts * L_s * wcast;
		T->memory_bound_s += casts * L_s * wcast;
	}
	T->attention_s = m * L_s * lc.attn;
	T->memory_bound_s += m * (L_s * lc.mem + head_m);
	T->tp_comm_s = m * L_s * lc.tp;
	T->ep_comm_s = m * L_s * lep;
	T->cp_comm_exposed_s = m * L_s * lcp;
	/* Bubble (p-1)/v micro-batch slots of the slowest stage. */
	T->pp_bubble_s = (double)(l->pp - 1) / (double)l->vp * t_mb;
	if (l->pp > 1) {
		/* activations forward + gradients backward per boundary,
		 * scatter/gather over TP (Narayanan 2021 §4.1). Not overlapped,
		 * so it never shares a window with DP traffic on the NIC.
		 * Stages are blocks of tp*cp*dp consecutive ranks (Megatron's
		 * tp-cp-dp-pp order): once the pipeline spans nodes, some
		 * boundary crosses one, and the stages beside it, which set
		 * the pipeline's pace, send over the NICs. */
		double bytes = tokens * c->h * c->act_b / (double)l->tp;
		double bw = group_bw(c, span_tc * l->dp * l->pp);
		T->pp_p2p_s =
		    m * (double)l->vp * 2.0 * (bytes / bw + COLL_LATENCY_S);
	}

	/* Data parallel (MODEL.md §4). All DP traffic of a step
	 * shares one link (the node's NICs, or NVLink inside a node): its
	 * total time can hide behind at most the stack's dp_overlap of the
	 * compute it may overlap, less what ring attention already hides there
	 * when it rides the same NICs. Phases where the NIC is busy on the
	 * critical path (inter-node EP all-to-all) are not part of the window.
	 * ZeRO-1/2 all-gather the updated weights after the optimizer step:
	 * that traffic can hide only behind the next step's forward, and only
	 * the stack's param_gather_overlap of it (Megatron-Core
	 * overlap_param_gather; DeepSpeed gathers synchronously), never
	 * behind a backward.
	 */
	/* Offload of the weights: every micro-batch moves them over the host
	 * link, hidden in offload_overlap of its time; the part exposed, per
	 * micro-batch (the optimizer block below charges it). Under ZeRO-3
	 * each rank keeps its shard on the host and copies only that, then
	 * all-gathers it on the GPUs (FSDP2's CPUOffloadPolicy keeps the
	 * sharded parameters on the CPU; DeepSpeed's offload_param
	 * partitions them, stage 3 only): the host link moves the shard
	 * (review s21a F7: every rank had been charged the whole stage's
	 * weights, dp times too many bytes). */
	if (l->offload >= TRN_OFFLOAD_OPTIMIZER_WEIGHTS) {
		bool sharded = l->zero >= 3;
		double wbytes =
		    (sp.nonexp / (sharded ? dp : 1.0) +
		     sp.exp / (sharded ? dp / (double)l->ep : 1.0)) *
		    (c->lora ? c->base_b : c->wb);

		off_mb = fmax(0.0, 2.0 * wbytes / c->host -
				       c->rq->stack.offload_overlap * t_mb);
	}
	if (dp > 1.0) {
		/* The group's ranks sit tp apart (context parallel inside
		 * data parallel, Megatron's tp-cp-ep-dp order); across nodes,
		 * a node's ranks of the group share all its NICs
		 * (engine/collective.h). */
		double bw =
		    span_tc * l->dp <= c->gpn
			? c->intra
			: coll_node_share_bw(c->inter, c->intra, c->gpn, l->tp);
		double edp = dp / (double)l->ep;
		double nodes = group_nodes(c, dp, l->tp);
		double enodes = group_nodes(c, edp, l->tp);
		double gb_ne = (c->lora ? sp.trainable : sp.nonexp) * c->red_b;
		double gb_ex = c->lora ? 0.0 : sp.exp * c->red_b;
		double per_layer_ne = gb_ne / L_s, per_layer_ex = gb_ex / L_s;
		/* the NICs carry the whole all-to-all, hidden or not */
		double mb_window =
		    fmax(0.0, t_mb - (ep_inter ? L_s * lep_all : 0.0));
		double traffic, share, ag = 0.0, fwd_nic = 0.0;

		if (l->zero == 1 || l->zero == 2) {
			/* the updated weights (the trainable ones under LoRA,
			 * 16-bit), all-gathered once per step per layer; a
			 * dense model issues no expert collective */
			double wb = c->lora ? 2.0 : c->wb;
			ag = L_s * coll_s(c, COLL_AG,
					  gb_ne / c->red_b * wb / L_s, dp,
					  nodes, bw);
			if (gb_ex > 0.0)
				ag += L_s * coll_s(c, COLL_AG,
						   gb_ex / c->red_b * wb / L_s,
						   edp, enodes, bw);
		}
		if (l->zero >= 3) {
			/* per micro-batch and layer (FSDP units): all-gather
			 * the weights forward and backward, reduce-scatter
			 * the gradients; everything prefetched behind the
			 * micro-batch's compute. */
			double wb = c->lora ? c->base_b : c->wb;
			double w_ne = sp.nonexp * wb;
			/* the FP8 GEMMs' weights at 1 B under the stack's
			 * FP8 all-gather (stack.h; MODEL.md §4a) */
			if (fp8_gather(c, l))
				w_ne -= fmin(sp.nonexp, L_s * c->fp8_ag_layer /
							    (double)l->tp) *
					(wb - 1.0);
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
			share = m;
		} else if (l->zero >= 1) {
			/* gradients reduce-scattered per layer bucket behind
			 * the backward: every micro-batch's under ZeRO-2
			 * (DeepSpeed partitions the gradients, so they are
			 * reduced as they are produced), the last one's under
			 * ZeRO-1 (Megatron overlap_grad_reduce). */
			double n_rs = l->zero == 2 ? m : 1.0;
			double per =
			    coll_s(c, COLL_RS, per_layer_ne, dp, nodes, bw);
			if (per_layer_ex > 0.0)
				per += coll_s(c, COLL_RS, per_layer_ex, edp,
					      enodes, bw);
			traffic = n_rs * L_s * per;
			share = n_rs * (2.0 / 3.0);
		} else {
			/* one all-reduce per step, bucketed per layer, behind
			 * the last micro-batch's backward. */
			double per =
			    coll_s(c, COLL_AR, per_layer_ne, dp, nodes, bw) +
			    coll_s(c, COLL_AR, per_layer_ex, edp, enodes, bw);
			traffic = L_s * per;
			share = 2.0 / 3.0;
		}
		/* The ring's sends hold the NICs for all their time, hidden
		 * or exposed, in the share of the micro-batches the window
		 * spans (review s20d F1: only the hidden part, and all m
		 * micro-batches' of it against a one-micro-batch window, so
		 * more cp_overlap left DP less room and the step slower) */
		/* (CP across nodes puts the DP group across them too: its
		 * ranks sit tp x cp apart; whatever the NIC share, review
		 * s20e F2) */
		if (cp_inter) {
			double ring = L_s * (cp_hidden + lcp);

			nic_busy = ring * share;
			/* the forward's share (1 of 3 passes) of one
			 * micro-batch's ring traffic */
			fwd_nic = ring / 3.0;
		}
		/* DP hides in dp_overlap of the time the NICs are free
		 * beside compute (review s20e F4: of the whole window, less
		 * the ring, left DP no room while the NICs were partly free),
		 * and in dp_overlap of the weight-offload stalls of the same
		 * passes, spread over a micro-batch as its time is (the
		 * transfers prefetch across pass boundaries): the GPU waits on
		 * the host link, the NICs wait for nothing. dp_overlap there
		 * too: a stack that does not overlap DP reduces after the
		 * backward, stalls or not, and the NICs' traffic shares the
		 * GPU's PCIe link with the host copies (review s21a F4, F5).
		 * The stalls are charged whole below, so DP and the host link
		 * are solved together (review s20e F1: the stalls had been a
		 * window apart, max'd with DP's exposure after the fact, and
		 * more TP, EP or CP overlap, shrinking DP's window while the
		 * stall grew, could lengthen the step by up to 2 %). */
		double dp_alone, dp_mb, ag_alone, ag_mb;

		hide_in(traffic,
			c->dp_overlap * fmax(0.0, share * mb_window - nic_busy),
			c->dp_overlap * share * off_mb, &dp_alone, &dp_mb);
		/* the post-step all-gather: the next forward, with its
		 * stalls, in param_gather_overlap (review s20d F2) */
		hide_in(ag,
			c->pg_overlap * c->dp_overlap *
			    fmax(0.0, mb_window / 3.0 - fwd_nic),
			c->pg_overlap * c->dp_overlap * off_mb / 3.0, &ag_alone,
			&ag_mb);
		/* the DP fields keep their whole exposure beside compute,
		 * the stall time they fill included; the host link's field
		 * keeps the rest of the stalls (review s21a F1, s21b F4:
		 * charging the whole stall there had turned 280 of 864
		 * built-in ZeRO-3 offload plans' binding from communication
		 * to compute) */
		dp_in_stalls = (dp_alone - dp_mb) + (ag_alone - ag_mb);
		T->dp_comm_exposed_s = dp_alone + ag_alone;
	}
	/* The weight transfers' stalls, whole, less the DP time already
	 * charged in them: DP pays only what dp_overlap of the stalls cannot
	 * hide (at dp_overlap 1 under ZeRO-3 the step takes the longer of the
	 * two; at 0 their sum; review s20c F1, s21b F1). 0 without weight
	 * offload. */
	T->host_link_exposed_s = m * off_mb - dp_in_stalls;

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
					 n_upd * 2.0 * c->ob /
					     (c->rq->cpu_optimizer_gbps * 1e9);
		} else {
			T->optimizer_s = n_upd *
					 (2.0 * c->wb + c->gb + 2.0 * c->ob) /
					 c->hbm;
		}
	}

	T->step_s = T->compute_s + T->tp_comm_s + T->pp_bubble_s + T->pp_p2p_s +
		    T->dp_comm_exposed_s + T->ep_comm_s + T->cp_comm_exposed_s +
		    T->optimizer_s + T->host_link_exposed_s;

	/* Throughput and FLOP utilisation (MFU: model FLOPs; HFU: with
	 * recompute; both over the datasheet dense peak of the precision). */
	{
		double tokens_step = (double)p->global_batch_size * c->s;
		double hw = c->model_flops_token;
		double G = (double)p->gpus;
		double fwd_layers =
		    2.0 * c->P.layers_active + c->L * c->attn_fwd_layer_token;

		/* partial: the model's share of layers recomputed, k in each
		 * of the p x v chunks (the time above takes the fullest
		 * stage's share; review s20a F6) */
		if (l->recompute == ENG_RC_FULL)
			hw += fwd_layers;
		else if (l->recompute == ENG_RC_PARTIAL)
			hw += fmin(1.0, (double)l->recompute_layers *
					    (l->vp > 1 ? l->vp : 1) * l->pp /
					    c->L) *
			      fwd_layers;
		else if (l->recompute == ENG_RC_SELECTIVE && c->sac_mm > 0.0)
			hw += c->sac_mm * 2.0 * c->P.layers_active;
		else if (l->recompute == ENG_RC_SELECTIVE)
			hw += c->L * c->attn_fwd_layer_token;
		p->hardware_flops_per_token = hw;
		p->tokens_per_s = tokens_step / T->step_s;
		p->tokens_per_s_per_gpu = p->tokens_per_s / G;
		p->mfu = c->model_flops_token * p->tokens_per_s / (G * c->peak);
		p->hfu = hw * p->tokens_per_s / (G * c->peak);
		trn_run_figures(c, p); /* whole run, with goodput */
	}
}

/* Fills a plan for layout l; returns 0, or -1 when the layout breaks a
 * divisibility rule (why in *why). Memory always; time only when want_time
 * (the search skips timing of layouts that do not fit). */
int trn_plan_of(const struct ctx *c, const struct trn_layout *l,
		struct trn_plan *p, bool want_time, const char **why)
{
	long m_micro = trn_micro_batches(c, l, why);
	struct mem_fixed mf;

	if (m_micro < 0)
		return -1;
	trn_mem_fixed_of(c, l, m_micro, &mf);
	trn_plan_memory(c, l, m_micro, &mf, p);
	if (want_time) {
		struct mb_cost mc;

		trn_mb_cost_of(c, l, &mc);
		trn_time_of(c, l, m_micro, &mc, p);
	}
	return 0;
}

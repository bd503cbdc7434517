/* training_search.c - the training layout search (MODEL.md §6): default
 * strategy lists, the dp candidates, every (tp, cp, pp, vp, dp, ep, mb,
 * sp, fa) with each ZeRO stage's cheapest fitting recompute and offload,
 * the top plans by objective, and branch and bound on the step time.
 */
#include "training_int.h"

#include <string.h>

static void push(struct trn_choices *c, int v)
{
	if (!trn_choices_has(c, v) && c->n < TRN_MAX_CHOICES)
		c->v[c->n++] = v;
}

/* Removes repeats, keeping each value's first place: the lists are sets
 * of allowed values, and a repeat ranked the same plan twice (review
 * s21e; the HTTP parser drops them too, for the engine's other callers). */
static void unique_choices(struct trn_choices *c)
{
	struct trn_choices u = {.n = 0};

	for (int i = 0; i < c->n; i++)
		if (!trn_choices_has(&u, c->v[i]))
			u.v[u.n++] = c->v[i];
	*c = u;
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

long trn_cp_max_default(long seq_len)
{
	/* each rank keeps at least TRN_CP_MIN_RANK_TOKENS: a rule over the
	 * rank's chunk, so a longer sequence never loses an option a shorter
	 * one has (review s15: cp was searched only from 32K, and 32K trained
	 * the same tokens in fewer GPU-hours than 16K). Megatron-Core splits
	 * the sequence into 2 cp chunks for its causal load balance (a 2 cp
	 * that divides it, every smaller power of two does too). */
	long best = 1;

	for (long cp = 2; cp <= 16 && seq_len / cp >= TRN_CP_MIN_RANK_TOKENS;
	     cp *= 2)
		if (seq_len % (2 * cp) == 0)
			best = cp;
	return best;
}

/* Engine defaults for lists the request left empty (MODEL.md §6). */
void trn_default_lists(const struct ctx *c, struct lists *L)
{
	const struct trn_request *rq = c->rq;
	const struct trn_strategies *st = &rq->strategies;
	const struct model_arch *m = &rq->model;
	long gmax = rq->gpus > 0 ? rq->gpus : rq->max_gpus;

	memset(L, 0, sizeof(*L));
	L->tp = st->tp;
	/* a pinned list that offers tp 1 on a stack that runs no other
	 * (QLoRA, or no tensor parallelism): the runnable one (review s16c
	 * F10: tp [1, 2, 4] under QLoRA gave tp 4 on every plan) */
	if (L->tp.n > 1 && !trn_tp_runs(rq))
		for (int i = 0; i < L->tp.n; i++)
			if (L->tp.v[i] == 1) {
				L->tp.n = 1;
				L->tp.v[0] = 1;
				break;
			}
	if (!L->tp.n) {
		/* a stack without tensor parallelism, or QLoRA: one rank a
		 * layer (stack.h tensor_parallel, trn_tp_runs) */
		int tmax = trn_tp_runs(rq) ? c->gpn : 1;
		for (int t = 1; t <= tmax && t <= m->heads && t <= gmax; t *= 2)
			if (m->heads % t == 0)
				push(&L->tp, t);
	}
	L->pp = st->pp;
	if (!L->pp.n) {
		/* a stack without a pipeline schedule: one stage
		 * (stack.h pipeline_parallel) */
		long pmax = rq->stack.pipeline_parallel ? m->layers : 1;
		for (long p = 1; p <= pmax && p <= gmax; p *= 2)
			push(&L->pp, (int)p);
		for (long p = 3; p <= pmax && p <= gmax; p++)
			if (m->layers % p == 0)
				push(&L->pp, (int)p);
		/* 126 layers on 16 stages style: uneven stages allowed */
	}
	sort_choices(&L->pp);
	L->ep = st->ep;
	if (!L->ep.n) {
		push(&L->ep, 1);
		/* a stack without expert parallelism replicates the experts
		 * (stack.h expert_parallel) */
		for (long e = 2;
		     m->moe.experts > 0 && rq->stack.expert_parallel &&
		     e <= m->moe.experts && e <= gmax && e <= 256;
		     e *= 2)
			if (m->moe.experts % e == 0)
				push(&L->ep, (int)e);
	}
	/* Context parallelism up to trn_cp_max_default (training.h) */
	L->cp = st->cp;
	if (!L->cp.n)
		for (long cp = 1; cp <= trn_cp_max_default(rq->seq_len);
		     cp *= 2)
			push(&L->cp, (int)cp);
	L->vp = st->vp;
	if (!L->vp.n) {
		static const int vps[] = {1, 2, 3, 4, 6, 8};
		for (size_t i = 0; i < sizeof(vps) / sizeof(vps[0]); i++)
			push(&L->vp, vps[i]);
	}
	/* The stages the stack runs (stack.h max_zero_stage); a layout's
	 * pipeline may narrow them (try_layout). */
	L->zero = st->zero;
	if (!L->zero.n)
		for (int z = 0; z <= c->rq->stack.max_zero_stage; z++)
			push(&L->zero, z);
	sort_choices(&L->zero);
	/* partial only on a stack that runs it; a list that names it with
	 * other modes is narrowed to those, as ZeRO stages are (review s20a
	 * F4); partial alone is kept, sized with a warning */
	L->rc.n = 0;
	for (int r = 0; r < ENG_RC_COUNT; r++)
		if ((!st->recompute.n || trn_choices_has(&st->recompute, r)) &&
		    (r != ENG_RC_PARTIAL || c->rq->stack.partial_recompute ||
		     st->recompute.n == 1))
			push(&L->rc, r);
	if (!L->rc.n)
		L->rc = st->recompute;
	sort_choices(&L->rc);
	L->sp = st->sequence_parallel;
	if (!L->sp.n)
		push(&L->sp, 1);
	/* Stage rebalancing only when asked (Megatron-LM's default is off). */
	L->rb = st->stage_rebalance;
	if (!L->rb.n)
		push(&L->rb, 0);
	L->fa = st->flash_attention;
	if (!L->fa.n) /* the stack's kernel: fused or not (stack.h) */
		push(&L->fa, attn_kernel_fused(rq->stack.attn_kernel) ? 1 : 0);
	L->mb = st->micro_batch;
	if (!L->mb.n)
		for (int b = 1; b <= 16; b *= 2)
			push(&L->mb, b);
	L->off = st->offload;
	if (!L->off.n)
		for (int o = 0; o < TRN_OFFLOAD_COUNT; o++)
			push(&L->off, o);
	sort_choices(&L->off);
	{
		struct trn_choices *all[] = {&L->tp, &L->pp,   &L->ep, &L->cp,
					     &L->vp, &L->zero, &L->rc, &L->sp,
					     &L->rb, &L->fa,   &L->mb, &L->off};

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			unique_choices(all[i]);
	}
}

/* Interleaving (v > 1) needs p > 1 and at least one layer per chunk, and
 * must not enlarge the worst stage: v * ceil(L/(p v)) <= ceil(L/p). Even
 * splits (L % (p v) == 0) always pass; 126 layers on 16 stages take v = 2,
 * 4 or 8 with 7-8 layers per stage, as Llama 3 405B did (MODEL.md §6). */
bool trn_vp_ok(long L, int p, int v)
{
	long chunks = (long)p * v;

	if (v <= 1)
		return true;
	if (p <= 1 || L < chunks)
		return false;
	return (long)v * ((L + chunks - 1) / chunks) <= (L + p - 1) / p;
}

/* The ranking key of a plan: (over the wall-clock limit, then by
 * objective), on its whole-run rate tokens_per_s (goodput included). */
static void plan_key(const struct ctx *c, bool within_limit,
		     double tokens_per_s, long gpus, double k[3])
{
	double miss = within_limit ? 0.0 : 1.0;
	double spt = 1.0 / tokens_per_s; /* seconds per token */

	k[0] = miss;
	/* A plan over the limit (the deadline, or max_days for objective
	 * cost or gpus) should be over it by as little as possible: those
	 * rank by time whatever the objective (else cost would pick the
	 * slowest, cheapest plan of all: years on a few GPUs, issue 13). */
	switch (miss > 0 ? TRN_OBJ_TIME : c->rq->objective) {
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

/* Whole-run wall seconds per second of steady work on `gpus` GPUs
 * (goodput.h), cached for the last count: the loops inside dp share it. */
static double wall_per_work(struct search *S, long gpus)
{
	struct gp_result g;

	if (S->gp_gpus != gpus) {
		trn_goodput_of(S->c, gpus, &g);
		S->gp_gpus = gpus;
		S->gp_wall_per_work = g.wall_per_work;
	}
	return S->gp_wall_per_work;
}

/* Whether a run at whole-run rate tokens_per_s ends within the limit
 * (as trn_run_figures computes p->days). */
static bool within_limit(const struct ctx *c, double tokens_per_s)
{
	if (c->limit_days <= 0 || c->rq->train_tokens <= 0)
		return true;
	return fx_round_sig(c->rq->train_tokens / tokens_per_s / 86400.0, 4) <=
	       c->limit_days;
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

/* A plan that offloads ranks as if its objective were this much worse: the
 * time model is not finer than about 1 %, and within it the plan that
 * needs no host memory, no PCIe traffic each step and no CPU optimizer is
 * the one to run (hostile review, 2026-11-26: QLoRA of a 70B on one H100
 * ranked offload first for 0.03 % of step time). Only raises keys, so the
 * lower bounds of may_enter() stay valid. */
#define OFFLOAD_TIE_MARGIN 0.01

static void consider(struct search *S, const struct trn_plan *p)
{
	double k[3], tps = p->tokens_per_s / wall_per_work(S, p->gpus);
	int pos;

	plan_key(S->c, within_limit(S->c, tps), tps, p->gpus, k);
	if (p->layout.offload != TRN_OFFLOAD_NONE)
		k[1] *= 1.0 + OFFLOAD_TIE_MARGIN;
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
static bool may_enter(struct search *S, long gpus, double step_lb_s)
{
	double k[3], tokens_per_s;

	if (S->n < S->top)
		return true;
	tokens_per_s =
	    (double)S->c->gbs * S->c->s / step_lb_s / wall_per_work(S, gpus);
	plan_key(S->c, within_limit(S->c, tokens_per_s), tokens_per_s, gpus, k);
	return key_less(k, S->key[S->n - 1]);
}

/* Whether a list holds a value no larger than bound. */
static bool any_at_most(const struct trn_choices *v, int bound)
{
	for (int i = 0; i < v->n; i++)
		if (v->v[i] <= bound)
			return true;
	return false;
}

/* Recompute partial on layout l (its ZeRO state ms): the fewest layers of
 * a chunk, 1 .. trn_partial_max_layers, whose recompute keeps the plan
 * within TRN_NEAR_FULL of GPU memory (a plan is flagged above it: the
 * layer count is the knob that can leave that margin), else the count of
 * least memory (which may not fit: the caller checks). Memory falls as
 * layers are added until k reaches a rebalanced split's end chunks, one
 * layer short: there they are recomputed whole and their rebuild adds a
 * layer input (trn_act_partial), so the range below is bisected and the
 * one or two counts above it are tried in turn (review s20b N1). 0 when a
 * chunk has fewer than two layers. Its activation bytes in *act. */
static int partial_layers(const struct ctx *c, const struct mem_fixed *mf,
			  const struct mem_state *ms, double *act)
{
	int most = mf->shape.partial_max, mono = most, best = 0;
	double target = fmin(c->capacity, TRN_NEAR_FULL * c->gpu_bytes);
	double best_total = 0.0;

	if (most < 1)
		return 0;
	if (mf->shape.ends < mf->shape.layers - 0.5)
		mono =
		    (int)fmin((double)most, floor(mf->shape.ends + 1e-9) - 1.0);
	if (mono >= 1 &&
	    trn_mem_total(c, ms, trn_act_partial(mf, mono)) <= target) {
		int lo = 1, hi = mono;

		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;

			if (trn_mem_total(c, ms, trn_act_partial(mf, mid)) <=
			    target)
				hi = mid;
			else
				lo = mid + 1;
		}
		*act = trn_act_partial(mf, lo);
		return lo;
	}
	for (int k = mono >= 1 ? mono : 1; k <= most; k++) {
		double total = trn_mem_total(c, ms, trn_act_partial(mf, k));

		if (k > mono && total <= target) {
			*act = trn_act_partial(mf, k);
			return k;
		}
		if (!best || total < best_total) {
			best = k;
			best_total = total;
		}
	}
	*act = trn_act_partial(mf, best);
	return best;
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
	const struct trn_strategies *st = &c->rq->strategies;
	int zmax = stack_zero_stage_max(&c->rq->stack, l->pp);
	bool explicit_zero = st->zero.n > 0;
	bool explicit_offload = st->offload.n > 0;
	/* Past the stack's bounds only what the request insists on: one
	 * pinned value, or a list of which the stack runs none. A list is
	 * the allowed values, and the stack narrows it (review s14: ZeRO
	 * 0-3 listed on megatron-lm-2021 ranked ZeRO-3 first, 0.05 %
	 * ahead of the ZeRO-1 it runs). */
	bool force_zero =
	    explicit_zero && (st->zero.n == 1 || !any_at_most(&st->zero, zmax));
	bool force_offload =
	    explicit_offload &&
	    (st->offload.n == 1 ||
	     !any_at_most(&st->offload, (int)c->rq->stack.max_offload));
	long m_micro = trn_micro_batches(c, l, &why);
	long gpus = (long)l->tp * l->pp * l->dp * l->cp;
	struct mem_fixed mf;
	struct mb_cost mc[ENG_RC_COUNT];
	bool have_mc[ENG_RC_COUNT] = {false};
	int mc_layers = 0; /* recompute_layers of mc[ENG_RC_PARTIAL] */

	if (m_micro < 0)
		return;
	trn_mem_fixed_of(c, l, m_micro, &mf);
	for (int zi = 0; zi < L->zero.n; zi++) {
		/* the recompute levels still worth a try: an offload level
		 * is timed only with a recompute that may be faster than
		 * every one the levels before it fit with (review s19b F8:
		 * stopping at the first level that fit never timed offload
		 * with less recompute, which can be faster, so more GPU
		 * memory gave a slower answer) */
		bool worth[ENG_RC_COUNT];
		int n_worth = 0;
		/* the layers partial fitted with: a heavier offload level
		 * can let it recompute fewer, which is faster (review s21d
		 * F1) */
		int partial_fit = 0;

		for (int r = 0; r < ENG_RC_COUNT; r++) {
			worth[r] = trn_choices_has(&L->rc, r);
			n_worth += worth[r];
		}

		l->zero = L->zero.v[zi];
		if (l->zero > 0 && l->dp == 1 && !explicit_zero)
			continue; /* same as ZeRO-0 */
		/* ZeRO-3 does not combine with PP (weights are needed by
		 * every in-flight micro-batch); ZeRO-1 is Megatron's
		 * distributed optimizer, ZeRO-2 what Llama 3 ran with PP
		 * (§3.3.2: optimizer state and gradients sharded). */
		if (l->zero >= 3 && l->pp > 1)
			continue;
		if (!force_zero && l->zero > zmax)
			continue; /* the stack cannot run it */
		for (int oi = 0; oi < L->off.n && n_worth > 0; oi++) {
			struct mem_state ms;

			l->offload = (enum trn_offload)L->off.v[oi];
			/* Weights leave the GPU only under ZeRO-3: DeepSpeed's
			 * offload_param is "valid only with stage 3"
			 * (ZeRO-Infinity, one GPU included, where ZeRO-3 is
			 * ZeRO-0 here), FSDP's CPUOffload moves the shards;
			 * no stack offloads replicated weights, and a stack
			 * without ZeRO-3 offloads none. */
			if (!force_offload &&
			    (int)l->offload > (int)c->rq->stack.max_offload)
				continue; /* the stack does not offload it */
			if (l->offload == TRN_OFFLOAD_OPTIMIZER_WEIGHTS &&
			    !force_offload &&
			    (c->rq->stack.max_zero_stage < 3 ||
			     (l->zero < 3 && trn_zero_ranks(l) > 1)))
				continue;
			ms = trn_mem_state_of(c, l, &mf);
			for (int ri = 0; ri < L->rc.n; ri++) {
				struct trn_plan p;
				double total;

				if (!worth[L->rc.v[ri]])
					continue;
				l->recompute = (enum eng_recompute)L->rc.v[ri];
				l->recompute_layers = 0;
				if ((S->rc = eng_budget_spend(S->budget, 1)))
					return;
				if (l->recompute == ENG_RC_PARTIAL) {
					double act = 0.0;

					S->partial_tried++;
					l->recompute_layers =
					    partial_layers(c, &mf, &ms, &act);
					if (!l->recompute_layers)
						continue; /* chunks of one layer
							   */
					if (partial_fit &&
					    l->recompute_layers >= partial_fit)
						continue; /* no fewer than
							     fitted before */
					S->partial_room++;
					total = trn_mem_total(c, &ms, act);
				} else {
					total = trn_mem_total(
					    c, &ms, mf.act[l->recompute]);
				}
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
				/* what is never faster than this level is
				 * not worth timing any more, here or with
				 * more offloaded; selective and partial may
				 * each beat the other (review s21c F1: a
				 * fitting selective had kept a faster partial
				 * of one or two layers from being timed) */
				for (int r = 0; r < ENG_RC_COUNT; r++)
					if (worth[r] &&
					    trn_recompute_never_faster(
						(enum eng_recompute)r,
						l->recompute)) {
						worth[r] = false;
						n_worth--;
					}
				/* ... but partial with fewer layers than it
				 * fitted with is */
				if (l->recompute == ENG_RC_PARTIAL &&
				    l->recompute_layers > 1) {
					partial_fit = l->recompute_layers;
					worth[ENG_RC_PARTIAL] = true;
					n_worth++;
				}
				/* partial is never faster than none (each
				 * part of a layer's time, TP after its
				 * overlap included, grows with the share
				 * recomputed): none's cost bounds it before
				 * its own is made */
				if (l->recompute == ENG_RC_PARTIAL) {
					struct trn_layout ln = *l;

					ln.recompute = ENG_RC_NONE;
					ln.recompute_layers = 0;
					if (!have_mc[ENG_RC_NONE]) {
						trn_mb_cost_of(
						    c, &ln, &mc[ENG_RC_NONE]);
						have_mc[ENG_RC_NONE] = true;
					}
					if (!may_enter(S, gpus,
						       trn_step_lower_bound_s(
							   l, m_micro, mf.ls,
							   &mc[ENG_RC_NONE])))
						continue;
				}
				/* partial's cost depends on its layers: kept
				 * for the count it was made with */
				if (!have_mc[l->recompute] ||
				    (l->recompute == ENG_RC_PARTIAL &&
				     mc_layers != l->recompute_layers)) {
					trn_mb_cost_of(c, l, &mc[l->recompute]);
					have_mc[l->recompute] = true;
					if (l->recompute == ENG_RC_PARTIAL)
						mc_layers = l->recompute_layers;
				}
				if (!may_enter(S, gpus,
					       trn_step_lower_bound_s(
						   l, m_micro, mf.ls,
						   &mc[l->recompute])))
					continue;
				trn_plan_memory(c, l, m_micro, &mf, &p);
				trn_time_of(c, l, m_micro, &mc[l->recompute],
					    &p);
				p.meets_deadline =
				    trn_meets_deadline(c->rq, p.days);
				consider(S, &p);
			}
		}
	}
}

/* The dp candidates into S: the divisors of gbs up to gmax, ascending.
 * Divisors below sqrt(gbs) are found by trial, the rest as their
 * cofactors; when gmax is below sqrt(gbs) every wanted divisor is a small
 * one. Validation keeps gbs <= TRN_MAX_GLOBAL_BATCH, whose divisor count
 * fits the array. */
void trn_dp_candidates(struct search *S, long gbs, long gmax)
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

void trn_search_all(struct search *S, const struct lists *L)
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
				for (int vri = 0; vri < L->vp.n * L->rb.n;
				     vri++) {
					l.vp = L->vp.v[vri / L->rb.n];
					/* one stage has nothing to
					 * rebalance: its first choice */
					if (l.pp < 2 && vri % L->rb.n)
						continue;
					l.stage_rebalance =
					    L->rb.v[vri % L->rb.n] && l.pp > 1;
					if (!trn_vp_ok(
						rq->model.layers +
						    (l.stage_rebalance ? 2 : 0),
						l.pp, l.vp))
						continue;
					S->structures++;
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
						S->dp_choices++;
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

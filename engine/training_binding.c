/* training_binding.c - what limits a training plan (MODEL.md §6,
 * "Binding"): a missed deadline; memory, when a layout that memory rules
 * out would be better; else the largest part of the step beside compute.
 */
#include "training_int.h"

#include <string.h>

/* Share of the step beyond which communication or the bubble binds. */
#define OVERHEAD_BINDS 0.25
/* How much better a neighbour must rank for memory to bind: 1 %, so that
 * ties within the model's resolution (a micro-batch twice as large often
 * differs by a few tenths of a percent) do not name memory. */
#define BETTER_BY 0.01

/* Whether plan n ranks before plan p by the request's objective, by more
 * than BETTER_BY: for the same GPUs a shorter step; with fewer GPUs, fewer
 * (objective gpus) or fewer GPU-seconds per step (objective cost). */
static bool better(const struct ctx *c, const struct trn_plan *n,
		   const struct trn_plan *p)
{
	const double eps = BETTER_BY;

	if (n->gpus == p->gpus)
		return n->time.step_s < p->time.step_s * (1.0 - eps);
	if (c->rq->objective == TRN_OBJ_GPUS)
		return n->gpus < p->gpus;
	if (c->rq->objective == TRN_OBJ_COST)
		return n->time.step_s * (double)n->gpus <
		       p->time.step_s * (double)p->gpus * (1.0 - eps);
	return false;
}

/* Whether neighbour layout n, allowed by the request, does not fit and
 * would rank before p: then memory is what stops it. */
static bool blocked_by_memory(const struct ctx *c, struct trn_layout *n,
			      const struct trn_plan *p)
{
	struct trn_plan np;
	const char *why = NULL;

	if (n->dp < 1 || n->dp % n->ep)
		return false;
	/* a neighbour of a partial plan recomputes the same share of its
	 * chunks' layers, within what they allow (review s20a F5, s20b N4:
	 * deeper interleaving had kept the count a chunk, recomputing 2-4x
	 * the layers) */
	if (n->recompute == ENG_RC_PARTIAL) {
		int most = trn_partial_max_layers(c, n);

		if (most < 1)
			return false;
		if (p->layout.recompute == ENG_RC_PARTIAL)
			n->recompute_layers = (int)fmax(
			    1.0, round((double)p->layout.recompute_layers *
				       trn_chunk_layers(c, n) /
				       trn_chunk_layers(c, &p->layout)));
		if (n->recompute_layers > most)
			n->recompute_layers = most;
	}
	if (trn_plan_of(c, n, &np, true, &why) != 0 || np.fits)
		return false;
	return better(c, &np, p);
}

/* Memory binds when one step away from the plan - lighter recompute, a
 * micro-batch twice as large, deeper interleaving, less offload, a lower ZeRO
 * stage, half the tensor or pipeline parallelism on the same GPUs, or
 * (objectives gpus and cost, GPU count left free) half the data-parallel GPUs -
 * is allowed by the request, does not fit, and would be better. */
static bool memory_binds(const struct ctx *c, const struct trn_plan *p)
{
	const struct trn_request *rq = c->rq;
	const struct trn_layout *l = &p->layout;
	struct lists L;
	struct trn_layout n;

	trn_default_lists(c, &L);
	if (l->recompute > ENG_RC_NONE) {
		/* the next lighter recompute the request allows: from full,
		 * partial on the most layers it may take
		 * (trn_partial_max_layers); else the allowed mode below (from
		 * partial, not partial with a layer fewer: the search took
		 * the fewest within its bound, and one layer is below the 1 %
		 * that names memory whenever a chunk holds many; review s20b
		 * N2: with ["none", "partial"] none is the step) */
		int k = trn_partial_max_layers(c, l), r = (int)l->recompute - 1;

		n = *l;
		n.recompute_layers = 0;
		if (l->recompute == ENG_RC_FULL && k >= 1 &&
		    trn_choices_has(&L.rc, ENG_RC_PARTIAL)) {
			n.recompute_layers = k;
		} else {
			if (r == ENG_RC_PARTIAL)
				r--;
			while (r >= 0 && !trn_choices_has(&L.rc, r))
				r--;
		}
		n.recompute = (enum eng_recompute)r;
		if (r >= 0 && blocked_by_memory(c, &n, p))
			return true;
	}
	if (trn_choices_has(&L.mb, l->micro_batch * 2)) {
		n = *l;
		n.micro_batch *= 2;
		if (blocked_by_memory(c, &n, p))
			return true;
	}
	for (int i = 0; l->pp > 1 && i < L.vp.n; i++) {
		n = *l;
		n.vp = L.vp.v[i];
		if (n.vp <= l->vp ||
		    !trn_vp_ok(rq->model.layers + (l->stage_rebalance ? 2 : 0),
			       n.pp, n.vp))
			continue;
		if (blocked_by_memory(c, &n, p))
			return true;
	}
	if (l->offload > TRN_OFFLOAD_NONE &&
	    trn_choices_has(&L.off, (int)l->offload - 1)) {
		n = *l;
		n.offload = (enum trn_offload)((int)l->offload - 1);
		if (blocked_by_memory(c, &n, p))
			return true;
	}
	if (l->zero > 0 && trn_choices_has(&L.zero, l->zero - 1)) {
		n = *l;
		n.zero--;
		if (blocked_by_memory(c, &n, p))
			return true;
	}
	if (rq->strategies.dp.n == 0 ||
	    trn_choices_has(&rq->strategies.dp, l->dp * 2)) {
		if (l->tp > 1 && trn_choices_has(&L.tp, l->tp / 2)) {
			n = *l;
			n.tp /= 2;
			n.dp *= 2;
			n.sequence_parallel = l->sequence_parallel && n.tp > 1;
			if (blocked_by_memory(c, &n, p))
				return true;
		}
		if (l->pp > 1 && l->vp == 1 &&
		    trn_choices_has(&L.pp, l->pp / 2)) {
			n = *l;
			n.pp /= 2;
			n.dp *= 2;
			n.stage_rebalance = l->stage_rebalance && n.pp > 1;
			if (blocked_by_memory(c, &n, p))
				return true;
		}
	}
	if (rq->objective != TRN_OBJ_TIME && rq->gpus == 0 && l->dp % 2 == 0 &&
	    (rq->strategies.dp.n == 0 ||
	     trn_choices_has(&rq->strategies.dp, l->dp / 2))) {
		n = *l;
		n.dp /= 2;
		if (blocked_by_memory(c, &n, p))
			return true;
	}
	return false;
}

enum eng_binding trn_plan_binding(const struct ctx *c, const struct trn_plan *p)
{
	const struct trn_time *T = &p->time;
	/* the host link's stalls are communication too (review s21c F2: a
	 * step three quarters weight transfers had been bound by compute) */
	double comm = trn_time_links_s(T) + T->host_link_exposed_s;

	if (!p->meets_deadline)
		return ENG_BIND_DEADLINE;
	if (memory_binds(c, p))
		return ENG_BIND_MEMORY;
	if (comm + T->pp_bubble_s > OVERHEAD_BINDS * T->step_s)
		return T->pp_bubble_s > comm ? ENG_BIND_PIPELINE_BUBBLE
					     : ENG_BIND_COMMUNICATION;
	return ENG_BIND_COMPUTE;
}

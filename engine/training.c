/* training.c - training/fine-tuning sizing: the public entry points
 * (trn_size, trn_evaluate), names, the optimizer table and the result
 * (binding, warnings).
 *
 * Formulas, refinements and every default: docs/MODEL.md
 * (section numbers below refer to it). The engine's parts share
 * training_int.h: the request context (training_ctx.c), memory
 * (training_memory.c), time (training_time.c), validation
 * (training_validate.c) and the search (training_search.c). Everything
 * else is static except the functions declared in training.h.
 */
#include "training_int.h"

#include "formulas.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

const char *const trn_optimizer_names[TRN_OPTIMIZER_COUNT + 1] = {
    "adamw", "adamw_8bit", "sgd", "adafactor", NULL};
const char *const trn_method_names[TRN_METHOD_COUNT + 1] = {"full", "lora",
							    "qlora", NULL};
const char *const trn_objective_names[TRN_OBJ_COUNT + 1] = {"time", "cost",
							    "gpus", NULL};
static const char *const binding_names[ENG_BIND_COUNT] = {
    "compute",		"memory",  "communication",   "deadline",
    "memory_bandwidth", "latency", "pipeline_bubble", "scheduler"};

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
	return name_of(stack_offload_names, TRN_OFFLOAD_COUNT, (int)o);
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

double trn_host_link_gbps(const struct trn_request *rq)
{
	if (rq->host_link_gbps > 0.0)
		return rq->host_link_gbps;
	return rq->gpu.host_link_gbps > 0.0 ? rq->gpu.host_link_gbps
					    : TRN_DEFAULT_HOST_LINK_GBPS;
}

double trn_host_link_efficiency(const struct trn_request *rq)
{
	return rq->host_link_efficiency > 0.0 ? rq->host_link_efficiency
					      : TRN_HOST_LINK_EFFICIENCY;
}

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

/* ---- result ----------------------------------------------------------- */

/* Warnings go to the result's fixed table (engine/errors.h). */
#define warn(r, ...)                                                           \
	eng_warn(&(r)->warnings[0][0], &(r)->n_warnings, ENG_MAX_WARNINGS,     \
		 ENG_WARNING_LEN, __VA_ARGS__)

/* The step of layout l with the job as rq states it, memory aside, or 0
 * when it cannot be timed: a warning's counterpart (the FP8 job's bf16,
 * the LoRA job's full fine-tuning). */
static double step_of(const struct trn_request *rq, const struct trn_layout *l)
{
	struct trn_plan p;
	struct eng_error e;

	memset(&p, 0, sizeof(p));
	return trn_evaluate(rq, l, &p, &e) == 0 ? p.time.step_s : 0.0;
}

static double step_at_16bit(const struct trn_request *rq,
			    const struct trn_layout *l)
{
	struct trn_request r16 = *rq;

	r16.precision = ENG_BF16;
	return step_of(&r16, l);
}

/* Full fine-tuning's step on layout l at the batch the answer resolved
 * (global_batch_size sequences): a request that left the batch out would
 * otherwise resolve full training's 4M-token default, 128 times LoRA's
 * 16 sequences (review s19b F6: the warning never came then). */
static double step_at_full(const struct trn_request *rq,
			   const struct trn_layout *l, long global_batch_size)
{
	struct trn_request full = *rq;

	full.method = TRN_FULL;
	full.global_batch_size = global_batch_size;
	full.global_batch_tokens = 0;
	return step_of(&full, l);
}

/* Whether the request allows micro-batches of one sequence. */
static bool mb_one_allowed(const struct trn_request *rq)
{
	bool one = rq->strategies.micro_batch.n == 0;

	for (int i = 0; i < rq->strategies.micro_batch.n; i++)
		one |= rq->strategies.micro_batch.v[i] == 1;
	return one;
}

/* Whether micro-batches of one sequence would split the request's batch
 * where its pinned ones cannot: the same request sized with micro_batch
 * 1 gets past the batch's division (an answer, or another refusal). */
static bool mb_one_splits(const struct trn_request *rq)
{
	struct trn_request r1 = *rq;
	struct trn_result *tmp = calloc(1, sizeof(*tmp));
	struct eng_error e = {0};
	bool splits;

	if (!tmp)
		return true;
	r1.strategies.micro_batch.n = 1;
	r1.strategies.micro_batch.v[0] = 1;
	r1.top = 1;
	splits = trn_size(&r1, tmp, &e) == 0 ||
		 !strstr(e.message, "cannot be split");
	free(tmp);
	return splits;
}

bool trn_meets_deadline(const struct trn_request *rq, double days)
{
	return rq->deadline_days <= 0 ||
	       fx_round_sig(days, 4) <= rq->deadline_days;
}

/* Days as the answer's fields print them, to digits significant digits
 * (a plan's days 4, a request's deadline or max_days 6: sizing_real's),
 * never "0 days" or "1 days" for 0.577 (review s17a F12), nor "1.6" or
 * "0.000" for the 1.62 and 0.0004 beside them (review s18c F2). */
static const char *days_text(char *buf, size_t len, double d, int digits)
{
	double r = fx_round_sig(d, digits);

	if (r >= pow(10.0, digits))
		snprintf(buf, len, "%.0f days", r);
	else
		snprintf(buf, len, "%.*g day%s", digits, r,
			 r == 1.0 ? "" : "s");
	return buf;
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
	if (trn_plan_of(c, &half, &h, true, &why) != 0 || !h.fits ||
	    b->time.step_s <= 0)
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
	rq->dropout = -1;
	rq->top = 5;
	rq->objective = TRN_OBJ_TIME;
	stack_default(&rq->stack);
	rq->failures_per_gpu_hour = GP_DEFAULT_FAILURES_PER_GPU_HOUR;
	rq->checkpoint_gbps_per_gpu = GP_DEFAULT_CHECKPOINT_GBPS_PER_GPU;
	rq->restart_minutes = GP_DEFAULT_RESTART_S / 60.0;
	rq->max_days = TRN_DEFAULT_MAX_DAYS;
	rq->memory_fixed_overhead_gib = TRN_DEFAULT_FIXED_OVERHEAD_GIB;
	rq->memory_fragmentation_fraction = TRN_DEFAULT_FRAGMENTATION;
	rq->cpu_optimizer_gbps = TRN_DEFAULT_CPU_OPTIMIZER_GBPS;
}

int trn_evaluate(const struct trn_request *rq, const struct trn_layout *lay,
		 struct trn_plan *plan, struct eng_error *err)
{
	struct ctx c;
	const char *why = NULL;
	int rc;
	struct trn_layout l = *lay;

	eng_error_clear(err);
	if ((rc = trn_validate(rq, err)))
		return rc;
	trn_ctx_init(&c, rq);
	c.gbs = trn_resolve_gbs(rq);
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
	if (l.pp == 1)
		l.stage_rebalance = false;
	if (l.recompute != ENG_RC_PARTIAL) {
		l.recompute_layers = 0;
	} else {
		int most = trn_partial_max_layers(&c, &l);

		if (l.recompute_layers < 1 || l.recompute_layers > most)
			return eng_fail(err, ENG_EINVAL, "strategies.recompute",
					"recompute partial recomputes 1 to %d "
					"layers of a chunk here (%d given)",
					most, l.recompute_layers);
	}
	if (trn_plan_of(&c, &l, plan, true, &why))
		return eng_fail(
		    err, ENG_EINVAL, why,
		    "global batch %ld is not divisible by dp (%d) x "
		    "micro_batch (%d)%s",
		    c.gbs, l.dp, l.micro_batch,
		    strcmp(why, "strategies.vp") == 0
			? " x pp for the interleaved schedule"
			: "");
	plan->meets_deadline = trn_meets_deadline(rq, plan->days);
	plan->binding = trn_plan_binding(&c, plan);
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

/* What a built-in profile can do, for the hints below. */
enum stack_can {
	CAN_SHARD_OFFLOAD, /* ZeRO-3 and weight offload */
	CAN_SHARD,	   /* ZeRO-3 */
	CAN_OFFLOAD,	   /* weight offload */
	CAN_EP,
	CAN_PP,
	CAN_TP,
	CAN_NF4 /* QLoRA's 4-bit base weights */
};

static bool stack_can(const struct eng_stack *s, enum stack_can what)
{
	bool shard = s->max_zero_stage >= 3;
	bool off = s->max_offload >= STACK_OFFLOAD_OPTIMIZER_WEIGHTS;

	switch (what) {
	case CAN_SHARD_OFFLOAD:
		return shard && off;
	case CAN_SHARD:
		return shard;
	case CAN_OFFLOAD:
		return off;
	case CAN_EP:
		return s->expert_parallel;
	case CAN_PP:
		return s->pipeline_parallel;
	case CAN_TP:
		return s->tensor_parallel;
	case CAN_NF4:
		return s->nf4_base_weights;
	}
	return false;
}

/* The built-in profiles that can do what, but the request's own, into
 * out, comma-separated (review s19b F3: a fixed list named the request's
 * own stack to itself). The catalog (GET /v1/stacks) may hold others. */
static void stacks_that(const struct trn_request *rq, enum stack_can what,
			char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < STACK_BUILTIN_COUNT && n < len; i++) {
		if (!stack_can(&stack_builtin[i], what) ||
		    !strcmp(stack_builtin[i].name, rq->stack.name))
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "",
				      stack_builtin[i].name);
	}
}

/* The stack's bounds (stack.h max_zero_stage, max_offload,
 * expert_parallel, pipeline_parallel, tensor_parallel) may be what keeps
 * every layout over its memory: "; stack X shards no further than ZeRO-n and
 * offloads ..." and the profiles that lift them, into buf ("" when the request
 * pinned past them or the stack has none). */
static void stack_bound_hint(const struct trn_request *rq, char *buf,
			     size_t len)
{
	const struct trn_strategies *st = &rq->strategies;
	/* ZeRO-3, and so weight offload, never runs with pipeline stages:
	 * with every pinned pp above 1 no stack that shards or offloads
	 * the weights helps (review s17a F11: DeepSeek-V3 at pp 16 was
	 * sent to them) */
	bool pp_one = !st->pp.n;
	bool zb, ob, rc_full = !st->recompute.n;
	char zs[48] = "", os[48] = "";
	int n = 0;

	for (int i = 0; i < st->pp.n; i++)
		pp_one |= st->pp.v[i] == 1;
	/* partial pinned: the search tried it up to all but one layer of
	 * a chunk, so full is not named as the remedy (review s20b N3) */
	for (int i = 0; i < st->recompute.n; i++)
		rc_full |= st->recompute.v[i] == ENG_RC_FULL ||
			   st->recompute.v[i] == ENG_RC_PARTIAL;
	zb = pp_one && !st->zero.n && rq->stack.max_zero_stage < 3;
	ob = pp_one && !st->offload.n &&
	     rq->stack.max_offload < STACK_OFFLOAD_OPTIMIZER_WEIGHTS;
	buf[0] = '\0';
	/* the activations a pinned recompute keeps */
	if (!rc_full)
		n = snprintf(buf, len,
			     "; recompute is pinned without full: full "
			     "recompute keeps one layer input per layer and "
			     "may fit");
	if (zb)
		snprintf(zs, sizeof(zs), " shards no further than ZeRO-%d",
			 rq->stack.max_zero_stage);
	if (ob)
		snprintf(os, sizeof(os), "%s offloads %s", zb ? " and" : "",
			 rq->stack.max_offload == STACK_OFFLOAD_NONE
			     ? "nothing"
			     : "only the optimizer state");
	if ((zb || ob) && n >= 0 && (size_t)n < len) {
		char who[160];

		stacks_that(rq,
			    zb && ob ? CAN_SHARD_OFFLOAD
			    : zb     ? CAN_SHARD
				     : CAN_OFFLOAD,
			    who, sizeof(who));
		if (who[0])
			n += snprintf(buf + n, len - (size_t)n,
				      "; stack %.64s%s%s: a built-in one that "
				      "%s (%s) may fit",
				      rq->stack.name, zs, os,
				      zb && ob
					  ? "shards and offloads the weights"
				      : zb ? "shards gradients and weights"
					   : "offloads the weights",
				      who);
	}
	{
		/* a parallelism the stack lacks, unless the request pinned
		 * that dimension (stack.h) */
		const struct {
			bool lacks;
			enum stack_can can;
			const char *what;
		} par[] = {
		    {!rq->strategies.ep.n && !rq->stack.expert_parallel &&
			 rq->model.moe.experts > 0,
		     CAN_EP,
		     "no expert parallelism: a built-in one that shards the "
		     "experts"},
		    {!rq->strategies.pp.n && !rq->stack.pipeline_parallel,
		     CAN_PP,
		     "no pipeline schedule: a built-in one that runs pipeline "
		     "stages"},
		    /* QLoRA runs without TP on every stack (trn_tp_runs):
		     * no other one to name */
		    {!rq->strategies.tp.n && !rq->stack.tensor_parallel &&
			 rq->method != TRN_QLORA,
		     CAN_TP,
		     "no tensor parallelism: a built-in one that splits "
		     "layers"},
		};
		for (size_t k = 0; k < sizeof(par) / sizeof(par[0]); k++) {
			char who[160];

			if (!par[k].lacks || n < 0 || (size_t)n >= len)
				continue;
			stacks_that(rq, par[k].can, who, sizeof(who));
			if (who[0])
				n += snprintf(buf + n, len - (size_t)n,
					      "; stack %.64s has %s (%s) may "
					      "fit",
					      rq->stack.name, par[k].what, who);
		}
	}
}

/* The field a "does not fit" names: the GPU count, unless more GPUs cannot
 * shrink a GPU's share - one tp, pp, cp and ep each to choose from and no
 * ZeRO stage that shards over data-parallel ranks - when it is the
 * strategies (review s14: tp 1, pp 1, ZeRO-0 pinned named max_gpus). */
static const char *no_fit_field(const struct trn_request *rq,
				const struct lists *L)
{
	bool shards = false;

	for (int i = 0; i < L->zero.n; i++)
		shards |= L->zero.v[i] > 0;
	if (L->tp.n == 1 && L->pp.n == 1 && L->cp.n == 1 && L->ep.n == 1 &&
	    !shards)
		return "strategies";
	return rq->gpus ? "gpus" : "max_gpus";
}

/* Warnings: pins the plan's layout has nothing to apply to, a node wider than
 * the type's scale-up domain, the link check, a missed deadline. */
static void warn_pins_and_node(const struct trn_request *rq,
			       struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	/* a pin that the plan's layout has nothing to apply to
	 * (review s19b F9e: dropped without a word) */
	{
		const struct {
			const struct trn_choices *pin;
			int width; /* the layout's dimension it needs */
			const char *what;
		} unused[] = {
		    {&rq->strategies.sequence_parallel, b->layout.tp,
		     "sequence_parallel true is not applied at tp 1: "
		     "sequence parallelism splits the activations a "
		     "tensor-parallel group shares"},
		    {&rq->strategies.stage_rebalance, b->layout.pp,
		     "stage_rebalance true is not applied at pp 1: "
		     "there are no first and last stages to "
		     "rebalance"},
		};
		for (size_t k = 0; k < sizeof(unused) / sizeof(unused[0]); k++)
			if (unused[k].pin->n == 1 && unused[k].pin->v[0] &&
			    unused[k].width == 1)
				warn(res, "strategies.%s", unused[k].what);
	}
	/* a node wider than the type's scale-up domain: sized as asked
	 * (review s19b F5: taken without a word) */
	if (rq->gpus_per_node > rq->gpu.max_gpus_per_node &&
	    rq->gpu.max_gpus_per_node > 0)
		warn(res,
		     "gpus_per_node %d is more than %s's %d, the "
		     "catalog's scale-up domain (max_gpus_per_node): "
		     "sized as asked, each GPU with %s, and layers "
		     "split over up to %d GPUs on its %s link",
		     rq->gpus_per_node, rq->gpu.name, rq->gpu.max_gpus_per_node,
		     rq->inter_node_gbps > 0.0
			 ? "1/gpus_per_node of the request's "
			   "inter_node_gbps"
			 : "that domain's share of the node network",
		     rq->gpus_per_node, hw_link_name(rq->gpu.intra_node_link));
	if (!res->t_max.ok)
		warn(res,
		     "TP %d across %s starves %s: t_max ~ %.1f at "
		     "their %.0f TFLOP/s %s rate",
		     b->layout.tp, hw_link_name(rq->gpu.intra_node_link),
		     rq->gpu.name, res->t_max.t_max, res->t_max.peak_tflops,
		     res->t_max.rate_name);
	if (!b->meets_deadline) {
		char dl[32], best[32];
		warn(res,
		     "no plan meets the deadline of %s; the best takes "
		     "%s",
		     days_text(dl, sizeof(dl), rq->deadline_days, 6),
		     days_text(best, sizeof(best), b->days, 4));
	}
}

/* Warnings: uneven stages, memory near full, offload. */
static void warn_memory(const struct ctx *c, const struct trn_request *rq,
			struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	if (b->uneven_stages)
		warn(res,
		     "uneven pipeline: %ld layers on %d stages; the "
		     "largest stage (%d layers) sets memory and time",
		     rq->model.layers, b->layout.pp, b->layers_per_stage_max);
	if (b->memory.total_gib > TRN_NEAR_FULL * b->memory.capacity_gib)
		warn(res,
		     "the plan uses %.1f of %.1f GiB per GPU (%.0f %%, "
		     "above %.0f %%): allocator peaks, NCCL buffers and "
		     "library workspaces beyond the model can push it "
		     "out of memory; set memory_headroom_fraction to "
		     "keep a margin",
		     b->memory.total_gib, b->memory.capacity_gib,
		     100.0 * b->memory.total_gib / b->memory.capacity_gib,
		     100.0 * TRN_NEAR_FULL);
	{
		/* the other plans listed, as for offload below
		 * (review s14: a second plan at 79.97 of 80 GiB went
		 * unwarned) */
		char list[64] = "";
		double most = 0.0, cap = 0.0;
		size_t len = 0;

		for (int i = 1; i < res->n_plans; i++) {
			const struct trn_plan *q = &res->plans[i];
			if (q->memory.total_gib <=
				TRN_NEAR_FULL * q->memory.capacity_gib ||
			    len >= sizeof(list) - 8)
				continue;
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%d", len ? ", " : "", i + 1);
			if (q->memory.total_gib > most) {
				most = q->memory.total_gib;
				cap = q->memory.capacity_gib;
			}
		}
		if (len)
			warn(res,
			     "plan(s) %s of the list use above %.0f %% "
			     "of "
			     "GPU memory (up to %.1f of %.1f GiB): "
			     "allocator peaks can push them out of "
			     "memory",
			     list, 100.0 * TRN_NEAR_FULL, most, cap);
	}
	if (b->layout.offload != TRN_OFFLOAD_NONE)
		warn(res,
		     "%s offloaded to host memory: %.1f GiB of host "
		     "RAM per GPU (%.0f GiB per %d-GPU node), "
		     "transfers over the host link each step",
		     trn_offload_name(b->layout.offload), b->memory.host_gib,
		     b->memory.host_gib *
			 (double)(b->gpus < c->gpn ? b->gpus : c->gpn),
		     (int)(b->gpus < c->gpn ? b->gpus : c->gpn));
	{
		/* the other plans listed: a reader comparing them
		 * sees which need host RAM, and how much */
		char list[64] = "";
		double most = 0.0;
		size_t len = 0;

		for (int i = 1; i < res->n_plans; i++) {
			const struct trn_plan *q = &res->plans[i];
			if (q->layout.offload == TRN_OFFLOAD_NONE ||
			    len >= sizeof(list) - 8)
				continue;
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s%d", len ? ", " : "", i + 1);
			if (q->memory.host_gib > most)
				most = q->memory.host_gib;
		}
		if (len)
			warn(res,
			     "plan(s) %s of the list offload to host "
			     "memory: up to %.1f GiB of host RAM per "
			     "GPU",
			     list, most);
	}
}

/* Warnings: the run's length, goodput and the pipeline bubble. */
static void warn_run_length(const struct trn_request *rq,
			    struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	if (res->max_days > 0 && rq->train_tokens > 0) {
		if (b->within_max_days) {
			char md[32];
			warn(res,
			     "objective %s without a deadline: plans "
			     "longer than max_days (%s) rank "
			     "after those within it; give "
			     "deadline_days or max_days to change it",
			     trn_objective_name(rq->objective),
			     days_text(md, sizeof(md), res->max_days, 6));
		} else {
			char md[32], best[32];
			warn(res,
			     "no plan ends within max_days (%s) up to "
			     "%ld GPUs; the fastest takes %s: raise "
			     "max_gpus",
			     days_text(md, sizeof(md), res->max_days, 6),
			     rq->gpus ? rq->gpus : rq->max_gpus,
			     days_text(best, sizeof(best), b->days, 4));
		}
	}
	/* every figure as its field prints it (4 significant digits;
	 * review s19b F2: "restarts add 0.0 days to the 0.0" for a
	 * run the goodput model stretched by 74 %) */
	if (rq->train_tokens > 0 && b->goodput.fraction < TRN_LOW_GOODPUT) {
		char added[48], steady[48], every[48];
		double iv = b->goodput.checkpoint_interval_s;

		if (iv < 120.0)
			snprintf(every, sizeof(every), "%.4g s", iv);
		else
			snprintf(every, sizeof(every), "%.4g min", iv / 60.0);
		warn(res,
		     "goodput %.0f %%: %.4g expected interruptions "
		     "(one every %.4g h on %ld GPUs), a %.4g s "
		     "checkpoint every %s and restarts add %s to "
		     "the %s of steady training",
		     100.0 * b->goodput.fraction, b->goodput.interruptions,
		     b->goodput.mtbi_hours, b->gpus,
		     b->goodput.checkpoint_write_s, every,
		     days_text(added, sizeof(added), b->days - b->steady_days,
			       4),
		     days_text(steady, sizeof(steady), b->steady_days, 4));
	}
	if (b->time.pp_bubble_s > TRN_HIGH_BUBBLE * b->time.step_s)
		warn(res,
		     "pipeline bubble is %.0f %% of the step: raise "
		     "the global batch or interleave stages",
		     100.0 * b->time.pp_bubble_s / b->time.step_s);
}

/* Warnings: fine-tuning methods, FP8, attention kernels, QLoRA. */
static void warn_precision_and_method(const struct trn_request *rq,
				      struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	if (rq->method != TRN_FULL) {
		/* the adapters' elementwise kernels (and QLoRA's
		 * dequantisation) can outweigh the weight-gradient
		 * GEMMs an adapter method skips on a bandwidth-poor
		 * part (review s18c F3: 7 of 300 pinned layouts,
		 * 0.3-16 %; s18d F6: QLoRA too) */
		double sf =
		    step_at_full(rq, &b->layout, res->global_batch_size);
		if (sf > 0.0 && sf < b->time.step_s)
			warn(res,
			     "%s is slower than full fine-tuning on "
			     "this layout (%.4g s against %.4g s a "
			     "step, memory aside): its adapters' "
			     "elementwise kernels%s (MODEL.md §4a)%s "
			     "cost more than the weight-gradient GEMMs "
			     "it skips on %.63s",
			     rq->method == TRN_QLORA ? "qlora" : "lora",
			     b->time.step_s, sf,
			     rq->method == TRN_QLORA
				 ? " and the NF4 dequantisation"
				 : "",
			     b->layout.recompute == ENG_RC_FULL ||
				     b->layout.recompute == ENG_RC_PARTIAL
				 ? ", run again under recompute,"
				 : "",
			     rq->gpu.name);
	}
	if (rq->precision == ENG_FP8) {
		double s16 = step_at_16bit(rq, &b->layout);
		warn(res,
		     "fp8 (%s recipe, stack %.24s): only layer GEMMs "
		     "speed up, none slower than in 16-bit, small "
		     "ones less (half rate at 256, not 128); casts "
		     "%.2f B/value (weights %.2f) over HBM on top; "
		     "weights cast %s",
		     stack_fp8_recipe_name(rq->stack.fp8_recipe),
		     rq->stack.name, stack_fp8_cast_bytes(rq->stack.fp8_recipe),
		     stack_fp8_weight_cast_bytes(rq->stack.fp8_recipe),
		     rq->stack.fp8_weight_cache ? "once per step"
						: "every micro-batch");
		/* the casts can outweigh what small GEMMs gain
		 * (review s17a F6: 47 of 339 pinned layouts) */
		if (s16 > 0.0 && s16 < b->time.step_s)
			warn(res,
			     "fp8 is slower than bf16 on this layout "
			     "(%.4g s against %.4g s a step): its casts "
			     "cost more than its GEMMs gain at these "
			     "sizes; precision bf16 runs it faster",
			     b->time.step_s, s16);
	}
	if (rq->precision == ENG_FP8 && rq->stack.fp8_param_all_gather &&
	    b->layout.zero >= 3 && b->layout.dp > 1)
		warn(res,
		     "fp8 (stack %.24s, fp8_param_all_gather): FSDP "
		     "weights of dense linear layers cast on each "
		     "rank's shard and all-gathered in FP8 (1 B/param, "
		     "not 2)",
		     rq->stack.name);
	{
		/* every listed plan, not only the best: a pinned
		 * list may rank a stage the stack does not run
		 * lower down */
		const struct trn_plan *q = NULL;
		for (int i = 0; i < res->n_plans && !q; i++)
			if (res->plans[i].layout.zero >
			    stack_zero_stage_max(&rq->stack,
						 res->plans[i].layout.pp))
				q = &res->plans[i];
		if (q) {
			int zmax =
			    stack_zero_stage_max(&rq->stack, q->layout.pp);
			warn(res,
			     "strategies.zero pins ZeRO-%d, which stack "
			     "%.63s does not run (%s%d%s): plans are "
			     "sized as pinned; name a stack that runs "
			     "it",
			     q->layout.zero, rq->stack.name,
			     zmax ? "it shards up to ZeRO-"
				  : "it does not shard: ZeRO-",
			     zmax,
			     q->layout.pp > 1 ? " with pipeline stages" : "");
		}
	}
	{
		/* every listed plan, as for the ZeRO stage above */
		const struct trn_plan *q = NULL;
		for (int i = 0; i < res->n_plans && !q; i++)
			if ((int)res->plans[i].layout.offload >
			    (int)rq->stack.max_offload)
				q = &res->plans[i];
		if (q)
			warn(res,
			     "strategies.offload pins %s, which stack "
			     "%.63s does not offload (it offloads %s): "
			     "plans are sized as pinned; name a stack "
			     "that runs it",
			     trn_offload_name(q->layout.offload),
			     rq->stack.name,
			     stack_offload_names[rq->stack.max_offload]);
	}
	{
		/* every listed plan, as for the ZeRO stage above: a
		 * parallelism the stack does not run (stack.h) */
		const struct {
			const char *name, *lacks;
			size_t off; /* an int of struct trn_layout */
			bool runs;
		} par[] = {
		    {"ep", "expert parallelism: every rank holds all experts",
		     offsetof(struct trn_layout, ep),
		     rq->stack.expert_parallel},
		    {"pp", "pipeline schedule", offsetof(struct trn_layout, pp),
		     rq->stack.pipeline_parallel},
		    {"tp",
		     rq->stack.tensor_parallel
			 ? "tensor parallelism for QLoRA's NF4 "
			   "base weights"
			 : "tensor parallelism",
		     offsetof(struct trn_layout, tp), trn_tp_runs(rq)},
		};
		for (size_t k = 0; k < sizeof(par) / sizeof(par[0]); k++) {
			int over = 0;
			for (int i = 0;
			     i < res->n_plans && !over && !par[k].runs; i++) {
				int v =
				    *(const int *)((const char *)&res->plans[i]
						       .layout +
						   par[k].off);
				if (v > 1)
					over = v;
			}
			if (over)
				warn(res,
				     "strategies.%s pins %d, which "
				     "stack "
				     "%.63s does not run (it has no "
				     "%s): "
				     "plans are sized as pinned; %s",
				     par[k].name, over, rq->stack.name,
				     par[k].lacks,
				     rq->method == TRN_QLORA &&
					     !strcmp(par[k].name, "tp")
					 ? "no stack in the catalog "
					   "runs "
					   "QLoRA under tensor "
					   "parallelism"
					 : "name a stack that runs it");
		}
	}
	for (int i = 0; i < res->n_plans; i++)
		if (res->plans[i].layout.recompute == ENG_RC_PARTIAL &&
		    !rq->stack.partial_recompute) {
			warn(res,
			     "strategies.recompute pins partial, which "
			     "stack %.63s does not run (it recomputes "
			     "every layer or none: partial_recompute "
			     "false): plans are sized as pinned; name "
			     "a stack that runs it",
			     rq->stack.name);
			break;
		}
	/* review s14: said, and sized as asked */
	if (trn_runs_on(rq, &(struct eng_error){0}) != 0)
		warn(res,
		     "stack %.63s's attention kernel %s is NVIDIA's "
		     "and %.40s has no CUDA compute capability: sized "
		     "with that kernel class's efficiencies as if it "
		     "ran",
		     rq->stack.name, attn_kernel_name(rq->stack.attn_kernel),
		     rq->gpu.name);
	/* FlashAttention-3's kernels are built for Hopper and later: an
	 * older NVIDIA part runs FA2, and is sized so (attn_kernel_on;
	 * review s24a F2) */
	if (attn_kernel_on(rq->stack.attn_kernel, &rq->gpu) !=
	    rq->stack.attn_kernel)
		warn(res,
		     "stack %.63s names attention kernel fa3, which needs "
		     "compute capability 9.0 (Hopper) or later; %.40s (%d.%d) "
		     "runs FlashAttention-2, and is sized with FA2's rates",
		     rq->stack.name, rq->gpu.name, rq->gpu.cc_major,
		     rq->gpu.cc_minor);
	if (rq->method == TRN_QLORA && !rq->stack.nf4_base_weights) {
		/* the built-in profiles that run it, from their
		 * table (review s15b: a fixed list named the
		 * request's own stack) */
		char runs[160];

		stacks_that(rq, CAN_NF4, runs, sizeof(runs));
		warn(res,
		     "method qlora: stack %.63s has no 4-bit base "
		     "weights (nf4_base_weights false): sized as asked "
		     "(NF4 weights, the stack's other terms, tp 1 "
		     "unless pinned); built-in stacks that run QLoRA: "
		     "%s (all without tensor parallelism)",
		     rq->stack.name, runs);
	}
}

/* Warnings: a batch that limits scale, a clock derate on a part it does not
 * model. */
static void warn_scale_and_clocks(const struct trn_request *rq,
				  struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	/* The batch, not the GPUs, limits scale: every data-parallel
	 * rank already runs one micro-batch of one sequence, so more
	 * GPUs could only split layers further (review s17a F5: 405B
	 * on 16,384 allowed H100s answered 8,192, binding
	 * communication, with the 4M-token default batch). */
	if (rq->gpus == 0 && rq->max_gpus >= 2 * b->gpus &&
	    rq->objective == TRN_OBJ_TIME &&
	    (b->layout.pp > 1
		 ? b->grad_accum <= 2L * b->layout.pp
		 : b->grad_accum == 1 && b->layout.micro_batch == 1))
		warn(res,
		     "the global batch (%ld sequences%s) limits "
		     "scale: the best plan runs %ld of %ld allowed "
		     "GPUs with %ld micro-batch%s of %d per "
		     "data-parallel rank (dp %d); more data "
		     "parallelism would leave fewer%s, so more GPUs "
		     "only split layers further; a larger "
		     "global_batch_tokens lets more GPUs work",
		     res->global_batch_size,
		     rq->global_batch_size <= 0 && rq->global_batch_tokens <= 0
			 ? (rq->method == TRN_FULL
				? ", the 4M-token default"
				: ", the fine-tuning default")
			 : "",
		     b->gpus, rq->max_gpus, b->grad_accum,
		     b->grad_accum == 1 ? "" : "es", b->layout.micro_batch,
		     b->layout.dp,
		     b->layout.pp > 1 ? " (a longer pipeline bubble)" : "");
	/* the derate models power-limited sustained clocks of
	 * Hopper and later (MODEL.md §4a); no built-in profile sets
	 * one, so a value below 1 is the user's (review s17a F9: an
	 * A100's was dropped without a word) */
	if (rq->stack.gemm_clock_derate < 1.0 && rq->gpu.cc_major < 9)
		warn(res,
		     "stack gemm_clock_derate %.3g is not applied on "
		     "%.63s (compute capability %d.%d): it is the "
		     "sustained-clock loss of power-limited parts, "
		     "compute capability 9.0 and later; for a "
		     "power-capped GPU give power_limit_w",
		     rq->stack.gemm_clock_derate, rq->gpu.name,
		     rq->gpu.cc_major, rq->gpu.cc_minor);
}

/* Warnings: mixtures of experts: expert parallelism, the terms not modelled,
 * the dispatcher and the node tiling. */
static void warn_moe(const struct ctx *c, const struct trn_request *rq,
		     struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	if (rq->model.moe.experts > 0 && !rq->stack.expert_parallel &&
	    !rq->strategies.ep.n) {
		char who[160];

		stacks_that(rq, CAN_EP, who, sizeof(who));
		warn(res,
		     "stack %.63s runs no expert parallelism "
		     "(expert_parallel false): every data-parallel "
		     "rank holds all %ld experts (/ tp); a built-in "
		     "stack that shards them (%s) needs less memory "
		     "per GPU",
		     rq->stack.name, rq->model.moe.experts, who);
	}
	/* every MoE plan, fine-tuning too: the terms not modelled
	 * are the same (review s19b F9a) */
	if (rq->model.moe.experts > 0)
		warn(res,
		     "mixture of experts: median error 25.2 %% on 61 "
		     "published pre-training runs (Megatron-Core, "
		     "FSDP2, torchtitan, DeepSeek-V3; "
		     "docs/VALIDATION.md; no fine-tuning run scored); "
		     "the stack's ep_overlap (%.4g) is the share of "
		     "the expert all-to-all hidden behind compute, "
		     "its ep_dispatcher %s sends %s%s; not modelled: "
		     "host overhead per micro-batch of small experts, "
		     "unbalanced routing",
		     rq->stack.ep_overlap,
		     moe_dispatcher_names[rq->stack.ep_dispatcher],
		     rq->stack.ep_dispatcher == MOE_DISPATCH_DEEPEP
			 ? "a copy per destination rank and node"
			 : "a copy per routed expert",
		     rq->stack.ep_dispatch_fp8 ? ", dispatched in FP8" : "");
	/* DeepEP's intranode kernels move tokens over NVLink
	 * (deepseek-ai/DeepEP README: its intranode kernels run over
	 * NVLink) */
	if (rq->model.moe.experts > 0 &&
	    rq->stack.ep_dispatcher == MOE_DISPATCH_DEEPEP &&
	    rq->gpu.intra_node_link == HW_LINK_PCIE)
		warn(res,
		     "stack ep_dispatcher deepep on %.63s: DeepEP "
		     "moves tokens inside a node over NVLink, which "
		     "this GPU lacks; sized as asked, its copies "
		     "forwarded over PCIe",
		     rq->gpu.name);
	/* the all-to-all's copies take each EP group from a node's
	 * first rank (MODEL.md §4); where the plan has more than one
	 * group and spans nodes, and a group's consecutive ranks (ep
	 * x tp x cp) do not tile them, groups packed rank after rank
	 * straddle nodes (review s22b G2: EP 64 on 72-GPU nodes;
	 * s22c H2, s22d I1: not where one group or one node) */
	{
		long unit = (long)b->layout.tp * b->layout.cp;
		long span = unit * b->layout.ep;

		if (rq->model.moe.experts > 0 && b->layout.ep > 1 &&
		    b->gpus > (span > c->gpn ? span : c->gpn) &&
		    c->gpn % span != 0 && span % c->gpn != 0) {
			long w = moe_node_tiling_width(span, unit, c->gpn);
			char hint[192] = "";

			if (w > 0)
				snprintf(hint, sizeof(hint),
					 " Where the scheduler keeps "
					 "the groups aligned to nodes, "
					 "give gpus_per_node %ld (the "
					 "GPUs used a node; those left "
					 "idle are not priced)",
					 w);
			warn(res,
			     "expert parallelism %d spans %ld "
			     "consecutive ranks (ep x tp x cp), which "
			     "do not tile nodes of %d GPUs: the "
			     "all-to-all is sized with each EP group "
			     "starting on a node; packed rank after "
			     "rank, groups straddle nodes and send "
			     "more over the NICs.%s",
			     b->layout.ep, span, c->gpn, hint);
		}
	}
}

/* Warnings: PCIe-only parts, context length, MFU above or below what runs
 * reach, diminishing returns and a missing price. */
static void warn_links_and_efficiency(const struct ctx *c,
				      const struct trn_request *rq,
				      struct trn_result *res)
{
	const struct trn_plan *b = &res->plans[0];

	if (rq->gpu.intra_node_link == HW_LINK_PCIE && b->gpus > 1)
		warn(res, "PCIe-only GPUs scale worse: 8-GPU Llama-2-7B "
			  "training scaled 90.8 %% on RTX 4090 and 85.9 %% "
			  "on RTX 3090 (arXiv 2311.03687)");
	if (rq->model.max_seq_len > 0 && rq->seq_len > rq->model.max_seq_len)
		warn(res,
		     "seq_len %ld exceeds the model's context length "
		     "(%ld): assumed trained at %ld tokens (context "
		     "extension, e.g. RoPE scaling); memory and time "
		     "are computed at seq_len",
		     rq->seq_len, rq->model.max_seq_len, rq->seq_len);
	{
		/* MFU counts the full attention (MODEL.md §2, PaLM's
		 * convention); causal kernels run half of it, so at
		 * long sequences MFU can pass any run's without the
		 * GPU doing more (review s17a F10: 0.84 at 128K on
		 * A100, blamed on the engine's speed) */
		double attn = 3.0 * c->L * c->attn_fwd_layer_token;
		double run = c->model_flops_token > 0.0
				 ? b->mfu *
				       (c->model_flops_token - attn / 2.0) /
				       c->model_flops_token
				 : b->mfu;
		if (run > TRN_HIGH_MFU)
			warn(res,
			     "MFU %.3f is above every published "
			     "training run we score (the best: 0.642, "
			     "MPT-7B on 8 A100s, llm-foundry); the "
			     "estimate is likely optimistic "
			     "(docs/VALIDATION.md: the engine is 10-50 "
			     "%% fast on A100 plans without recompute)",
			     b->mfu);
		else if (b->mfu > TRN_HIGH_MFU)
			warn(res,
			     "MFU %.3f counts the full attention score "
			     "matrix (the PaLM convention, MODEL.md "
			     "§2); causal kernels run half of it: %.3f "
			     "of peak in the FLOPs the GPUs execute",
			     b->mfu, run);
	}
	if (b->mfu < TRN_LOW_MFU) {
		/* the largest part of the step beside the GEMMs, by
		 * name (review s21c F2: a step three quarters
		 * weight-offload stalls was blamed on communication,
		 * bubble or memory-bound work) */
		const struct trn_time *T = &b->time;
		const struct {
			const char *what;
			double s;
		} parts[] = {
		    {"communication", trn_time_links_s(T)},
		    {"the pipeline bubble", T->pp_bubble_s},
		    {"waiting on the host link for offloaded weights",
		     T->host_link_exposed_s},
		    {"attention kernels", T->attention_s},
		    {"memory-bound kernels", T->memory_bound_s},
		    {"the optimizer step", T->optimizer_s},
		};
		size_t top = 0;

		for (size_t i = 1; i < sizeof(parts) / sizeof(parts[0]); i++)
			if (parts[i].s > parts[top].s)
				top = i;
		if (parts[top].s > 0.0)
			warn(res,
			     "low efficiency: MFU %.3f (well-run dense "
			     "training reaches 0.35-0.55); the largest "
			     "part of each step beside the GEMMs is %s "
			     "(%.0f %%)",
			     b->mfu, parts[top].what,
			     100.0 * parts[top].s / T->step_s);
		else
			warn(res,
			     "low efficiency: MFU %.3f (well-run dense "
			     "training reaches 0.35-0.55): GEMMs too "
			     "small for the GPU, or recomputed",
			     b->mfu);
	}
	diminishing_returns(c, res);
	if (!(c->price > 0))
		warn(res, "no price for this GPU type: cost is 0, not "
			  "free; give price_per_gpu_hour for a cost");
}

/* The answer's warnings, in plain language, about its best plan
 * (res->plans[0]): pins with nothing to apply to, node and link fit,
 * memory near full, goodput, precision and method, MoE layouts, and
 * efficiency (MODEL.md §6). */
static void plan_warnings(const struct ctx *c, const struct trn_request *rq,
			  struct trn_result *res)
{
	warn_pins_and_node(rq, res);
	warn_memory(c, rq, res);
	warn_run_length(rq, res);
	warn_precision_and_method(rq, res);
	warn_scale_and_clocks(rq, res);
	warn_moe(c, rq, res);
	warn_links_and_efficiency(c, rq, res);
}

int trn_runs_on(const struct trn_request *rq, struct eng_error *err)
{
	eng_error_clear(err);
	if ((rq->stack.attn_kernel == ATTN_CUDNN ||
	     rq->stack.attn_kernel == ATTN_FA3) &&
	    rq->gpu.cc_major == 0)
		return eng_fail(err, ENG_EUNSUPPORTED, "stack",
				"stack %.63s's attention kernel %s is "
				"NVIDIA's, and %.40s has no CUDA compute "
				"capability",
				rq->stack.name,
				attn_kernel_name(rq->stack.attn_kernel),
				rq->gpu.name);
	return 0;
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
	if ((rc = trn_validate(rq, err)))
		return rc;
	/* The search (trn_evaluate times a stated layout as given): every
	 * pinned stage ZeRO-3 and every pinned pp above 1, no layout can
	 * run (the weights are needed by every micro-batch in flight;
	 * the search pairs ZeRO-3 with pp 1 only). Name it, rather than
	 * the batch split that would find nothing. */
	if (rq->strategies.zero.n && rq->strategies.pp.n) {
		bool z3 = true, pp = true;
		for (int i = 0; i < rq->strategies.zero.n; i++)
			z3 &= rq->strategies.zero.v[i] >= 3;
		for (int i = 0; i < rq->strategies.pp.n; i++)
			pp &= rq->strategies.pp.v[i] > 1;
		if (z3 && pp)
			return eng_fail(err, ENG_EINVAL, "strategies.zero",
					"ZeRO-3 does not combine with pipeline "
					"stages (pp > 1): pin zero 2 (weights "
					"kept after the forward, as FSDP under "
					"PP runs) or pp 1");
	}
	trn_ctx_init(&c, rq);
	/* ranking by cost with every plan free would rank by nothing */
	if (rq->objective == TRN_OBJ_COST && !(c.price > 0))
		return eng_fail(err, ENG_EINVAL, "price_per_gpu_hour",
				"objective cost needs a price: the GPU type "
				"has none in the catalog; give "
				"price_per_gpu_hour");
	c.gbs = trn_resolve_gbs(rq);
	if (c.gbs > TRN_MAX_GLOBAL_BATCH)
		return eng_fail(err, ENG_EINVAL,
				rq->global_batch_size ? "global_batch_size"
						      : "global_batch_tokens",
				"the global batch of %ld sequences exceeds "
				"2^40",
				c.gbs);
	trn_default_lists(&c, &L);

	memset(&S, 0, sizeof(S));
	S.c = &c;
	S.top = rq->top > 0 ? rq->top : 5;
	S.budget = rq->budget;
	if (S.budget)
		S.budget->units = 0;
	trn_dp_candidates(&S, c.gbs, rq->gpus > 0 ? rq->gpus : rq->max_gpus);
	trn_search_all(&S, &L);
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
	res->basis.power_cap =
	    hw_power_cap_basis(&rq->gpu, &res->basis.gemm_tflops);
	res->basis.hbm_gbps = hw_hbm_rate(&rq->gpu);
	res->basis.intra_node_gbps = hw_intra_rate(&rq->gpu);
	res->basis.inter_node_gbps =
	    hw_inter_rate(&rq->gpu, rq->inter_node_gbps, c.gpn);
	res->layouts_evaluated = S.evaluated;
	res->checkpoint_gib = c.ckpt_bytes / GIB;
	res->max_days = rq->deadline_days <= 0 ? c.limit_days : 0.0;
	res->dropout = c.dropout;
	res->memory_headroom_fraction = rq->memory_headroom_fraction;

	/* partial pinned where every allowed layout's chunks hold one
	 * layer: nothing to leave out (review s20a F3: was the global
	 * batch's 400) */
	if (S.fitting == 0 && S.partial_tried > 0 && S.partial_room == 0 &&
	    !S.have_small)
		return eng_fail(
		    err, ENG_EINVAL, "strategies.recompute",
		    "recompute partial recomputes some layers of "
		    "each pipeline chunk and stores the rest: every "
		    "allowed layout's chunks hold one layer "
		    "(layers / (pp x vp)); allow fewer pipeline "
		    "stages or another recompute");
	if (S.divisible == 0) {
		const struct trn_strategies *st = &rq->strategies;
		long gmax = rq->gpus > 0 ? rq->gpus : rq->max_gpus;

		/* pins that leave no structure, or no data-parallel size, are
		 * the pins' fault, not the batch's */
		if (S.structures == 0 && (st->tp.n || st->pp.n || st->cp.n ||
					  st->vp.n || st->stage_rebalance.n))
			return eng_fail(
			    err, ENG_EINVAL, "strategies",
			    "no layout satisfies the pinned tp, cp, pp and vp: "
			    "tp x cp x pp must be at most %ld GPUs, vp > 1 "
			    "needs pp > 1, and the %ld layers must split into "
			    "pp x vp chunks",
			    gmax, rq->model.layers);
		if (S.dp_choices == 0 && st->dp.n) {
			bool divides = false;

			/* a pinned dp that divides the batch but fits no GPU
			 * count is the pin's fault; one that does not divide
			 * it is the batch's (below) */
			for (int i = 0; i < st->dp.n; i++)
				divides |=
				    st->dp.v[i] > 0 && c.gbs % st->dp.v[i] == 0;
			if (divides)
				return eng_fail(
				    err, ENG_EINVAL, "strategies.dp",
				    "no pinned dp gives a layout: tp x cp x pp "
				    "x "
				    "dp must %s %ld GPUs",
				    rq->gpus > 0 ? "equal" : "be at most",
				    gmax);
		}
		if (S.need_inter_skipped)
			return eng_fail(
			    err, ENG_EINVAL, "inter_node_gbps",
			    "the job needs more than one node of %d "
			    "GPUs but no inter-node bandwidth is "
			    "known",
			    c.gpn);
		/* A pinned micro-batch is what the batch cannot take when
		 * one of a sequence would split it (review s19b F9d:
		 * global_batch_size or gpus was named; s19e F4: and not
		 * when 1 fails too) */
		if (!mb_one_allowed(rq) && mb_one_splits(rq))
			return eng_fail(
			    err, ENG_EINVAL, "strategies.micro_batch",
			    "global batch %ld sequences cannot be split into "
			    "dp x the micro_batch allowed (%d%s) for any "
			    "allowed layout %s %ld GPUs",
			    c.gbs, rq->strategies.micro_batch.v[0],
			    rq->strategies.micro_batch.n > 1 ? ", ..." : "",
			    rq->gpus > 0 ? "on" : "up to",
			    rq->gpus > 0 ? rq->gpus : rq->max_gpus);
		/* The default batch (none given) is the engine's choice, not
		 * a client mistake: the GPU count cannot take it (422). */
		if (rq->gpus > 0 && rq->global_batch_size <= 0 &&
		    rq->global_batch_tokens <= 0)
			return eng_fail(
			    err, ENG_EINFEASIBLE, "gpus",
			    "the default global batch (%ld sequences) cannot "
			    "be split into dp x micro_batch for any allowed "
			    "layout on %ld GPUs; give global_batch_size (a "
			    "multiple of the data-parallel size) or another "
			    "GPU count",
			    c.gbs, rq->gpus);
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

		char hint[640] = "";

		char more[48] = ""; /* cp, ep: the layout multiplies out */

		trn_plan_of(&c, &S.smallest, &sp, false, &why);
		stack_bound_hint(rq, hint, sizeof(hint));
		if (p->layout.cp > 1)
			snprintf(more, sizeof(more), " cp %d", p->layout.cp);
		if (p->layout.ep > 1)
			snprintf(more + strlen(more),
				 sizeof(more) - strlen(more), " ep %d",
				 p->layout.ep);
		return eng_fail(
		    err, ENG_EINFEASIBLE, no_fit_field(rq, &L),
		    "does not fit even at the largest allowed scale: the "
		    "smallest plan needs %.1f GiB per GPU (%ld GPUs, tp %d "
		    "pp %d%s dp %d zero %d, recompute %s, offload %s) vs "
		    "%.1f GiB %s%s",
		    p->memory.total_gib, p->gpus, p->layout.tp, p->layout.pp,
		    more, p->layout.dp, p->layout.zero,
		    eng_recompute_name(p->layout.recompute),
		    trn_offload_name(p->layout.offload), p->memory.usable_gib,
		    rq->memory_headroom_fraction > 0
			? "usable (capacity less memory_headroom_fraction)"
			: "capacity",
		    hint);
	}

	res->n_plans = S.n;
	for (int i = 0; i < S.n; i++) {
		res->plans[i] = S.best[i];
		res->plans[i].binding = trn_plan_binding(&c, &res->plans[i]);
	}
	res->min_gpus = S.min_gpus;
	res->min_gpus_no_offload = S.min_gpus_no_offload;
	res->hardware_flops_per_token = res->plans[0].hardware_flops_per_token;
	res->hardware_flops_total =
	    res->hardware_flops_per_token * rq->train_tokens;
	res->binding = res->plans[0].binding;
	fill_tmax(&c, res);

	plan_warnings(&c, rq, res);
	return 0;
}

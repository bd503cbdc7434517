/* inference_replica.c - the replica model of the inference engine: the
 * step-time model (prefill, decode), a replica under its serving profile,
 * and the continuous-batching operating point at a load, up to the plan of
 * one (tp, pp) replica (docs/MODEL.md §7).
 */
#include "inference_int.h"

#include "attention.h"
#include "collective.h"
#include "gemm.h"

#include <math.h>
#include <string.h>

/* Pipeline stage hand-off: one point-to-point send (NCCL, one hop). */
#define P2P_LATENCY_S 10e-6
/* Causal attention computes half of the score blocks (flash kernels skip
 * the masked ones), as in the training engine (MODEL.md §4). */
#define CAUSAL_FRACTION 0.5

void inf_ictx_init(struct ictx *c, const struct inf_request *rq)
{
	const struct model_arch *m = &rq->model;
	double b = eng_dtype_bytes(rq->weight_precision) +
		   inf_weight_table[rq->weight_precision].scale_bytes;

	memset(c, 0, sizeof(*c));
	c->rq = rq;
	model_count_params(m, &c->P);
	c->W = inf_weight_bytes(m, rq->weight_precision);
	c->W_side = c->W - (c->P.total - c->P.embedding - c->P.lm_head) * b;
	c->W_layers = c->W - c->W_side;
	c->W_routed = c->P.routed_expert * b;
	c->kvB = eng_dtype_bytes(inf_kv_dtype(rq));
	c->R = hw_gemm_rate(&rq->gpu, inf_compute_dtype(rq)).value * 1e12;
	/* GEMM shapes: the shared model (gemm.h) at its 16-bit half-rate
	 * dimension, also for FP8 weights: the serving FP8 efficiency (0.65
	 * until issue 13, now 0.612, MODEL.md §5) was checked with it, and
	 * TensorRT-LLM's FP8 decode GEMMs
	 * are weight-read bound (issue 13 leaves this to a re-derivation).
	 * attention runs in 16-bit fused kernels at the training engine's
	 * forward rate (attention.h: FA2 class at the model's head
	 * dimension, MODEL.md §5), FP8 recipes included */
	c->R_attn = attn_fused_tflops(&rq->gpu, ATTN_FA2,
				      (double)model_head_dim(m), false, 0.0) *
		    1e12;
	if (!(c->R_attn > 0))
		c->R_attn = c->R;
	c->hbm = hw_hbm_rate(&rq->gpu).value * 1e9;
	c->intra = hw_intra_rate(&rq->gpu).value * 1e9;
	c->capacity = rq->gpu.memory_gib * GIB;
	c->price = rq->price_per_gpu_hour > 0 ? rq->price_per_gpu_hour
					      : rq->gpu.price_per_gpu_hour;
	c->h = (double)m->hidden_size;
	c->L = (double)m->layers;
	{
		/* the request's launch gaps or the defaults (inference.h) */
		struct inf_serving sv;

		inf_serving_resolve(rq, 1, &sv);
		c->launch_s =
		    c->L * sv.kernels_per_layer * sv.kernel_launch_us * 1e-6;
	}
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
double inf_weights_read(const struct ictx *c, int tp, double b)
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

/* GEMM compute time (s) of one forward pass over `rows` tokens on one
 * tp-rank: 2 * matmul_active * rows FLOPs, each GEMM at the shape factor
 * of its smallest dimension (engine/gemm.h). A routed expert's GEMMs see
 * only the rows routed to it, rows * k / E under uniform routing (at least
 * one: an expert no row reaches is not run): Mixtral's 8 experts, top 2,
 * multiply a 1,024-token prompt as four 256-row GEMMs, not one of 1,024.
 * The training engine's per-expert rows are the same (training_time.c). */
static double gemm_compute_s(const struct ictx *c, int tp, double rows)
{
	const struct model_moe *moe = &c->rq->model.moe;
	double wide = fmin(c->h, c->f_width / (double)tp);
	double rest = c->P.matmul_active, t = 0.0;

	if (moe->experts > 0 && c->W_routed > 0) {
		double k_of_e = (double)moe->top_k / (double)moe->experts;
		double routed = c->P.routed_expert * k_of_e;
		double f = gemm_shape_factor(
		    fmin(fmax(1.0, rows * k_of_e), wide), ENG_BF16);

		rest -= routed;
		t += 2.0 * routed * rows / (double)tp / (c->R * f);
	}
	return t + 2.0 * rest * rows / (double)tp /
		       (c->R * gemm_shape_factor(fmin(rows, wide), ENG_BF16));
}

/* What `rows` more tokens add to an iteration's GEMMs that already run:
 * with the shape factor x / (x + 128) a GEMM of R rows takes 2 N (R + 128)
 * / rate, so the 128-row tile is the iteration's, paid once by its decode
 * batch (inf_decode_s), and each further row costs 2 N / rate at the
 * weight dimensions' factor alone (review s17c F6: a 1-token prompt was
 * charged as a 1-row GEMM of its own, 1/129 of the rate). */
static double gemm_added_s(const struct ictx *c, int tp, double rows)
{
	double wide = fmin(c->h, c->f_width / (double)tp);

	return 2.0 * c->P.matmul_active * rows / (double)tp /
	       (c->R * gemm_shape_factor(wide, ENG_BF16));
}

/* Per step: kernel launch/tail overhead, 2 TP all-reduces of the hidden
 * states per layer (NCCL's model, engine/collective.h), and the stage
 * hand-offs of a pipeline: over the network where consecutive stages sit
 * on different nodes, over the node's link where they share one (stages
 * of tp GPUs fill a node in order; review s18d F4: every hand-off at the
 * network's per-GPU share made a wider node need more GPUs). */
static double fixed_overhead(const struct ictx *c, int tp, int pp,
			     double tokens)
{
	double bytes = tokens * c->h * 2.0;
	double o = c->launch_s;

	o += 2.0 * c->L *
	     coll_time_s(COLL_AR, bytes, tp, 1.0, c->intra,
			 c->rq->gpu.intra_node_link);
	if (pp > 1) {
		int per_node = tp < c->gpn ? c->gpn / tp : 1;
		int nodes = (pp + per_node - 1) / per_node;
		int across = nodes - 1, within = pp - 1 - across;
		double net = c->inter > 0 ? c->inter : c->intra;

		o += across * (P2P_LATENCY_S + bytes / net) +
		     within * (P2P_LATENCY_S + bytes / c->intra);
	}
	return o;
}

/* What limits a replica's capacity, as the plan's binding: the bound
 * capacity.limited_by names (MODEL.md §7.3). */
static const enum eng_binding limit_binding[INF_LIMIT_COUNT] = {
    [INF_LIMIT_KV_CACHE] = ENG_BIND_MEMORY,
    [INF_LIMIT_MAX_NUM_SEQS] = ENG_BIND_SCHEDULER,
    [INF_LIMIT_MAX_BATCH] = ENG_BIND_SCHEDULER,
    [INF_LIMIT_TPOT] = ENG_BIND_LATENCY,
    [INF_LIMIT_TTFT] = ENG_BIND_LATENCY,
    [INF_LIMIT_MAX_NUM_BATCHED_TOKENS] = ENG_BIND_SCHEDULER,
    [INF_LIMIT_PREFILL] = ENG_BIND_COMPUTE,
};

/* Prefill of n_seq prompts of I tokens on tensor cores. GEMMs and
 * attention are separate kernels, so their times add; each GEMM pass is
 * never faster than one read of the weights. */
double inf_prefill_s(const struct ictx *c, int tp, int pp, double n_seq)
{
	double I = (double)c->rq->prompt_tokens, n = n_seq * I;
	double attn_flops = n *
			    model_attn_fwd_flops_per_token(&c->rq->model, I) *
			    CAUSAL_FRACTION;
	double t_gemm =
	    fmax(gemm_compute_s(c, tp, n), inf_weights_read(c, tp, n) / c->hbm);
	double t_attn = attn_flops / (double)tp / c->R_attn;

	return t_gemm + t_attn + fixed_overhead(c, tp, pp, n);
}

/* One decode step for b sequences at mean context ctx: the GEMM kernels
 * (weights read once, 2*N*b FLOPs at the skinny-GEMM shape factor of b
 * rows) and the attention kernels (KV read, scores) each run at
 * max(memory, compute) and add (MODEL.md §7). */
double inf_decode_s(const struct ictx *c, int tp, int pp, double b, double ctx,
		    double *t_mem_out, double *t_comp_out)
{
	double kv = model_kv_bytes_per_token(&c->rq->model, c->kvB, tp);
	double w = inf_weights_read(c, tp, b), kvb = b * ctx * kv;
	double attn_flops =
	    b * model_attn_fwd_flops_per_token(&c->rq->model, ctx) / (double)tp;
	double gm = w / c->hbm, gc = gemm_compute_s(c, tp, b);
	double am = kvb / c->hbm, ac = attn_flops / c->R_attn;

	if (t_mem_out)
		*t_mem_out = gm + am;
	if (t_comp_out)
		*t_comp_out = gc + ac;
	return fmax(gm, gc) + fmax(am, ac) + fixed_overhead(c, tp, pp, b);
}

void inf_replica_init(struct replica *r, const struct ictx *c, int tp, int pp)
{
	const struct inf_request *rq = c->rq;
	double I = (double)rq->prompt_tokens;

	memset(r, 0, sizeof(*r));
	r->c = c;
	r->tp = tp;
	r->pp = pp;
	inf_serving_resolve(rq, tp, &r->sv);
	inf_memory_of(c, tp, pp, &r->sv, &r->mem);
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
		r->cap_limit = INF_LIMIT_MAX_NUM_BATCHED_TOKENS;
	}
	/* The budget carries the decoding sequences' tokens and the prompt
	 * chunks: with n decoding, an iteration of TPOT admits at most
	 * B - n prompt tokens, so the prompt tokens arriving, lambda I with
	 * lambda = n / ((O - 1) TPOT), need n I / (O - 1) <= B - n, i.e.
	 * n <= B (O - 1) / (I + O - 1) on average (review s18d F2: without
	 * it long prompts with two output tokens were served beside decode
	 * steps that had no room for them, and one output token needed more
	 * GPUs than two). */
	if (rq->output_tokens > 1 && r->sv.max_num_batched_tokens > 0) {
		double B = (double)r->sv.max_num_batched_tokens;
		double O1 = (double)rq->output_tokens - 1.0;
		double nb = B * O1 / (I + O1);

		if (nb < r->n_cap) {
			r->n_cap = nb;
			r->cap_limit = INF_LIMIT_MAX_NUM_BATCHED_TOKENS;
		}
	}
	r->t_pf = inf_prefill_s(c, tp, pp, 1.0);
	/* A prompt's prefill shares its iterations with the decode batch
	 * and with other prompts (in-flight batching in every profile:
	 * TensorRT-LLM mixes context and generation requests in one step,
	 * vLLM and SGLang chunk or batch prompts up to the token budget), so
	 * the weight read, the GEMMs' 128-row tile and launch overhead are
	 * paid by the iteration, not by each prompt: a prompt costs its
	 * compute (its rows of the GEMMs, attention, collectives). Its
	 * latency alone stays t_pf. */
	{
		double n = I;
		double attn = n *
			      model_attn_fwd_flops_per_token(&rq->model, I) *
			      CAUSAL_FRACTION / (double)tp / c->R_attn;

		if (rq->output_tokens > 1) {
			r->w_pf =
			    gemm_added_s(c, tp, n) + attn +
			    2.0 * c->L *
				coll_time_s(COLL_AR, n * c->h * 2.0, tp, 1.0,
					    c->intra, rq->gpu.intra_node_link);
		} else {
			/* One output token: no decode batch, so the prompts'
			 * own iterations pay the weight read, the 128-row
			 * tile and the launch and collective overhead,
			 * shared by the prompts one iteration holds (the
			 * token budget, at most max_num_seqs of them; whole
			 * prompts without chunking). A profile without a
			 * token budget or a sequence cap fills an iteration
			 * up to what memory holds (review s18b F7: generic
			 * gave each 16-token prompt an iteration of its own,
			 * 24x under the same prompts with two output tokens) */
			double B = r->sv.max_num_batched_tokens > 0
				       ? (double)r->sv.max_num_batched_tokens
				       : INFINITY;
			double seqs = r->sv.max_num_seqs > 0
					  ? (double)r->sv.max_num_seqs
					  : fmax(r->n_cap, 1.0);
			double R =
			    r->sv.chunked_prefill
				? fmin(fmax(B, 1.0), seqs * n)
				: n * fmax(1.0, fmin(floor(B / n), seqs));
			double iter =
			    fmax(gemm_compute_s(c, tp, R),
				 inf_weights_read(c, tp, R) / c->hbm) +
			    fixed_overhead(c, tp, pp, R);
			r->w_pf = iter * n / R + attn;
		}
	}
	r->others = 1.0; /* open loop until a closed one says otherwise */
	r->ctx = I + (double)rq->output_tokens / 2.0;
}

/* Step time with n sequences decoding; a step always carries at least one
 * sequence (it runs only when one is there). */
static double step_s(const struct replica *r, double n)
{
	return inf_decode_s(r->c, r->tp, r->pp, fmax(n, 1.0), r->ctx, NULL,
			    NULL);
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
	return n / (O1 * step_s(r, n) + r->others * n * r->w_pf);
}

/* Iterations a prompt waits beyond its first with n sequences decoding:
 * with chunked prefill each iteration carries the token budget less the
 * decode batch's one token per sequence, so a prompt runs in ceil(I /
 * (budget - n)) chunks (none without chunking). */
static double chunk_iterations(const struct replica *r, double n)
{
	double I = (double)r->c->rq->prompt_tokens, chunk;

	if (!r->sv.chunked_prefill)
		return 0.0;
	chunk = fmax(1.0, (double)r->sv.max_num_batched_tokens - n);
	return ceil(I / chunk) - 1.0;
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
	double O = (double)rq->output_tokens;
	double rho = lambda * r->w_pf, t_step, tpot, wq, resid, lat;
	/* what the other requests bring (r->others): their prefills stretch
	 * this one's decode steps, it queues behind theirs, and it may find
	 * their iteration running */
	double rho_o;

	memset(pt, 0, sizeof(*pt));
	pt->requests_per_s = lambda;
	pt->stable = rho < 1.0 && n <= r->n_cap * (1.0 + 1e-9);
	if (rho >= 1.0)
		rho = 1.0 - 1e-12;
	rho_o = r->others * rho;
	t_step = O > 1.0 ? step_s(r, n) : 0.0;
	tpot = O > 1.0 ? t_step / (1.0 - rho_o) : 0.0;
	wq = r->others * lambda * r->w_pf * r->w_pf / (2.0 * (1.0 - rho_o));
	/* the rest of the running scheduler window: one step, or the
	 * scheduler_steps of multi-step scheduling */
	resid =
	    (1.0 - exp(-n * r->others)) * r->sv.scheduler_steps * t_step / 2.0;
	/* each further chunk is one more iteration: a decode step of the
	 * running batch, or with one output token an iteration of its own at
	 * the cost latency_alone_ms counts (review s18b F1: TTFT at a load
	 * had come out under latency_alone_ms) */
	lat = r->t_pf +
	      chunk_iterations(r, n) * (O > 1.0 ? t_step : step_s(r, 1.0));
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
	/* relative: at a load of 1e-9 requests/s an absolute 1e-9 left
	 * more sequences decoding than in flight (review s17c F11) */
	for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; i++) {
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
	double hi = by_rate ? INF_SATURATION_UTILISATION / r->w_pf : r->n_cap,
	       lo;
	struct inf_point p;

	*limit = r->cap_limit;
	if (by_rate)
		point_at(r, hi, 0.0, &p);
	else
		point_at(r, lambda_of(r, hi), hi, &p);
	if (meets(rq, &p)) {
		/* No target binds. With prefill past half the replica's time
		 * the prompts' compute limits it, not the sequence cap: near
		 * capacity lambda ~ n / (O1 step + n w_pf), whose elasticity in
		 * n is ~1 - prefill share (review s16a F3: "KV-cache" at 0.13
		 * of 72 GiB, one output token). */
		if (by_rate ||
		    (p.prefill_share > 0.5 &&
		     r->cap_limit != INF_LIMIT_MAX_NUM_BATCHED_TOKENS))
			*limit = INF_LIMIT_PREFILL;
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
	/* The limit is the target the first load past capacity misses (by
	 * the larger ratio when it misses both), not the one the saturated
	 * point misses: with both targets given, TTFT can bind long before
	 * TPOT does. */
	if (by_rate)
		point_at(r, hi, 0.0, &p);
	else
		point_at(r, lambda_of(r, hi), hi, &p);
	{
		double xt = rq->tpot_ms > 0 ? p.tpot_ms / rq->tpot_ms : 0.0;
		double xf =
		    rq->ttft_ms > 0
			? (p.stable ? p.ttft_ms / rq->ttft_ms : INFINITY)
			: 0.0;

		if (xt > 1.0 || xf > 1.0)
			*limit = xt >= xf ? INF_LIMIT_TPOT : INF_LIMIT_TTFT;
		/* TTFT missed only for the chunks the decode batch took from
		 * the prompt's share of the token budget: the budget binds
		 * (review s14 F5: SGLang's 8,192 tokens, 16-token prompts) */
		if (*limit == INF_LIMIT_TTFT && p.stable &&
		    p.ttft_ms - (chunk_iterations(r, p.decode_batch) -
				 chunk_iterations(r, 0.0)) *
				    step_s(r, p.decode_batch) * 1e3 <=
			rq->ttft_ms)
			*limit = INF_LIMIT_MAX_NUM_BATCHED_TOKENS;
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
bool inf_plan_of(const struct ictx *c, const struct replica *r, double u_max,
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
	p->binding = limit_binding[limit];
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
		/* The fewest replicas whose closed loop holds its share,
		 * N / replicas, at no more than the utilisation ceiling. Each
		 * request meets the other n_r - 1 of its replica (others), so
		 * a closed replica queues less than an open one at the same
		 * rate and holds fewer sequences at the ceiling: the open
		 * loop's count is the first guess, raised until the closed
		 * replica holds its share (until 2026-11-27 the first guess
		 * was kept, and 10 sequences got 4 replicas carrying 7.3). */
		struct inf_point ceil_pt;
		struct replica closed = *r;
		double lam_max = u_max * cap.requests_per_s, n_r;
		long R;

		point_at_rate(r, lam_max, &ceil_pt);
		R = replicas_for(rq->load_value / ceil_pt.batch);
		for (;;) {
			n_r = rq->load_value / (double)R;
			closed.others = n_r > 1.0 ? (n_r - 1.0) / n_r : 0.0;
			point_at_rate(&closed, lam_max, &ceil_pt);
			if (ceil_pt.batch >= n_r * (1.0 - 1e-9) ||
			    R >= INF_MAX_REPLICAS)
				break;
			R = (long)fmax((double)(R + 1),
				       (double)replicas_for(rq->load_value /
							    ceil_pt.batch));
		}
		/* Never more replicas than sequences in flight: a closed
		 * loop keeps each of its sequences in a request, so a
		 * replica without one stands idle, and a prompt-only load
		 * (one output token) holds a replica busy with a single
		 * sequence; there the ceiling cannot be met and the plan
		 * says so (review s18d F3: 16 sequences of 2048-token
		 * prompts got 20 replicas, 0.8 sequence each). */
		if ((double)R > fmax(1.0, ceil(rq->load_value - 1e-9))) {
			R = replicas_for(rq->load_value);
			n_r = rq->load_value / (double)R;
			closed.others = n_r > 1.0 ? (n_r - 1.0) / n_r : 0.0;
			/* the rate the loop runs at, whatever the ceiling
			 * and the open loop's capacity within the targets:
			 * the closed loop's own N / R in flight say it */
			lam_max = 1e6 * fmax(cap.requests_per_s, 1.0);
		}
		p->replicas = R;
		lam_r = rate_for_inflight(&closed, n_r, lam_max);
		point_at_rate(&closed, lam_r, &at);
		/* a sequence alone never queues: its loop is stable even
		 * where it runs past the open loop's capacity (review s18e
		 * F1: 0.9414 against 0.9405 req/s read as a missed target
		 * with none given) */
		if (n_r <= 1.0 + 1e-9)
			at.stable = true;
	} else {
		p->replicas =
		    replicas_for(lam_total / (u_max * cap.requests_per_s));
		lam_r = lam_total / (double)p->replicas;
		point_at_rate(r, lam_r, &at);
	}
	p->gpus = p->replicas * p->tp * p->pp;
	/* each further chunk of a prompt over the token budget is one more
	 * iteration, as in point_at (review s17c F8: left out) */
	p->latency_alone_ms =
	    (r->t_pf + (chunk_iterations(r, 0.0) + O - 1.0) * step_s(r, 1.0)) *
	    1e3;
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
		double t = inf_decode_s(c, r->tp, r->pp, n, r->ctx, &tm, &tc);
		p->mbu =
		    (inf_weights_read(c, r->tp, n) +
		     n * r->ctx *
			 model_kv_bytes_per_token(&rq->model, c->kvB, r->tp)) /
		    t / (rq->gpu.memory_bandwidth_gbps * 1e9);
		p->decode_bound =
		    tm >= tc ? ENG_BIND_BANDWIDTH : ENG_BIND_COMPUTE;
	}
	p->meets_targets = meets(rq, &at);
	return true;
}

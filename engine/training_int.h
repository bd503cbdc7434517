/* training_int.h - what the parts of the training engine share (private
 * to engine/training*.c; the public face is training.h).
 *
 * training.c        names, entry points, result and warnings
 * training_ctx.c    the request context (struct ctx)
 * training_memory.c memory of a layout (MODEL.md §3)
 * training_time.c   step time of a layout (MODEL.md §4), a layout's plan
 * training_validate.c  request checks, the resolved global batch
 * training_search.c the layout search (MODEL.md §6)
 * training_binding.c what limits a plan (MODEL.md §6, "Binding")
 */
#ifndef GPUSIZER_ENGINE_TRAINING_INT_H
#define GPUSIZER_ENGINE_TRAINING_INT_H

#include "goodput.h"
#include "moe_dispatch.h"
#include "training.h"

#include <math.h>

#define GIB 1073741824.0

/* ---- request context (training_ctx.c) ---------------------------------- */

struct ctx {
	const struct trn_request *rq;
	struct model_params P;
	int gpn;
	long gbs;
	double s, h, a, d, k, V, L;
	double wb, gb, ob, act_b; /* bytes: weight, grad, optimizer, act */
	bool lora;
	double base_b, adapter_layer; /* LoRA */
	/* LoRA adapters' memory-bound kernels (MODEL.md §4a "LoRA
	 * adapters"), bytes per token per layer at t = 1: forward, backward
	 * (not counting a recomputed forward), and saved for the backward */
	double adapter_ew_fwd, adapter_ew_bwd, adapter_saved;
	/* fp32 parameters under autocast (training.h trn_amp_extra_of): the
	 * h-wide part is replicated (/t with SP), the f-wide one split (/t) */
	struct trn_amp_extra amp;
	double nonexp_layer, exp_layer, active_layer; /* per layer, mean */
	double emb, head;
	double moe_frac;
	/* MoE all-to-all: the router (moe_dispatch.h) and the bytes of one
	 * token copy, the mean of a dispatch and a combine (FP8 dispatch:
	 * stack ep_dispatch_fp8) */
	struct moe_routing routing;
	double a2a_copy_bytes;
	/* DeepEP's copies of each (ep, ranks a node) the search has timed
	 * (moe_dispatch.h). a2a_memo points at the store, so that the time
	 * functions' const ctx can fill it: a ctx is never copied, and
	 * serves one request, which fixes the dispatcher and routing. */
	struct moe_copies_cache a2a_memo_store, *a2a_memo;
	double mlp_act; /* per token per layer, before /t */
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
	bool dropout;	  /* resolved trn_request.dropout (MODEL.md §3) */
	double gpu_bytes; /* the GPU's memory */
	double capacity;  /* what a plan may use: gpu_bytes less headroom */
	double price;
	/* linear-layer weights per GEMM family (active, one layer, t = 1) */
	double w_qkv, w_o, w_up, w_down;
	double n_qkv, n_o, n_up, n_down; /* output/inner dims at t = 1 */
	double ffn_width;		 /* f or f_e (for shape) */
	/* the routed experts' share of w_up and w_down, and the rows each
	 * routed expert sees per token of its EP rank: k / E */
	double w_up_routed, w_down_routed, routed_rows;
	/* autocast's fp32 -> 16-bit weight casts of one layer per forward
	 * pass, bytes (t = 1; full fine-tuning on autocast_fp32_params) */
	double amp_wcast_layer;
	/* the stack profile's terms (stack.h, MODEL.md §4a) */
	double r_lin16;	      /* FP8: the 16-bit rate its GEMMs never trail */
	double tp_overlap;    /* share of TP time hidden behind GEMMs */
	double dp_overlap;    /* share of the window DP traffic hides in */
	double pg_overlap;    /* ZeRO-1/2 weight gather hidden in a forward */
	double red_b;	      /* bytes per gradient value DP reduces */
	double launch_layer;  /* kernel launch gaps, s per layer per mb */
	double dequant_layer; /* QLoRA: dequantisation bytes per pass */
	/* FP8: elements cast per token per layer (t = 1): inputs and
	 * output gradients of the column- (QKV, up) and row-parallel (O,
	 * down) GEMMs, and bytes per element cast */
	double fp8_in_col, fp8_out_col, fp8_in_row, fp8_out_row, fp8_cast_b,
	    fp8_wcast_b;
	/* FP8 all-gather of FSDP weights (stack.h fp8_param_all_gather):
	 * linear weights per layer (t = 1) gathered at 1 B; 0: none */
	double fp8_ag_layer;
	/* recompute "selective" on a per-op SAC stack: the share of the
	 * linear forward FLOPs recomputed; 0: the attention core (stack.h) */
	double sac_mm;
	/* Goodput (MODEL.md §4): bytes of one checkpoint (weights and
	 * optimizer state; LoRA: the adapters'), and the wall-clock limit
	 * ranking applies: the deadline, else max_days for objective cost
	 * or gpus with train_tokens, else 0 (none). */
	double ckpt_bytes;
	double limit_days;
};

int trn_ctx_init(struct ctx *c, const struct trn_request *rq);

/* Goodput of a job on `gpus` GPUs (engine/goodput.h) with the request's
 * inputs; and a timed plan's whole-run figures: days, gpu_hours and cost
 * with goodput, the steady-state ones beside them, within_max_days. */
void trn_goodput_of(const struct ctx *c, long gpus, struct gp_result *g);
void trn_run_figures(const struct ctx *c, struct trn_plan *p);

/* ---- memory (training_memory.c) ----------------------------------------- */

static inline double trn_ceil_div(double a, double b)
{
	return ceil(a / b - 1e-12);
}

struct stage_params {
	double nonexp, exp, trainable; /* parameters on the worst GPU */
};

/* Whether allowed-value list c holds v. */
static inline bool trn_choices_has(const struct trn_choices *c, int v)
{
	for (int i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return true;
	return false;
}

/* Whether recompute a is never faster than b on the same layout: a is b,
 * b recomputes nothing, or a recomputes whole layers (full). Selective
 * (attention in every layer) and partial (k whole layers of a chunk) may
 * each beat the other (review s21c F1). */
static inline bool trn_recompute_never_faster(enum eng_recompute a,
					      enum eng_recompute b)
{
	return a == b || b == ENG_RC_NONE || a == ENG_RC_FULL;
}

/* A step's exposed time on the links: TP, PP point-to-point, DP, EP and CP
 * collectives (what binding and the low-MFU warning call communication,
 * beside the host link's stalls). */
static inline double trn_time_links_s(const struct trn_time *T)
{
	return T->tp_comm_s + T->pp_p2p_s + T->dp_comm_exposed_s +
	       T->ep_comm_s + T->cp_comm_exposed_s;
}

/* The parts of a layout's memory that ZeRO, offload and recompute do not
 * change, computed once per layout so that the search's inner loops are
 * additions (the same arithmetic as a single evaluation, so results are
 * bit-identical either way). */

/* Chunk-passes a pipeline rank holds at its peak (training_memory.c
 * in_flight_of): all of them, and the fewest and most of the one chunk
 * that differs. */
struct in_flight {
	long all, s_min, s_max;
};

struct mem_fixed {
	int ls; /* layers on the fullest stage */
	struct stage_params sp;
	/* activation bytes per recompute mode; partial's for its share of
	 * layers is trn_act_partial */
	double act[ENG_RC_COUNT];
	/* what trn_act_partial needs: the peak's shape (ranks' in-flight
	 * passes, the end chunks' extras), a layer's bytes without and with
	 * full recompute, and the layers of a chunk */
	struct act_shape {
		long p;
		struct in_flight f0, f1, fl; /* ranks 0, 1, p-1 */
		double layers, ends, first_extra, last_extra;
		int partial_max; /* trn_partial_max_layers */
	} shape;
	double layer_none, layer_full;
};

/* Activation bytes at the peak with recompute partial recomputing
 * `layers` of each chunk's layers: whole layers stored or reduced to
 * their input. */
double trn_act_partial(const struct mem_fixed *mf, int layers);
/* Layers of one pipeline chunk of the fullest stage (a stage's layers /
 * vp; with rebalancing its units / vp), and the share of the fullest
 * stage's layers layout l recomputes: 1 full, vp x recompute_layers of
 * them for partial, else 0. */
double trn_chunk_layers(const struct ctx *c, const struct trn_layout *l);
double trn_recomputed_share(const struct ctx *c, const struct trn_layout *l);
/* The most layers recompute partial may take from each chunk: one fewer
 * than the smallest chunk holds (with rebalancing the end chunks, one
 * layer fewer), so that every chunk keeps a stored layer, which frees the
 * room its checkpointed layers are rebuilt in (trn_act_partial); below 1
 * partial cannot run on layout l. */
int trn_partial_max_layers(const struct ctx *c, const struct trn_layout *l);

/* Weights, gradients and optimizer state on the GPU (w, g, o) and on the
 * host, for the layout's ZeRO stage and offload. */
struct mem_state {
	double w, g, o, host;
	/* the stack's grads_in_backward: gradients and activations peak as
	 * the larger of the two, not their sum (trn_mem_total) */
	bool g_in_backward;
};

/* Ranks that reduce each gradient and share the ZeRO state of layout l:
 * data x context parallel. Context-parallel ranks hold the same weights,
 * so frameworks fold them into the data-parallel group for both:
 * Megatron-Core's DistributedDataParallel builds its gradient buffers
 * (and so the distributed optimizer's shards) on
 * get_data_parallel_group(with_context_parallel=True), torchtitan shards
 * FSDP over its dp_shard x cp mesh ("dp_shard_cp"), DeepSpeed-Ulysses
 * runs ZeRO over its sequence-data-parallel group (MODEL.md §3, §4). */
static inline long trn_zero_ranks(const struct trn_layout *l)
{
	return (long)l->dp * l->cp;
}

/* The stack splits this request's layers over a tensor-parallel group:
 * its tensor_parallel, and never under QLoRA's NF4 base weights, which no
 * stack of the catalog shards over TP (bitsandbytes Linear4bit and PEFT's
 * FSDP / ZeRO-3 recipes, torchtune's NF4Tensor under FSDP2, NeMo's NF4
 * wrappers: "Tensor Parallel is not supported"; MODEL.md §4a). */
static inline bool trn_tp_runs(const struct trn_request *rq)
{
	return rq->stack.tensor_parallel && rq->method != TRN_QLORA;
}

struct stage_params trn_stage_params(const struct ctx *c,
				     const struct trn_layout *l, int ls);
void trn_mem_fixed_of(const struct ctx *c, const struct trn_layout *l,
		      long m_micro, struct mem_fixed *mf);
struct mem_state trn_mem_state_of(const struct ctx *c,
				  const struct trn_layout *l,
				  const struct mem_fixed *mf);
double trn_mem_total(const struct ctx *c, const struct mem_state *m,
		     double act);
void trn_plan_memory(const struct ctx *c, const struct trn_layout *l,
		     long m_micro, const struct mem_fixed *mf,
		     struct trn_plan *p);
long trn_micro_batches(const struct ctx *c, const struct trn_layout *l,
		       const char **why);

/* ---- time (training_time.c) --------------------------------------------- */

/* Per layer, per micro-batch, per GPU (MODEL.md §4). */
struct layer_cost {
	double gemm, attn, mem; /* compute parts, s */
	double launch;		/* kernel launch gaps, s */
	double fp8_wcast;	/* one FP8 cast of the layer's weights, s */
	double tp;		/* tensor-parallel collectives, s */
	double attn_hide;	/* attention time CP traffic can hide behind */
};

/* The compute of one micro-batch on the fullest stage: per layer, and the
 * LM head. ZeRO and offload do not change it, so the search computes it
 * once per layout and recompute mode. */
struct mb_cost {
	struct layer_cost lc;
	double head_g, head_m;
};

void trn_mb_cost_of(const struct ctx *c, const struct trn_layout *l,
		    struct mb_cost *mc);
double trn_step_lower_bound_s(const struct trn_layout *l, long m_micro, int ls,
			      const struct mb_cost *mc);
void trn_time_of(const struct ctx *c, const struct trn_layout *l, long m_micro,
		 const struct mb_cost *mc, struct trn_plan *p);
int trn_plan_of(const struct ctx *c, const struct trn_layout *l,
		struct trn_plan *p, bool want_time, const char **why);

/* ---- validation (training_validate.c) ----------------------------------- */

int trn_validate(const struct trn_request *rq, struct eng_error *err);
long trn_resolve_gbs(const struct trn_request *rq);

/* ---- search (training_search.c) ----------------------------------------- */

struct lists {
	struct trn_choices tp, pp, ep, cp, vp, zero, rc, sp, fa, mb, off, rb;
};

struct search {
	const struct ctx *c;
	int top;
	int n;
	struct trn_plan best[TRN_MAX_TOP];
	double key[TRN_MAX_TOP][3];
	long evaluated, divisible, fitting, min_gpus, min_gpus_no_offload;
	/* tp x cp x pp (x vp) structures within the GPU limit whose layers
	 * split; of their dp choices, those the GPU count and the pins
	 * allowed: which constraint left no layout, for the error */
	long structures, dp_choices;
	/* recompute partial: layouts it was tried on, and of them those
	 * whose chunks hold two layers or more (the error names
	 * strategies.recompute when none did) */
	long partial_tried, partial_room;
	bool have_small;
	struct trn_layout smallest; /* least memory of all, for the error */
	double smallest_bytes;
	bool need_inter_skipped;
	/* the last GPU count's wall time per unit of work (goodput.h):
	 * the inner loops share a GPU count */
	long gp_gpus;
	double gp_wall_per_work;
	struct eng_budget *budget; /* the request's, or NULL */
	int rc;			   /* a budget's stop: ENG_EBUDGET/ECANCELLED */
	/* dp candidates: the divisors of the global batch up to the GPU
	 * limit, ascending (only they split it; MODEL.md §6) */
	int n_dps;
	long dps[TRN_MAX_DP_CANDIDATES];
};

void trn_default_lists(const struct ctx *c, struct lists *L);
/* Whether L layers (units) split into p stages of v chunks (§6). */
bool trn_vp_ok(long L, int p, int v);
void trn_dp_candidates(struct search *S, long gbs, long gmax);
void trn_search_all(struct search *S, const struct lists *L);

/* ---- binding (training_binding.c) --------------------------------------- */

/* Whether days meets the request's deadline (none: always), judged on
 * days as the answer prints them (4 significant digits): a deadline set
 * to a plan's printed days was "missed" by the digits not shown, with a
 * warning that the best "takes 0.2451 days" of 0.2451 (review s19b F1). */
bool trn_meets_deadline(const struct trn_request *rq, double days);

enum eng_binding trn_plan_binding(const struct ctx *c,
				  const struct trn_plan *p);

#endif

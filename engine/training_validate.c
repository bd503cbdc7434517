/* training_validate.c - checks of a training request before sizing, each
 * error naming the request field; and the global batch it resolves to.
 */
#include "training_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Engine-chosen default global batch when neither size nor tokens is given:
 * 4M tokens (Llama 2/3, GPT-3 175B used 2-4M). MODEL.md §6. */
#define DEFAULT_BATCH_TOKENS 4194304.0

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

int trn_validate(const struct trn_request *rq, struct eng_error *err)
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
	/* the batch is whole sequences: below one it would be raised to
	 * one unsaid (review s14: 1 token sized as 4,096) */
	if (rq->global_batch_size <= 0 && rq->global_batch_tokens > 0 &&
	    rq->global_batch_tokens < (double)rq->seq_len)
		return eng_fail(err, ENG_EINVAL, "global_batch_tokens",
				"%.0f is below one sequence: the global batch "
				"is whole sequences of seq_len (%ld) tokens",
				rq->global_batch_tokens, rq->seq_len);
	/* a run is whole steps of whole sequences: one shorter than a
	 * sequence, or than the batch it pins, would be sized as a fraction
	 * of a step (review s15) */
	if (rq->train_tokens > 0 && rq->train_tokens < (double)rq->seq_len)
		return eng_fail(err, ENG_EINVAL, "train_tokens",
				"%.0f is below one sequence of seq_len (%ld) "
				"tokens",
				rq->train_tokens, rq->seq_len);
	if (rq->train_tokens > 0 &&
	    (rq->global_batch_size > 0 || rq->global_batch_tokens > 0) &&
	    rq->train_tokens <
		(double)trn_resolve_gbs(rq) * (double)rq->seq_len)
		return eng_fail(
		    err, ENG_EINVAL, "train_tokens",
		    "%.0f is less than one step of the global batch (%.0f "
		    "tokens): give a smaller %s or more tokens",
		    rq->train_tokens,
		    (double)trn_resolve_gbs(rq) * (double)rq->seq_len,
		    rq->global_batch_size > 0 ? "global_batch_size"
					      : "global_batch_tokens");
	if (!finite_nonneg(rq->failures_per_gpu_hour) ||
	    rq->failures_per_gpu_hour > TRN_FAILURES_PER_GPU_HOUR_MAX)
		return eng_fail(err, ENG_EINVAL, "failures_per_gpu_hour",
				"must be between 0 and %g",
				TRN_FAILURES_PER_GPU_HOUR_MAX);
	if (!(rq->checkpoint_gbps_per_gpu >= TRN_CHECKPOINT_GBPS_MIN &&
	      rq->checkpoint_gbps_per_gpu <= TRN_CHECKPOINT_GBPS_MAX))
		return eng_fail(err, ENG_EINVAL, "checkpoint_gbps_per_gpu",
				"must be between %g and %g GB/s",
				TRN_CHECKPOINT_GBPS_MIN,
				TRN_CHECKPOINT_GBPS_MAX);
	if (!finite_nonneg(rq->restart_minutes) ||
	    rq->restart_minutes > TRN_RESTART_MINUTES_MAX)
		return eng_fail(err, ENG_EINVAL, "restart_minutes",
				"must be between 0 and %g",
				TRN_RESTART_MINUTES_MAX);
	if (!(rq->max_days == 0 || (rq->max_days >= TRN_MAX_DAYS_MIN &&
				    rq->max_days <= TRN_MAX_DAYS_MAX)))
		return eng_fail(err, ENG_EINVAL, "max_days",
				"must be between %g and %g days",
				TRN_MAX_DAYS_MIN, TRN_MAX_DAYS_MAX);
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
	if (rq->dropout < -1 || rq->dropout > 1)
		return eng_fail(err, ENG_EINVAL, "dropout",
				"must be true or false");
	if (!(rq->memory_headroom_fraction >= 0.0 &&
	      rq->memory_headroom_fraction <= TRN_HEADROOM_MAX))
		return eng_fail(err, ENG_EINVAL, "memory_headroom_fraction",
				"must be between 0 and %.1f", TRN_HEADROOM_MAX);
	if (!(rq->memory_fixed_overhead_gib >= 0.0 &&
	      rq->memory_fixed_overhead_gib <= TRN_FIXED_OVERHEAD_MAX_GIB))
		return eng_fail(err, ENG_EINVAL, "memory_fixed_overhead_gib",
				"must be between 0 and %.0f",
				TRN_FIXED_OVERHEAD_MAX_GIB);
	if (!(rq->memory_fragmentation_fraction >= 0.0 &&
	      rq->memory_fragmentation_fraction <= TRN_FRAGMENTATION_MAX))
		return eng_fail(
		    err, ENG_EINVAL, "memory_fragmentation_fraction",
		    "must be between 0 and %.0f", TRN_FRAGMENTATION_MAX);
	if (!(rq->host_link_gbps >= 0.0 &&
	      rq->host_link_gbps <= TRN_HOST_RATE_MAX_GBPS))
		return eng_fail(err, ENG_EINVAL, "host_link_gbps",
				"must be between 0 and %.0f",
				TRN_HOST_RATE_MAX_GBPS);
	if (!(rq->host_link_efficiency >= 0.0 &&
	      rq->host_link_efficiency <= 1.0))
		return eng_fail(err, ENG_EINVAL, "host_link_efficiency",
				"must be between 0 and 1");
	if (!(rq->cpu_optimizer_gbps > 0.0 &&
	      rq->cpu_optimizer_gbps <= TRN_HOST_RATE_MAX_GBPS))
		return eng_fail(err, ENG_EINVAL, "cpu_optimizer_gbps",
				"must be above 0 and at most %.0f",
				TRN_HOST_RATE_MAX_GBPS);
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
	/* MXFP8's block scales are Blackwell tensor-core formats:
	 * Transformer Engine refuses the recipe below compute capability
	 * 10.0 (check_mxfp8_support; review s17a F7: sized on H100 and L40S
	 * without a word) */
	if (rq->precision == ENG_FP8 &&
	    rq->stack.fp8_recipe == STACK_FP8_MXFP8 && g->cc_major < 10)
		return eng_fail(err, ENG_EUNSUPPORTED, "stack.fp8_recipe",
				"mxfp8 needs Blackwell tensor cores (compute "
				"capability 10.0 or higher; Transformer "
				"Engine refuses it below); %s is %d.%d - use "
				"delayed or current scaling",
				g->name, g->cc_major, g->cc_minor);

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
	    (rc = check_list(&st->stage_rebalance, "strategies.stage_rebalance",
			     0, 1, err)) ||
	    (rc = check_list(&st->offload, "strategies.offload", 0,
			     TRN_OFFLOAD_COUNT - 1, err)))
		return rc;
	{
		const char *bad = NULL;
		if (stack_check(&rq->stack, &bad) != 0)
			return eng_fail(err, ENG_EINVAL, "stack",
					"%s is out of range", bad);
	}
	if (!attn_kernel_fused(rq->stack.attn_kernel))
		for (int i = 0; i < st->flash_attention.n; i++)
			if (st->flash_attention.v[i])
				return eng_fail(
				    err, ENG_EINVAL,
				    "strategies.flash_attention",
				    "the stack's attention kernel %s stores "
				    "the scores (not a flash kernel); name "
				    "a stack with a fused kernel or leave "
				    "flash_attention false",
				    attn_kernel_name(rq->stack.attn_kernel));
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
		if (e > 1 && m->moe.experts == 0)
			return eng_fail(err, ENG_EINVAL, "strategies.ep",
					"ep %d on a dense model: it has no "
					"experts to shard (ep 1 only)",
					e);
		if (e > 1 && m->moe.experts % e != 0)
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

double trn_default_batch_tokens(const struct trn_request *rq)
{
	return rq->method == TRN_FULL
		   ? DEFAULT_BATCH_TOKENS
		   : (double)TRN_FINETUNE_BATCH_SEQS * (double)rq->seq_len;
}

/* About n sequences as a default batch that data-parallel ranks split:
 * a multiple of 64 from 64 up, else a power of two; the nearest, or with
 * down the largest not above n. 4M tokens of 6,144 are 683 sequences, a
 * prime that only dp 1 or 683 divides (review s15: 3x the cost of 8,192
 * on the same GPUs); 704 splits over 64 ranks. */
static long default_batch_seqs(double n, bool down)
{
	double p = 1.0;

	if (n >= 64.0)
		return 64L *
		       (long)(down ? floor(n / 64.0) : floor(n / 64.0 + 0.5));
	while (p * 2.0 <= n)
		p *= 2.0;
	if (!down && n - p > 2.0 * p - n)
		p *= 2.0;
	return (long)p;
}

long trn_resolve_gbs(const struct trn_request *rq)
{
	double seqs;

	if (rq->global_batch_size > 0)
		return rq->global_batch_size;
	/* a default batch is at most the whole run: a run shorter than it
	 * is one step of as many of its sequences as the default's rounding
	 * keeps (review s15: 1 token was sized as 10 us of a 43 s step) */
	if (rq->global_batch_tokens <= 0 && rq->train_tokens > 0 &&
	    rq->train_tokens < trn_default_batch_tokens(rq))
		return default_batch_seqs(
		    fmax(1.0, floor(rq->train_tokens / (double)rq->seq_len)),
		    true);
	if (rq->global_batch_tokens <= 0 && rq->method != TRN_FULL)
		return TRN_FINETUNE_BATCH_SEQS;
	if (rq->global_batch_tokens <= 0)
		return default_batch_seqs(
		    DEFAULT_BATCH_TOKENS / (double)rq->seq_len, false);
	/* the request's tokens: whole sequences as given, else rounded as
	 * the default is (review s15 G4: 4,194,304 tokens of 6,144 were 683
	 * sequences); clamped so the conversion is defined (validation
	 * refuses it) */
	seqs = rq->global_batch_tokens / (double)rq->seq_len;
	if (seqs != floor(seqs) && seqs < (double)TRN_MAX_GLOBAL_BATCH)
		return default_batch_seqs(seqs, false);
	return (long)fmin((double)TRN_MAX_GLOBAL_BATCH + 1.0, fmax(1.0, seqs));
}

/* test_engine_memory.c - the training memory terms of issue 13 with
 * hand-computed values (docs/MODEL.md §3): activations per layer with and
 * without dropout (Korthikanti et al. 2022: 34sbh, 5as^2b), the input
 * embedding's dropout mask and the output layer (§4.3), TP + SP division,
 * ZeRO-2 with pipeline parallelism, first/last-stage rebalancing (Llama 3
 * §3.3.2), the memory headroom and its invariant, the near-full warning,
 * what binds a plan, and Llama 3 405B at Meta's published layout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixtures.h"
#include "testlib.h"
#include "training.h"

#define GIB_B 1073741824.0

static void pin(struct trn_choices *c, int v)
{
	c->n = 1;
	c->v[0] = v;
}

/* A small MHA GeLU model whose per-layer activations are exactly 34h per
 * token: h 1024, a = k = 8 (d 128), f 4h, V 1000, 2 layers, s 512. */
static struct trn_request small_request(void)
{
	struct trn_request rq;

	trn_request_init(&rq);
	memset(&rq.model, 0, sizeof(rq.model));
	rq.model.layers = 2;
	rq.model.hidden_size = 1024;
	rq.model.heads = 8;
	rq.model.kv_heads = 8;
	rq.model.ffn_hidden_size = 4096;
	rq.model.vocab_size = 1000;
	rq.seq_len = 512;
	rq.global_batch_size = 8;
	rq.gpu = fx_h100();
	rq.gpus = 8;
	return rq;
}

static struct trn_layout layout(int tp, int pp, int dp, int zero)
{
	struct trn_layout l;

	memset(&l, 0, sizeof(l));
	l.tp = tp;
	l.pp = pp;
	l.dp = dp;
	l.ep = 1;
	l.cp = 1;
	l.vp = 1;
	l.zero = zero;
	l.recompute = ENG_RC_NONE;
	l.sequence_parallel = tp > 1;
	l.flash_attention = true;
	l.micro_batch = 1;
	l.offload = TRN_OFFLOAD_NONE;
	return l;
}

static double act_bytes(const struct trn_request *rq,
			const struct trn_layout *l)
{
	struct trn_plan p;
	struct eng_error e;

	if (trn_evaluate(rq, l, &p, &e) != 0) {
		printf("# evaluate: %s: %s\n", e.field, e.message);
		return -1.0;
	}
	return p.memory.activations_gib * GIB_B;
}

/* tp 1, pp 1, flash, no recompute, 512 tokens:
 * dropout: layers 2 x 512 x 34 x 1024 = 35,651,584 B; embedding dropout
 * mask 512 x 1024 x 1 B = 524,288; output layer 4 x 512 x 1024 =
 * 2,097,152; fp32 logits 4 x 512 x 1000 = 2,048,000; total 40,321,024.
 * no dropout: layers 2 x 512 x 32 x 1024 = 33,554,432 (the two 1-byte
 * masks, 2h, go), no embedding mask (the embedding's output is layer 1's
 * stored input), total 37,699,584. */
static void test_activations_dropout(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 1, 8, 0);

	rq.dropout = 1;
	CHECK_NEAR(act_bytes(&rq, &l), 40321024.0, 1e-9);
	rq.dropout = 0;
	CHECK_NEAR(act_bytes(&rq, &l), 37699584.0, 1e-9);
	/* default: the model's linear biases decide */
	rq.dropout = -1;
	CHECK_NEAR(act_bytes(&rq, &l), 37699584.0, 1e-9);
	rq.model.linear_biases = true; /* GPT-style: dropout on */
	CHECK_NEAR(act_bytes(&rq, &l), 40321024.0, 1e-9);
}

/* Unfused attention adds 5as per token per layer with dropout (softmax
 * output 2, mask 1, dropout output 2), 2as without: 2 x 512 x 5 x 8 x 512
 * = 20,971,520 B and 2 x 512 x 2 x 8 x 512 = 8,388,608 B. */
static void test_scores_dropout(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 1, 8, 0), u = l;

	u.flash_attention = false;
	rq.dropout = 1;
	CHECK_NEAR(act_bytes(&rq, &u) - act_bytes(&rq, &l), 20971520.0, 1e-9);
	rq.dropout = 0;
	CHECK_NEAR(act_bytes(&rq, &u) - act_bytes(&rq, &l), 8388608.0, 1e-9);
}

/* Per-op SAC (torchtitan: stack.h STACK_SAC_OP) keeps the policy's saved
 * set between forward and backward, per token and layer: the block input
 * h, the SDPA output a.d, the odd matmuls wq (a.d), wv (k.d), w1 (f) and,
 * gated, w2 (h); 2 B each. tp 1, pp 1, flash, 512 tokens, no dropout:
 * non-gated 1024 + 1024 + 1024 + 1024 + 4096 = 8,192 values = 16,384 B,
 * layers 2 x 512 x 16,384 = 16,777,216; the layer being rebuilt adds what
 * the policy did not keep, (32,768 - 16,384) x 512 = 8,388,608; output
 * layer 2,097,152; torchtitan's fp32 cross-entropy 12 B a logit, 12 x 512
 * x 1000 = 6,144,000: 33,406,976 B (Megatron's selective set with its
 * fused loss: 37,699,584). Gated (SwiGLU: 40,960 B a token without
 * recompute): + w2's h = 9,216 values = 18,432 B; layers 18,874,368,
 * rebuilt (40,960 - 18,432) x 512 = 11,534,336; 38,649,856 B. */
static void test_sac_op_memory(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 1, 8, 0);

	l.recompute = ENG_RC_SELECTIVE;
	rq.dropout = 0;
	CHECK_NEAR(act_bytes(&rq, &l), 37699584.0, 1e-9);
	stack_builtin_or_default("torchtitan", &rq.stack);
	CHECK_NEAR(act_bytes(&rq, &l), 33406976.0, 1e-9);
	rq.model.gated_mlp = true;
	CHECK_NEAR(act_bytes(&rq, &l), 38649856.0, 1e-9);
	{ /* full <= per-op selective <= none */
		struct trn_layout f = l, n = l;
		f.recompute = ENG_RC_FULL;
		n.recompute = ENG_RC_NONE;
		CHECK(act_bytes(&rq, &f) <= act_bytes(&rq, &l));
		CHECK(act_bytes(&rq, &l) <= act_bytes(&rq, &n));
	}
	/* the loss term alone: Megatron's profile at 12 B a logit */
	rq = small_request();
	rq.dropout = 0;
	rq.stack.loss_logit_bytes = 12.0;
	CHECK_NEAR(act_bytes(&rq, &l), 37699584.0 + 8.0 * 512 * 1000, 1e-9);
}

/* tp 2 with SP: everything / 2 - layers 2 x 512 x 17 x 1024 = 17,825,792,
 * embedding mask 262,144, output layer 1,048,576, logits 1,024,000: total
 * 20,160,512 (before the fix the embedding term was 3h per token and not
 * divided by t: 1,572,864 B). */
static void test_tp_sp_division(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(2, 1, 4, 0);

	rq.dropout = 1;
	CHECK_NEAR(act_bytes(&rq, &l), 20160512.0, 1e-9);
}

/* Dropout in time as in memory: the masks' bytes are charged to the
 * memory-bound kernels only when dropout is on. */
static void test_dropout_time_consistent(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 1, 8, 0);
	struct trn_plan on, off;
	struct eng_error e;

	rq.dropout = 1;
	CHECK(trn_evaluate(&rq, &l, &on, &e) == 0);
	rq.dropout = 0;
	CHECK(trn_evaluate(&rq, &l, &off, &e) == 0);
	CHECK(on.memory.activations_gib > off.memory.activations_gib);
	CHECK(on.time.memory_bound_s > off.time.memory_bound_s);
}

static struct model_arch llama3_405b(void)
{
	struct model_arch m = fx_llama3_8b();

	m.layers = 126;
	m.hidden_size = 16384;
	m.heads = 128;
	m.kv_heads = 8;
	m.ffn_hidden_size = 53248;
	return m;
}

/* ZeRO-2 with PP (Llama 3 §3.3.2: gradients and optimizer state sharded):
 * gradients / dp; before, a search with zero [2] and pp [2] had no layout
 * (a 400). */
static void test_zero2_with_pp(void)
{
	struct trn_request rq;
	struct trn_layout l1, l2;
	struct trn_plan p1, p2;
	struct eng_error e;
	struct trn_result *r = calloc(1, sizeof(*r));

	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.seq_len = 4096;
	rq.global_batch_size = 256;
	rq.gpu = fx_h100();
	rq.gpus = 64;
	l1 = layout(8, 2, 4, 1);
	l2 = layout(8, 2, 4, 2);
	CHECK(trn_evaluate(&rq, &l1, &p1, &e) == 0);
	CHECK(trn_evaluate(&rq, &l2, &p2, &e) == 0);
	CHECK_NEAR(p2.memory.gradients_gib * 4.0, p1.memory.gradients_gib,
		   1e-12);
	CHECK_NEAR(p2.memory.optimizer_gib, p1.memory.optimizer_gib, 1e-12);
	pin(&rq.strategies.pp, 2);
	pin(&rq.strategies.zero, 2);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	CHECK(r && r->n_plans > 0 && r->plans[0].layout.zero == 2 &&
	      r->plans[0].layout.pp == 2);
	free(r);
}

/* ZeRO state is sharded, and gradients reduced, over data x context
 * parallel ranks (trn_zero_ranks; Megatron-Core's gradient buffers live on
 * the data-parallel group with context parallel, torchtitan's FSDP on
 * dp_shard_cp). Llama-3-70B, tp 8, pp 2, dp 2, cp 2: ZeRO-1 optimizer
 * state is ZeRO-0's / 4 (it was / 2), ZeRO-3 weights ZeRO-0's / 4, the
 * same as dp 4 without CP; at dp 1, cp 2 the two CP ranks still reduce
 * their gradients and gather the updated weights (it had no DP traffic). */
static void test_zero_over_cp(void)
{
	struct trn_request rq;
	struct trn_layout l0, l1, l3, l4;
	struct trn_plan p0, p1, p3, p4;
	struct eng_error e;

	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.seq_len = 8192;
	rq.global_batch_size = 64;
	rq.gpu = fx_h100();
	rq.gpus = 64;
	l0 = layout(8, 2, 2, 0);
	l0.cp = 2;
	l1 = l0;
	l1.zero = 1;
	l3 = l0;
	l3.zero = 3;
	l4 = layout(8, 2, 4, 1);
	CHECK(trn_evaluate(&rq, &l0, &p0, &e) == 0);
	CHECK(trn_evaluate(&rq, &l1, &p1, &e) == 0);
	CHECK(trn_evaluate(&rq, &l3, &p3, &e) == 0);
	CHECK(trn_evaluate(&rq, &l4, &p4, &e) == 0);
	CHECK_NEAR(p1.memory.optimizer_gib * 4.0, p0.memory.optimizer_gib,
		   1e-9);
	CHECK_NEAR(p1.memory.optimizer_gib, p4.memory.optimizer_gib, 1e-12);
	CHECK_NEAR(p3.memory.weights_gib * 4.0, p0.memory.weights_gib, 1e-9);

	rq.gpus = 32;
	l1 = layout(8, 2, 1, 1);
	l1.cp = 2;
	CHECK(trn_evaluate(&rq, &l1, &p1, &e) == 0);
	CHECK(p1.time.dp_comm_exposed_s > 0.0);
}

/* Stage rebalancing, 126 layers on 16 stages: 128 units, 8 a stage; the
 * first stage holds 7 layers x 16 micro-batches, the second 8 x 15 = 120
 * layer-micro-batches against 8 x 16 = 128 without: activations x 120/128
 * exactly for a model without dropout (no embedding mask). */
static void test_stage_rebalance(void)
{
	struct trn_request rq;
	struct trn_layout l = layout(8, 16, 1, 0), r;
	struct trn_plan a, b;
	struct eng_error e;

	trn_request_init(&rq);
	rq.model = llama3_405b();
	rq.seq_len = 8192;
	rq.global_batch_size = 16;
	rq.gpu = fx_h100();
	rq.gpus = 128;
	r = l;
	r.stage_rebalance = true;
	CHECK(trn_evaluate(&rq, &l, &a, &e) == 0);
	CHECK(trn_evaluate(&rq, &r, &b, &e) == 0);
	CHECK(a.layers_per_stage_max == 8 && b.layers_per_stage_max == 8);
	CHECK_NEAR(b.memory.activations_gib / a.memory.activations_gib,
		   120.0 / 128.0, 1e-12);
	/* weights: the fullest stage is a middle one, 8 layers without the
	 * embedding (7 layers + embedding on the first) */
	CHECK(b.memory.weights_gib < a.memory.weights_gib);
	CHECK(!b.uneven_stages && a.uneven_stages);
	/* 30 layers on 4 stages: 32 units, 8 a stage, 7 on the ends */
	rq.model.layers = 30;
	r.pp = 4;
	r.tp = 8;
	r.dp = 4;
	CHECK(trn_evaluate(&rq, &r, &b, &e) == 0);
	CHECK(b.layers_per_stage_max == 8);
	/* 10 layers on 2 stages: 12 units, both stages end stages: 5 */
	rq.model.layers = 10;
	r.pp = 2;
	r.dp = 8;
	CHECK(trn_evaluate(&rq, &r, &b, &e) == 0);
	CHECK(b.layers_per_stage_max == 5);
}

static void meta_405b(struct trn_request *rq, long gpus)
{
	trn_request_init(rq);
	rq->model = llama3_405b();
	rq->seq_len = 8192;
	rq->global_batch_tokens = 16777216; /* 16M (Llama 3 Table 4) */
	rq->gpu = fx_h100();
	rq->gpus = gpus;
	pin(&rq->strategies.tp, 8);
	pin(&rq->strategies.pp, 16);
	pin(&rq->strategies.cp, 1);
	pin(&rq->strategies.recompute, ENG_RC_NONE);
	pin(&rq->strategies.stage_rebalance, 1);
}

/* Llama 3 405B at Meta's layout (Table 4: TP 8, CP 1, PP 16, no
 * activation checkpointing at 8K, §3.3.2) fits on 80 GB H100s at 8K and
 * 16K GPUs. The paper reports 41 % / 43 % BF16 MFU; printed, not
 * asserted (no constant is tuned to it). */
static void test_meta_405b_fits(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	const long gpus[2] = {16384, 8192};

	for (int i = 0; r && i < 2; i++) {
		meta_405b(&rq, gpus[i]);
		CHECK(trn_size(&rq, r, &e) == 0);
		if (r->n_plans == 0)
			continue;
		CHECK(r->plans[0].fits && r->plans[0].memory.total_gib <=
					      r->plans[0].memory.capacity_gib);
		CHECK(r->plans[0].layout.recompute == ENG_RC_NONE);
		printf(
		    "# Llama 3 405B, %ld H100: tp8 pp16 vp%d dp%d zero %d "
		    "rebalance %d, %.1f GiB, MFU %.3f (paper %s), binding "
		    "%s\n",
		    gpus[i], r->plans[0].layout.vp, r->plans[0].layout.dp,
		    r->plans[0].layout.zero, r->plans[0].layout.stage_rebalance,
		    r->plans[0].memory.total_gib, r->plans[0].mfu,
		    i ? "0.43" : "0.41", eng_binding_name(r->plans[0].binding));
	}
	free(r);
}

/* Recompute partial (Megatron's block method: the first k layers of each
 * chunk recomputed whole, the rest stored). Hand values, tp 1, pp 1, flash,
 * 512 tokens, no dropout (test_activations_dropout): a stored layer
 * 16,777,216 B, a recomputed one its input 2 x 512 x 1024 = 1,048,576;
 * head and logits 4,145,152. k = 1 of 2 layers: 1,048,576 + 16,777,216 +
 * 4,145,152 = 21,970,944 B, with no layer rebuilt on top (the stored layer
 * is freed first): below full's 23,019,520 (two inputs + one rebuilt).
 * The hardware FLOPs add half of full's recomputed forward. Out of range
 * (0 or every layer of the chunk) is refused naming strategies.recompute. */
static void test_partial_recompute_hand(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 1, 8, 0), f;
	struct trn_plan pn, pp_, pf;
	struct eng_error e;

	rq.dropout = 0;
	l.recompute = ENG_RC_PARTIAL;
	l.recompute_layers = 1;
	CHECK_NEAR(act_bytes(&rq, &l), 21970944.0, 1e-9);
	f = l;
	f.recompute = ENG_RC_FULL;
	f.recompute_layers = 0;
	CHECK_NEAR(act_bytes(&rq, &f), 23019520.0, 1e-9);
	CHECK(trn_evaluate(&rq, &l, &pp_, &e) == 0);
	CHECK(trn_evaluate(&rq, &f, &pf, &e) == 0);
	f.recompute = ENG_RC_NONE;
	CHECK(trn_evaluate(&rq, &f, &pn, &e) == 0);
	CHECK_NEAR(
	    pp_.hardware_flops_per_token - pn.hardware_flops_per_token,
	    0.5 * (pf.hardware_flops_per_token - pn.hardware_flops_per_token),
	    1e-9);
	CHECK(pn.time.step_s < pp_.time.step_s &&
	      pp_.time.step_s < pf.time.step_s);
	for (int k = 0; k <= 2; k += 2) {
		l.recompute_layers = k;
		CHECK(trn_evaluate(&rq, &l, &pp_, &e) == ENG_EINVAL &&
		      strcmp(e.field, "strategies.recompute") == 0);
	}
}

/* More recomputed layers never need more memory and never run faster:
 * Llama 3 70B on pp 2 and 4 (interleaved or not), every k of a chunk. */
static void test_partial_recompute_monotone(void)
{
	const int pps[] = {2, 4}, vps[] = {1, 2};
	int steps = 0;

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			struct trn_request rq;
			struct trn_layout l = layout(4, pps[i], 2, 1);
			struct trn_plan a, b;
			struct eng_error e;
			int chunk = 80 / pps[i] / vps[j];

			trn_request_init(&rq);
			rq.model = fx_llama3_70b();
			rq.seq_len = 8192;
			rq.global_batch_size = 64;
			rq.gpu = fx_h100();
			rq.gpus = 8L * pps[i];
			l.vp = vps[j];
			l.recompute = ENG_RC_PARTIAL;
			l.recompute_layers = 1;
			CHECK(trn_evaluate(&rq, &l, &a, &e) == 0);
			for (int k = 2; k < chunk; k++) {
				l.recompute_layers = k;
				CHECK(trn_evaluate(&rq, &l, &b, &e) == 0);
				CHECK(b.memory.total_gib <= a.memory.total_gib);
				CHECK(b.time.step_s >= a.time.step_s);
				a = b;
				steps++;
			}
		}
	CHECK(steps == 38 + 18 + 18 + 8); /* chunks of 40, 20, 20, 10 */
	printf("# partial recompute: %d steps of one more layer\n", steps);
}

/* The search: Llama 3 405B at Meta's layout on 8,192 H100 (recompute left
 * free) runs partial, the fewest layers that keep the plan within 95 % of
 * memory (one fewer would not, or would not fit); on a stack without
 * partial_recompute the search never offers it, and a pinned one is sized
 * with a warning naming the field. */
static void test_partial_recompute_search(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	bool warned = false;

	meta_405b(&rq, 8192);
	rq.strategies.recompute.n = 0;
	pin(&rq.strategies.zero, 2);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	if (r && r->n_plans > 0 &&
	    r->plans[0].layout.recompute == ENG_RC_PARTIAL) {
		struct trn_layout l = r->plans[0].layout;
		struct trn_plan q;

		CHECK(r->plans[0].memory.total_gib <= 0.95 * 80.0);
		printf("# 405B 8,192 H100: vp %d, partial %d layers of a "
		       "chunk, %.2f GiB, MFU %.3f (paper 0.43)\n",
		       l.vp, l.recompute_layers, r->plans[0].memory.total_gib,
		       r->plans[0].mfu);
		if (l.recompute_layers > 1) {
			l.recompute_layers--;
			CHECK(trn_evaluate(&rq, &l, &q, &e) == 0);
			CHECK(q.memory.total_gib > 0.95 * 80.0);
		}
	} else {
		CHECK(!"the best plan runs partial recompute");
	}
	rq.stack = *stack_builtin_find("pytorch-fsdp2-fa2");
	CHECK(r && trn_size(&rq, r, &e) == 0);
	for (int i = 0; r && i < r->n_plans; i++)
		CHECK(r->plans[i].layout.recompute != ENG_RC_PARTIAL);
	pin(&rq.strategies.recompute, ENG_RC_PARTIAL);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	for (int i = 0; r && i < r->n_plans; i++)
		CHECK(r->plans[i].layout.recompute == ENG_RC_PARTIAL);
	for (int i = 0; r && i < r->n_warnings; i++)
		warned |=
		    strstr(r->warnings[i], "partial_recompute false") != NULL;
	CHECK(warned);
	free(r);
}

/* Review s20b: on a rebalanced split the end chunks, a layer short, are
 * recomputed whole at k = their layers, where the last rank's rebuild can
 * make that k need more than k - 1. Llama 3 8B on 3 H100, pp 3 rebalanced
 * (units 34: 11 layers at the ends, 12 in the middle), micro-batch 4: the
 * search takes the count below the end chunks when it is within 95 %, not
 * the largest (N1). With ["none", "partial"] a memory-chosen partial plan
 * is bound by memory, as with the full list (N2); a pinned partial that
 * fits nowhere does not send the user to full (N3). */
static void test_partial_recompute_end_chunks(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	int checked = 0;

	for (long s = 9600; r && s <= 9760; s += 16) {
		struct trn_layout l = layout(1, 3, 1, 0);
		struct trn_plan a, b;

		trn_request_init(&rq);
		rq.model = fx_llama3_8b();
		rq.seq_len = s;
		rq.gpu = fx_h100();
		rq.gpus = 3;
		rq.global_batch_size = 256;
		rq.stack = *stack_builtin_find("megatron-core");
		l.micro_batch = 4;
		l.stage_rebalance = true;
		l.recompute = ENG_RC_PARTIAL;
		l.recompute_layers = 10;
		if (trn_evaluate(&rq, &l, &a, &e) != 0)
			continue;
		l.recompute_layers = 11;
		if (trn_evaluate(&rq, &l, &b, &e) != 0)
			continue;
		if (!(a.memory.total_gib <= 0.95 * 80.0 &&
		      b.memory.total_gib > a.memory.total_gib))
			continue;
		pin(&rq.strategies.tp, 1);
		pin(&rq.strategies.pp, 3);
		pin(&rq.strategies.vp, 1);
		pin(&rq.strategies.micro_batch, 4);
		pin(&rq.strategies.stage_rebalance, 1);
		pin(&rq.strategies.zero, 0);
		pin(&rq.strategies.recompute, ENG_RC_PARTIAL);
		CHECK(trn_size(&rq, r, &e) == 0);
		CHECK(r->plans[0].layout.recompute_layers <= 10);
		checked++;
	}
	printf("# end chunks: %d sequence lengths where k 11 needs more than "
	       "k 10\n",
	       checked);
	CHECK(checked > 0);

	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.seq_len = 4096;
	rq.gpu = fx_h100();
	rq.gpus = 16;
	rq.stack = *stack_builtin_find("megatron-core");
	pin(&rq.strategies.tp, 8);
	pin(&rq.strategies.pp, 2);
	pin(&rq.strategies.offload, 0);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	if (r && r->plans[0].layout.recompute == ENG_RC_PARTIAL) {
		enum eng_binding all = r->plans[0].binding;

		rq.strategies.recompute.n = 2;
		rq.strategies.recompute.v[0] = ENG_RC_NONE;
		rq.strategies.recompute.v[1] = ENG_RC_PARTIAL;
		CHECK(trn_size(&rq, r, &e) == 0);
		CHECK(r->plans[0].layout.recompute == ENG_RC_PARTIAL &&
		      r->plans[0].binding == all && all == ENG_BIND_MEMORY);
	} else {
		CHECK(!"70B on 16 H100 at tp 8 pp 2 runs partial");
	}

	trn_request_init(&rq);
	rq.model = llama3_405b();
	rq.seq_len = 8192;
	rq.gpu = fx_h100();
	rq.gpus = 8;
	pin(&rq.strategies.recompute, ENG_RC_PARTIAL);
	CHECK(trn_size(&rq, r, &e) == ENG_EINFEASIBLE &&
	      strstr(e.message, "full recompute") == NULL);
	free(r);
}

/* Whether the request is refused as invalid, naming field. */
static bool refused_naming(const struct trn_request *rq, struct trn_result *r,
			   const char *field)
{
	struct eng_error e;

	return r && trn_size(rq, r, &e) == ENG_EINVAL &&
	       strcmp(e.field, field) == 0;
}

/* More headroom never fits more: the fewest GPUs never falls, and every
 * ranked plan stays within the usable memory; past what any plan needs
 * the answer is ENG_EINFEASIBLE. Out of range is ENG_EINVAL naming the
 * field. */
static void test_headroom(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	const double hr[] = {0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5};
	long last_min = 0;

	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.seq_len = 4096;
	rq.gpu = fx_h100();
	rq.max_gpus = 256;
	rq.top = 3;
	for (size_t i = 0; r && i < sizeof(hr) / sizeof(hr[0]); i++) {
		rq.memory_headroom_fraction = hr[i];
		if (trn_size(&rq, r, &e) != 0) {
			CHECK(e.code == ENG_EINFEASIBLE);
			last_min = 1L << 30;
			continue;
		}
		CHECK(r->min_gpus >= last_min);
		last_min = r->min_gpus;
		CHECK_NEAR(r->memory_headroom_fraction, hr[i], 0);
		for (int k = 0; k < r->n_plans; k++)
			CHECK(r->plans[k].memory.total_gib <=
				  80.0 * (1.0 - hr[i]) + 1e-9 &&
			      r->plans[k].memory.usable_gib <=
				  r->plans[k].memory.capacity_gib);
	}
	rq.memory_headroom_fraction = 0.6;
	CHECK(refused_naming(&rq, r, "memory_headroom_fraction"));
	rq.memory_headroom_fraction = 0;
	rq.dropout = 2;
	CHECK(refused_naming(&rq, r, "dropout"));
	free(r);
}

/* The overhead line is the request's (training.h): fixed GiB per GPU +
 * a fraction of weights, gradients, optimizer state and activations.
 * Hand values on one layout: the defaults (1.5 GiB + 5 %), none, and 3
 * GiB + 10 %. More overhead never fits more; out of range names the
 * field. And what the override is for: Llama 3 405B with Meta's v 8 on
 * 8,192 GPUs is 81.86 GiB at the default 5 % (does not fit); stating an
 * allocator that does not fragment (0) gives 78.04 GiB, which fits. */
static void test_memory_overheads(void)
{
	struct trn_request rq;
	struct trn_layout l = layout(8, 16, 64, 2);
	struct trn_plan p;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	const double fixed[] = {1.5, 0.0, 3.0}, frag[] = {0.05, 0.0, 0.1};
	long last_min = 0;

	meta_405b(&rq, 8192);
	l.vp = 8;
	l.stage_rebalance = true;
	for (int i = 0; i < 3; i++) {
		double wgoa;
		rq.memory_fixed_overhead_gib = fixed[i];
		rq.memory_fragmentation_fraction = frag[i];
		CHECK(trn_evaluate(&rq, &l, &p, &e) == 0);
		wgoa = p.memory.weights_gib + p.memory.gradients_gib +
		       p.memory.optimizer_gib + p.memory.activations_gib;
		CHECK_NEAR(p.memory.overhead_gib, fixed[i] + frag[i] * wgoa,
			   1e-12);
		CHECK_NEAR(p.memory.total_gib, wgoa + p.memory.overhead_gib,
			   1e-12);
		CHECK(p.fits == (p.memory.total_gib <= 80.0));
		printf("# 405B vp8 dp64, overhead %.1f GiB + %.0f %%: %.2f "
		       "GiB, fits %d\n",
		       fixed[i], 100.0 * frag[i], p.memory.total_gib, p.fits);
		if (i == 0)
			CHECK(!p.fits &&
			      fabs(p.memory.total_gib - 81.86) < 0.01);
		if (i == 1)
			CHECK(p.fits);
	}
	trn_request_init(&rq);
	rq.model = fx_llama3_70b();
	rq.seq_len = 4096;
	rq.gpu = fx_h100();
	rq.max_gpus = 256;
	rq.top = 3;
	for (int i = 0; r && i < 6; i++) {
		rq.memory_fragmentation_fraction = 0.1 * i;
		if (trn_size(&rq, r, &e) != 0) {
			CHECK(e.code == ENG_EINFEASIBLE);
			last_min = 1L << 30;
			continue;
		}
		CHECK(r->min_gpus >= last_min);
		last_min = r->min_gpus;
	}
	rq.memory_fragmentation_fraction = 1.5;
	CHECK(refused_naming(&rq, r, "memory_fragmentation_fraction"));
	rq.memory_fragmentation_fraction = 0.05;
	rq.memory_fixed_overhead_gib = -1;
	CHECK(refused_naming(&rq, r, "memory_fixed_overhead_gib"));
	free(r);
}

/* An offloading plan's step is the request's host rates (training.h):
 * gradients down and weights up at host_link_gbps x 0.8, the CPU
 * optimizer moving 2 x its 12 B/param of AdamW state at
 * cpu_optimizer_gbps. Llama 3 8B on one H100, optimizer offloaded:
 * doubling either rate halves its own term, so from the three steps the
 * two terms' ratio is (2 + 2) / (0.8 H) : 2 x 12 / C, 1 : 12 at H = 25,
 * C = 10 (whatever the parameter count). Out of range names the field. */
static void test_host_offload_rates(void)
{
	struct trn_request rq;
	struct trn_layout l = layout(1, 1, 1, 0);
	struct trn_plan p1, p2, p3;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	double link, cpu;

	trn_request_init(&rq);
	rq.model = fx_llama3_8b();
	rq.seq_len = 4096;
	rq.global_batch_size = 8;
	rq.gpu = fx_h100();
	rq.gpus = 1;
	l.offload = TRN_OFFLOAD_OPTIMIZER;
	rq.host_link_gbps = 25;
	rq.cpu_optimizer_gbps = 10;
	CHECK(trn_evaluate(&rq, &l, &p1, &e) == 0);
	rq.host_link_gbps = 50;
	CHECK(trn_evaluate(&rq, &l, &p2, &e) == 0);
	rq.host_link_gbps = 25;
	rq.cpu_optimizer_gbps = 20;
	CHECK(trn_evaluate(&rq, &l, &p3, &e) == 0);
	link = 2.0 * (p1.time.optimizer_s - p2.time.optimizer_s);
	cpu = 2.0 * (p1.time.optimizer_s - p3.time.optimizer_s);
	CHECK(link > 0 && cpu > 0);
	CHECK_NEAR(link + cpu, p1.time.optimizer_s, 1e-9);
	CHECK_NEAR(cpu / link, 12.0, 1e-9);
	rq.cpu_optimizer_gbps = 0;
	CHECK(refused_naming(&rq, r, "cpu_optimizer_gbps"));
	rq.cpu_optimizer_gbps = 10;
	rq.host_link_gbps = -1;
	CHECK(refused_naming(&rq, r, "host_link_gbps"));
	free(r);
}

/* The interleaved schedule's peak, rank by rank (Megatron-Core
 * schedules.py). Llama 3 405B at Meta's layout, v 8, rebalanced: 128 units
 * on 16 x 8 chunks, one layer each (rank 0's first chunk the embedding,
 * rank 15's last the head). Per token per layer per GPU, bf16, flash, no
 * dropout: (8h + 2ad + 2ad)/t + 4 ceil(k/t) d + 6f/t = (131072 + 65536)/8
 * + 512 + 319488/8 = 65,024 B; a micro-batch of 8192 tokens 532,676,608 B.
 * 16K GPUs (dp 128, m 16 = p): rank 1's warm-up 2 x 14 + 7 x 16 = 140
 * forwards reaches the step's 128, so all run before any backward and the
 * rank holds 16 x 8 layers: 68,182,605,824 B (63.5 GiB; before, 141
 * chunks, 69.9 GiB, and the plan did not fit). 8K GPUs (dp 64, m 32): 140
 * warm-up forwards + 1, 141 one-layer chunks: 75,107,401,728 B. */
static void test_interleaved_peak_405b(void)
{
	struct trn_request rq;
	struct trn_layout l = layout(8, 16, 128, 2);
	struct trn_plan p;
	struct eng_error e;
	const double mb = 8192.0 * 65024.0;

	meta_405b(&rq, 16384);
	l.vp = 8;
	l.stage_rebalance = true;
	CHECK(trn_evaluate(&rq, &l, &p, &e) == 0);
	CHECK(p.grad_accum == 16);
	CHECK_NEAR(p.memory.activations_gib * GIB_B, 128.0 * mb, 1e-12);
	CHECK(p.fits);
	printf("# 405B tp8 pp16 vp8 dp128 zero 2: %.2f GiB (activations "
	       "%.2f), MFU %.3f\n",
	       p.memory.total_gib, p.memory.activations_gib, p.mfu);
	meta_405b(&rq, 8192);
	l.dp = 64;
	CHECK(trn_evaluate(&rq, &l, &p, &e) == 0);
	CHECK(p.grad_accum == 32);
	CHECK_NEAR(p.memory.activations_gib * GIB_B, 141.0 * mb, 1e-12);
	printf("# 405B tp8 pp16 vp8 dp64 zero 2: %.2f GiB (activations "
	       "%.2f), MFU %.3f\n",
	       p.memory.total_gib, p.memory.activations_gib, p.mfu);
}

/* Interleaved chunks rank by rank. The last rank holds its earlier chunks of
 * every warm-up micro-batch, not one micro-batch. The small model (32h =
 * 32,768 B per token per layer without dropout, 512 tokens: one layer
 * 16,777,216 B a micro-batch) with 4 layers and a 128,000-token vocabulary
 * (head: 4sh = 2,097,152 + fp32 logits 4sV = 262,144,000 B), pp 2, vp 2
 * (one layer a chunk), m 4: rank 1 warms up (v-1)p = 2 forwards of chunk
 * 0, then runs chunk 1 (a layer and the head): 3 x 16,777,216 +
 * 264,241,152 = 314,572,800 B (before: one micro-batch, 297,795,584).
 * Rank 0: 4 warm-up forwards + 1, 5 layers, 83,886,080 B. With m 2 = p
 * rank 0's 4 warm-up forwards are all of the step's: it holds 2 x 2
 * layers, 67,108,864 B (before: 2.5 stages' worth, 83,886,080); rank 1's
 * 2 are not (current schedules.py; older Megatron-LM ran all
 * forwards first on every rank when m = p), so it holds 314,572,800 B as
 * with m 4. */
static void test_interleaved_chunks(void)
{
	struct trn_request rq = small_request();
	struct trn_layout l = layout(1, 2, 1, 0);

	rq.model.layers = 4;
	rq.model.vocab_size = 128000;
	rq.gpus = 2;
	rq.global_batch_size = 4;
	l.vp = 2;
	CHECK_NEAR(act_bytes(&rq, &l), 314572800.0, 1e-12);
	rq.model.vocab_size = 1000;
	CHECK_NEAR(act_bytes(&rq, &l), 83886080.0, 1e-12);
	rq.global_batch_size = 2;
	CHECK_NEAR(act_bytes(&rq, &l), 67108864.0, 1e-12);
	rq.model.vocab_size = 128000;
	CHECK_NEAR(act_bytes(&rq, &l), 314572800.0, 1e-12);
	/* Rebalanced, 6 layers: 8 units, 2 a chunk; rank 0 runs chunk 0
	 * (the embedding and 1 layer) and chunk 1 (2 layers), rank 1 chunk
	 * 0 (2 layers) and chunk 1 (1 layer and the head). m 4: rank 0's
	 * 4 warm-up forwards hold 1 + 1 + 2 + 2 layers, the next forward
	 * (chunk 0) 7 x 16,777,216 = 117,440,512 B, its peak; rank 1's peak
	 * is two chunk-0 passes after two of chunk 1 went back, 6 layers.
	 * (Before: 2.5 stages of 3 layers, 125,829,120.) */
	rq.model.vocab_size = 1000;
	rq.model.layers = 6;
	rq.global_batch_size = 4;
	l.stage_rebalance = true;
	CHECK_NEAR(act_bytes(&rq, &l), 117440512.0, 1e-12);
	/* With dropout (34h: 17,825,792 B a layer) rank 0's chunk 0 also
	 * holds the embedding's mask, 512 x 1024 = 524,288 B, for each of
	 * its passes in flight: 4 layers, 2 masks after the warm-up, 5 and 3
	 * after forward 4 (chunk 0), 5 and 4 after forward 5 (chunk 0, the
	 * peak): 91,226,112 B (before: 2.5 masks, 90,439,680). */
	rq.model.layers = 4;
	rq.dropout = 1;
	l.stage_rebalance = false;
	CHECK_NEAR(act_bytes(&rq, &l), 91226112.0, 1e-12);
}

/* A layout used above 95 % of memory is flagged; Meta's 405B layout with
 * Megatron's distributed optimizer (ZeRO-1) and rebalancing uses 96 %:
 * (5.94 + 5.94 + 0.28 + 59.53) GiB + 1.5 GiB + 5 %. */
static void test_near_full_warning(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	bool warned = false;

	meta_405b(&rq, 16384);
	pin(&rq.strategies.zero, 1);
	pin(&rq.strategies.vp, 1);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	for (int i = 0; r && i < r->n_warnings; i++)
		warned |= strstr(r->warnings[i], "above 95 %") != NULL;
	CHECK(r && r->plans[0].memory.total_gib > 0.95 * 80.0);
	CHECK(warned);
	/* the same with ZeRO-2 (70.6 GiB, 88 %) is not flagged as the
	 * plan; a listed plan above 95 % is (review s14: Llama-2-70B LoRA on
	 * 8 H100s listed a second plan at 79.97 of 80 GiB unwarned; here
	 * Llama 3 70B LoRA on 4, best 59.3 GiB, one listed at 79.9) */
	pin(&rq.strategies.zero, 2);
	for (int k = 0; k < 2; k++) {
		bool over = false, best = false, listed = false;
		if (k == 1) {
			trn_request_init(&rq);
			rq.model = fx_llama3_70b();
			rq.seq_len = 4096;
			rq.gpu = fx_h100();
			rq.gpus = 4;
			rq.method = TRN_LORA;
			rq.top = 16;
		}
		CHECK(r && trn_size(&rq, r, &e) == 0);
		for (int i = 1; r && i < r->n_plans; i++)
			over |= r->plans[i].memory.total_gib > 0.95 * 80.0;
		for (int i = 0; r && i < r->n_warnings; i++) {
			best |= strstr(r->warnings[i], "the plan uses") &&
				strstr(r->warnings[i], "above 95 %");
			listed |= strstr(r->warnings[i],
					 "of the list use above 95 % of GPU "
					 "memory") != NULL;
		}
		CHECK(r && r->plans[0].memory.total_gib < 0.95 * 80.0 && !best);
		CHECK(listed == over);
		if (k == 1)
			CHECK(over); /* the case the check is for occurs */
	}
	free(r);
}

/* Binding names what limits the plan: a plan far below capacity whose
 * neighbours all fit is not memory-bound whatever its ZeRO stage or
 * recompute; Meta's 405B layout is (at 16K GPUs its best plan, v 8 with
 * ZeRO-2, would be faster with ZeRO-1, which does not fit). */
static void test_binding(void)
{
	struct trn_request rq;
	struct trn_result *r = calloc(1, sizeof(*r));
	struct eng_error e;
	struct trn_layout l;
	struct trn_plan p;

	/* Llama 3 8B on 64 H100 with FSDP (ZeRO-3) pinned: well within
	 * memory; before, ZeRO-3 alone made it "memory". */
	trn_request_init(&rq);
	rq.model = fx_llama3_8b();
	rq.seq_len = 4096;
	rq.global_batch_size = 512;
	rq.gpu = fx_h100();
	rq.gpus = 64;
	l = layout(1, 1, 64, 3);
	l.micro_batch = 1;
	CHECK(trn_evaluate(&rq, &l, &p, &e) == 0);
	printf("# 8B zero-3 mb1: %.1f of %.0f GiB, binding %s\n",
	       p.memory.total_gib, p.memory.capacity_gib,
	       eng_binding_name(p.binding));
	CHECK(p.memory.total_gib < 0.5 * p.memory.capacity_gib);
	CHECK(p.binding != ENG_BIND_MEMORY);

	meta_405b(&rq, 16384);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	CHECK(r && r->plans[0].binding == ENG_BIND_MEMORY);
	/* with interleaving allowed only at 1, nothing memory blocks is
	 * better: the bubble (47 % of the step) binds */
	pin(&rq.strategies.vp, 1);
	pin(&rq.strategies.zero, 2);
	pin(&rq.strategies.micro_batch, 1);
	CHECK(r && trn_size(&rq, r, &e) == 0);
	CHECK(r && r->plans[0].binding == ENG_BIND_PIPELINE_BUBBLE);
	free(r);
}

/* Invariants over a grid of jobs: more headroom never fits more (the
 * fewest GPUs never falls, an infeasible job stays infeasible); dropout
 * never needs less memory than none, for any layout; with pipeline
 * parallelism, rebalanced stages never hold more activations than the
 * first stage of the plain split. */
static void test_invariants(void)
{
	struct trn_result *r = calloc(1, sizeof(*r));
	struct model_arch models[3] = {fx_llama3_8b(), fx_llama3_70b(),
				       fx_mixtral_8x7b()};
	struct hw_spec gpus[2] = {fx_h100(), fx_l40s()};
	const long seqs[2] = {2048, 8192};
	const double hr[3] = {0.0, 0.1, 0.3};
	struct eng_error e;
	int jobs = 0;

	for (int mi = 0; r && mi < 3; mi++)
		for (int gi = 0; gi < 2; gi++)
			for (int si = 0; si < 2; si++) {
				struct trn_request rq;
				long last = 0;

				trn_request_init(&rq);
				rq.model = models[mi];
				rq.seq_len = seqs[si];
				rq.gpu = gpus[gi];
				rq.max_gpus = 128;
				rq.top = 1;
				for (int h = 0; h < 3; h++) {
					rq.memory_headroom_fraction = hr[h];
					if (trn_size(&rq, r, &e) != 0) {
						CHECK(e.code ==
						      ENG_EINFEASIBLE);
						last = 1L << 40;
						continue;
					}
					CHECK(last < (1L << 40) &&
					      r->min_gpus >= last);
					last = r->min_gpus;
				}
				jobs++;
			}
	for (int pp = 2; pp <= 16; pp *= 2)
		for (int tp = 1; tp <= 8; tp *= 4)
			for (int rc = 0; rc < ENG_RC_COUNT; rc++) {
				struct trn_request rq;
				struct trn_layout l = layout(tp, pp, 2, 1), b;
				struct trn_plan on, off, rb;

				trn_request_init(&rq);
				rq.model = fx_llama3_70b();
				rq.seq_len = 4096;
				rq.global_batch_size = 64;
				rq.gpu = fx_h100();
				rq.gpus = (long)tp * pp * 2;
				l.recompute = (enum eng_recompute)rc;
				/* 80 layers on pp stages: a chunk of 5 or more
				 */
				l.recompute_layers = rc == ENG_RC_PARTIAL;
				l.flash_attention = rc != 1;
				rq.dropout = 1;
				CHECK(trn_evaluate(&rq, &l, &on, &e) == 0);
				rq.dropout = 0;
				CHECK(trn_evaluate(&rq, &l, &off, &e) == 0);
				CHECK(on.memory.total_gib >=
				      off.memory.total_gib);
				b = l;
				b.stage_rebalance = true;
				CHECK(trn_evaluate(&rq, &b, &rb, &e) == 0);
				if (trn_evaluate(&rq, &b, &rb, &e) == 0 &&
				    rb.layers_per_stage_max <=
					off.layers_per_stage_max)
					CHECK(rb.memory.activations_gib <=
					      off.memory.activations_gib);
				jobs++;
			}
	/* On every stack (per-op SAC, the loss's bytes per logit), model
	 * and TP degree: activations full <= selective <= none. */
	for (int si = 0; si < STACK_BUILTIN_COUNT; si++)
		for (int mi = 0; mi < 3; mi++)
			for (int tp = 1; tp <= 8; tp *= 2) {
				struct trn_request rq;
				struct trn_layout l = layout(tp, 1, 2, 1);
				double act[ENG_RC_COUNT];
				bool ok = true;

				trn_request_init(&rq);
				rq.stack = stack_builtin[si];
				rq.model = models[mi];
				rq.seq_len = 8192;
				rq.global_batch_size = 8;
				rq.gpu = fx_h200();
				rq.gpus = (long)tp * 2;
				for (int rc = 0; rc < ENG_RC_COUNT; rc++) {
					l.recompute = (enum eng_recompute)rc;
					l.recompute_layers =
					    rc == ENG_RC_PARTIAL
						? (int)models[mi].layers / 2
						: 0;
					act[rc] = act_bytes(&rq, &l);
					ok = ok && act[rc] > 0.0;
				}
				CHECK(ok);
				CHECK(act[ENG_RC_FULL] <=
				      act[ENG_RC_SELECTIVE]);
				CHECK(act[ENG_RC_SELECTIVE] <=
				      act[ENG_RC_NONE]);
				CHECK(act[ENG_RC_FULL] < act[ENG_RC_PARTIAL] &&
				      act[ENG_RC_PARTIAL] < act[ENG_RC_NONE]);
				jobs++;
			}
	printf("# invariants held over %d jobs and layouts\n", jobs);
	free(r);
}

int main(void)
{
	RUN(test_activations_dropout);
	RUN(test_scores_dropout);
	RUN(test_tp_sp_division);
	RUN(test_sac_op_memory);
	RUN(test_dropout_time_consistent);
	RUN(test_zero2_with_pp);
	RUN(test_zero_over_cp);
	RUN(test_stage_rebalance);
	RUN(test_meta_405b_fits);
	RUN(test_partial_recompute_hand);
	RUN(test_partial_recompute_monotone);
	RUN(test_partial_recompute_search);
	RUN(test_partial_recompute_end_chunks);
	RUN(test_interleaved_peak_405b);
	RUN(test_interleaved_chunks);
	RUN(test_headroom);
	RUN(test_memory_overheads);
	RUN(test_host_offload_rates);
	RUN(test_near_full_warning);
	RUN(test_binding);
	RUN(test_invariants);
	return testlib_finish();
}

/* test_engine_moe_dispatch.c - the expert all-to-all's copies
 * (engine/moe_dispatch.h, docs/MODEL.md §4 "Expert all-to-all"): hand
 * values, the group-limited router against exhaustive enumeration, and
 * the step's all-to-all under DeepEP and FP8 dispatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_fixtures.h"
#include "moe_dispatch.h"
#include "testlib.h"
#include "training.h"

/* The chance that a token hits experts [0, bin) under a router of `e`
 * experts in `g_n` groups, `g_k` of them chosen uniformly, then `k`
 * experts uniformly among the chosen groups' - by enumerating every group
 * choice and every expert choice (e <= 16). */
static double enumerate_hit(int e, int k, int g_n, int g_k, int bin)
{
	int per = e / g_n;
	double hits = 0.0, all = 0.0;

	for (unsigned gm = 0; gm < (1u << g_n); gm++) {
		unsigned allowed = 0;
		double in = 0.0, n = 0.0;

		if (__builtin_popcount(gm) != g_k)
			continue;
		for (int gi = 0; gi < g_n; gi++)
			if (gm & (1u << gi))
				allowed |= ((1u << per) - 1u) << (gi * per);
		for (unsigned em = 0; em < (1u << e); em++) {
			if ((em & ~allowed) || __builtin_popcount(em) != k)
				continue;
			n++;
			in += (em & ((1u << bin) - 1u)) != 0;
		}
		hits += in / n;
		all++;
	}
	return hits / all;
}

static void test_bin_hit_hand_values(void)
{
	const struct moe_routing plain = {8, 2, 0, 0}, dsv3 = {256, 8, 8, 4};

	/* one expert of 8, top-2: 1 - C(7,2)/C(8,2) = 1 - 21/28 */
	CHECK_NEAR(moe_bin_hit(&plain, 1), 0.25, 1e-12);
	CHECK_NEAR(moe_bin_hit(&plain, 8), 1.0, 1e-12);
	/* DeepSeek-V3 at EP 64 on 8 nodes: a node's 32 experts are one
	 * group, chosen with chance 4/8, then 8 of the 128 experts of the
	 * chosen groups miss it with C(96,8)/C(128,8): 0.5 x (1 - 0.0927) */
	CHECK_NEAR(moe_bin_hit(&dsv3, 32), 0.45362636555321256, 1e-9);
	/* a rank's 4 experts: 0.5 x (1 - C(124,8)/C(128,8)) */
	CHECK_NEAR(moe_bin_hit(&dsv3, 4), 0.11499015748031496, 1e-9);
	/* two groups: sum over the hypergeometric count of them chosen */
	CHECK_NEAR(moe_bin_hit(&dsv3, 64), 0.7320524468586447, 1e-9);
	/* nodes hit never exceed the groups a token may use */
	CHECK(8.0 * moe_bin_hit(&dsv3, 32) <= 4.0);
}

static void test_bin_hit_enumerated(void)
{
	int cases = 0;

	for (int g_n = 1; g_n <= 4; g_n *= 2)
		for (int g_k = 1; g_k <= g_n; g_k++)
			for (int k = 1; k <= g_k * (8 / g_n); k++)
				for (int bin = 1; bin <= 8; bin *= 2) {
					struct moe_routing r = {8, k, g_n, g_k};
					double want =
					    enumerate_hit(8, k, g_n, g_k, bin);

					CHECK_NEAR(moe_bin_hit(&r, bin), want,
						   1e-9);
					cases++;
				}
	for (int g_k = 1; g_k <= 4; g_k++)
		for (int bin = 1; bin <= 16; bin *= 2) {
			struct moe_routing r = {16, 3, 4, g_k};

			if (g_k * 4 < 3)
				continue;
			CHECK_NEAR(moe_bin_hit(&r, bin),
				   enumerate_hit(16, 3, 4, g_k, bin), 1e-9);
			cases++;
		}
	printf("# %d routers and blocks against enumeration\n", cases);
}

static void test_copies(void)
{
	const struct moe_routing q = {128, 8, 0, 0}, dsv3 = {256, 8, 8, 4};
	struct moe_copies a, d;

	/* alltoall: top_k copies over the ranks alike, self excluded */
	moe_dispatch_copies(&q, MOE_DISPATCH_ALLTOALL, 16, 8, &a);
	CHECK_NEAR(a.intra, 8.0 * 7.0 / 16.0, 1e-12);
	CHECK_NEAR(a.inter, 8.0 * 8.0 / 16.0, 1e-12);
	/* DeepEP on one node of 8 (Qwen3-30B-A3B at EP 8): one copy per
	 * other rank holding a chosen expert, 7 x (1 - C(112,8)/C(128,8)) */
	moe_dispatch_copies(&q, MOE_DISPATCH_DEEPEP, 8, 8, &d);
	CHECK_NEAR(d.intra, 4.671937283460551, 1e-9);
	CHECK(d.inter == 0.0);
	/* DeepSeek-V3 at EP 64 over 8 nodes: 7 x 0.4536 node copies over
	 * the NICs against alltoall's 8 x 56/64 */
	moe_dispatch_copies(&dsv3, MOE_DISPATCH_DEEPEP, 64, 8, &d);
	moe_dispatch_copies(&dsv3, MOE_DISPATCH_ALLTOALL, 64, 8, &a);
	CHECK_NEAR(d.inter, 7.0 * 0.45362636555321256, 1e-9);
	CHECK_NEAR(a.inter, 7.0, 1e-12);
	CHECK_NEAR(d.intra, 8.0 * 7.0 * 0.11499015748031496, 1e-9);

	/* over a grid: DeepEP never sends more over the NICs, and with no
	 * NIC in the group no more over the node's link */
	for (int ep = 2; ep <= 256; ep *= 2)
		for (int local = 1; local <= 8; local *= 2)
			for (int e = ep; e <= 512; e *= 2)
				for (int k = 1; k <= 8 && k <= e; k++) {
					struct moe_routing r = {e, k, 0, 0};

					moe_dispatch_copies(
					    &r, MOE_DISPATCH_ALLTOALL, ep,
					    local, &a);
					moe_dispatch_copies(&r,
							    MOE_DISPATCH_DEEPEP,
							    ep, local, &d);
					CHECK(d.inter <= a.inter + 1e-9);
					if (local >= ep)
						CHECK(d.intra <=
						      a.intra + 1e-9);
				}
}

/* The step's all-to-all: FP8 dispatch moves (1 + 4/128 + 2) / 4 of the
 * 16-bit bytes; DeepEP across nodes the NIC copies' ratio; both never
 * slower. */
static void test_step_all_to_all(void)
{
	struct trn_request rq;
	struct trn_layout l;
	struct trn_plan base, fp8, deep;
	struct eng_error e;

	trn_request_init(&rq);
	rq.model = fx_mixtral_8x7b();
	rq.gpu = fx_h100();
	rq.gpu.memory_gib = 1e4; /* the time terms, not the fit */
	rq.seq_len = 4096;
	rq.gpus = 32;
	rq.global_batch_size = 64;
	memset(&l, 0, sizeof(l));
	l.tp = l.pp = l.cp = l.vp = 1;
	l.dp = 32;
	l.ep = 8;
	l.micro_batch = 1;
	l.flash_attention = true;
	l.recompute = ENG_RC_NONE;
	CHECK(trn_evaluate(&rq, &l, &base, &e) == 0);
	rq.stack.ep_dispatch_fp8 = true;
	CHECK(trn_evaluate(&rq, &l, &fp8, &e) == 0);
	CHECK(base.time.ep_comm_s > 0.0);
	/* bytes x (1 + 4/128 + 2) / 4; the per-collective latency stays */
	CHECK(fp8.time.ep_comm_s >=
	      (1.0 + 4.0 / 128.0 + 2.0) / 4.0 * base.time.ep_comm_s);
	CHECK(fp8.time.ep_comm_s < base.time.ep_comm_s);
	CHECK(fp8.time.step_s <= base.time.step_s);
	rq.stack.ep_dispatch_fp8 = false;
	rq.stack.ep_dispatcher = MOE_DISPATCH_DEEPEP;
	CHECK(trn_evaluate(&rq, &l, &deep, &e) == 0);
	/* 8 experts, top-2, one node of 8 ranks: DeepEP's copies to other
	 * ranks 7 x 2/8 = 1.75 equal alltoall's 2 x 7/8 (one expert a rank:
	 * nothing to merge) */
	CHECK_NEAR(deep.time.ep_comm_s, base.time.ep_comm_s,
		   1e-9 * base.time.ep_comm_s);
	/* across nodes (64 experts, EP 32 over 4 nodes of 8): DeepEP's NIC
	 * copies 3 x (1 - C(48,2)/C(64,2)) = 1.321 against alltoall's
	 * 2 x 24/32 = 1.5, and its NVLink copies (4 x 7 x (1 - C(62,2)/
	 * C(64,2)) = 1.74 at 450 GB/s) stay below the NICs' time */
	l.ep = 32;
	rq.model.moe.experts = 64;
	rq.stack.ep_dispatcher = MOE_DISPATCH_ALLTOALL;
	CHECK(trn_evaluate(&rq, &l, &base, &e) == 0);
	rq.stack.ep_dispatcher = MOE_DISPATCH_DEEPEP;
	CHECK(trn_evaluate(&rq, &l, &deep, &e) == 0);
	CHECK(deep.time.ep_comm_s < base.time.ep_comm_s);
	CHECK(deep.time.ep_comm_s >=
	      (3.0 * (1.0 - 1128.0 / 2016.0)) / 1.5 * base.time.ep_comm_s);
	CHECK(deep.time.step_s <= base.time.step_s);
}

int main(void)
{
	RUN(test_bin_hit_hand_values);
	RUN(test_bin_hit_enumerated);
	RUN(test_copies);
	RUN(test_step_all_to_all);
	return testlib_finish();
}

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

/* Calls f(mask, weight, ctx) for every set of experts a token may be
 * routed to, with its chance: every choice of g_k of the g_n groups alike,
 * then every choice of k of their experts alike (e <= 16). */
static void each_route(int e, int k, int g_n, int g_k,
		       void (*f)(unsigned, double, void *), void *ctx)
{
	int per = e / g_n;
	double n_gm = 0.0;

	for (unsigned gm = 0; gm < (1u << g_n); gm++)
		n_gm += __builtin_popcount(gm) == g_k;
	for (unsigned gm = 0; gm < (1u << g_n); gm++) {
		unsigned allowed = 0;
		double n = 0.0;

		if (__builtin_popcount(gm) != g_k)
			continue;
		for (int gi = 0; gi < g_n; gi++)
			if (gm & (1u << gi))
				allowed |= ((1u << per) - 1u) << (gi * per);
		for (unsigned em = 0; em < (1u << e); em++)
			n += !(em & ~allowed) && __builtin_popcount(em) == k;
		for (unsigned em = 0; em < (1u << e); em++)
			if (!(em & ~allowed) && __builtin_popcount(em) == k)
				f(em, 1.0 / (n_gm * n), ctx);
	}
}

struct block_ctx {
	unsigned block;
	double hit;
};

static void hit_block(unsigned em, double w, void *ctx)
{
	struct block_ctx *b = ctx;

	b->hit += w * ((em & b->block) != 0);
}

/* The chance a token hits experts [lo, hi), by enumeration. */
static double enumerate_hit(int e, int k, int g_n, int g_k, int lo, int hi)
{
	struct block_ctx b = {((1u << hi) - 1u) & ~((1u << lo) - 1u), 0.0};

	each_route(e, k, g_n, g_k, hit_block, &b);
	return b.hit;
}

/* Expected copies a sender puts on the node's link and on the NICs, mean
 * over the ep senders, by enumeration: ranks of `local` a node (the last
 * node may hold fewer), e / ep experts a rank in order. */
struct copies_ctx {
	int e, ep, local, deepep;
	double intra, inter;
};

static void count_copies(unsigned em, double w, void *ctx)
{
	struct copies_ctx *c = ctx;
	int per = c->e / c->ep;

	for (int src = 0; src < c->ep; src++) {
		int node = src / c->local;

		for (int dst = 0; dst < c->ep; dst++) {
			int dn = dst / c->local;
			unsigned mine = ((1u << per) - 1u) << (dst * per);
			int n_hit = __builtin_popcount(em & mine);

			if (dst == src)
				continue;
			if (!c->deepep) {
				/* a copy per chosen expert */
				if (dn == node)
					c->intra += w * n_hit / c->ep;
				else
					c->inter += w * n_hit / c->ep;
			} else if (dn == node) {
				c->intra += w * (n_hit > 0) / c->ep;
			}
		}
		if (!c->deepep)
			continue;
		/* DeepEP across nodes: one NIC copy a hit node, forwarded to
		 * its other hit ranks from a receiver drawn alike among the
		 * node's ranks */
		for (int n0 = 0; n0 * c->local < c->ep; n0++) {
			int lo = n0 * c->local,
			    hi = lo + c->local < c->ep ? lo + c->local : c->ep;
			int hits = 0;

			if (n0 == node)
				continue;
			for (int dst = lo; dst < hi; dst++)
				hits += (em & (((1u << per) - 1u)
					       << (dst * per))) != 0;
			if (hits == 0)
				continue;
			c->inter += w / c->ep;
			c->intra +=
			    w * hits * (hi - lo - 1.0) / (hi - lo) / c->ep;
		}
	}
}

static void test_bin_hit_hand_values(void)
{
	const struct moe_routing plain = {8, 2, 0, 0}, dsv3 = {256, 8, 8, 4};

	/* one expert of 8, top-2: 1 - C(7,2)/C(8,2) = 1 - 21/28 */
	CHECK_NEAR(moe_block_hit(&plain, 0, 1), 0.25, 1e-12);
	CHECK_NEAR(moe_block_hit(&plain, 0, 8), 1.0, 1e-12);
	/* DeepSeek-V3 at EP 64 on 8 nodes: a node's 32 experts are one
	 * group, chosen with chance 4/8, then 8 of the 128 experts of the
	 * chosen groups miss it with C(96,8)/C(128,8): 0.5 x (1 - 0.0927) */
	CHECK_NEAR(moe_block_hit(&dsv3, 0, 32), 0.45362636555321256, 1e-9);
	/* a rank's 4 experts: 0.5 x (1 - C(124,8)/C(128,8)) */
	CHECK_NEAR(moe_block_hit(&dsv3, 0, 4), 0.11499015748031496, 1e-9);
	/* two groups: sum over the hypergeometric count of them chosen */
	CHECK_NEAR(moe_block_hit(&dsv3, 0, 64), 0.7320524468586447, 1e-9);
	/* nodes hit never exceed the groups a token may use */
	CHECK(8.0 * moe_block_hit(&dsv3, 0, 32) <= 4.0);
}

static void test_bin_hit_enumerated(void)
{
	int cases = 0;

	/* every block of every router of 8 and 12 experts, aligned to the
	 * groups or not (review s22a F2: a block across groups had been
	 * taken as unlimited, up to 0.62 off) */
	for (int e = 8; e <= 12; e += 4)
		for (int g_n = 1; g_n <= e; g_n++) {
			if (e % g_n)
				continue;
			for (int g_k = 1; g_k <= g_n; g_k++)
				for (int k = 1; k <= g_k * (e / g_n); k++)
					for (int lo = 0; lo < e; lo++)
						for (int hi = lo + 1; hi <= e;
						     hi++) {
							struct moe_routing r = {
							    e, k, g_n, g_k};

							CHECK_NEAR(
							    moe_block_hit(
								&r, lo, hi),
							    enumerate_hit(
								e, k, g_n, g_k,
								lo, hi),
							    1e-9);
							cases++;
						}
		}
	printf("# %d routers and blocks against enumeration\n", cases);
}

/* Whole and partial nodes, with and without groups, both dispatchers:
 * moe_dispatch_copies against enumeration (review s22a F3: ep 12 on
 * nodes of 8 had half the NIC copies). */
static void test_copies_enumerated(void)
{
	static const int layouts[][2] = {{4, 4},  {4, 2},  {6, 4}, {6, 1},
					 {12, 8}, {12, 5}, {3, 2}, {12, 12}};
	int cases = 0;

	for (size_t li = 0; li < sizeof(layouts) / sizeof(*layouts); li++)
		for (int g_n = 1; g_n <= 6; g_n++) {
			if (12 % g_n)
				continue;
			for (int g_k = 1; g_k <= g_n; g_k++)
				for (int k = 1; k <= 4 && k <= g_k * (12 / g_n);
				     k++)
					for (int d = 0; d < MOE_DISPATCH_COUNT;
					     d++) {
						int ep = layouts[li][0],
						    loc = layouts[li][1];
						struct moe_routing r = {
						    12, k, g_n, g_k};
						struct copies_ctx c = {
						    12, ep, loc, d, 0, 0};
						struct moe_copies got;

						each_route(12, k, g_n, g_k,
							   count_copies, &c);
						moe_dispatch_copies(
						    &r, (enum moe_dispatcher)d,
						    ep, loc, &got);
						CHECK_NEAR(got.intra, c.intra,
							   1e-9);
						CHECK_NEAR(got.inter, c.inter,
							   1e-9);
						cases++;
					}
		}
	printf("# %d layouts, routers and dispatchers against "
	       "enumeration\n",
	       cases);
}

/* 2,048 groups (C(2048, 1024) is far past DBL_MAX): finite, in [0, 1]
 * (review s22a F1: NaN, and a plan whose all-to-all cost nothing) */
static void test_many_groups_finite(void)
{
	const struct moe_routing r = {2048, 8, 2048, 1024};
	struct moe_copies c;

	for (long bin = 1; bin <= 2048; bin *= 4) {
		double p = moe_block_hit(&r, 0, bin);

		CHECK(isfinite(p) && p >= 0.0 && p <= 1.0);
	}
	moe_dispatch_copies(&r, MOE_DISPATCH_DEEPEP, 64, 8, &c);
	CHECK(isfinite(c.intra) && isfinite(c.inter) && c.intra > 0.0 &&
	      c.inter > 0.0);
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
 * 16-bit bytes, never slower; DeepEP across nodes here the NIC copies'
 * ratio. DeepEP is not faster everywhere: its forwarding loads the
 * node's link, which can outlast the NIC copies it saves (reviews s22a
 * F8, s22b G4: up to 1.16x at small top_k or with groups on 72-GPU
 * nodes). */
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

/* The search keeps DeepEP's copies per request (training_int.h
 * a2a_memo): each plan it returns times exactly as the same layout alone
 * in a request of its own (review s22c H6). */
static void test_search_copies_kept_alike(void)
{
	static struct trn_result res;
	struct trn_request rq;
	struct eng_error e;
	int plans = 0;

	trn_request_init(&rq);
	rq.model = fx_mixtral_8x7b();
	rq.model.moe.experts = 64;
	rq.model.moe.router_groups = 8;
	rq.model.moe.router_group_top_k = 2;
	rq.gpu = fx_h100();
	rq.seq_len = 4096;
	rq.max_gpus = 512;
	rq.train_tokens = 1e11;
	rq.top = 10;
	rq.stack.ep_dispatcher = MOE_DISPATCH_DEEPEP;
	rq.strategies.ep.n = 3; /* across nodes, several (ep, local) */
	rq.strategies.ep.v[0] = 8;
	rq.strategies.ep.v[1] = 16;
	rq.strategies.ep.v[2] = 32;
	CHECK(trn_size(&rq, &res, &e) == 0);
	for (int i = 0; i < res.n_plans; i++) {
		struct trn_request one = rq;
		struct trn_plan p;

		one.gpus = res.plans[i].gpus;
		CHECK(trn_evaluate(&one, &res.plans[i].layout, &p, &e) == 0);
		CHECK(p.time.step_s == res.plans[i].time.step_s &&
		      p.time.ep_comm_s == res.plans[i].time.ep_comm_s);
		plans += res.plans[i].layout.ep > 1;
	}
	CHECK(plans > 0);
	printf("# %d of %d plans with expert parallelism, each timed alike "
	       "alone\n",
	       plans, res.n_plans);
}

/* The copies' cache (moe_dispatch.h): keys that hash to one slot and its
 * neighbours each read back their own copies, a read comes from the
 * cache, and a full cache still answers exactly (review s22d I6: these
 * had been covered only through t_stacks). */
static void test_copies_cache(void)
{
	static struct moe_copies_cache cache;
	/* (1, 4) and (16, 87) hash alike (131 + 4 = 16 x 131 + 87 - 2048);
	 * (1, 5) hashes to the slot (16, 87) probed on to */
	const long keys[][2] = {{1, 4}, {16, 87}, {1, 5}, {8, 8}, {64, 8}};
	const int n = (int)(sizeof(keys) / sizeof(keys[0]));
	struct moe_routing r = {256, 8, 8, 4};
	struct moe_copies got, want;
	int stored = 0;

	memset(&cache, 0, sizeof(cache));
	for (int i = 0; i < n; i++)
		moe_copies_cached(&cache, &r, MOE_DISPATCH_DEEPEP, keys[i][0],
				  keys[i][1], &got);
	for (int i = 0; i < n; i++) {
		moe_dispatch_copies(&r, MOE_DISPATCH_DEEPEP, (double)keys[i][0],
				    (double)keys[i][1], &want);
		moe_copies_cached(&cache, &r, MOE_DISPATCH_DEEPEP, keys[i][0],
				  keys[i][1], &got);
		CHECK(got.intra == want.intra && got.inter == want.inter);
	}
	for (int s = 0; s < MOE_COPIES_CACHE_SLOTS; s++)
		stored += cache.at[s].ep != 0;
	CHECK(stored == n);
	CHECK(cache.at[135].ep == 1 && cache.at[135].local == 4);
	CHECK(cache.at[136].ep == 16 && cache.at[136].local == 87);
	CHECK(cache.at[137].ep == 1 && cache.at[137].local == 5);
	/* a read is the cache's: a planted value comes back */
	cache.at[137].copies.inter = -1.0;
	moe_copies_cached(&cache, &r, MOE_DISPATCH_DEEPEP, 1, 5, &got);
	CHECK(got.inter == -1.0);

	/* full: ep 1..2048 at one rank a node fill every slot (131 is odd,
	 * so ep x 131 + 1 takes each residue once); more keys are made
	 * again, exactly, and change nothing */
	struct moe_routing wide = {4096, 8, 0, 0};
	memset(&cache, 0, sizeof(cache));
	for (long ep = 1; ep <= MOE_COPIES_CACHE_SLOTS; ep++)
		moe_copies_cached(&cache, &wide, MOE_DISPATCH_ALLTOALL, ep, 1,
				  &got);
	stored = 0;
	for (int s = 0; s < MOE_COPIES_CACHE_SLOTS; s++)
		stored += cache.at[s].ep != 0;
	CHECK(stored == MOE_COPIES_CACHE_SLOTS);
	for (long ep = 2049; ep <= 2051; ep++) {
		moe_dispatch_copies(&wide, MOE_DISPATCH_ALLTOALL, (double)ep,
				    1.0, &want);
		moe_copies_cached(&cache, &wide, MOE_DISPATCH_ALLTOALL, ep, 1,
				  &got);
		CHECK(got.intra == want.intra && got.inter == want.inter);
	}
	moe_dispatch_copies(&wide, MOE_DISPATCH_ALLTOALL, 700.0, 1.0, &want);
	moe_copies_cached(&cache, &wide, MOE_DISPATCH_ALLTOALL, 700, 1, &got);
	CHECK(got.intra == want.intra && got.inter == want.inter);
}

/* The node width that tiles EP groups (moe_dispatch.h), by hand. */
static void test_node_tiling_width(void)
{
	/* EP 64 on 72-GPU nodes: 64 a node (MODEL.md §4, review s22c H3) */
	CHECK(moe_node_tiling_width(64, 1, 72) == 64);
	/* a span that divides the node: the node itself */
	CHECK(moe_node_tiling_width(8, 1, 72) == 72);
	CHECK(moe_node_tiling_width(8, 2, 8) == 8);
	/* a span larger than the node: a divisor of it, >= half the node */
	CHECK(moe_node_tiling_width(96, 1, 72) == 48);
	CHECK(moe_node_tiling_width(128, 1, 72) == 64);
	/* span 13 on 8: 8..4 divide none of it (review s22d I2) */
	CHECK(moe_node_tiling_width(13, 1, 8) == 0);
	/* whole tp x cp groups: span 24 of units 6 on 72 is 72 (72 = 3 x
	 * 24); span 40 of units 10 on 72: 40 (40 >= 36, a multiple of 10) */
	CHECK(moe_node_tiling_width(24, 6, 72) == 72);
	CHECK(moe_node_tiling_width(40, 10, 72) == 40);
	/* units of 7 on 8: only 7 holds whole units, and it tiles spans of
	 * 14 and 21; units of 5: only 5; units of 3: 6 */
	CHECK(moe_node_tiling_width(14, 7, 8) == 7);
	CHECK(moe_node_tiling_width(21, 7, 8) == 7);
	CHECK(moe_node_tiling_width(10, 5, 8) == 5);
	CHECK(moe_node_tiling_width(15, 5, 8) == 5);
	CHECK(moe_node_tiling_width(12, 3, 8) == 6);
	/* degenerate input answers none */
	CHECK(moe_node_tiling_width(0, 1, 8) == 0);
	CHECK(moe_node_tiling_width(8, 0, 8) == 0);
}

int main(void)
{
	RUN(test_bin_hit_hand_values);
	RUN(test_bin_hit_enumerated);
	RUN(test_copies_enumerated);
	RUN(test_many_groups_finite);
	RUN(test_copies);
	RUN(test_step_all_to_all);
	RUN(test_search_copies_kept_alike);
	RUN(test_copies_cache);
	RUN(test_node_tiling_width);
	return testlib_finish();
}

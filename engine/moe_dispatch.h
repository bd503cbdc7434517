/* moe_dispatch.h - how many copies of one token an expert-parallel
 * all-to-all moves, and over which link (docs/MODEL.md §4 "Expert
 * all-to-all"). Balanced routing: each token's top_k experts are drawn
 * uniformly from the experts its router may pick. Pure: no I/O, no
 * globals.
 */
#ifndef GPUSIZER_ENGINE_MOE_DISPATCH_H
#define GPUSIZER_ENGINE_MOE_DISPATCH_H

/* What a token dispatcher sends (stack field ep_dispatcher).
 *  ALLTOALL: one copy per routed expert (Megatron-Core's default
 *   MoEAlltoAllTokenDispatcher permutes a row per (token, expert) pair
 *   before its all-to-all), wherever the experts sit.
 *  DEEPEP: one copy per destination rank inside a node, and across nodes
 *   one copy per destination node over the NICs, which the receiving GPU
 *   forwards over NVLink to the node's other ranks that need it
 *   (deepseek-ai/DeepEP's intranode and internode kernels; DeepSeek-V3
 *   report §3.2.2). */
enum moe_dispatcher {
	MOE_DISPATCH_ALLTOALL,
	MOE_DISPATCH_DEEPEP,
	MOE_DISPATCH_COUNT
};
extern const char *const moe_dispatcher_names[MOE_DISPATCH_COUNT + 1];

/* Bytes per value of a token dispatched in FP8 (stack ep_dispatch_fp8):
 * one E4M3 byte plus a float32 scale per 128 channels (DeepEP's FP8
 * dispatch; DeepSeek-V3 §3.3's 1x128 activation tiles). */
#define MOE_FP8_DISPATCH_BYTES (1.0 + 4.0 / 128.0)

/* A router: top_k of experts, drawn from group_top_k of groups equal
 * groups of consecutive experts (DeepSeek's n_group / topk_group;
 * Megatron-Core --moe-router-num-groups / --moe-router-group-topk).
 * groups 0 or 1, or group_top_k >= groups: no group limit. */
struct moe_routing {
	double experts, top_k, groups, group_top_k;
};

/* Expected copies of one of its tokens a rank sends, in one direction,
 * over the node's own link and over the NICs. */
struct moe_copies {
	double intra, inter;
};

/* The chance that a token's top_k experts include at least one of the
 * experts [lo, hi) (experts placed in order: a rank's, a node's),
 * exactly, for a block inside a group, across groups or holding whole
 * ones. */
double moe_block_hit(const struct moe_routing *r, long lo, long hi);

/* Copies for an all-to-all over ep ranks, `local` of them on each node
 * (ep / local whole nodes, then the rest of the ranks on one more; the
 * experts, experts / ep a rank, in rank order), sent by dispatcher d:
 * the mean over the group's senders. */
void moe_dispatch_copies(const struct moe_routing *r, enum moe_dispatcher d,
			 double ep, double local, struct moe_copies *out);

/* Copies already made for one routing and dispatcher, by (ep, ranks a
 * node), in open addressing: a search times some dozens of pairs, up to
 * ~1,500 in range, and DeepEP's take time in the router's groups
 * (reviews s22b G1, s22c H1, s22d I4). A zeroed cache is empty; the
 * caller owns it (no heap) and keeps one routing and dispatcher in it. */
#define MOE_COPIES_CACHE_SLOTS 2048
struct moe_copies_cache {
	struct {
		long ep, local; /* ep 0: empty */
		struct moe_copies copies;
	} at[MOE_COPIES_CACHE_SLOTS];
};

/* moe_dispatch_copies(r, d, ep, local) from the cache, or made and put
 * in it; a full cache makes them again (exact either way). */
void moe_copies_cached(struct moe_copies_cache *cache,
		       const struct moe_routing *r, enum moe_dispatcher d,
		       long ep, long local, struct moe_copies *out);

/* A node width, at least half of gpn, whose nodes groups of `span`
 * consecutive ranks tile (a multiple of a smaller span, a divisor of a
 * larger one) and that keeps whole groups of `unit` ranks (tp x cp) on a
 * node; 0 where none does (review s22d I2: span 13 on 8 had suggested
 * 1). The all-to-all's copies assume node-aligned EP groups. */
long moe_node_tiling_width(long span, long unit, long gpn);

#endif

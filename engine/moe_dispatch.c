/* moe_dispatch.c - see moe_dispatch.h. */
#include <math.h>
#include <stddef.h>

#include "moe_dispatch.h"

const char *const moe_dispatcher_names[MOE_DISPATCH_COUNT + 1] = {
    "alltoall", "deepep", NULL};

/* ln |Gamma(x)| without lgamma's global sign (signgam: the daemon sizes
 * on several threads) */
static double lg(double x)
{
	int sign;

	return lgamma_r(x, &sign);
}

/* C(s - b, k) / C(s, k): the chance that k of s items drawn without
 * replacement miss a set of b of them; as a product for the top_k of
 * real routers (exact to rounding, where the logarithms lose 1e-9 at
 * thousands of experts: review s22b G3), in logarithms beyond. */
static double miss_all(double s, double b, double k)
{
	double p = 1.0;

	if (b <= 0.0)
		return 1.0;
	if (s - b < k)
		return 0.0;
	if (k > 256.0)
		return exp(lg(s - b + 1.0) - lg(s - b - k + 1.0) +
			   lg(s - k + 1.0) - lg(s + 1.0));
	for (double i = 0.0; i < k; i++)
		p *= (s - b - i) / (s - i);
	return p;
}

/* ln C(n, r); -inf where r is out of 0..n (no such choice) */
static double lchoose(double n, double r)
{
	if (r < 0.0 || r > n)
		return -INFINITY;
	return lg(n + 1.0) - lg(r + 1.0) - lg(n - r + 1.0);
}

static int limited(const struct moe_routing *r)
{
	return r->groups > 1.0 && r->group_top_k < r->groups;
}

double moe_block_hit(const struct moe_routing *r, long lo, long hi)
{
	double e = r->experts, k = r->top_k, g_n = r->groups,
	       g_k = r->group_top_k;
	long g, first, last;
	double o[2] = {0.0, 0.0}, s, all, miss = 0.0;
	int parts = 0;
	long whole = 0;

	if (lo < 0)
		lo = 0;
	if ((double)hi > e)
		hi = (long)e;
	if (hi <= lo)
		return 0.0;
	if ((double)(hi - lo) >= e)
		return 1.0;
	if (!limited(r))
		return 1.0 - miss_all(e, (double)(hi - lo), k);
	/* the groups the block touches: whole ones, and at most two it
	 * holds part of (its first and last) */
	g = (long)(e / g_n);
	first = lo / g;
	last = (hi - 1) / g;
	for (long grp = first; grp <= last; grp++) {
		long a = grp * g > lo ? grp * g : lo;
		long b = (grp + 1) * g < hi ? (grp + 1) * g : hi;

		if (b - a == g)
			whole++;
		else
			o[parts++] = (double)(b - a);
	}
	s = g_k * (double)g; /* experts a token's router may pick */
	all = lchoose(g_n, g_k);
	/* each way the token's g_k groups can take x of the block's first
	 * part group, y of its last and i of its whole groups; the weights
	 * in logarithms (C(g_n, g_k) passes DBL_MAX near g_n 1030) */
	for (int x = 0; x <= (parts > 0 ? 1 : 0); x++)
		for (int y = 0; y <= (parts > 1 ? 1 : 0); y++)
			for (long i = 0; i <= whole; i++) {
				double w = lchoose((double)whole, (double)i) +
					   lchoose(g_n - (double)whole - parts,
						   g_k - (double)(i + x + y)) -
					   all;

				if (isinf(w))
					continue;
				miss +=
				    exp(w) * miss_all(s,
						      (double)i * (double)g +
							  x * o[0] + y * o[1],
						      k);
			}
	return fmin(1.0, fmax(0.0, 1.0 - miss));
}

/* The chance a rank's experts [lo, hi) are hit, remembered by where the
 * block starts within its group: ranks of one width at the same offset
 * are hit alike. */
struct hit_memo {
	long width, offset[32];
	double p[32];
	int n;
};

static double memo_hit(const struct moe_routing *r, struct hit_memo *m, long lo,
		       long hi)
{
	long g = limited(r) ? (long)(r->experts / r->groups) : 1;
	long off = lo % g;
	double p;

	if (hi - lo != m->width) {
		m->width = hi - lo;
		m->n = 0;
	}
	for (int i = 0; i < m->n; i++)
		if (m->offset[i] == off)
			return m->p[i];
	p = moe_block_hit(r, lo, hi);
	if (m->n < 32) {
		m->offset[m->n] = off;
		m->p[m->n++] = p;
	}
	return p;
}

void moe_dispatch_copies(const struct moe_routing *r, enum moe_dispatcher d,
			 double ep, double local, struct moe_copies *out)
{
	long n = (long)ep, loc = (long)local, e = (long)r->experts;
	double intra = 0.0, inter = 0.0;
	struct hit_memo ranks = {.width = -1}, nodes = {.width = -1};

	out->intra = out->inter = 0.0;
	if (n <= 1)
		return;
	if (loc > n)
		loc = n;
	if (loc < 1)
		loc = 1;
	/* the group's nodes: n / loc whole ones, then the rest of its
	 * ranks on one more; each sender's copies averaged over the group */
	for (long start = 0; start < n; start += loc) {
		long nb = start + loc <= n ? loc : n - start;
		double fb = (double)nb, fn = (double)n;

		if (d != MOE_DISPATCH_DEEPEP) {
			/* each of the top_k copies lands on any rank alike:
			 * a sender here sends (nb - 1) / n of them on its
			 * node and (n - nb) / n across */
			intra += fb * r->top_k * (fb - 1.0) / fn;
			inter += fb * r->top_k * (fn - fb) / fn;
			continue;
		}
		/* DeepEP: a sender here sends one copy to each other rank
		 * of its node a chosen expert sits on; each sender
		 * elsewhere sends this node one copy over the NICs when any
		 * of its ranks is chosen, and the receiving GPU forwards it
		 * to the node's other such ranks: this node's link carries
		 * (nb - 1) / nb of its ranks' hits for all n senders */
		{
			double hits = 0.0;

			for (long rk = start; rk < start + nb; rk++)
				hits += memo_hit(r, &ranks, rk * e / n,
						 (rk + 1) * e / n);
			intra += hits * (fb - 1.0) / fb * fn;
			inter += (fn - fb) * memo_hit(r, &nodes, start * e / n,
						      (start + nb) * e / n);
		}
	}
	out->intra = intra / (double)n;
	out->inter = inter / (double)n;
}

void moe_copies_cached(struct moe_copies_cache *cache,
		       const struct moe_routing *r, enum moe_dispatcher d,
		       long ep, long local, struct moe_copies *out)
{
	const size_t slots = MOE_COPIES_CACHE_SLOTS;
	size_t h = ((size_t)ep * 131u + (size_t)local) % slots;

	for (size_t probe = 0; probe < slots && cache->at[h].ep != 0;
	     probe++, h = (h + 1) % slots)
		if (cache->at[h].ep == ep && cache->at[h].local == local) {
			*out = cache->at[h].copies;
			return;
		}
	moe_dispatch_copies(r, d, (double)ep, (double)local, out);
	if (cache->at[h].ep == 0) {
		cache->at[h].ep = ep;
		cache->at[h].local = local;
		cache->at[h].copies = *out;
	}
}

long moe_node_tiling_width(long span, long unit, long gpn)
{
	if (span <= 0 || unit <= 0)
		return 0;
	for (long w = gpn; w > 0 && 2 * w >= gpn; w--)
		if (w % unit == 0 && (span <= w ? w % span : span % w) == 0)
			return w;
	return 0;
}

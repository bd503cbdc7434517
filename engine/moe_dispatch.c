/* moe_dispatch.c - see moe_dispatch.h. */
#include <math.h>
#include <stddef.h>

#include "moe_dispatch.h"

const char *const moe_dispatcher_names[MOE_DISPATCH_COUNT + 1] = {
    "alltoall", "deepep", NULL};

/* C(s - b, k) / C(s, k): the chance that k of s items drawn without
 * replacement miss a set of b of them (b may be fractional: an uneven
 * split's mean block). */
static double miss_all(double s, double b, double k)
{
	if (b <= 0.0)
		return 1.0;
	if (s - b < k)
		return 0.0;
	return exp(lgamma(s - b + 1.0) - lgamma(s - b - k + 1.0) +
		   lgamma(s - k + 1.0) - lgamma(s + 1.0));
}

/* C(n, r) as a double (r and n small whole numbers: groups) */
static double choose(double n, double r)
{
	if (r < 0.0 || r > n)
		return 0.0;
	return exp(lgamma(n + 1.0) - lgamma(r + 1.0) - lgamma(n - r + 1.0));
}

static int whole(double x)
{
	return x >= 1.0 && fabs(x - floor(x + 0.5)) < 1e-9;
}

double moe_bin_hit(const struct moe_routing *r, double bin)
{
	double e = r->experts, k = r->top_k, g_n = r->groups,
	       g_k = r->group_top_k;
	double g, s, hit = 0.0;

	if (bin >= e)
		return 1.0;
	if (g_n <= 1.0 || g_k >= g_n || !whole(g_n) || !whole(g_k))
		return 1.0 - miss_all(e, bin, k);
	g = e / g_n; /* experts a group */
	s = g_k * g; /* experts a token's router may pick */
	if (bin <= g && whole(g / bin))
		/* the block lies in one group: that group is among the
		 * token's g_k with chance g_k / g_n, and then its k experts
		 * are drawn from the s of the chosen groups */
		return g_k / g_n * (1.0 - miss_all(s, bin, k));
	if (bin > g && whole(bin / g)) {
		/* the block holds j whole groups; i of them chosen
		 * (hypergeometric), and the token misses their i g experts */
		double j = floor(bin / g + 0.5), all = choose(g_n, g_k);

		for (double i = fmax(0.0, j + g_k - g_n); i <= fmin(j, g_k);
		     i++)
			hit += choose(j, i) * choose(g_n - j, g_k - i) / all *
			       (1.0 - miss_all(s, i * g, k));
		return hit;
	}
	return 1.0 - miss_all(e, bin, k);
}

void moe_dispatch_copies(const struct moe_routing *r, enum moe_dispatcher d,
			 double ep, double local, struct moe_copies *out)
{
	double nodes;

	if (local > ep)
		local = ep;
	if (local < 1.0)
		local = 1.0;
	if (d != MOE_DISPATCH_DEEPEP) {
		/* each of the top_k copies lands on any rank alike */
		out->intra = r->top_k * (local - 1.0) / ep;
		out->inter = r->top_k * (ep - local) / ep;
		return;
	}
	nodes = ep / local;
	/* one copy per other rank of its node that holds a chosen expert;
	 * at each other node, one over the NICs when any of its ranks does,
	 * which the receiving GPU forwards to the node's other such ranks:
	 * every node's link carries the same forwarding for the others */
	out->intra = nodes * (local - 1.0) * moe_bin_hit(r, r->experts / ep);
	out->inter = (nodes - 1.0) * moe_bin_hit(r, r->experts * local / ep);
}

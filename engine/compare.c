/* compare.c - ratios vs the cheapest and the fastest GPU type. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Within 3 % the verdict says "about as fast" rather than "1.0x faster"
 * (a ratio printed to one decimal would read as no difference). */
#define SAME_SPEED 0.03

/* Two decimals below 2x (1.15x), one above (3.8x). */
static int ratio_digits(double x)
{
	return x < 2.0 ? 2 : 1;
}

int cmp_rank(const struct cmp_entry *e, int n, enum cmp_kind kind,
	     struct cmp_result *out, struct eng_error *err)
{
	int ch = -1, fa = -1;
	const char *job = kind == CMP_TRAINING ? "this job" : "this load";

	eng_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (n < 1 || n > CMP_MAX_ENTRIES)
		return eng_fail(err, ENG_EINVAL, "gpus",
				"compare needs 1 to %d GPU types",
				CMP_MAX_ENTRIES);
	out->n = n;
	for (int i = 0; i < n; i++) {
		if (!e[i].ok || !(e[i].time_s > 0))
			continue;
		if (ch < 0 || e[i].cost < e[ch].cost ||
		    (e[i].cost == e[ch].cost && e[i].time_s < e[ch].time_s))
			ch = i;
		if (fa < 0 || e[i].time_s < e[fa].time_s)
			fa = i;
	}
	out->cheapest = ch;
	out->fastest = fa;
	if (ch < 0)
		return eng_fail(err, ENG_EINFEASIBLE, "gpus",
				"no GPU type can run %s: %s: %s", job,
				e[0].name, e[0].reason);
	for (int i = 0; i < n; i++) {
		struct cmp_row *r = &out->rows[i];
		if (!e[i].ok) {
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: cannot run %s (%s)", e[i].name, job,
				 e[i].reason);
			continue;
		}
		r->speedup_vs_cheapest = e[ch].time_s / e[i].time_s;
		r->cost_vs_cheapest =
		    e[ch].cost > 0 ? e[i].cost / e[ch].cost : 0.0;
		r->speedup_vs_fastest = e[fa].time_s / e[i].time_s;
		r->cost_vs_fastest =
		    e[fa].cost > 0 ? e[i].cost / e[fa].cost : 0.0;
		r->cheapest = i == ch;
		r->fastest = i == fa;
		if (i == ch)
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: cheapest for %s%s", e[i].name, job,
				 i == fa ? " and fastest" : "");
		else if (fabs(r->speedup_vs_cheapest - 1.0) < SAME_SPEED)
			snprintf(
			    r->verdict, sizeof(r->verdict),
			    "%s: about as fast, %.2fx the cost of %s for %s",
			    e[i].name, r->cost_vs_cheapest, e[ch].name, job);
		else
			snprintf(
			    r->verdict, sizeof(r->verdict),
			    "%s: %.*fx %s, %.2fx the cost of %s for %s",
			    e[i].name,
			    ratio_digits(r->speedup_vs_cheapest >= 1.0
					     ? r->speedup_vs_cheapest
					     : 1.0 / r->speedup_vs_cheapest),
			    r->speedup_vs_cheapest >= 1.0
				? r->speedup_vs_cheapest
				: 1.0 / r->speedup_vs_cheapest,
			    r->speedup_vs_cheapest >= 1.0 ? "faster" : "slower",
			    r->cost_vs_cheapest, e[ch].name, job);
	}
	if (fa == ch)
		snprintf(out->summary, sizeof(out->summary),
			 "%s is both the fastest and the cheapest for %s",
			 e[fa].name, job);
	else
		snprintf(out->summary, sizeof(out->summary),
			 "%s is fastest (%.1fx %s at %.1fx its cost); %s is "
			 "cheapest",
			 e[fa].name, out->rows[fa].speedup_vs_cheapest,
			 e[ch].name, out->rows[fa].cost_vs_cheapest,
			 e[ch].name);
	return 0;
}

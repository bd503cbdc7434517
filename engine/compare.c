/* compare.c - ratios vs the cheapest and the fastest GPU type. */
#include "compare.h"

#include <stdio.h>
#include <string.h>

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
		else
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: %.1fx %s, %.1fx the cost of %s for %s",
				 e[i].name,
				 r->speedup_vs_cheapest >= 1.0
				     ? r->speedup_vs_cheapest
				     : 1.0 / r->speedup_vs_cheapest,
				 r->speedup_vs_cheapest >= 1.0 ? "faster"
							       : "slower",
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

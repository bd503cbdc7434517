/* compare.c - ratios vs the cheapest and the fastest GPU type. */
#include "compare.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Within 3 % the verdict says "about as fast" rather than "1.0x faster"
 * (a ratio printed to one decimal would read as no difference). */
#define SAME_SPEED 0.03
/* Times within 0.05 % are equal: the answer prints 4 significant digits
 * (sizing_real), so a closer lead is not one a reader can see. */
#define SAME_TIME 5e-4

/* Two decimals below 2x (1.15x), one above (3.8x). */
static int ratio_digits(double x)
{
	return x < 2.0 ? 2 : 1;
}

/* Why a row that ran cannot be ranked (rankable below). */
#define UNRANKABLE                                                             \
	"its time is not a positive finite number or its cost not a finite "   \
	"one"

/* An entry that can be ranked: it runs, in a finite positive time, at a
 * finite cost that is not negative. Anything else is listed but never
 * cheapest or fastest, and never divides another's numbers (a subnormal
 * price once made a GPU "cheapest" at "infx the cost", issue 15).
 */
static int rankable(const struct cmp_entry *e)
{
	return e->ok && isfinite(e->time_s) && e->time_s > 0 &&
	       isfinite(e->cost) && e->cost >= 0;
}

/* a / b of two finite numbers (b >= 0), kept finite and, for a > 0,
 * positive: 0 when b is 0 (no cost to compare with).
 */
static double ratio(double a, double b)
{
	double r;

	if (!(b > 0))
		return 0.0;
	r = a / b;
	if (r > DBL_MAX)
		return DBL_MAX;
	if (a > 0 && r < DBL_MIN)
		return DBL_MIN;
	return r;
}

/* A ratio as the verdict prints it: digits decimals, or three significant
 * digits from a million up (never "inf", never a 300-digit number).
 */
static const char *ratio_text(char *buf, size_t len, double x, int digits)
{
	if (isfinite(x) && fabs(x) < 1e6)
		snprintf(buf, len, "%.*f", digits, x);
	else if (isfinite(x))
		snprintf(buf, len, "%.3g", x);
	else
		snprintf(buf, len, "?");
	return buf;
}

/* " (x's GEMM rate is its datasheet peak x a default efficiency, not a
 * measurement)" for an entry whose efficiency is assumed, else "". */
static const char *caveat(char *buf, size_t len, const struct cmp_entry *e)
{
	if (!e->efficiency_assumed)
		return "";
	snprintf(buf, len,
		 " (%s's GEMM rate is its datasheet peak x a default "
		 "efficiency, not a measurement)",
		 e->name);
	return buf;
}

/* Each row runs its GPU type's own plan: where the plans differ a time
 * ratio compares plans, not GPU types, and the verdict says so. Training
 * names the GPU count where any runnable row's count differs (review s17a
 * F1: 16 L40S "faster" than 4 H100 under objective cost); inference the
 * layout where row i's differs from row other's, or from any runnable
 * row's when other is i (review s18b F3: "H100 1.13x faster than H200"
 * compared TP 4 with TP 2). Writes the note for row i to buf, "" when
 * there is nothing to tell apart (buf is always set). */
static const char *gpus_note(char *buf, size_t len, const struct cmp_entry *e,
			     int n, int i, int other, enum cmp_kind kind)
{
	bool differ = false;

	buf[0] = '\0';
	for (int j = 0; j < n; j++) {
		if (!e[j].ok)
			continue;
		if (kind == CMP_TRAINING)
			differ |= e[j].gpus != e[i].gpus;
		else if (other == i || j == other)
			differ |= strcmp(e[j].layout, e[i].layout) != 0;
	}
	if (!differ)
		return "";
	if (kind == CMP_TRAINING || !e[i].layout[0])
		snprintf(buf, len, " on %ld GPU%s", e[i].gpus,
			 e[i].gpus == 1 ? "" : "s");
	else
		snprintf(buf, len, " at %s", e[i].layout);
	return buf;
}

/* a before b by cost, then time, then name: the cheapest row, and among
 * rows as fast the fastest; the name last, so that the verdict never
 * depends on the order of gpus (review s17c F7: H100 and H800 at one price
 * and one time swapped with the list). */
static bool cheaper(const struct cmp_entry *a, const struct cmp_entry *b)
{
	if (a->cost != b->cost)
		return a->cost < b->cost;
	if (a->time_s != b->time_s)
		return a->time_s < b->time_s;
	return strcmp(a->name, b->name) < 0;
}

int cmp_rank(const struct cmp_entry *e, int n, enum cmp_kind kind,
	     const char *constraint, struct cmp_result *out,
	     struct eng_error *err)
{
	int ch = -1, fa = -1;
	bool any_meets = false;
	char speed[32], cost[32], cv1[160], cv2[160], g1[64], g2[64];
	static const char *const jobs[] = {
	    [CMP_TRAINING] = "this job",
	    [CMP_INFERENCE] = "this load",
	    [CMP_INFERENCE_CAPACITY] = "this model at capacity",
	};
	const char *job = (unsigned)kind < sizeof(jobs) / sizeof(jobs[0])
			      ? jobs[kind]
			      : "this job";

	eng_error_clear(err);
	memset(out, 0, sizeof(*out));
	if (n < 1 || n > CMP_MAX_ENTRIES)
		return eng_fail(err, ENG_EINVAL, "gpus",
				"compare needs 1 to %d GPU types",
				CMP_MAX_ENTRIES);
	out->n = n;
	for (int i = 0; i < n; i++)
		any_meets |= rankable(&e[i]) && e[i].meets;
	/* The verdict is chosen among rows that meet the constraints; when
	 * none does, among all (and the summary says so). */
	for (int i = 0; i < n; i++) {
		if (!rankable(&e[i]) || (any_meets && !e[i].meets))
			continue;
		if (ch < 0 || cheaper(&e[i], &e[ch]))
			ch = i;
		/* on equal time the cheaper is fastest, so the verdict
		 * does not depend on the order of gpus (review s16a F6);
		 * equal to the digits the answer prints (review s16c F2:
		 * 27.77 ms three times, the dearest crowned by 0.04 %) */
		if (fa < 0 || e[i].time_s < e[fa].time_s * (1.0 - SAME_TIME) ||
		    (e[i].time_s <= e[fa].time_s * (1.0 + SAME_TIME) &&
		     cheaper(&e[i], &e[fa])))
			fa = i;
	}
	out->cheapest = ch;
	out->fastest = fa;
	if (ch < 0) {
		/* every type with its reason, as far as the message holds
		 * (review s15b: the first alone, cut mid-word) */
		char why[sizeof(err->message)];
		size_t used = 0;

		why[0] = '\0';
		for (int i = 0; i < n && used + 1 < sizeof(why); i++) {
			int w = snprintf(why + used, sizeof(why) - used,
					 "%s%s: %s", i ? "; " : "", e[i].name,
					 e[i].ok ? UNRANKABLE : e[i].reason);
			if (w < 0)
				break;
			used += (size_t)w;
		}
		return eng_fail(err, ENG_EINFEASIBLE, "gpus",
				"no GPU type can run %s: %s", job, why);
	}
	for (int i = 0; i < n; i++) {
		struct cmp_row *r = &out->rows[i];
		if (!e[i].ok) {
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: cannot run %s (%s)", e[i].name, job,
				 e[i].reason);
			continue;
		}
		if (!rankable(&e[i])) {
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: cannot be ranked for %s (" UNRANKABLE ")",
				 e[i].name, job);
			continue;
		}
		r->ranked = true;
		r->meets = e[i].meets;
		r->speedup_vs_cheapest = ratio(e[ch].time_s, e[i].time_s);
		r->cost_vs_cheapest = ratio(e[i].cost, e[ch].cost);
		/* <= 1: a row within SAME_TIME of the fastest is as fast */
		r->speedup_vs_fastest =
		    fmin(1.0, ratio(e[fa].time_s, e[i].time_s));
		r->cost_vs_fastest = ratio(e[i].cost, e[fa].cost);
		r->cheapest = i == ch;
		r->fastest = i == fa;
		ratio_text(cost, sizeof(cost), r->cost_vs_cheapest, 2);
		gpus_note(g1, sizeof(g1), e, n, i, ch, kind);
		gpus_note(g2, sizeof(g2), e, n, ch, i, kind);
		if (i == ch) {
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s%s: cheapest for %s%s%s", e[i].name, g1,
				 job, i == fa ? " and fastest" : "",
				 caveat(cv1, sizeof(cv1), &e[i]));
		} else if (any_meets && !e[i].meets && constraint) {
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s: misses %s; %sx the cost of %s for %s",
				 e[i].name, constraint, cost, e[ch].name, job);
		} else if (fabs(r->speedup_vs_cheapest - 1.0) < SAME_SPEED) {
			snprintf(
			    r->verdict, sizeof(r->verdict),
			    "%s%s: about as fast, %sx the cost of %s%s for "
			    "%s",
			    e[i].name, g1, cost, e[ch].name, g2, job);
		} else {
			double s = r->speedup_vs_cheapest >= 1.0
				       ? r->speedup_vs_cheapest
				       : 1.0 / r->speedup_vs_cheapest;
			snprintf(r->verdict, sizeof(r->verdict),
				 "%s%s: %sx %s, %sx the cost of %s%s for %s",
				 e[i].name, g1,
				 ratio_text(speed, sizeof(speed), s,
					    ratio_digits(s)),
				 r->speedup_vs_cheapest >= 1.0 ? "faster"
							       : "slower",
				 cost, e[ch].name, g2, job);
		}
		/* when no row meets the constraint, each still says it
		 * misses it (review s14: none did, and the rows read as if
		 * they met it) */
		if (!any_meets && constraint && !e[i].meets) {
			char tmp[sizeof(r->verdict)];
			size_t nl = strlen(e[i].name) + strlen(g1) + 2;
			if (strlen(r->verdict) >= nl) {
				snprintf(tmp, sizeof(tmp),
					 "%s%s: misses %s; %s", e[i].name, g1,
					 constraint, r->verdict + nl);
				memcpy(r->verdict, tmp, sizeof(tmp));
			}
		}
	}
	{
		char head[CMP_VERDICT_LEN / 2] = "";
		size_t len;

		if (constraint && !any_meets)
			snprintf(head, sizeof(head),
				 "no GPU type meets %s; of all of them, ",
				 constraint);
		else if (constraint)
			snprintf(head, sizeof(head),
				 "among the GPU types that meet %s, ",
				 constraint);
		gpus_note(g1, sizeof(g1), e, n, fa, ch, kind);
		gpus_note(g2, sizeof(g2), e, n, ch, fa, kind);
		if (fa == ch)
			snprintf(
			    out->summary, sizeof(out->summary),
			    "%s%s%s is both the fastest and the cheapest for "
			    "%s",
			    head, e[fa].name, g1, job);
		else
			snprintf(
			    out->summary, sizeof(out->summary),
			    "%s%s%s is fastest (%sx %s%s at %sx its cost); %s "
			    "is cheapest",
			    head, e[fa].name, g1,
			    ratio_text(speed, sizeof(speed),
				       out->rows[fa].speedup_vs_cheapest,
				       ratio_digits(
					   out->rows[fa].speedup_vs_cheapest)),
			    e[ch].name, g2,
			    ratio_text(cost, sizeof(cost),
				       out->rows[fa].cost_vs_cheapest, 2),
			    e[ch].name);
		len = strlen(out->summary);
		snprintf(out->summary + len, sizeof(out->summary) - len, "%s%s",
			 caveat(cv1, sizeof(cv1), &e[fa]),
			 ch != fa ? caveat(cv2, sizeof(cv2), &e[ch]) : "");
	}
	return 0;
}

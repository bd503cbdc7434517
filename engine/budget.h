/* budget.h - a bound on the work of one engine search (issue 15).
 *
 * A request whose every value is inside its documented range can still ask
 * for a search of billions of layouts (a 2,520-layer model with 24-value
 * tp/pp/cp/vp/micro_batch lists on 2^20 GPUs). The training search spends
 * one unit per candidate layout it visits and per (ZeRO, offload,
 * recompute) variant whose memory it sums, and stops with ENG_EBUDGET when
 * a search would pass max_units. The count is deterministic: the same
 * request stops at the same point, whatever the machine's load.
 *
 * Between units the caller's stop() is polled (every ENG_BUDGET_POLL units)
 * so that work whose client has gone, or that outlived the daemon's drain
 * or the request's deadline, ends within milliseconds (ENG_ECANCELLED).
 * The engine does no I/O itself: stop() is the caller's.
 *
 * Usage: struct eng_budget b = {.max_units = 1000000, .stop = fn, .arg = x};
 * rq.budget = &b; then trn_size(). Not thread-safe: one budget per search
 * at a time; the caller owns it.
 */
#ifndef GPUSIZER_ENGINE_BUDGET_H
#define GPUSIZER_ENGINE_BUDGET_H

#include <stdbool.h>

/* How often stop() is polled: ~0.5 ms of search on a 2026 x86 core. */
#define ENG_BUDGET_POLL 1024L

/* The default limit of one search, in units (MODEL.md §6). Searches of the
 * presets on up to 2^20 GPUs, 128K-token sequences and every objective
 * spend at most ~700,000 (a 3,000-request random grid; Llama 3.1 405B at
 * 128K on 2^20 GPUs evaluates 111,508 layouts); only global batches with
 * hundreds of divisors at 128K tokens (720,720 sequences) pass 1,000,000.
 * 2,000,000 is about one second of one core. */
#define ENG_BUDGET_DEFAULT_UNITS 2000000

struct eng_budget {
	long max_units; /* 0: unbounded */
	long units;	/* spent by this search (reset by the search) */
	/* Polled every ENG_BUDGET_POLL units; true cancels. NULL: never. */
	bool (*stop)(void *arg);
	void *arg;
};

/* Spends n units of b (NULL: free). 0, ENG_EBUDGET once past max_units, or
 * ENG_ECANCELLED when stop() says so. */
int eng_budget_spend(struct eng_budget *b, long n);

#endif

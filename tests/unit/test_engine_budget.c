/* test_engine_budget.c - the bound on one training search (engine/budget.h,
 * issue 15): it changes no answer of a realistic job, it stops a hostile
 * one after exactly its limit, and a caller's stop() ends the work within
 * one poll. */
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "engine_fixtures.h"
#include "testlib.h"
#include "training.h"

static unsigned long rng = 20261125;
static long pick(long n)
{
	rng = rng * 6364136223846793005UL + 1442695040888963407UL;
	return (long)((rng >> 33) % (unsigned long)n);
}

/* Jobs as users send them: the presets of the fixtures on four GPUs,
 * short to 128K-token sequences, global batches with few and with many
 * divisors, up to 2^20 GPUs, every objective, sometimes a pinned count or
 * pinned lists. */
static void realistic(struct trn_request *rq)
{
	static const long seqs[] = {512, 2048, 4096, 8192, 32768, 131072};
	static const long gpus[] = {8,	  16,	64,   100,   512,
				    1000, 1024, 4096, 16384, 1048576};
	static const long gbs[] = {0,	 1,    96,   128,  512,	 1000,
				   1024, 1536, 2048, 3000, 4096, 5040};
	long m = pick(3), g = pick(4);

	trn_request_init(rq);
	rq->model = m == 0   ? fx_llama3_8b()
		    : m == 1 ? fx_llama3_70b()
			     : fx_mixtral_8x7b();
	rq->gpu = g == 0   ? fx_h100()
		  : g == 1 ? fx_h200()
		  : g == 2 ? fx_a100()
			   : fx_l40s();
	rq->seq_len = seqs[pick(6)];
	if (pick(4) == 0)
		rq->gpus = gpus[pick(10)];
	else
		rq->max_gpus = gpus[pick(10)];
	rq->global_batch_size = gbs[pick(12)];
	rq->train_tokens = pick(2) ? 1e12 : 0;
	if (rq->train_tokens > 0 && pick(3) == 0)
		rq->deadline_days = 30;
	rq->objective = (enum trn_objective)pick(3);
	rq->method = (enum trn_method)pick(3);
	rq->precision = pick(4) ? ENG_BF16 : ENG_FP8;
	rq->top = 1 + (int)pick(TRN_MAX_TOP);
	if (pick(3) == 0) {
		rq->strategies.tp.n = 2;
		rq->strategies.tp.v[0] = 2;
		rq->strategies.tp.v[1] = 8;
	}
	if (pick(4) == 0) {
		rq->strategies.micro_batch.n = 2;
		rq->strategies.micro_batch.v[0] = 1;
		rq->strategies.micro_batch.v[1] = 3;
	}
}

/* The default limit is a bound, not an answer changer: over a generated
 * grid every search answers the same with and without it (plans, errors,
 * counts), and none comes near the limit. */
static void test_budget_keeps_answers(void)
{
	struct trn_result *a = calloc(1, sizeof(*a));
	struct trn_result *b = calloc(1, sizeof(*b));
	long most = 0;

	for (int it = 0; it < 400; it++) {
		struct trn_request rq;
		struct eng_budget budget = {.max_units =
						ENG_BUDGET_DEFAULT_UNITS};
		struct eng_error ea, eb;
		int rca, rcb;

		realistic(&rq);
		rca = trn_size(&rq, a, &ea);
		rq.budget = &budget;
		rcb = trn_size(&rq, b, &eb);
		CHECK(rca == rcb);
		CHECK(rcb != ENG_EBUDGET && rcb != ENG_ECANCELLED);
		CHECK(strcmp(ea.message, eb.message) == 0);
		CHECK(a->n_plans == b->n_plans);
		CHECK(a->layouts_evaluated == b->layouts_evaluated);
		for (int i = 0; i < a->n_plans && i < b->n_plans; i++)
			CHECK(memcmp(&a->plans[i], &b->plans[i],
				     sizeof(a->plans[i])) == 0);
		if (budget.units > most)
			most = budget.units;
	}
	printf("# most units spent by a generated job: %ld of %d\n", most,
	       ENG_BUDGET_DEFAULT_UNITS);
	CHECK(most > 0 && most < ENG_BUDGET_DEFAULT_UNITS / 2);
	free(a);
	free(b);
}

/* Issue 15's request: every value inside its documented range, billions
 * of layouts. */
static void hostile(struct trn_request *rq)
{
	static const int divisors_2520[] = {1,	2,  3,	4,  5,	6,  7,	8,
					    9,	10, 12, 14, 15, 18, 20, 21,
					    24, 28, 30, 35, 36, 40, 42, 45};
	static const int divisors_2882880[] = {1,  2,  3,  4,  5,  6,  7,  8,
					       9,  10, 11, 12, 13, 14, 15, 16,
					       18, 20, 21, 22, 24, 26, 28, 30};
	trn_request_init(rq);
	rq->model.layers = 2520;
	rq->model.hidden_size = 110880;
	rq->model.heads = 55440;
	rq->model.kv_heads = 55440;
	rq->model.ffn_hidden_size = 443520;
	rq->model.vocab_size = 32000;
	rq->seq_len = 2882880;
	rq->gpu = fx_h100();
	rq->gpus_per_node = 1024;
	rq->max_gpus = 1L << 20;
	rq->global_batch_size = 720720;
	for (int i = 0; i < TRN_MAX_CHOICES; i++) {
		rq->strategies.tp.v[i] = divisors_2520[i];
		rq->strategies.pp.v[i] = divisors_2520[i];
		rq->strategies.cp.v[i] = divisors_2882880[i];
		rq->strategies.vp.v[i] = i + 1;
		rq->strategies.micro_batch.v[i] = divisors_2520[i];
	}
	rq->strategies.tp.n = rq->strategies.pp.n = rq->strategies.cp.n =
	    rq->strategies.vp.n = rq->strategies.micro_batch.n =
		TRN_MAX_CHOICES;
}

static void test_budget_stops_hostile_search(void)
{
	struct trn_result *r = calloc(1, sizeof(*r));
	struct trn_request rq;
	struct eng_budget budget = {.max_units = ENG_BUDGET_DEFAULT_UNITS};
	struct eng_error e;

	hostile(&rq);
	rq.budget = &budget;
	CHECK(trn_size(&rq, r, &e) == ENG_EBUDGET);
	CHECK(strcmp(e.field, "strategies") == 0);
	CHECK(strstr(e.message, "narrow strategies") != NULL);
	/* it stops at the first unit past the limit */
	CHECK(budget.units == ENG_BUDGET_DEFAULT_UNITS + 1);
	/* without lists, the field to narrow is the GPU limit */
	memset(&rq.strategies, 0, sizeof(rq.strategies));
	budget.max_units = 1000;
	CHECK(trn_size(&rq, r, &e) == ENG_EBUDGET);
	CHECK(strcmp(e.field, "max_gpus") == 0);
	free(r);
}

struct stop_after {
	int polls, stop_at;
};

static bool stop_after(void *arg)
{
	struct stop_after *s = arg;
	return ++s->polls >= s->stop_at;
}

/* stop() is polled every ENG_BUDGET_POLL units; true ends the search at
 * once with ENG_ECANCELLED, whatever the limit. */
static void test_stop_cancels_within_a_poll(void)
{
	struct trn_result *r = calloc(1, sizeof(*r));
	struct trn_request rq;
	struct stop_after s = {.polls = 0, .stop_at = 3};
	struct eng_budget budget = {
	    .max_units = 0, .stop = stop_after, .arg = &s};
	struct eng_error e;

	hostile(&rq);
	rq.budget = &budget;
	CHECK(trn_size(&rq, r, &e) == ENG_ECANCELLED);
	CHECK(strcmp(e.field, "request") == 0);
	CHECK(s.polls == 3);
	CHECK(budget.units == 3 * ENG_BUDGET_POLL);
	free(r);
}

/* A global batch past 2^40 sequences is refused before any search (the dp
 * candidates are its divisors). */
static void test_huge_global_batch_refused(void)
{
	struct trn_result *r = calloc(1, sizeof(*r));
	struct trn_request rq;
	struct eng_error e;

	trn_request_init(&rq);
	rq.model = fx_llama3_8b();
	rq.gpu = fx_h100();
	rq.seq_len = 1;
	rq.max_gpus = 8;
	rq.global_batch_tokens = 1e300;
	CHECK(trn_size(&rq, r, &e) == ENG_EINVAL);
	CHECK(strcmp(e.field, "global_batch_tokens") == 0);
	free(r);
}

int main(void)
{
	RUN(test_budget_keeps_answers);
	RUN(test_budget_stops_hostile_search);
	RUN(test_stop_cancels_within_a_poll);
	RUN(test_huge_global_batch_refused);
	return testlib_finish();
}

/* compare.h - the same job across GPU types: ratios and a verdict a
 * capacity meeting can read. Handlers size the job per GPU type
 * (trn_size / inf_size), fill one cmp_entry each, then call cmp_rank.
 */
#ifndef GPUSIZER_ENGINE_COMPARE_H
#define GPUSIZER_ENGINE_COMPARE_H

#include <stdbool.h>

#include "errors.h"

#define CMP_MAX_ENTRIES 32
/* An entry's name: a catalog GPU name (up to 64 characters) and the NUL. */
#define CMP_NAME_SIZE	65
#define CMP_VERDICT_LEN 1024

/* What is compared: a training job, serving a given load, or serving at
 * each GPU type's capacity (no load given): the verdict's wording. */
enum cmp_kind { CMP_TRAINING, CMP_INFERENCE, CMP_INFERENCE_CAPACITY };

struct cmp_entry {
	char name[CMP_NAME_SIZE];
	bool ok;	  /* false: the job cannot run on this GPU */
	char reason[512]; /* why not, when !ok */
	/* training: time_s = wall time of the job; inference: time_s =
	 * time per output token. */
	double time_s;
	long gpus;
	/* inference: the plan's layout as a verdict names it ("tp 4 x 4
	 * replicas"); "" for training, which names gpus */
	char layout[48];
	/* USD: training, the job's cost; inference, per million output
	 * tokens (with a concurrency or none) or per hour (with a rate) */
	double cost;
	double throughput; /* tokens/s, all the plan's GPUs together */
	/* The single-GPU answer meets the request's constraints (the
	 * deadline, the latency targets); true when there are none. */
	bool meets;
	/* Its GEMM rate rests on no measurement (datasheet only, or a
	 * vendor's claim): a verdict naming it says so (issue 16). */
	bool efficiency_assumed;
};

struct cmp_row {
	/* false: not ranked (the job cannot run here, or its time or cost
	 * is not a finite positive number); ratios 0, the verdict says why. */
	bool ranked;
	double speedup_vs_cheapest; /* cheapest time / this time */
	double cost_vs_cheapest;    /* this cost / cheapest cost */
	double speedup_vs_fastest;  /* fastest time / this time (<= 1) */
	double cost_vs_fastest;
	bool cheapest, fastest;
	bool meets; /* the entry's constraints are met */
	char verdict[CMP_VERDICT_LEN];
};

struct cmp_result {
	int n;
	int cheapest, fastest; /* indexes into the entries, -1 if none ok */
	struct cmp_row rows[CMP_MAX_ENTRIES];
	char summary[CMP_VERDICT_LEN];
};

/* Ranks the entries: the cheapest and the fastest are chosen among those
 * that meet the constraints (constraint names them for the verdicts, e.g.
 * "the 60-day deadline"; NULL: the request stated none); when none meets
 * them, among all, and the summary says that none does. 0, or ENG_EINVAL
 * (n out of range) / ENG_EINFEASIBLE (no GPU type can run the job; message
 * lists why for the first). */
int cmp_rank(const struct cmp_entry *e, int n, enum cmp_kind kind,
	     const char *constraint, struct cmp_result *out,
	     struct eng_error *err);

#endif

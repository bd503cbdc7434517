/* sizing_compare.c - POST /v1/sizing/compare (issue 4): one training or
 * inference job sized on several GPU types, side by side, with ratios
 * against the cheapest and the fastest and a verdict a meeting can read.
 * Accept: text/csv answers the same table as CSV.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/compare.h"
#include "handlers/api.h"
#include "handlers/calib.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/sizing_parse.h"
#include "handlers/util.h"
#include "lib/csv.h"
#include "storage/catalog.h"

/* What a training row's days are: the plan each GPU type's objective
 * picks, on that plan's own GPU count (review s17a F1: under objective
 * cost, 16 L40S were "faster" than 4 H100). */
static const char *const trn_time_basis[TRN_OBJ_COUNT] = {
    [TRN_OBJ_TIME] = "days = wall time of the whole job, each GPU type at "
		     "its fastest plan (objective time), on that plan's "
		     "GPU count (gpus)",
    [TRN_OBJ_COST] = "days = wall time of the whole job, each GPU type at "
		     "its cheapest plan (objective cost), on that plan's "
		     "GPU count (gpus): a time ratio compares those plans, "
		     "not the GPU types at one count",
    [TRN_OBJ_GPUS] = "days = wall time of the whole job, each GPU type at "
		     "its plan on the fewest GPUs (objective gpus), on that "
		     "plan's GPU count (gpus): a time ratio compares those "
		     "plans, not the GPU types at one count",
};

/* What an inference row's time is, chosen once a request (inf_time_of)
 * and read for each row's time and the answer's time_basis. Without a
 * load: one request on an idle replica (TPOT at capacity is how full the
 * cache runs, not speed: review s16a F1). At a load: TPOT, or TTFT where
 * the job outputs one token and has no TPOT (review s23b F1: every type
 * was refused). */
enum inf_time { INF_TIME_ALONE, INF_TIME_TPOT, INF_TIME_TTFT };
static const char *const inf_time_basis[] = {
    [INF_TIME_ALONE] = "latency_alone_ms = one request alone on an idle "
		       "replica of the best plan (its prefill and every "
		       "output token): the GPU type's speed on this model",
    [INF_TIME_TPOT] = "tpot_ms = time per output token of the best plan at "
		      "the load",
    [INF_TIME_TTFT] = "ttft_ms = time to first token of the best plan at "
		      "the load (one output token: no time per output "
		      "token)",
};

static enum inf_time inf_time_of(const struct inf_request *rq)
{
	if (rq->load_kind == INF_LOAD_NONE)
		return INF_TIME_ALONE;
	return rq->output_tokens > 1 ? INF_TIME_TPOT : INF_TIME_TTFT;
}

/* An inference plan's time in seconds, as t reads it. */
static double inf_time_s(const struct inf_plan *p, enum inf_time t)
{
	return (t == INF_TIME_ALONE  ? p->latency_alone_ms
		: t == INF_TIME_TPOT ? p->tpot_ms
				     : p->ttft_ms) /
	       1e3;
}

static const char *const top_keys[] = {"training", "inference",	   "gpus",
				       "prices",   "power_limits", NULL};

/* Per GPU type: the engine's request and result for one job kind. */
struct one {
	char gpu[CMP_NAME_SIZE];
	struct hw_spec hw;
	struct calib_info ci;
	int ok;
	char reason[1100];
	struct eng_error err; /* the engine's, when !ok */
	union {
		struct trn_result trn;
		struct inf_result inf;
	} r;
};

/* Every bad field at once: the listed names the catalog does not know,
 * beside the job's errors (review s14: they came only once those were
 * fixed). What else is wrong with the list gpu_list says, after. */
static void unknown_gpus(struct app *app, const json_t *b, struct response *res)
{
	const json_t *g = json_object_get(b, "gpus"), *x;
	size_t i;

	if (!json_is_array(g) || json_array_size(g) > CMP_MAX_ENTRIES)
		return;
	json_array_foreach(g, i, x)
	{
		char f[32];

		if (!json_is_string(x) || json_string_length(x) == 0 ||
		    json_string_length(x) >= CMP_NAME_SIZE)
			continue;
		snprintf(f, sizeof(f), "gpus[%zu]", i);
		sizing_gpu_known(app, json_string_value(x), f, res);
	}
}

/* The GPU list: as given, or every catalog GPU with a price. */
static int gpu_list(struct app *app, const json_t *b, const json_t *prices,
		    char names[][CMP_NAME_SIZE], int *n, struct response *res)
{
	const json_t *g = json_object_get(b, "gpus"), *x;
	struct store_err e;
	json_t *all = NULL;
	size_t i;

	*n = 0;
	if (g && !json_is_null(g)) {
		if (!json_is_array(g) || json_array_size(g) == 0 ||
		    json_array_size(g) > CMP_MAX_ENTRIES) {
			problem_field(res, "gpus",
				      "must be a list of 1 to %d catalog GPU "
				      "names",
				      CMP_MAX_ENTRIES);
			return -1;
		}
		json_array_foreach(g, i, x)
		{
			if (!json_is_string(x) || json_string_length(x) == 0 ||
			    json_string_length(x) >= CMP_NAME_SIZE) {
				char f[32];
				snprintf(f, sizeof(f), "gpus[%zu]", i);
				problem_field(res, f,
					      "must be a GPU name of 1 to %d "
					      "characters (GET /v1/gpus)",
					      CMP_NAME_SIZE - 1);
				return -1;
			}
			for (int k = 0; k < *n; k++)
				if (!strcmp(names[k], json_string_value(x))) {
					problem_field(res, "gpus",
						      "\"%s\" is listed twice",
						      names[k]);
					return -1;
				}
			snprintf(names[(*n)++], CMP_NAME_SIZE, "%s",
				 json_string_value(x));
		}
		return 0;
	}
	if (store_gpu_list(app->db, &all, &e) != STORE_OK) {
		problem_store(res, &e, "gpus");
		return -1;
	}
	json_array_foreach(all, i, x)
	{
		const char *name =
		    json_string_value(json_object_get(x, "name"));
		if (json_number_value(json_object_get(
			x, "price_per_gpu_hour")) >= SIZING_MIN_PRICE ||
		    json_object_get(prices, name)) {
			/* every priced type takes part, or the answer says
			 * which to list: a silent cut would leave types out
			 * of a verdict that still names the cheapest */
			if (*n == CMP_MAX_ENTRIES) {
				json_decref(all);
				problem_field(
				    res, "gpus",
				    "more than %d catalog GPU types have a "
				    "price or a prices entry, more than one "
				    "compare takes; list the ones to compare "
				    "in gpus",
				    CMP_MAX_ENTRIES);
				return -1;
			}
			snprintf(names[(*n)++], CMP_NAME_SIZE, "%s", name);
		}
	}
	json_decref(all);
	if (*n == 0) {
		problem_field(res, "gpus",
			      "no catalog GPU has a price; list the GPUs and "
			      "give prices");
		return -1;
	}
	return 0;
}

/* A per-GPU map (GPU name -> number in [min, max]) under key: "prices"
 * (replacing the catalog's: never 0, since a free GPU would be
 * "cheapest", and not below SIZING_MIN_PRICE) or "power_limits" (W; the
 * range against each GPU's board power is checked once it is loaded). */
static int check_gpu_map(const json_t *map, const char *key, const char *what,
			 double min, double max, struct response *res)
{
	struct jv v = {.res = res};
	const char *k;
	const json_t *x;
	double d;
	int bad = 0;

	snprintf(v.prefix, sizeof(v.prefix), "%s.", key);
	if (!map || json_is_null(map))
		return 0;
	if (!json_is_object(map)) {
		problem_field(res, key, "must be an object: GPU name -> %s",
			      what);
		return -1;
	}
	json_object_foreach((json_t *)map, k, x)
	{
		if (json_is_null(x)) {
			jv_error(&v, k, "must be a number in [%g, %g]", min,
				 max);
			bad = 1;
		} else {
			bad |= jv_num(&v, map, k, false, min, max, &d) != 0;
		}
		if (problem_field_count(res) >= 20)
			break;
	}
	return bad ? -1 : 0;
}

/* map's entry for a GPU asked as asked, or by its entry's own name. */
static const json_t *gpu_entry(const json_t *map, const char *asked,
			       const char *own)
{
	const json_t *x = json_object_get(map, asked);
	return x ? x : json_object_get(map, own);
}

/* 0 when every key of map (under key) names one of the n compared GPUs,
 * as asked (names[]) or by its entry's own name (runs' gpu); else a 400
 * naming each other key: a price or limit for no compared GPU (a typo, or
 * an alias of a GPU the list names otherwise) would silently not apply.
 */
static int check_gpu_map_used(const json_t *map, const char *key,
			      char names[][CMP_NAME_SIZE],
			      const struct one *runs, int n,
			      struct response *res)
{
	struct jv v = {.res = res};
	const char *k;
	const json_t *x;
	int bad = 0;

	if (!json_is_object(map))
		return 0;
	snprintf(v.prefix, sizeof(v.prefix), "%s.", key);
	json_object_foreach((json_t *)map, k, x)
	{
		int used = 0;

		for (int i = 0; i < n && !used; i++)
			used = !strcmp(k, names[i]) || !strcmp(k, runs[i].gpu);
		if (used)
			continue;
		jv_error(&v, k,
			 "names none of the compared GPUs (as gpus lists it, "
			 "or by its catalog name)");
		bad = 1;
		if (problem_field_count(res) >= 20)
			break;
	}
	(void)x;
	/* two keys for one GPU (as asked and by its own name): one would
	 * be dropped without a word */
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], runs[i].gpu) != 0 &&
		    json_object_get(map, names[i]) &&
		    json_object_get(map, runs[i].gpu)) {
			jv_error(&v, runs[i].gpu,
				 "names the same GPU as %s.%s; give one", key,
				 names[i]);
			bad = 1;
		}
	return bad ? -1 : 0;
}

/* map's entries under the compared GPUs' own names (a stored request
 * must size the same job when POSTed again, and it lists gpus by those
 * names); NULL when map is not an object. New reference. */
static json_t *gpu_map_canonical(const json_t *map, char names[][CMP_NAME_SIZE],
				 const struct one *runs, int n)
{
	json_t *out;

	if (!json_is_object(map))
		return NULL;
	out = json_object();
	for (int i = 0; out && i < n; i++) {
		const json_t *x = gpu_entry(map, names[i], runs[i].gpu);
		if (x)
			json_object_set(out, runs[i].gpu, (json_t *)x);
	}
	return out;
}

/* A load every row carries alike: a rate (requests or output tokens per
 * second), not a concurrency, under which each row's replicas serve what
 * their speed allows. */
static bool rate_load(enum inf_load_kind k)
{
	return k == INF_LOAD_REQUESTS_PER_S ||
	       k == INF_LOAD_OUTPUT_TOKENS_PER_S;
}

/* The CSV's columns: the job kind's own, then those every row has. */
static const char *const training_cols[] = {"gpu",
					    "ok",
					    "gpus",
					    "nodes",
					    "tp",
					    "pp",
					    "dp",
					    "cp",
					    "ep",
					    "zero",
					    "micro_batch",
					    "recompute",
					    "recompute_layers",
					    "offload",
					    "days",
					    "gpu_hours",
					    "cost",
					    "tokens_per_s",
					    "mfu",
					    "meets_deadline",
					    NULL};
static const char *const inference_cols[] = {"gpu",
					     "ok",
					     "gpus",
					     "tp",
					     "pp",
					     "replicas",
					     "batch",
					     "utilization",
					     "ttft_ms",
					     "tpot_ms",
					     "total_output_tokens_per_s",
					     "cost_per_hour",
					     "cost_per_million_output_tokens",
					     "meets_targets",
					     "latency_alone_ms",
					     NULL};
static const char *const common_cols[] = {"efficiency_basis",
					  "price_per_gpu_hour",
					  "speedup_vs_cheapest",
					  "cost_vs_cheapest",
					  "speedup_vs_fastest",
					  "cost_vs_fastest",
					  "cheapest",
					  "fastest",
					  "verdict",
					  "reason",
					  "power_limit_w",
					  "power_cap_ratio",
					  NULL};
/* Columns read from a member of a row's object (empty when the row has
 * none: a GPU type without a power limit). */
static const struct {
	const char *col, *object, *member;
} nested_cols[] = {
    {"power_limit_w", "power_limit", "limit_w"},
    {"power_cap_ratio", "power_limit", "ratio"},
};

/* One cell: the row's value under key, or empty. */
static void csv_value(struct csv *o, const json_t *row, const char *key)
{
	const json_t *v = json_object_get(row, key);

	for (size_t i = 0; i < sizeof(nested_cols) / sizeof(nested_cols[0]);
	     i++)
		if (!strcmp(key, nested_cols[i].col))
			v = json_object_get(
			    json_object_get(row, nested_cols[i].object),
			    nested_cols[i].member);

	if (json_is_string(v))
		csv_cell(o, json_string_value(v));
	else if (json_is_integer(v))
		csv_cellf(o, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		csv_cellf(o, "%.6g", json_real_value(v));
	else if (json_is_boolean(v))
		csv_cell(o, json_is_true(v) ? "true" : "false");
	else
		csv_empty(o);
}

/* The rows as CSV: one header line, one line per GPU type, the kind's
 * columns (cols) then common_cols. Every cell quoted, rows ending in LF
 * (as this CSV always was); text cells defused against spreadsheet
 * formulas like the report's (lib/csv.h).
 */
static char *to_csv(const json_t *rows, const char *const *cols)
{
	const char *const *parts[] = {cols, common_cols};
	struct sbuf b = {0};
	struct csv o;
	const json_t *row;
	size_t i;

	csv_init(&o, &b, CSV_QUOTE_ALL | CSV_LF);
	for (int p = 0; p < 2; p++)
		for (int c = 0; parts[p][c]; c++)
			csv_cell(&o, parts[p][c]);
	csv_eol(&o);
	json_array_foreach(rows, i, row)
	{
		for (int p = 0; p < 2; p++)
			for (int c = 0; parts[p][c]; c++)
				csv_value(&o, row, parts[p][c]);
		csv_eol(&o);
	}
	return sbuf_finish(&b);
}

void h_sizing_compare(struct app *app, const struct request *req,
		      struct response *res)
{
	char names[CMP_MAX_ENTRIES][CMP_NAME_SIZE];
	struct cmp_entry entries[CMP_MAX_ENTRIES];
	struct cmp_result cmp;
	char constraint[96] = "";
	struct eng_error err;
	struct trn_request trq;
	struct sizing_budget budget = {.admitted = false};
	struct inf_request irq;
	struct one *runs = NULL;
	struct sizing_job sj;
	const char *broken = NULL;
	const json_t *job, *prices, *limits;
	json_t *body, *rows = NULL;
	int n = 0, training;
	struct jv v = {.res = res};

	body = jv_parse_body(req, res);
	if (!body)
		return;
	if (jv_reject_unknown(&v, body, top_keys) > 0)
		goto out;
	training = json_object_get(body, "training") != NULL;
	if (training == (json_object_get(body, "inference") != NULL)) {
		problem_field(res, "training",
			      "give exactly one job: \"training\" or "
			      "\"inference\" (the body of that endpoint, "
			      "without \"gpu\")");
		goto out;
	}
	job = json_object_get(body, training ? "training" : "inference");
	if (!json_is_object(job)) {
		problem_field(res, training ? "training" : "inference",
			      "must be an object");
		goto out;
	}
	prices = json_object_get(body, "prices");
	limits = json_object_get(body, "power_limits");
	if (check_gpu_map(prices, "prices", "price per GPU-hour",
			  SIZING_MIN_PRICE, SIZING_MAX_PRICE, res) != 0 ||
	    check_gpu_map(limits, "power_limits", "power limit in W", 1, 1e5,
			  res) != 0)
		goto out;
	{
		/* The job's field errors are named under its key. */
		struct response inner = {0};
		int rc =
		    training
			? training_parse(app, job, false, &trq, &sj, &inner)
			: inference_parse(app, job, false, &irq, &sj, &inner);
		if (rc != 0) {
			if (!json_object_get(inner.json, "errors")) {
				*res = inner; /* 503 and such, as is */
				goto out;
			}
			problem_merge_fields(
			    res, &inner, training ? "training." : "inference.");
			res_release(&inner);
			unknown_gpus(app, body, res);
			goto out;
		}
	}
	if (training && trq.train_tokens <= 0) {
		problem_field(res, "training.train_tokens",
			      "is required to compare: time and cost follow "
			      "from the job's length");
		goto out;
	}
	if (gpu_list(app, body, prices, names, &n, res) != 0)
		goto out;
	/* One deadline for the whole comparison, a step limit per search. */
	sizing_budget_init(&budget, app, req);
	trq.budget = &budget.eng;
	runs = sizing_alloc((size_t)n * sizeof(*runs), res);
	if (!runs || sizing_admit(&budget, res) != 0)
		goto out;
	for (int i = 0; i < n; i++) {
		struct one *o = &runs[i];
		struct store_gpu row;
		char field[32], limit_field[96];
		const json_t *price, *limit;

		snprintf(o->gpu, sizeof(o->gpu), "%s", names[i]);
		snprintf(field, sizeof(field), "gpus[%d]", i);
		/* a job's calibration is named under the job (review
		 * s19b F9b: a 422 named "calibration", a top-level field
		 * the compare body does not have) */
		if (sizing_load_gpu(app, names[i], field, sj.calib,
				    training ? "training.calibration"
					     : "inference.calibration",
				    &o->hw, &o->ci, &row, res) != 0)
			goto out;
		/* the entry's own name, when asked by an alias (names.h) */
		snprintf(o->gpu, sizeof(o->gpu), "%.*s",
			 (int)sizeof(o->gpu) - 1, row.name);
		/* measured, as for one GPU type: the job's own GEMM dtype */
		if (training) {
			if (calib_require_gemm(&o->ci, &o->hw, trq.precision,
					       row.name, "training.calibration",
					       res) != 0)
				goto out;
		} else {
			struct inf_request rq = irq;
			rq.gpu = o->hw;
			if (calib_require_gemm(
				&o->ci, &o->hw, inf_compute_dtype(&rq),
				row.name, "inference.calibration", res) != 0)
				goto out;
		}
		/* the same type under two spellings: two identical rows, one
		 * of them "cheapest" and the other not */
		for (int k = 0; k < i; k++) {
			if (strcmp(runs[k].gpu, o->gpu) != 0)
				continue;
			problem_field(res, field,
				      "\"%s\" is %s, listed already as "
				      "gpus[%d]",
				      names[i], o->gpu, k);
			goto out;
		}
		/* the maps may name the entry or what was asked */
		price = gpu_entry(prices, names[i], o->gpu);
		limit = gpu_entry(limits, names[i], o->gpu);
		snprintf(limit_field, sizeof(limit_field), "power_limits.%s",
			 names[i]);
		sizing_job_hw(&sj, &o->hw, &o->ci);
		if (sizing_power_limit(&o->hw, o->gpu, json_number_value(limit),
				       sj.power_cap_slope, limit_field,
				       res) != 0)
			goto out;
		if (price)
			o->hw.price_per_gpu_hour = json_number_value(price);
		if (!(o->hw.price_per_gpu_hour > 0)) {
			/* Without a price a GPU would look free, hence
			 * "cheapest": ask instead of guessing.
			 */
			problem_field(res, field,
				      "\"%s\" has no price in the catalog; "
				      "give prices.%s",
				      names[i], names[i]);
			goto out;
		}
		memset(&entries[i], 0, sizeof(entries[i]));
		snprintf(entries[i].name, sizeof(entries[i].name), "%s",
			 o->gpu);
		if (training) {
			struct trn_request rq = trq;
			rq.gpu = o->hw;
			rq.price_per_gpu_hour = 0;
			/* a row is the best plan alone: no warning about
			 * "plan(s) 4, 5 of the list", which it does not show */
			rq.top = 1;
			/* sized first, so that a mistake in the job is
			 * every row's 400; then a stack the client named
			 * that cannot run here is not ranked (a default
			 * it did not choose is sized as a what-if, as the
			 * single endpoint does; review s24e F3, F4) */
			o->ok =
			    trn_size(&rq, &o->r.trn, &err) == 0 &&
			    (!sj.stack_named || trn_runs_on(&rq, &err) == 0);
			/* Too large or stopped on one GPU is so for the
			 * request: the whole comparison answers it. */
			if (err.code == ENG_EBUDGET ||
			    err.code == ENG_ECANCELLED) {
				sizing_engine_problem(res, &err, &budget);
				goto out;
			}
			if (o->ok) {
				const struct trn_plan *p = &o->r.trn.plans[0];
				entries[i].time_s = p->days * 86400;
				entries[i].gpus = p->gpus;
				entries[i].cost = p->cost;
				entries[i].throughput = p->tokens_per_s;
				entries[i].meets = p->meets_deadline;
			}
		} else {
			struct inf_request rq = irq;
			struct response scratch = {0};
			rq.gpu = o->hw;
			rq.price_per_gpu_hour = 0;
			if (inference_check_gpu(&rq, "tp", &scratch) != 0) {
				o->ok = 0;
				snprintf(err.message, sizeof(err.message),
					 "tp %d exceeds its GPUs per node",
					 rq.tp);
				res_release(&scratch);
			} else {
				o->ok = inf_size(&rq, &o->r.inf, &err) == 0 &&
					inf_runs_on(&rq, &err) == 0;
			}
			if (o->ok) {
				/* With a rate, rows carry the same load:
				 * they rank by what serving it costs per
				 * hour and by TPOT at that load. With a
				 * concurrency each row serves its own
				 * throughput, so by the cost per million
				 * tokens (review s16a F2). Without a load,
				 * by the cost per million tokens at
				 * capacity and by one request's latency on
				 * an idle replica: TPOT at capacity is how
				 * full the cache runs, not speed (F1). See
				 * MODEL.md §8. */
				const struct inf_plan *p = &o->r.inf.plans[0];
				entries[i].time_s =
				    inf_time_s(p, inf_time_of(&irq));
				entries[i].gpus = p->gpus;
				if (p->pp > 1)
					snprintf(entries[i].layout,
						 sizeof(entries[i].layout),
						 "tp %d x pp %d x %ld "
						 "replica%s",
						 p->tp, p->pp, p->replicas,
						 p->replicas == 1 ? "" : "s");
				else
					snprintf(entries[i].layout,
						 sizeof(entries[i].layout),
						 "tp %d x %ld replica%s", p->tp,
						 p->replicas,
						 p->replicas == 1 ? "" : "s");
				entries[i].cost =
				    rate_load(irq.load_kind)
					? p->cost_per_hour
					: p->cost_per_million_output_tokens;
				entries[i].throughput =
				    p->total_output_tokens_per_s;
				entries[i].meets = p->meets_targets;
			}
		}
		entries[i].ok = o->ok;
		if (!o->ok)
			o->err = err;
		if (!o->ok) {
			snprintf(o->reason, sizeof(o->reason), "%s%s%s",
				 err.field, err.field[0] ? ": " : "",
				 err.message);
			/* The engine's copy is shorter; the row keeps all. */
			memcpy(entries[i].reason, o->reason,
			       sizeof(entries[i].reason) - 1);
			entries[i].reason[sizeof(entries[i].reason) - 1] = '\0';
		}
	}
	if ((check_gpu_map_used(prices, "prices", names, runs, n, res) |
	     check_gpu_map_used(limits, "power_limits", names, runs, n, res)) !=
	    0)
		goto out;
	for (int i = 0; i < n; i++)
		entries[i].efficiency_assumed =
		    !runs[i].ci.used &&
		    (runs[i].hw.efficiency_basis == HW_EFF_DATASHEET_ONLY ||
		     runs[i].hw.efficiency_basis == HW_EFF_VENDOR_CLAIM);
	if (training && trq.deadline_days > 0)
		snprintf(constraint, sizeof(constraint), "the %g-day deadline",
			 trq.deadline_days);
	else if (!training && (irq.ttft_ms > 0 || irq.tpot_ms > 0))
		snprintf(constraint, sizeof(constraint), "the latency targets");
	sizing_budget_end(&budget); /* ranking and storing need no slot */
	{
		/* A mistake in the job itself, not one GPU type's limit: every
		 * type refused the same field as invalid, so it is the 400 a
		 * single sizing would give, named under the job (review s15b:
		 * train_tokens below one step was "no GPU type can run") */
		int same = n > 0;
		for (int i = 0; i < n && same; i++)
			same = !runs[i].ok && runs[i].err.code == ENG_EINVAL &&
			       !strcmp(runs[i].err.field, runs[0].err.field) &&
			       strcmp(runs[i].err.field, "gpus") != 0 &&
			       strcmp(runs[i].err.field, "max_gpus") != 0;
		if (same) {
			char field[96];
			snprintf(field, sizeof(field), "%s.%s",
				 training ? "training" : "inference",
				 runs[0].err.field);
			problem_field(res, field, "%s", runs[0].err.message);
			goto out;
		}
	}
	if (cmp_rank(entries, n,
		     training			      ? CMP_TRAINING
		     : irq.load_kind != INF_LOAD_NONE ? CMP_INFERENCE
						      : CMP_INFERENCE_CAPACITY,
		     constraint[0] ? constraint : NULL, &cmp, &err) != 0) {
		sizing_engine_problem(res, &err, NULL);
		goto out;
	}
	rows = json_array();
	for (int i = 0; i < n; i++) {
		const struct one *o = &runs[i];
		const struct cmp_row *c = &cmp.rows[i];
		json_t *plan;
		/* A row the ranking left out (its numbers not finite)
		 * shows as one that cannot run, with the ranking's reason.
		 */
		int shown_ok = o->ok && c->ranked;
		json_t *row =
		    json_pack("{s:s, s:b, s:o}", "gpu", o->gpu, "ok", shown_ok,
			      "price_per_gpu_hour",
			      sizing_real(o->hw.price_per_gpu_hour, 4));
		/* Every row whole or no answer: never a cheapest that the
		 * table dropped (issue 15).
		 */
		if (!row || json_array_append_new(rows, row) != 0) {
			broken = o->gpu;
			break;
		}
		if (!shown_ok) {
			json_object_set_new(
			    row, "reason",
			    json_string(o->ok ? c->verdict : o->reason));
			continue;
		}
		if (training) {
			const struct trn_plan *p = &o->r.trn.plans[0];
			/* every factor of gpus (tp x pp x dp x cp), the
			 * experts' group and the ZeRO stage (review s14: a
			 * row of 256 GPUs read tp 1 pp 1 dp 16), and what
			 * sets the row's memory and time apart: micro-batch,
			 * recompute, offload (review s21c F6: two rows read
			 * the same while one offloaded its weights) */
			plan = json_pack(
			    "{s:I, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
			    "s:s, s:s, s:o, s:o, s:o, s:o, s:o}",
			    "gpus", (json_int_t)p->gpus, "nodes",
			    (json_int_t)p->nodes, "tp", p->layout.tp, "pp",
			    p->layout.pp, "dp", p->layout.dp, "cp",
			    p->layout.cp, "ep", p->layout.ep, "zero",
			    p->layout.zero, "micro_batch",
			    p->layout.micro_batch, "recompute",
			    eng_recompute_name(p->layout.recompute), "offload",
			    trn_offload_name(p->layout.offload), "days",
			    sizing_real(p->days, 4), "gpu_hours",
			    sizing_real(p->gpu_hours, 4), "cost",
			    sizing_real(p->cost, 4), "tokens_per_s",
			    sizing_real(p->tokens_per_s, 4), "mfu",
			    sizing_real(p->mfu, 3));
			if (plan && p->layout.recompute == ENG_RC_PARTIAL)
				json_object_set_new(
				    plan, "recompute_layers",
				    json_integer(p->layout.recompute_layers));
		} else {
			const struct inf_plan *p = &o->r.inf.plans[0];
			plan = json_pack(
			    "{s:I, s:i, s:i, s:I, s:o, s:o, s:o, s:o, s:o, "
			    "s:o, s:o, s:o, s:b}",
			    "gpus", (json_int_t)p->gpus, "tp", p->tp, "pp",
			    p->pp, "replicas", (json_int_t)p->replicas, "batch",
			    sizing_real(p->batch, 4), "utilization",
			    sizing_real(p->utilization, 3), "ttft_ms",
			    sizing_real(p->ttft_ms, 4), "tpot_ms",
			    sizing_real(p->tpot_ms, 4),
			    "total_output_tokens_per_s",
			    sizing_real(p->total_output_tokens_per_s, 4),
			    "cost_per_hour", sizing_real(p->cost_per_hour, 4),
			    "cost_per_million_output_tokens",
			    sizing_real(p->cost_per_million_output_tokens, 4),
			    "capacity_output_tokens_per_s_per_replica",
			    sizing_real(p->capacity.output_tokens_per_s, 4),
			    "meets_targets", p->meets_targets);
			json_object_set_new(
			    plan, "latency_alone_ms",
			    sizing_real(p->latency_alone_ms, 4));
		}
		if (json_object_update_missing_new(row, plan) != 0) {
			broken = o->gpu;
			break;
		}
		json_object_set_new(row, "speedup_vs_cheapest",
				    sizing_real(c->speedup_vs_cheapest, 3));
		json_object_set_new(row, "cost_vs_cheapest",
				    sizing_real(c->cost_vs_cheapest, 3));
		json_object_set_new(row, "speedup_vs_fastest",
				    sizing_real(c->speedup_vs_fastest, 3));
		json_object_set_new(row, "cost_vs_fastest",
				    sizing_real(c->cost_vs_fastest, 3));
		json_object_set_new(row, "cheapest", json_boolean(c->cheapest));
		json_object_set_new(row, "fastest", json_boolean(c->fastest));
		json_object_set_new(row, "verdict", json_string(c->verdict));
		/* measured when a rate the row was sized with is: a rate the
		 * request states is not (review s18e F9) */
		{
			enum eng_dtype dt =
			    training ? trq.precision : inf_compute_dtype(&irq);
			bool measured = hw_gemm_rate(&o->hw, dt).measured ||
					hw_hbm_rate(&o->hw).measured ||
					hw_intra_rate(&o->hw).measured;

			json_object_set_new(
			    row, "basis",
			    json_string(measured ? "measured fleet medians"
						 : "datasheet×efficiency"));
		}
		json_object_set_new(
		    row, "efficiency_basis",
		    json_string(hw_eff_basis_name(o->hw.efficiency_basis)));
		if (o->hw.power_limit_w > 0)
			json_object_set_new(
			    row, "power_limit",
			    sizing_power_limit_json(
				training ? &o->r.trn.basis.power_cap
					 : &o->r.inf.basis.power_cap));
		/* Every constraint result and warning of the single-GPU
		 * answer (issue 16). */
		if (training && trq.deadline_days > 0)
			json_object_set_new(
			    row, "meets_deadline",
			    json_boolean(o->r.trn.plans[0].meets_deadline));
		json_t *warnings =
		    training ? sizing_warnings_json(o->r.trn.warnings,
						    o->r.trn.n_warnings)
			     : sizing_warnings_json(o->r.inf.warnings,
						    o->r.inf.n_warnings);
		sizing_calib_warnings(warnings, &o->ci);
		json_object_set_new(row, "warnings", warnings);
	}
	if (broken) {
		problem(res, 500, "internal", "Internal error",
			"the answer could not be built; nothing was stored, "
			"and the log has the details under this request id");
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "compare answer: the row of %s did not build", broken);
		goto out;
	}
	{
		char gpus_csv[CMP_MAX_ENTRIES * 65] = "";
		size_t off = 0;
		json_t *summary, *answer;
		const char *accept = req->accept;
		/* CSV when the client prefers it to JSON (an equal q, or
		 * text/csv;q=0, keeps JSON) */
		int q_csv = accept ? http_accept_q(accept, "text/csv") : -1;
		int want_csv =
		    q_csv > 0 &&
		    q_csv > http_accept_q(accept, "application/json");

		for (int i = 0; i < n; i++)
			off += (size_t)snprintf(gpus_csv + off,
						sizeof(gpus_csv) - off, "%s%s",
						i ? "," : "", runs[i].gpu);
		summary = json_pack(
		    "{s:s, s:s, s:s}", "kind",
		    training ? "training" : "inference", "cheapest",
		    cmp.cheapest >= 0 ? runs[cmp.cheapest].gpu : "", "fastest",
		    cmp.fastest >= 0 ? runs[cmp.fastest].gpu : "");
		answer =
		    json_pack("{s:s, s:{s:s}, s:s, s:O, s:s}", "job",
			      training ? "training" : "inference", "model",
			      "name", sj.model_name, "verdict", cmp.summary,
			      "rows", rows, "time_basis",
			      training ? trn_time_basis[trq.objective]
				       : inf_time_basis[inf_time_of(&irq)]);
		if (training) /* the profile every row used (issue 13) */
			json_object_set_new(answer, "stack",
					    json_string(trq.stack.name));
		json_object_set_new(
		    answer, "cost_basis",
		    json_string(training ? "cost of the whole job"
				: rate_load(irq.load_kind)
				    ? "cost_per_hour of serving the stated "
				      "load"
				: irq.load_kind != INF_LOAD_NONE
				    ? "cost_per_million_output_tokens at the "
				      "stated concurrency (each row serves "
				      "its own throughput)"
				    : "cost_per_million_output_tokens at "
				      "each GPU's capacity (no load given)"));
		{
			/* The normalised request: the job as its own endpoint
			 * keeps it, the catalog's names of the GPUs. */
			json_t *request = sizing_request_json(body, NULL, NULL);
			json_t *gl = json_array();
			for (int i = 0; i < n; i++)
				json_array_append_new(gl,
						      json_string(runs[i].gpu));
			json_object_set_new(request, "gpus", gl);
			if (json_is_object(prices))
				json_object_set_new(
				    request, "prices",
				    gpu_map_canonical(prices, names, runs, n));
			if (json_is_object(limits))
				json_object_set_new(
				    request, "power_limits",
				    gpu_map_canonical(limits, names, runs, n));
			json_object_set_new(
			    request, training ? "training" : "inference",
			    training ? training_request_json(job, &trq, &sj)
				     : inference_request_json(job, &irq, &sj));
			sizing_persist(app, req, "compare", sj.model_name,
				       gpus_csv, request, answer, summary, res);
		}
		if (want_csv && res->status == 201) {
			char *csv = to_csv(rows, training ? training_cols
							  : inference_cols);
			if (csv) {
				res_text(res, 201, "text/csv; charset=utf-8",
					 csv, strlen(csv));
				free(csv);
			}
		}
	}
out:
	sizing_budget_end(&budget);
	json_decref(rows);
	free(runs);
	json_decref(body);
}

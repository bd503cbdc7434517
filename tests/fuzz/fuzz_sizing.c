/* fuzz_sizing.c - the three sizing endpoints end to end, minus the
 * database: h_sizing_training, h_sizing_inference and h_sizing_compare on
 * the same body (each refuses the others' bodies early), with the real
 * parsers (training_parse, inference_parse, arch_resolve/arch_parse), the
 * real engine (trn_size, inf_size, compare) and the real rendering. The
 * storage stubs answer GPU and preset lookups from the seeded catalog,
 * report no fleet measurements, and accept the recommendation insert
 * (keeping its text: tests/fuzz/stubs/stub_recs.c).
 *
 * Contract checked on every answer (fuzz_common.h): never 500, problems
 * well formed with their field errors listed; a 201 is JSON (or CSV for
 * compare with Accept: text/csv) that renders. And on every 201 (issue
 * 15), the stored answer is whole: the kind's top-level members, every
 * member of each plan or compare row, no null where a number belongs, and
 * every number finite. Also sizing_real on the first 8 bytes as a double:
 * a finite number gives a finite real within its rounding, never NULL.
 */
#include <math.h>

#include "handlers/api.h"
#include "handlers/sizing.h"
#include "tests/fuzz/fuzz_common.h"

static struct app app; /* db NULL: the stubs never look at it */
extern char *stub_last_rec_response;

/* What the contract (openapi.yaml) lists for each answer. */
static const char *const training_top[] = {"id",
					   "kind",
					   "created_at",
					   "model",
					   "gpu",
					   "global_batch_size",
					   "flops",
					   "min_gpus",
					   "min_gpus_no_offload",
					   "layouts_evaluated",
					   "plans",
					   "checks",
					   "basis",
					   "assumptions",
					   "request",
					   NULL};
/* meets_deadline is in a plan only with a deadline (issue 16). */
static const char *const training_plan[] = {"gpus",
					    "nodes",
					    "tp",
					    "pp",
					    "dp",
					    "zero",
					    "recompute",
					    "sequence_parallel",
					    "flash_attention",
					    "micro_batch",
					    "grad_accum",
					    "global_batch_size",
					    "offload",
					    "memory_gib",
					    "time_s",
					    "tokens_per_s",
					    "tokens_per_s_per_gpu",
					    "mfu",
					    "hfu",
					    "days",
					    "gpu_hours",
					    "cost",
					    "binding",
					    NULL};
static const char *const inference_top[] = {
    "id",      "kind",	"created_at", "model", "gpu",	      "memory",
    "request", "plans", "warnings",   "basis", "assumptions", NULL};
static const char *const inference_plan[] = {"tp",
					     "pp",
					     "batch",
					     "decode_batch",
					     "requests_per_s",
					     "utilization",
					     "ttft_ms",
					     "tpot_ms",
					     "output_tokens_per_s",
					     "total_output_tokens_per_s",
					     "replicas",
					     "gpus",
					     "cost_per_hour",
					     "cost_per_million_output_tokens",
					     "capacity",
					     "memory_gib",
					     "max_batch_fit",
					     "mbu",
					     "binding",
					     "decode_bound",
					     "meets_targets",
					     NULL};
static const char *const compare_top[] = {
    "id",      "kind", "created_at", "job",	   "model", "request",
    "verdict", "rows", "time_basis", "cost_basis", NULL};
static const char *const compare_row[] = {"gpu", "ok", "price_per_gpu_hour",
					  NULL};
static const char *const compare_ok_row[] = {"gpus",
					     "speedup_vs_cheapest",
					     "cost_vs_cheapest",
					     "speedup_vs_fastest",
					     "cost_vs_fastest",
					     "cheapest",
					     "fastest",
					     "verdict",
					     NULL};
/* Null is "not applicable" only here. */
static const char *const nullable[] = {
    "load_value", "max_num_seqs", "max_num_batched_tokens", "serving", NULL};

static void has_all(const json_t *o, const char *const *keys, const char *what)
{
	if (!json_is_object(o))
		FZ_FAIL("201 whose %s is not an object", what);
	for (int i = 0; keys[i]; i++)
		if (!json_object_get(o, keys[i]))
			FZ_FAIL("201 whose %s lacks \"%s\"", what, keys[i]);
}

static int is_nullable(const char *key)
{
	for (int i = 0; nullable[i]; i++)
		if (!strcmp(key, nullable[i]))
			return 1;
	return 0;
}

/* No null where a number belongs, every real finite. */
static void numbers_whole(const json_t *j, const char *key)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_null(j) && !(key && is_nullable(key)))
		FZ_FAIL("201 with \"%s\": null", key ? key : "[]");
	if (json_is_real(j) && !isfinite(json_real_value(j)))
		FZ_FAIL("201 with \"%s\" not finite", key ? key : "[]");
	if (json_is_object(j))
		json_object_foreach((json_t *)j, k, x) numbers_whole(x, k);
	else if (json_is_array(j))
		json_array_foreach(j, i, x) numbers_whole(x, NULL);
}

/* The recommendation stored for a 201 of kind is whole. */
static void answer_whole(const char *kind)
{
	json_t *a, *x;
	size_t i;

	if (!stub_last_rec_response)
		FZ_FAIL("201 (%s) without a stored recommendation", kind);
	a = json_loads(stub_last_rec_response, 0, NULL);
	if (!a)
		FZ_FAIL("201 (%s) whose stored answer is not JSON", kind);
	if (!json_is_string(json_object_get(a, "kind")) ||
	    strcmp(json_string_value(json_object_get(a, "kind")), kind))
		FZ_FAIL("201 of kind \"%s\" stored as another", kind);
	numbers_whole(a, NULL);
	if (!strcmp(kind, "training") || !strcmp(kind, "inference")) {
		int t = !strcmp(kind, "training");
		has_all(a, t ? training_top : inference_top, kind);
		if (json_array_size(json_object_get(a, "plans")) == 0)
			FZ_FAIL("201 (%s) without plans", kind);
		json_array_foreach(json_object_get(a, "plans"), i, x)
		{
			has_all(x, t ? training_plan : inference_plan, "plan");
			/* a deadline's verdict, exactly when one was given */
			if (t &&
			    !json_object_get(x, "meets_deadline") !=
				!json_object_get(json_object_get(a, "request"),
						 "deadline_days"))
				FZ_FAIL("201 whose plan has meets_deadline "
					"without a deadline, or lacks it with "
					"one");
		}
	} else {
		int cheapest = 0;
		has_all(a, compare_top, kind);
		if (json_array_size(json_object_get(a, "rows")) == 0)
			FZ_FAIL("201 (compare) without rows");
		json_array_foreach(json_object_get(a, "rows"), i, x)
		{
			has_all(x, compare_row, "compare row");
			if (json_is_true(json_object_get(x, "ok")))
				has_all(x, compare_ok_row, "compare row");
			else if (!json_is_string(json_object_get(x, "reason")))
				FZ_FAIL("201 with a row not ok and no reason");
			cheapest +=
			    json_is_true(json_object_get(x, "cheapest"));
			if (json_is_string(json_object_get(x, "verdict")) &&
			    (strstr(json_string_value(
					json_object_get(x, "verdict")),
				    "inf") ||
			     strstr(json_string_value(
					json_object_get(x, "verdict")),
				    "nan")))
				FZ_FAIL("201 with a verdict printing inf/nan");
		}
		if (strstr(json_string_value(json_object_get(a, "verdict")),
			   "inf") ||
		    strstr(json_string_value(json_object_get(a, "verdict")),
			   "nan"))
			FZ_FAIL("201 with a compare verdict printing inf/nan");
		/* The cheapest is a row of the table, exactly one. */
		if (cheapest != 1)
			FZ_FAIL("201 (compare) naming %d rows cheapest",
				cheapest);
	}
	json_decref(a);
}

static void one(handler_fn fn, const char *path, const char *accept,
		const char *kind, const char *body, size_t len)
{
	struct request req = {.method = "POST", .path = path, .accept = accept};
	struct response res = {0};

	req.body = body;
	req.body_len = len;
	req.request_id = "fuzz";
	free(stub_last_rec_response);
	stub_last_rec_response = NULL;
	fn(&app, &req, &res);
	fz_check_response(&res, 0);
	if (res.status == 201 && res.json == NULL && res.text == NULL)
		FZ_FAIL("201 without a body");
	if (res.status == 201)
		answer_whole(kind);
	res_release(&res);
}

/* sizing_real keeps what it is given: a finite x is a finite real within
 * half a unit of its digits-th significant digit (or x itself), a
 * non-finite one null; never NULL (a member that would go missing).
 */
static void real_keeps(const uint8_t *data, size_t size)
{
	double x;

	if (size < sizeof(x))
		return;
	memcpy(&x, data, sizeof(x));
	for (int d = 1; d <= 6; d++) {
		json_t *j = sizing_real(x, d);
		double v;
		if (!j)
			FZ_FAIL("sizing_real(%g, %d) is NULL", x, d);
		if (!isfinite(x)) {
			if (!json_is_null(j))
				FZ_FAIL("sizing_real(%g) is not null", x);
			json_decref(j);
			continue;
		}
		if (!json_is_real(j))
			FZ_FAIL("sizing_real(%g, %d) is not a real", x, d);
		v = json_real_value(j);
		if (!isfinite(v) || fabs(v - x) > fabs(x) * pow(10, 1 - d))
			FZ_FAIL("sizing_real(%.17g, %d) = %.17g", x, d, v);
		json_decref(j);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fz_strndup(data, size);

	atomic_store(&app.ready, 1);
	real_keeps(data, size);
	one(h_sizing_training, "/v1/sizing/training", NULL, "training", body,
	    size);
	one(h_sizing_inference, "/v1/sizing/inference", NULL, "inference", body,
	    size);
	/* Compare answers JSON or CSV; the input's length picks which. */
	one(h_sizing_compare, "/v1/sizing/compare",
	    size % 2 ? "text/csv" : "application/json", "compare", body, size);
	free(body);
	return 0;
}

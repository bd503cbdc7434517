/* catalog.c - GET/PUT /v1/gpus[/{name}], GET /v1/models[/{name}]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/api.h"
#include "handlers/arch.h"
#include "handlers/jsonv.h"
#include "handlers/names.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/util.h"
#include "storage/catalog.h"

static const char *const link_kinds[] = {"nvlink", "pcie", "infinity_fabric",
					 NULL};

/* PUT /v1/gpus/{name} body: one rule per catalog field. Ranges are wide
 * sanity bounds (no GPU has 100 PFLOP/s dense or 1 PB of memory yet);
 * every real has a floor far from the subnormals (issue 15): 1e-6 TFLOP/s
 * is 1 MFLOP/s, 0.001 GB/s is 1 MB/s, 0.001 GiB is 1 MiB.
 */
/* engine/hw.h hw_eff_basis names */
static const char *const efficiency_bases[] = {
    "measured", "sibling", "vendor_claim", "datasheet_only", NULL};

static const struct jv_rule gpu_rules[] = {
    {"name", JV_STR, false, 0, 64, NULL, false},
    {"display_name", JV_STR, true, 0, 128, NULL, false},
    {"vendor", JV_STR, true, 0, 64, NULL, false},
    {"architecture", JV_STR, true, 0, 128, NULL, false},
    {"compute_capability", JV_STR, false, 0, 8, NULL, true},
    {"memory_gib", JV_NUM, true, 0.001, 1e6, NULL, false},
    {"memory_type", JV_STR, false, 0, 64, NULL, true},
    {"memory_bandwidth_gbps", JV_NUM, true, 0.001, 1e6, NULL, false},
    {"fp64_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"fp32_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"tf32_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"fp16_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"bf16_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"fp8_tflops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"int8_tops", JV_NUM, false, 1e-6, 1e5, NULL, true},
    {"intra_node_link", JV_ENUM, true, 0, 0, link_kinds, false},
    {"intra_node_gbps", JV_NUM, true, 0.001, 1e6, NULL, false},
    {"max_gpus_per_node", JV_INT, false, 1, 1024, NULL, false},
    {"inter_node_gbps", JV_NUM, false, 0.001, 1e6, NULL, false},
    {"pcie_gen", JV_INT, false, 1, 7, NULL, true},
    {"pcie_width", JV_POW2, false, 1, 16, NULL, true},
    {"power_w", JV_INT, false, 1, 100000, NULL, true},
    /* 0 (no price) or [SIZING_MIN_PRICE, SIZING_MAX_PRICE]. */
    {"price_per_gpu_hour", JV_NUM0, false, SIZING_MIN_PRICE, SIZING_MAX_PRICE,
     NULL, true},
    {"gemm_peak_fraction", JV_NUM, false, 0.01, 1, NULL, true},
    {"efficiency_basis", JV_ENUM, false, 0, 0, efficiency_bases, false},
    {"efficiency_source", JV_STR0, false, 0, 1000, NULL, false},
    {"source", JV_STR, true, 0, 1000, NULL, false},
    {"notes", JV_STR0, false, 0, 4000, NULL, true},
    /* Read-only fields a client may echo back from a GET. */
    {"created_at", JV_STR, false, 0, 64, NULL, true},
    {"updated_at", JV_STR, false, 0, 64, NULL, true},
};

/* The rules one field's range cannot say (after gpu_rules): the form of
 * compute_capability, a measured efficiency with its basis, and the
 * order of the tensor rates. Each names its field in v. */
static void gpu_cross_checks(struct jv *v, const json_t *body)
{
	{
		/* "9.0": major.minor digits (NVIDIA's form); it sets the
		 * default efficiencies (sizing.c), so a typo must not pass as
		 * "non-NVIDIA". null or absent: not an NVIDIA part. */
		const char *cc = json_string_value(
		    json_object_get(body, "compute_capability"));
		size_t major = cc ? strspn(cc, "0123456789") : 0;
		size_t minor = major && cc[major] == '.'
				   ? strspn(cc + major + 1, "0123456789")
				   : 0;
		if (cc && (minor == 0 || cc[major + 1 + minor] != '\0'))
			jv_error(v, "compute_capability",
				 "must be major.minor digits, as \"9.0\" "
				 "(null for a non-NVIDIA part)");
	}
	{
		/* A measured fraction says what it rests on; a basis other
		 * than datasheet_only comes with its figure. */
		const json_t *f = json_object_get(body, "gemm_peak_fraction");
		const char *b = json_string_value(
		    json_object_get(body, "efficiency_basis"));
		bool has_f = json_is_number(f);
		bool none = !b || !strcmp(b, "datasheet_only");
		if (has_f && none)
			jv_error(v, "efficiency_basis",
				 "gemm_peak_fraction needs a basis: measured, "
				 "sibling or vendor_claim");
		else if (!has_f && !none)
			jv_error(v, "gemm_peak_fraction",
				 "is required with efficiency_basis \"%s\"", b);
	}
	{
		/* An 8-bit tensor rate under the 16-bit one is no part's
		 * (Ada, Hopper and Blackwell run FP8 and INT8 at twice their
		 * 16-bit rate): the engine times an FP8 GEMM never slower
		 * than 16-bit, so MFU against such a peak read 3.6 (review
		 * s18c F5). */
		static const char *const eight[] = {"fp8_tflops", "int8_tops"};
		/* ... and a 32- or 64-bit rate at most it: TF32 tensor cores
		 * run at half the 16-bit rate, FP32 and FP64 lower still
		 * (review s18d F11: fp32 90000 beside bf16 500 made fp32
		 * training beat bf16) */
		static const char *const wide[] = {"tf32_tflops", "fp32_tflops",
						   "fp64_tflops"};
		double p16 = 0.0;

		for (int k = 0; k < 2; k++) {
			const json_t *x = json_object_get(
			    body, k ? "fp16_tflops" : "bf16_tflops");
			if (json_is_number(x) && json_number_value(x) > p16)
				p16 = json_number_value(x);
		}
		/* only values their own rule took (review s18e F6: a negative
		 * one was named twice) */
		for (int k = 0; k < 2; k++) {
			const json_t *x = json_object_get(body, eight[k]);
			double d = json_is_number(x) ? json_number_value(x) : 0;

			if (!(d >= 1e-6 && d <= 1e5))
				continue;
			if (!(p16 > 0.0))
				jv_error(v, eight[k],
					 "needs bf16_tflops or fp16_tflops: "
					 "an 8-bit tensor rate beside no "
					 "16-bit one is no part's, and 16-bit "
					 "is what the engine falls back to");
			else if (d < p16)
				jv_error(v, eight[k],
					 "%.10g is under the 16-bit peak "
					 "%.10g: an 8-bit tensor rate is at "
					 "least the 16-bit one (null for a "
					 "part without it)",
					 d, p16);
		}
		for (int k = 0; k < 3 && p16 > 0.0; k++) {
			const json_t *x = json_object_get(body, wide[k]);
			double d = json_is_number(x) ? json_number_value(x) : 0;

			if (d >= 1e-6 && d <= 1e5 && d > p16)
				jv_error(
				    v, wide[k],
				    "%.10g is above the 16-bit peak %.10g: "
				    "a 32- or 64-bit rate is at most the "
				    "16-bit one",
				    d, p16);
		}
	}
}

void h_gpus_list(struct app *app, const struct request *req,
		 struct response *res)
{
	struct store_err e;
	char *items = NULL, *body;
	size_t n;

	(void)req;
	if (store_gpu_list_text(app->db, &items, &e) != STORE_OK) {
		problem_store(res, &e, "gpus");
		return;
	}
	/* The stored JSON text is wrapped, not re-parsed: the hot read. */
	n = strlen(items) + 16;
	body = malloc(n);
	if (body) {
		n = (size_t)snprintf(body, n, "{\"items\":%s}\n", items);
		res_text(res, 200, "application/json", body, n);
	} else {
		problem(res, 503, "unavailable", "Service unavailable",
			"out of memory");
	}
	free(body);
	free(items);
}

/* A name that is not the entry's own: another case or an alias answers
 * the entry (names.h); one that finds nothing is a 404 whose errors[]
 * names the closest entries. 0 with *row, or -1 with res filled. */
static int get_forgiving(struct app *app, enum names_kind kind,
			 const char *asked, json_t **row, struct response *res)
{
	struct store_err e;
	char suggest[3][80];
	int n = 0;
	const char *list = kind == NAMES_GPU ? "GET /v1/gpus lists the catalog"
					     : "GET /v1/models lists them";

	if (names_get(app, kind, asked, row, &e, suggest, &n) == 0)
		return 0;
	if (e.status != STORE_NOT_FOUND) {
		problem_store(res, &e, kind == NAMES_GPU ? "gpu" : "model");
		return -1;
	}
	problem(res, 404, "not-found", "Not found", "no %s named \"%.64s\"; %s",
		kind == NAMES_GPU ? "GPU" : "model preset", asked, list);
	json_object_set_new(
	    res->json, "errors",
	    json_pack("[{s:s, s:s}]", "field", "name", "message",
		      json_string_value(json_object_get(res->json, "detail"))));
	names_suggest(res, suggest, n);
	return -1;
}

void h_gpu_get(struct app *app, const struct request *req, struct response *res)
{
	json_t *gpu;

	if (get_forgiving(app, NAMES_GPU, req->params[0], &gpu, res) == 0) {
		record_get_answer(req, res, gpu);
	}
}

void h_gpu_put(struct app *app, const struct request *req, struct response *res)
{
	const char *name = req->params[0];
	struct jv v = {.res = res};
	struct store_err e;
	json_t *body, *stored = NULL, *given;
	int created = 0;
	char version[512];
	const char *cond;      /* If-Match: NULL, "*" or version */
	json_t *shared = NULL; /* names_shared's warnings */

	if (!names_valid_slug(name)) {
		problem_field(res, "name",
			      "must be a lowercase slug of 1 to 64 "
			      "characters [a-z0-9._-]");
		return;
	}
	if (record_if_match(req, version, sizeof(version), &cond, res) != 0)
		return;
	body = jv_parse_body(req, res);
	if (!body)
		return;
	/* a PUT's answer echoed back: its warnings are not a field */
	json_object_del(body, "warnings");
	jv_check_rules(&v, body, gpu_rules,
		       (int)(sizeof(gpu_rules) / sizeof(gpu_rules[0])));
	given = json_object_get(body, "name");
	if (json_is_string(given) && strcmp(json_string_value(given), name))
		jv_error(&v, "name", "must match the name in the path");
	gpu_cross_checks(&v, body);
	names_check_new(app, NAMES_GPU, name, &v);
	/* before it exists: what the new name takes from other entries */
	shared = problem_field_count(res) ? NULL
					  : names_shared(app, NAMES_GPU, name);
	if (problem_field_count(res) > 0)
		goto out;
	/* 8.0 passed validation as a whole number: store it as 8. */
	jv_ints_as_integers(body, gpu_rules,
			    (int)(sizeof(gpu_rules) / sizeof(gpu_rules[0])));
	/* Timestamps are the server's; an echoed GET body may carry them. */
	json_object_del(body, "created_at");
	json_object_del(body, "updated_at");
	if (store_gpu_put(app->db, name, body, cond, &created, &stored, &e) !=
	    STORE_OK) {
		problem_store(res, &e, "gpu");
		goto out;
	}
	record_answer(res, stored, shared, created, "gpus", name);
out:
	json_decref(shared);
	json_decref(body);
}

/* Adds computed parameter counts to a preset row; a preset whose stored
 * architecture is invalid is reported, not hidden.
 */
static void add_params(json_t *row, struct response *scratch)
{
	struct model_arch m;

	if (arch_parse(json_object_get(row, "arch"), "arch.", &m, scratch) == 0)
		json_object_set_new(row, "params", arch_params_json(&m));
	else
		json_object_set(row, "arch_errors",
				json_object_get(scratch->json, "errors"));
	res_release(scratch);
}

void h_models_list(struct app *app, const struct request *req,
		   struct response *res)
{
	struct store_err e;
	json_t *items, *row;
	size_t i;

	(void)req;
	if (store_model_list(app->db, &items, &e) != STORE_OK) {
		problem_store(res, &e, "models");
		return;
	}
	json_array_foreach(items, i, row)
	{
		struct response scratch = {0};
		add_params(row, &scratch);
	}
	res_json(res, 200, json_pack("{s:o}", "items", items));
}

void h_model_get(struct app *app, const struct request *req,
		 struct response *res)
{
	struct response scratch = {0};
	json_t *row;

	if (get_forgiving(app, NAMES_MODEL, req->params[0], &row, res) != 0)
		return;
	add_params(row, &scratch);
	res_json(res, 200, row);
}

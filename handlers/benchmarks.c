/* benchmarks.c - POST/GET /v1/benchmarks, GET /v1/nodes, GET /v1/fleet
 * (issue 5). The report format is docs/PROBE.md "Report format".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/api.h"
#include "handlers/jsonv.h"
#include "handlers/problem.h"
#include "handlers/util.h"
#include "storage/bench.h"

#define MAX_GPUS	   256
#define MAX_RESULTS	   20000
#define FLEET_WINDOW_DAYS  30
#define DEGRADED_THRESHOLD 0.10

static const char *const run_statuses[] = {"ok", "partial", "no_device",
					   "failed", NULL};
static const char *const result_statuses[] = {"ok", "skipped", "failed", NULL};
/* Metrics the service understands; others are refused so a typo in a
 * probe cannot silently create an unqueryable series.
 */
static const char *const metrics[] = {
    "gemm_tflops",
    "gemm_sweep_tflops",
    "hbm_copy_gbps",
    "hbm_copy_ce_gbps",
    "hbm_read_gbps",
    "hbm_write_gbps",
    "h2d_pinned_gbps",
    "d2h_pinned_gbps",
    "bidir_pinned_gbps",
    "h2d_pageable_gbps",
    "d2h_pageable_gbps",
    "p2p_unidir_gbps",
    "p2p_bidir_gbps",
    "p2p_latency_us",
    "nccl_allreduce_busbw_gbps",
    "nccl_allreduce_algbw_gbps",
    NULL,
};

/* Statistics of a result: finite numbers or null. */
static const char *const stat_keys[] = {
    "median", "max", "mean", "p10", "p90", "cv", "limit", "efficiency", NULL};

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789.-_") == n;
}

static void check_result(struct jv *v, const json_t *x, const json_t *uuids,
			 struct response *res)
{
	const char *s;
	long long n;
	double d;
	int e;
	const json_t *u = json_object_get(x, "gpu_uuid");

	if (!json_is_object(x)) {
		jv_error(v, "", "must be an object");
		return;
	}
	jv_enum(v, x, "metric", true, metrics, &e);
	jv_str(v, x, "unit", true, 16, &s);
	jv_enum(v, x, "status", false, result_statuses, &e);
	if (json_object_get(x, "dtype") &&
	    !json_is_null(json_object_get(x, "dtype")))
		jv_str(v, x, "dtype", false, 16, &s);
	if (json_object_get(x, "method") &&
	    !json_is_null(json_object_get(x, "method")))
		jv_str(v, x, "method", false, 32, &s);
	for (int i = 0; stat_keys[i]; i++)
		jv_num(v, x, stat_keys[i], false, -1e15, 1e15, &d);
	jv_int(v, x, "n", false, 0, 1000000, &n);
	jv_int(v, x, "peer_index", false, 0, MAX_GPUS, &n);
	jv_int(v, x, "size_bytes", false, 0, 1LL << 50, &n);
	if (u && !json_is_null(u)) {
		if (!json_is_string(u) ||
		    !json_object_get(uuids, json_string_value(u)))
			jv_error(v, "gpu_uuid",
				 "must be the uuid of a GPU in gpus[]");
	}
	(void)res;
}

/* Validates the report; the first errors are listed (capped, a broken
 * probe can produce thousands).
 */
static int validate(const json_t *b, const char **run_id, struct response *res)
{
	struct jv v = {.res = res};
	const json_t *node, *gpus, *results, *x;
	json_t *uuids = json_object();
	long long ver = 0;
	const char *s;
	size_t i;
	int e;

	jv_int(&v, b, "schema_version", true, 1, 1, &ver);
	if (jv_str(&v, b, "run_id", true, 36, run_id) == 0 &&
	    !uuid_valid(*run_id))
		jv_error(&v, "run_id", "must be a UUID");
	jv_enum(&v, b, "status", true, run_statuses, &e);
	jv_str(&v, b, "mode", false, 32, &s);
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "finished_at" : "started_at";
		if (jv_str(&v, b, key, false, 64, &s) == 0 &&
		    json_is_string(json_object_get(b, key)) &&
		    !rfc3339_valid(s))
			jv_error(&v, key, "must be an RFC 3339 date-time");
	}
	node = json_object_get(b, "node");
	if (!json_is_object(node)) {
		jv_error(&v, "node", "is required: an object with hostname");
	} else {
		struct jv nv = {.res = res, .prefix = "node."};
		if (jv_str(&nv, node, "hostname", true, 253, &s) == 0 &&
		    !name_ok(s))
			jv_error(&nv, "hostname",
				 "must be a host name [A-Za-z0-9._-]");
	}
	gpus = json_object_get(b, "gpus");
	if (gpus && !json_is_null(gpus) &&
	    (!json_is_array(gpus) || json_array_size(gpus) > MAX_GPUS)) {
		jv_error(&v, "gpus", "must be a list of at most %d GPUs",
			 MAX_GPUS);
	} else {
		json_array_foreach(gpus, i, x)
		{
			struct jv gv = {.res = res};
			long long idx;
			snprintf(gv.prefix, sizeof(gv.prefix), "gpus[%zu].", i);
			if (!json_is_object(x)) {
				jv_error(&v, "gpus", "entries must be objects");
				break;
			}
			jv_int(&gv, x, "index", true, 0, MAX_GPUS, &idx);
			/* NVML may fail to name a GPU: null is allowed. */
			if (jv_present(x, "name"))
				jv_str(&gv, x, "name", false, 128, &s);
			if (jv_str(&gv, x, "uuid", true, 96, &s) == 0) {
				if (json_object_get(uuids, s))
					jv_error(&gv, "uuid",
						 "appears twice in gpus[]");
				json_object_set_new(uuids, s, json_true());
			}
		}
	}
	results = json_object_get(b, "results");
	if (results && !json_is_null(results) &&
	    (!json_is_array(results) ||
	     json_array_size(results) > MAX_RESULTS)) {
		jv_error(&v, "results", "must be a list of at most %d results",
			 MAX_RESULTS);
	} else {
		json_array_foreach(results, i, x)
		{
			struct jv rv = {.res = res};
			snprintf(rv.prefix, sizeof(rv.prefix), "results[%zu].",
				 i);
			check_result(&rv, x, uuids, res);
			if (problem_field_count(res) >= 20)
				break;
		}
	}
	json_decref(uuids);
	return problem_field_count(res) ? -1 : 0;
}

void h_bench_post(struct app *app, const struct request *req,
		  struct response *res)
{
	struct bench_ingest in;
	struct store_err e;
	const char *run_id = NULL;
	json_t *b = jv_parse_body(req, res);

	if (!b)
		return;
	if (validate(b, &run_id, res) != 0)
		goto out;
	if (store_bench_ingest(app->db, run_id, req->body, &in, &e) !=
	    STORE_OK) {
		problem_store(res, &e, "benchmark run");
		goto out;
	}
	if (!in.created && !in.same_report) {
		problem(res, 409, "conflict", "Conflict",
			"run_id %s was already stored with a different "
			"report; a new run needs a new run_id",
			run_id);
		goto out;
	}
	/* A replay answers exactly as the first post did: the probe may
	 * have lost our first answer and must not see an error for it.
	 */
	res_json(res, 201,
		 json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:s}", "run_id",
			   run_id, "hostname", in.hostname, "status", in.status,
			   "gpus", in.gpus, "results", in.results,
			   "received_at", in.received_at, "href", ""));
	{
		char href[96];
		snprintf(href, sizeof(href), "/v1/benchmarks/%s", run_id);
		json_object_set_new(res->json, "href", json_string(href));
		snprintf(res->location, sizeof(res->location), "%s", href);
	}
out:
	json_decref(b);
}

void h_bench_get(struct app *app, const struct request *req,
		 struct response *res)
{
	struct store_err e;
	json_t *run;

	if (!uuid_valid(req->params[0])) {
		problem(res, 404, "not-found", "Not found",
			"no benchmark run with that id (run ids are UUIDs)");
		return;
	}
	if (store_bench_get(app->db, req->params[0], &run, &e) != STORE_OK) {
		problem_store(res, &e, "no benchmark run with that id");
		return;
	}
	res_json(res, 200, run);
}

void h_bench_list(struct app *app, const struct request *req,
		  struct response *res)
{
	struct bench_filter f = {0};
	struct store_err e;
	char next[BENCH_CURSOR_MAX];
	json_t *items, *body;
	static const char *const text_keys[] = {"node", "gpu_type", "metric",
						"dtype", NULL};

	f.hostname = req_query(req, "node");
	f.gpu_type = req_query(req, "gpu_type");
	f.metric = req_query(req, "metric");
	f.dtype = req_query(req, "dtype");
	f.since = req_query(req, "since");
	f.run_id = req_query(req, "run_id");
	f.cursor = req_query(req, "cursor");
	f.limit = query_limit(req, res);
	for (int i = 0; text_keys[i]; i++) {
		const char *q = req_query(req, text_keys[i]);
		if (q && (strlen(q) == 0 || strlen(q) > 253))
			problem_field(res, text_keys[i],
				      "must be 1 to 253 characters");
	}
	if (f.since && !rfc3339_valid(f.since))
		problem_field(res, "since",
			      "must be an RFC 3339 date-time such as "
			      "2026-11-21T00:00:00Z");
	if (f.run_id && !uuid_valid(f.run_id))
		problem_field(res, "run_id", "must be a UUID");
	if (f.cursor && (strlen(f.cursor) == 0 || strlen(f.cursor) > 18 ||
			 strspn(f.cursor, "0123456789") != strlen(f.cursor)))
		problem_field(res, "cursor",
			      "malformed cursor; pass next_cursor back as is");
	if (problem_field_count(res) > 0)
		return;
	if (store_bench_list(app->db, &f, &items, next, &e) != STORE_OK) {
		problem_store(res, &e, "benchmarks");
		return;
	}
	body = json_pack("{s:o}", "items", items);
	json_object_set_new(body, "next_cursor",
			    next[0] ? json_string(next) : json_null());
	res_json(res, 200, body);
}

void h_nodes_list(struct app *app, const struct request *req,
		  struct response *res)
{
	struct store_err e;
	json_t *out;

	(void)req;
	if (store_nodes_list(app->db, &out, &e) != STORE_OK) {
		problem_store(res, &e, "nodes");
		return;
	}
	res_json(res, 200, out);
}

void h_node_get(struct app *app, const struct request *req,
		struct response *res)
{
	struct store_err e;
	json_t *out;

	if (store_node_get(app->db, req->params[0], &out, &e) != STORE_OK) {
		problem_store(res, &e,
			      "no node by that hostname has "
			      "reported");
		return;
	}
	res_json(res, 200, out);
}

void h_fleet(struct app *app, const struct request *req, struct response *res)
{
	struct store_err e;
	json_t *out;
	const char *w = req_query(req, "window_days");
	long days = FLEET_WINDOW_DAYS;

	if (w) {
		char *end;
		days = strtol(w, &end, 10);
		if (!*w || *end || days < 1 || days > 3650) {
			problem_field(res, "window_days",
				      "must be an integer in [1, 3650]");
			return;
		}
	}
	if (store_fleet(app->db, (int)days, DEGRADED_THRESHOLD, &out, &e) !=
	    STORE_OK) {
		problem_store(res, &e, "fleet");
		return;
	}
	res_json(res, 200, out);
}

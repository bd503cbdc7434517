/* fuzz_query.c - every GET handler's query-string validation: ?limit,
 * ?cursor, ?since, ?run_id, ?kind, ?node, ?gpu_type, ?metric, ?dtype,
 * ?window_days, ?format on /v1/benchmarks, /v1/recommendations,
 * /v1/fleet and /v1/reports/capacity (with Accept negotiation), and path
 * parameters on the item GETs. storage/recs.c is included for real, so
 * the recommendation cursor is decoded by the code that serves it; the other
 * storage modules are stubs.
 *
 * Input: "key=value" pairs separated by '&' or newlines (already
 * percent-decoded, as MHD hands them over; at most REQ_MAX_QUERY).
 * Properties: never 500, never a malformed problem; a 503 only from the
 * stubbed database (allowed).
 */
#include "handlers/api.h"
#include "storage/recs.c"
#include "tests/fuzz/fuzz_common.h"

static struct app app;

static void one(handler_fn fn, const char *path, struct request *req)
{
	struct response res = {0};

	req->path = path;
	fn(&app, req, &res);
	fz_check_response(&res, 1);
	res_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_strndup(data, size), *save = NULL, *kv;
	struct request req = {.method = "GET", .request_id = "fuzz"};
	static const char *uuid = "00000000-0000-4000-8000-000000000000";

	for (kv = strtok_r(s, "&\n", &save); kv && req.nquery < REQ_MAX_QUERY;
	     kv = strtok_r(NULL, "&\n", &save)) {
		char *eq = strchr(kv, '=');
		if (eq)
			*eq = '\0';
		req.query[req.nquery].key = kv;
		req.query[req.nquery].value = eq ? eq + 1 : "";
		req.nquery++;
	}
	one(h_bench_list, "/v1/benchmarks", &req);
	one(h_recs_list, "/v1/recommendations", &req);
	one(h_fleet, "/v1/fleet", &req);
	/* The capacity report negotiates on Accept: "accept=" sets it. */
	for (int i = 0; i < req.nquery; i++)
		if (!strcmp(req.query[i].key, "accept"))
			req.accept = req.query[i].value;
	one(h_report_capacity, "/v1/reports/capacity", &req);
	req.accept = NULL;
	/* Path parameters from the first value, as a route would give. */
	req.params[0] = req.nquery ? req.query[0].value : uuid;
	req.nparams = 1;
	if (*req.params[0] && !strchr(req.params[0], '/')) {
		one(h_bench_get, "/v1/benchmarks/x", &req);
		one(h_rec_get, "/v1/recommendations/x", &req);
		one(h_gpu_get, "/v1/gpus/x", &req);
		one(h_model_get, "/v1/models/x", &req);
		one(h_node_get, "/v1/nodes/x", &req);
	}
	free(s);
	return 0;
}

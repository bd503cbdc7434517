/* fuzz_bench.c - POST /v1/benchmarks: the token-tape parse and the report
 * validation (validate and check_result, static in handlers/benchmarks.c,
 * so this harness includes that file), through h_bench_post with the
 * ingest stub accepting what passes (and aborting on an incomplete
 * report: tests/fuzz/stubs/stub_bench.c).
 *
 * Properties: never 500; a 201 only for a document jansson also reads,
 * whose run_id is a canonical UUID, whose node.hostname is a host name,
 * whose gpus[] and results[] are within their caps, and whose every result
 * reached storage with its statistics null, 0 or within [BENCH_STAT_MIN,
 * BENCH_STAT_MAX] in magnitude (the stub aborts otherwise; issue 15); a
 * 400 lists its field errors (at most the documented 20 from results[],
 * plus the top-level ones).
 */
#include "handlers/benchmarks.c"

#include "tests/fuzz/fuzz_common.h"

static struct app app;
extern int stub_last_n_results;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request req = {.method = "POST", .path = "/v1/benchmarks"};
	struct response res = {0};
	char *body = fz_strndup(data, size);
	json_t *b;
	const char *run_id;

	req.body = body;
	req.body_len = size;
	req.request_id = "fuzz";
	stub_last_n_results = -1;
	h_bench_post(&app, &req, &res);
	fz_check_response(&res, 0);
	b = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
	if (res.status == 201) {
		const json_t *node = json_object_get(b, "node");
		const json_t *g = json_object_get(b, "gpus");
		const json_t *r = json_object_get(b, "results");
		if (!b)
			FZ_FAIL("201 for a body jansson refuses");
		run_id = json_string_value(json_object_get(b, "run_id"));
		if (!run_id || !uuid_valid(run_id))
			FZ_FAIL("201 with run_id \"%s\"", run_id);
		if (!name_ok(
			json_string_value(json_object_get(node, "hostname"))))
			FZ_FAIL("201 with a bad hostname");
		if (json_array_size(g) > PROBE_MAX_GPUS ||
		    json_array_size(r) > PROBE_MAX_RESULTS)
			FZ_FAIL("201 over the caps");
		if (stub_last_n_results != (int)json_array_size(r))
			FZ_FAIL("201 storing %d of %zu results",
				stub_last_n_results, json_array_size(r));
	}
	json_decref(b);
	res_release(&res);
	free(body);
	return 0;
}

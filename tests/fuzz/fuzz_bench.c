/* fuzz_bench.c - POST /v1/benchmarks: jv_parse_body and the report
 * validation (validate and check_result, static in handlers/benchmarks.c,
 * so this harness includes that file), through h_bench_post with the
 * ingest stub accepting what passes.
 *
 * Properties: never 500; a 201 only for a report whose run_id is a
 * canonical UUID, whose node.hostname is a host name and whose gpus[] and
 * results[] are within their caps; a 400 lists its field errors (at most
 * the documented 20 from results[], plus the top-level ones).
 */
#include "handlers/benchmarks.c"

#include "tests/fuzz/fuzz_common.h"

static struct app app;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request req = {.method = "POST", .path = "/v1/benchmarks"};
	struct response res = {0}, res2 = {0};
	char *body = fz_strndup(data, size);
	json_t *b;
	const char *run_id = NULL;

	req.body = body;
	req.body_len = size;
	req.request_id = "fuzz";
	h_bench_post(&app, &req, &res);
	fz_check_response(&res, 0);
	b = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
	if (res.status == 201) {
		const json_t *node = json_object_get(b, "node");
		const json_t *g = json_object_get(b, "gpus");
		const json_t *r = json_object_get(b, "results");
		if (!b || validate(b, &run_id, &res2) != 0)
			FZ_FAIL("201 for a report validate() refuses");
		if (!uuid_valid(run_id))
			FZ_FAIL("201 with run_id \"%s\"", run_id);
		if (!name_ok(
			json_string_value(json_object_get(node, "hostname"))))
			FZ_FAIL("201 with a bad hostname");
		if (json_array_size(g) > MAX_GPUS ||
		    json_array_size(r) > MAX_RESULTS)
			FZ_FAIL("201 over the caps");
	}
	json_decref(b);
	res_release(&res);
	res_release(&res2);
	free(body);
	return 0;
}

/* fuzz_sizing.c - the three sizing endpoints end to end, minus the
 * database: h_sizing_training, h_sizing_inference and h_sizing_compare on
 * the same body (each refuses the others' bodies early), with the real
 * parsers (training_parse, inference_parse, arch_resolve/arch_parse), the
 * real engine (trn_size, inf_size, compare) and the real rendering. The
 * storage stubs answer GPU and preset lookups from the seeded catalog,
 * report no fleet measurements, and accept the recommendation insert.
 *
 * Contract checked on every answer (fuzz_common.h): never 500, problems
 * well formed with their field errors listed; a 201 is JSON (or CSV for
 * compare with Accept: text/csv) that renders.
 */
#include "handlers/api.h"
#include "tests/fuzz/fuzz_common.h"

static struct app app; /* db NULL: the stubs never look at it */

static void one(handler_fn fn, const char *path, const char *accept,
		const char *body, size_t len)
{
	struct request req = {.method = "POST", .path = path, .accept = accept};
	struct response res = {0};

	req.body = body;
	req.body_len = len;
	req.request_id = "fuzz";
	fn(&app, &req, &res);
	fz_check_response(&res, 0);
	if (res.status == 201 && res.json == NULL && res.text == NULL)
		FZ_FAIL("201 without a body");
	res_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = fz_strndup(data, size);

	atomic_store(&app.ready, 1);
	one(h_sizing_training, "/v1/sizing/training", NULL, body, size);
	one(h_sizing_inference, "/v1/sizing/inference", NULL, body, size);
	/* Compare answers JSON or CSV; the input's length picks which. */
	one(h_sizing_compare, "/v1/sizing/compare",
	    size % 2 ? "text/csv" : "application/json", body, size);
	free(body);
	return 0;
}

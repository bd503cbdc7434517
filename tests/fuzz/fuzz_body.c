/* fuzz_body.c - the JSON body layer every POST/PUT shares: jv_parse_body
 * (depth guard, jansson with duplicate-key rejection, object check), the
 * jsonv getters and table rules on every member, sizing_int_list, and
 * arch_parse (the model architecture object, inline or nested).
 *
 * Properties beyond "no crash, no sanitizer report":
 *  - every getter either stores a value or records exactly one field error;
 *  - a number stored is finite, never -0, and never a non-zero smaller
 *    in magnitude than JV_NUM_TINY or its field's floor (issue 15);
 *  - jv_reject_unknown records as many errors as it reports (an unknown
 *    key must never be dropped silently);
 *  - the response renders as a problem with its errors listed.
 */
#include <math.h>

#include "handlers/arch.h"
#include "handlers/jsonv.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "tests/fuzz/fuzz_common.h"

static const char *const choices[] = {"fp32", "bf16", "fp8", NULL};
static const char *const known[] = {"model", "seq_len", "gpu", NULL};

static const struct jv_rule rules[] = {
    {"int", JV_INT, false, -5, 1e9, NULL, false},
    {"num", JV_NUM, false, -1e6, 1e18, NULL, false},
    {"num0", JV_NUM0, false, 1e-6, 1e4, NULL, true},
    {"bool", JV_BOOL, false, 0, 0, NULL, true},
    {"str", JV_STR, false, 0, 64, NULL, false},
    {"enum", JV_ENUM, false, 0, 0, choices, true},
    {"req", JV_INT, true, 0, 10, NULL, false},
};

/* Each getter on key: a value stored, or exactly one more field error. */
static void getters(const json_t *o, const char *key, struct response *res)
{
	struct jv v = {.res = res, .prefix = "x."};
	long long i = 0;
	double d = 0;
	bool b = false;
	const char *s = NULL;
	int e = -1, before, rc, list[8];

	before = problem_field_count(res);
	rc = jv_int(&v, o, key, true, -1000, 1LL << 40, &i);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_int failed without exactly one field error");
	before = problem_field_count(res);
	rc = jv_num(&v, o, key, false, -1e300, 1e300, &d);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_num failed without exactly one field error");
	if (rc == 0 && !isfinite(d))
		FZ_FAIL("jv_num stored a non-finite number");
	if (rc == 0 && (signbit(d) && d == 0))
		FZ_FAIL("jv_num stored -0");
	if (rc == 0 && d != 0 && fabs(d) < JV_NUM_TINY)
		FZ_FAIL("jv_num stored %g, below JV_NUM_TINY", d);
	before = problem_field_count(res);
	d = 0;
	rc = jv_num0(&v, o, key, false, -1e15, 1e15, 1e-9, &d);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_num0 failed without exactly one field error");
	if (rc == 0 && (!isfinite(d) || (signbit(d) && d == 0) ||
			(d != 0 && (fabs(d) < 1e-9 || fabs(d) > 1e15))))
		FZ_FAIL("jv_num0 stored %g outside 0 and [1e-9, 1e15]", d);
	before = problem_field_count(res);
	rc = jv_bool(&v, o, key, &b);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_bool failed without exactly one field error");
	before = problem_field_count(res);
	rc = jv_str(&v, o, key, false, 64, &s);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_str failed without exactly one field error");
	if (rc == 0 && s && (strlen(s) == 0 || strlen(s) > 64))
		FZ_FAIL("jv_str stored a string outside 1..64 bytes");
	before = problem_field_count(res);
	rc = jv_enum(&v, o, key, false, choices, &e);
	if (rc != 0 && problem_field_count(res) != before + 1)
		FZ_FAIL("jv_enum failed without exactly one field error");
	if (rc == 0 && e != -1 && (e < 0 || e > 2))
		FZ_FAIL("jv_enum index out of range");
	rc = sizing_int_list(&v, o, key, 1, 1024, list, 8);
	if (rc > 8)
		FZ_FAIL("sizing_int_list overflowed its cap");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request req = {.method = "POST", .path = "/fuzz"};
	struct response res = {0};
	struct model_arch m;
	json_t *o;
	char *body = fz_strndup(data, size);
	const char *key;
	json_t *val;
	int n = 0;

	req.body = body;
	req.body_len = size;
	o = jv_parse_body(&req, &res);
	if (!o) {
		if (res.status != 400)
			FZ_FAIL("jv_parse_body failed without a 400");
		fz_check_response(&res, 0);
		goto out;
	}
	{
		struct jv v = {.res = &res};
		int before = problem_field_count(&res);
		int unknown = jv_reject_unknown(&v, o, known);
		if (problem_field_count(&res) - before != unknown)
			FZ_FAIL("jv_reject_unknown reported %d unknown keys "
				"but recorded %d field errors",
				unknown, problem_field_count(&res) - before);
	}
	json_object_foreach(o, key, val)
	{
		(void)val;
		if (n++ >= 16)
			break;
		getters(o, key, &res);
	}
	{
		struct jv v = {.res = &res};
		jv_check_rules(&v, o, rules,
			       (int)(sizeof(rules) / sizeof(rules[0])));
	}
	/* An architecture object at the top level or under "model". */
	arch_parse(o, "", &m, &res);
	if (json_is_object(json_object_get(o, "model")) &&
	    arch_parse(json_object_get(o, "model"), "model.", &m, &res) == 0) {
		if (m.layers < 1 || m.hidden_size < 1 || m.heads < 1)
			FZ_FAIL("arch_parse accepted a degenerate model");
		json_decref(arch_params_json(&m));
	}
	if (res.status)
		fz_check_response(&res, 0);
	json_decref(o);
out:
	res_release(&res);
	free(body);
	return 0;
}

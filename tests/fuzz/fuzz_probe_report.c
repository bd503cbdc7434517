/* fuzz_probe_report.c - the probe's report checker, probe_report_check in
 * probe/report_check.c (run by gpusizer-probe --post before sending and on
 * spooled files), on any JSON the fuzzer makes.
 *
 * Properties: no crash; a refusal names the field in its message; an
 * accepted report's statistics are null, 0 or 1e-9 to 1e15 in magnitude
 * (the server's floor, issue 15).
 * With GSZ_FUZZ_DIFF=1 also a differential against the server's check
 * (validate in handlers/benchmarks.c, included here): a report the probe
 * accepts and sends must not be refused by the server, or the probe moves
 * a good run to rejected/. Off by default: the two checkers differ on
 * purpose in places (docs/PROBE.md), and run.sh keeps to crash-freedom.
 */
#include "handlers/benchmarks.c"
#include "probe/report.h"
#include "probe/report_check.h"

#include "tests/fuzz/fuzz_common.h"

/* Every statistic of every result: null, 0, or PROBE_NUMBER_MIN to
 * PROBE_NUMBER_MAX in magnitude.
 */
static void stats_bounded(const json_t *root)
{
	static const char *const keys[] = {"median", "max",	   "mean",
					   "p10",    "p90",	   "cv",
					   "limit",  "efficiency", NULL};
	const json_t *x;
	size_t i;

	json_array_foreach(json_object_get(root, "results"), i, x)
	{
		for (int k = 0; keys[k]; k++) {
			const json_t *v = json_object_get(x, keys[k]);
			double d;
			if (!v || json_is_null(v))
				continue;
			d = json_number_value(v);
			if (d != 0 && !(fabs(d) >= PROBE_NUMBER_MIN &&
					fabs(d) <= PROBE_NUMBER_MAX))
				FZ_FAIL("the probe accepts results[%zu].%s = "
					"%g",
					i, keys[k], d);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int diff = -1;
	json_t *root = json_loadb((const char *)data, size, 0, NULL);
	char err[512];
	int accepted;

	if (diff < 0)
		diff =
		    getenv("GSZ_FUZZ_DIFF") && *getenv("GSZ_FUZZ_DIFF") == '1';
	if (!root)
		return 0;
	err[0] = '\0';
	accepted = probe_report_check(root, err, sizeof(err)) == 0;
	if (!accepted && (!err[0] || !strchr(err, ':')))
		FZ_FAIL("probe_report_check refused without naming the field: "
			"\"%s\"",
			err);
	if (accepted)
		stats_bounded(root);
	if (accepted && diff) {
		struct response res = {0};
		struct bench_report rep;
		struct jtape t;
		struct jv_arena a;
		const char **reasons = NULL;
		char *text = json_dumps(root, JSON_COMPACT);
		struct request req = {.body = text,
				      .body_len = text ? strlen(text) : 0};
		if (jv_parse_tape(&req, &res, &t, &a) != 0 ||
		    validate(&t, &a, &rep, &reasons, &res) != 0) {
			char *m = json_dumps(res.json, JSON_COMPACT);
			FZ_FAIL("the probe accepts a report the server "
				"refuses: %s",
				m ? m : "?");
		}
		free((void *)rep.results);
		free(reasons);
		jv_tape_free(&t, &a);
		free(text);
		res_release(&res);
	}
	json_decref(root);
	return 0;
}

/* Unit tests of gpusizer-probe's report checker (probe_report_check): the
 * server's POST /v1/benchmarks rules, field by field, and the metric list
 * the service documents. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "probe_fixtures.h"
#include "report.h"
#include "report_check.h"
#include "testlib.h"
#include "util.h"

/* ---- the checker applies the server's rules ------------------------ */

/* A valid encoded report: 2 GPUs, results 0 (GPU 0), 1 (GPU 1, skipped),
 * 2 (node-wide). Caller decrefs. */
static json_t *valid_report(void)
{
	struct probe_report r;
	json_t *j;

	make_report(&r);
	j = probe_report_to_json(&r);
	probe_report_free(&r);
	return j;
}

static json_t *str_of(char c, size_t n)
{
	char buf[512];

	memset(buf, c, n);
	buf[n] = '\0';
	return json_string(buf);
}

static void test_check_gpu_uuid_in_gpus(void)
{
	json_t *j = valid_report(), *x = res_at(j, 0);

	json_object_set_new(x, "gpu_uuid", json_string("GPU-not-listed"));
	REFUSED(j, "results[0].gpu_uuid");
	json_object_set_new(x, "gpu_uuid", json_string(""));
	REFUSED(j, "results[0].gpu_uuid");
	json_object_set_new(x, "gpu_uuid", json_integer(1));
	REFUSED(j, "results[0].gpu_uuid");
	/* another listed GPU, null, absent: fine */
	json_object_set(x, "gpu_uuid", json_object_get(gpu_at(j, 1), "uuid"));
	/* ... with that GPU's index: the two names agree (review s24c F3) */
	json_object_set_new(x, "gpu_index", json_integer(0));
	REFUSED(j, "results[0].gpu_index");
	json_object_set(x, "gpu_index", json_object_get(gpu_at(j, 1), "index"));
	ACCEPTED(j);
	json_object_set_new(x, "gpu_uuid", json_null());
	ACCEPTED(j);
	json_object_del(x, "gpu_uuid");
	ACCEPTED(j);
	/* a result may name only a GPU of this report's gpus[] */
	json_array_clear(json_object_get(j, "gpus"));
	json_object_set_new(
	    res_at(j, 1), "gpu_uuid",
	    json_string("GPU-00000000-0000-4000-8000-000000000001"));
	REFUSED(j, "results[1].gpu_uuid");
	json_decref(j);
}

/* The checker's whole message on j: 1 when it is want. */
static int message_is(const json_t *j, const char *want, int line)
{
	char err[512] = "";
	int rc = probe_report_check(j, err, sizeof(err));

	if (rc == -1 && strcmp(err, want) == 0)
		return 1;
	printf("# line %d: want \"%s\", got rc %d \"%s\"\n", line, want, rc,
	       err);
	return 0;
}
#define MESSAGE(j, want) CHECK(message_is((j), (want), __LINE__))

/* node.gpu_uuids: null or absent, or 1 to 256 UUIDs (strings of 1..96
 * bytes), none twice, holding every gpus[].uuid, and null where NVML was
 * not asked; the texts the server answers too (probe/contract.h). */
static void test_check_gpu_uuids(void)
{
	static const char type_err[] =
	    "node.gpu_uuids: must be null or a list of 1 to 256 GPU UUIDs "
	    "(strings)";
	static const char entry_err[] =
	    "node.gpu_uuids[2]: must be a GPU UUID, a string of 1 to 96 bytes";
	json_t *j = valid_report(), *node = json_object_get(j, "node");
	json_t *u0 = json_object_get(gpu_at(j, 0), "uuid");
	json_t *u1 = json_object_get(gpu_at(j, 1), "uuid");
	json_t *list, *fix;
	json_error_t je;
	char buf[160];
	int i;

	/* the encoder writes null; absent is null too (older probes) */
	CHECK(json_is_null(json_object_get(node, "gpu_uuids")));
	ACCEPTED(j);
	json_object_del(node, "gpu_uuids");
	ACCEPTED(j);
	/* the measured two and a GPU the run did not measure, any order */
	list = json_array();
	json_array_append_new(
	    list, json_string("GPU-4d774db7-82ff-3577-39d7-efc51bad255e"));
	json_array_append(list, u1);
	json_array_append(list, u0);
	json_object_set_new(node, "gpu_uuids", list);
	ACCEPTED(j);
	/* 256 UUIDs, 96 bytes long */
	list = json_array();
	json_array_append(list, u0);
	json_array_append(list, u1);
	for (i = 2; i < PROBE_MAX_GPUS; i++) {
		snprintf(buf, sizeof(buf), "GPU-%d", i);
		json_array_append_new(list, json_string(buf));
	}
	json_array_set_new(list, 2, str_of('u', PROBE_GPU_UUID_MAX));
	json_object_set_new(node, "gpu_uuids", list);
	ACCEPTED(j);
	/* 257 */
	json_array_append_new(list, json_string("GPU-257"));
	MESSAGE(j, type_err);
	json_array_remove(list, PROBE_MAX_GPUS);
	ACCEPTED(j);
	/* a UUID of 97 bytes, an empty one, one with a NUL, a number, null:
	 * the entry named (review s25a F8) */
	json_array_set_new(list, 2, str_of('u', PROBE_GPU_UUID_MAX + 1));
	MESSAGE(j, entry_err);
	json_array_set_new(list, 2, json_string(""));
	MESSAGE(j, entry_err);
	json_array_set_new(list, 2, json_stringn("GPU-\0x", 6));
	MESSAGE(j, entry_err);
	json_array_set_new(list, 2, json_integer(2));
	MESSAGE(j, entry_err);
	json_array_set_new(list, 2, json_null());
	MESSAGE(j, entry_err);
	/* not a list */
	json_object_set_new(node, "gpu_uuids", json_string("GPU-a"));
	MESSAGE(j, type_err);
	json_object_set_new(node, "gpu_uuids", json_object());
	MESSAGE(j, type_err);
	json_object_set_new(node, "gpu_uuids", json_false());
	MESSAGE(j, type_err);
	/* a UUID twice */
	list = json_array();
	json_array_append(list, u0);
	json_array_append(list, u1);
	json_array_append(list, u0);
	json_object_set_new(node, "gpu_uuids", list);
	snprintf(buf, sizeof(buf), "node.gpu_uuids: %s appears twice",
		 json_string_value(u0));
	MESSAGE(j, buf);
	/* a GPU of gpus[] left out: the first named */
	json_array_remove(list, 2);
	json_array_remove(list, 0);
	MESSAGE(j, "node.gpu_uuids: must list every gpus[].uuid (gpus[0].uuid "
		   "is missing)");
	json_array_set(list, 0, u0);
	MESSAGE(j, "node.gpu_uuids: must list every gpus[].uuid (gpus[1].uuid "
		   "is missing)");
	/* empty: never an inventory (it would remove every GPU of the node,
	 * review s25a F7) */
	json_array_clear(list);
	MESSAGE(j, type_err);
	/* NVML's list: not where NVML was off */
	json_array_append(list, u0);
	json_array_append(list, u1);
	ACCEPTED(j);
	json_object_set_new(node, "nvml_available", json_false());
	MESSAGE(j, PROBE_GPU_UUIDS_ERR_NO_NVML);
	json_decref(j);
	/* nor in a no_device report, even an empty list */
	fix = json_load_file(FIX "report_synthetic_no_device.json", 0, &je);
	CHECK(fix != NULL);
	if (fix == NULL)
		return;
	ACCEPTED(fix);
	json_object_set_new(json_object_get(fix, "node"), "gpu_uuids",
			    json_array());
	MESSAGE(fix, type_err);
	json_object_set_new(json_object_get(fix, "node"), "gpu_uuids",
			    json_pack("[s]", "GPU-a"));
	MESSAGE(fix, PROBE_GPU_UUIDS_ERR_NO_NVML);
	json_decref(fix);
}

static void test_check_hostname(void)
{
	json_t *j = valid_report(), *node = json_object_get(j, "node");
	static const char *const bad[] = {
	    "gpu node", "h\xc3\xa9te", "a/b", "a:b",
	    "",		"a\tb",	       "x@y", "n\xe2\x80\x8b"};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object_set_new(node, "hostname", json_string(bad[i]));
		REFUSED(j, "node.hostname");
	}
	json_object_set_new(node, "hostname", str_of('a', 254));
	REFUSED(j, "node.hostname");
	json_object_set_new(node, "hostname", json_null());
	REFUSED(j, "node.hostname");
	json_object_set_new(node, "hostname", str_of('a', 253));
	ACCEPTED(j);
	json_object_set_new(node, "hostname", json_string("Node_17.rack-3"));
	ACCEPTED(j);
	json_decref(j);
}

static void test_check_gpus(void)
{
	json_t *j = valid_report(), *g0 = gpu_at(j, 0), *gpus, *x;
	int i;

	/* the same uuid twice */
	json_object_set(gpu_at(j, 1), "uuid", json_object_get(g0, "uuid"));
	REFUSED(j, "gpus[1].uuid");
	json_decref(j);

	j = valid_report();
	g0 = gpu_at(j, 0);
	/* name: null or 1..128 bytes (bytes, not characters) */
	json_object_set_new(g0, "name", json_null());
	ACCEPTED(j);
	json_object_del(g0, "name");
	ACCEPTED(j);
	json_object_set_new(g0, "name", str_of('n', 128));
	ACCEPTED(j);
	json_object_set_new(g0, "name", str_of('n', 129));
	REFUSED(j, "gpus[0].name");
	json_object_set_new(g0, "name", json_string(""));
	REFUSED(j, "gpus[0].name");
	json_object_set_new(g0, "name", json_integer(5));
	REFUSED(j, "gpus[0].name");
	json_object_set_new(g0, "name", json_stringn("H1\0", 3));
	REFUSED(j, "gpus[0].name");
	json_object_set_new(g0, "name", json_string("NVIDIA H100"));
	/* uuid: 1..96 bytes, required (results[0] names GPU 0: repoint) */
	json_object_set_new(res_at(j, 0), "gpu_uuid", json_null());
	json_object_set_new(g0, "uuid", str_of('u', 96));
	ACCEPTED(j);
	json_object_set_new(g0, "uuid", str_of('u', 97));
	REFUSED(j, "gpus[0].uuid");
	json_object_set_new(g0, "uuid", json_string(""));
	REFUSED(j, "gpus[0].uuid");
	json_object_set_new(g0, "uuid", json_null());
	REFUSED(j, "gpus[0].uuid");
	json_object_set_new(g0, "uuid", json_string("GPU-a"));
	/* index: integer in [0, 256]; a whole real is read as an integer */
	json_object_set_new(g0, "index", json_integer(256));
	ACCEPTED(j);
	json_object_set_new(g0, "index", json_real(3.0));
	ACCEPTED(j);
	json_object_set_new(g0, "index", json_integer(257));
	REFUSED(j, "gpus[0].index");
	json_object_set_new(g0, "index", json_integer(-1));
	REFUSED(j, "gpus[0].index");
	json_object_set_new(g0, "index", json_real(1.5));
	REFUSED(j, "gpus[0].index");
	json_object_set_new(g0, "index", json_string("0"));
	REFUSED(j, "gpus[0].index");
	json_object_set_new(g0, "index", json_integer(0));
	ACCEPTED(j);
	/* at most 256 GPUs */
	json_object_set_new(res_at(j, 1), "gpu_uuid", json_null());
	gpus = json_object_get(j, "gpus");
	for (i = (int)json_array_size(gpus); i < 256; i++) {
		char u[32];
		x = json_deep_copy(g0);
		snprintf(u, sizeof(u), "GPU-%d", i);
		json_object_set_new(x, "uuid", json_string(u));
		json_object_set_new(x, "index", json_integer(i));
		json_array_append_new(gpus, x);
	}
	/* gpu_count counts them (review s24c F3) */
	REFUSED(j, "node.gpu_count");
	json_object_set_new(json_object_get(j, "node"), "gpu_count",
			    json_integer(256));
	ACCEPTED(j);
	x = json_deep_copy(g0);
	json_object_set_new(x, "uuid", json_string("GPU-one-too-many"));
	json_array_append_new(gpus, x);
	REFUSED(j, "gpus");
	json_array_clear(gpus);
	json_array_append_new(gpus, json_string("GPU-0"));
	REFUSED(j, "gpus[0]");
	json_object_set_new(j, "gpus", json_object());
	REFUSED(j, "gpus");
	json_decref(j);
}

static void test_check_dates(void)
{
	static const char *const good[] = {
	    "2025-11-21T00:00:00.000Z",
	    "2025-11-30T23:59:59Z",
	    "2024-02-29T12:00:00Z", /* leap year */
	    "2000-02-29T12:00:00Z", /* divisible by 400 */
	    "2016-12-31T23:59:60Z", /* leap second */
	    "2025-11-21t00:00:00z",
	    "2025-11-21T05:30:00+05:30",
	    "2025-11-21T00:00:00-15:59",
	    "2025-11-21T00:00:00+15:59",
	    "2025-11-21T00:00:00.123456789Z",
	    /* exactly 64 characters */
	    "2025-11-21T00:00:00.1234567890123456789012345678901234567890123Z",
	};
	static const char *const bad[] = {
	    "2025-11-31T00:00:00Z", /* November has 30 days */
	    "2025-04-31T00:00:00Z",
	    "2025-02-29T00:00:00Z", /* not a leap year */
	    "1900-02-29T00:00:00Z", /* divisible by 100, not 400 */
	    "0000-01-01T00:00:00Z", /* year 0 */
	    "2025-13-01T00:00:00Z",
	    "2025-00-10T00:00:00Z",
	    "2025-11-00T00:00:00Z",
	    "2025-11-21T24:00:00Z",
	    "2025-11-21T23:60:00Z",
	    "2025-11-21T23:59:61Z",
	    "2025-11-21T00:00:00+24:00",
	    /* beyond a PostgreSQL timestamptz's offsets: the server's 400
	     * (review s16b F4) */
	    "2025-11-21T00:00:00+16:00",
	    "2025-11-21T00:00:00-23:59",
	    "2025-11-21T00:00:00+05:60",
	    "2025-11-21T00:00:00+0530",
	    "2025-11-21T00:00:00",
	    "2025-11-21T00:00:00.Z",
	    "2025-11-21 00:00:00Z", /* the server takes it; not RFC 3339 5.6 */
	    "2025-11-21",	    /* likewise: a date, not a date-time */
	    "2025-11-21T00:00:00ZZ",
	    "25-11-21T00:00:00Z",
	    "yesterday",
	    "",
	    /* 65 characters */
	    "2025-11-21T00:00:00.12345678901234567890123456789012345678901234Z",
	};
	json_t *j = valid_report();
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK(probe_time_valid(good[i]));
		json_object_set_new(j, "started_at", json_string(good[i]));
		json_object_set_new(j, "finished_at", json_string(good[i]));
		ACCEPTED(j);
	}
	/* year 1 is a date-time, but before 2000 no probe ran: a node whose
	 * clock reset (PROBE_EARLIEST_S; review s19c F4) */
	CHECK(probe_time_valid("0001-01-01T00:00:00Z"));
	json_object_set_new(j, "started_at",
			    json_string("0001-01-01T00:00:00Z"));
	json_object_set_new(j, "finished_at",
			    json_string("0001-01-01T00:00:00Z"));
	REFUSED(j, "started_at");
	json_object_set_new(j, "started_at", json_string(good[0]));
	json_object_set_new(j, "finished_at", json_string(good[0]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!probe_time_valid(bad[i]));
		json_object_set_new(j, "started_at", json_string(bad[i]));
		REFUSED(j, "started_at");
		json_object_set_new(j, "started_at", json_string(good[0]));
		json_object_set_new(j, "finished_at", json_string(bad[i]));
		REFUSED(j, "finished_at");
		json_object_set_new(j, "finished_at", json_string(good[0]));
	}
	CHECK(!probe_time_valid(NULL));
	json_object_set_new(j, "started_at", json_integer(1763683200));
	REFUSED(j, "started_at");
	json_decref(j);
}

static void test_check_string_limits(void)
{
	json_t *j = valid_report(), *x = res_at(j, 0);

	/* unit: one of the probe's units (all within the server's 16) */
	json_object_set_new(x, "unit", str_of('u', 17));
	REFUSED(j, "results[0].unit");
	/* ... and the metric's own (probe_metric_unit; review s19c F6) */
	json_object_set_new(x, "unit", json_string("TOP/s"));
	REFUSED(j, "results[0].unit");
	json_object_set_new(x, "dtype", json_string("int8"));
	ACCEPTED(j);
	json_object_set_new(x, "unit", json_string("TFLOP/s"));
	REFUSED(j, "results[0].unit");
	json_object_set_new(x, "dtype", json_string("bf16"));
	ACCEPTED(j);
	/* dtype: null or one of the probe's (PROBE_DTYPES; review s15:
	 * "bf99" was stored) */
	json_object_set_new(x, "dtype", json_string("fp8_e4m3"));
	ACCEPTED(j);
	json_object_set_new(x, "dtype", json_string("bf99"));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", str_of('d', 16));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", str_of('d', 17));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_string(""));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_stringn("bf\0", 3));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_true());
	REFUSED(j, "results[0].dtype");
	/* a GEMM rate names its dtype (the server's rule, review s15b);
	 * another metric may leave it null */
	json_object_set_new(x, "dtype", json_null());
	REFUSED(j, "results[0].dtype");
	json_object_del(x, "dtype");
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "metric", json_string("hbm_copy_gbps"));
	json_object_set_new(x, "unit", json_string("GB/s"));
	json_object_set_new(x, "dtype", json_null());
	ACCEPTED(j);
	json_object_set_new(x, "metric", json_string("gemm_tflops"));
	json_object_set_new(x, "unit", json_string("TFLOP/s"));
	json_object_set_new(x, "dtype", json_string("bf16"));
	ACCEPTED(j);
	/* method: null or 1..32 bytes */
	json_object_set_new(x, "method", str_of('m', 32));
	ACCEPTED(j);
	json_object_set_new(x, "method", str_of('m', 33));
	REFUSED(j, "results[0].method");
	json_object_set_new(x, "method", json_string(""));
	REFUSED(j, "results[0].method");
	json_object_del(x, "method");
	ACCEPTED(j);
	/* mode: the probe's enum (within the server's 32) */
	json_object_set_new(j, "mode", str_of('m', 33));
	REFUSED(j, "mode");
	json_decref(j);
}

/* An ok result's median: above 0 (probe/contract.h probe_stats_problem;
 * review s23c F1), as the server refuses it; not held to its own limit
 * (review s23d F4: NVML's link limits can be understated ~100x in a VM). */
static void test_check_stats_median(void)
{
	json_t *j = valid_report(), *x = res_at(j, 0);
	double med = json_number_value(json_object_get(x, "median"));

	CHECK(med > 0);
	json_object_set_new(x, "median", json_real(0));
	REFUSED(j, "results[0].median");
	json_object_set_new(x, "median", json_real(-0.0));
	REFUSED(j, "results[0].median");
	json_object_set_new(x, "median", json_real(med));
	ACCEPTED(j);
	/* 100x the result's own limit is taken */
	json_object_set_new(x, "limit", json_real(med / 100.0));
	ACCEPTED(j);
	/* a skipped result's median is not held to it */
	json_object_set_new(x, "median", json_real(0));
	json_object_set_new(x, "status", json_string("skipped"));
	json_object_set_new(x, "reason", json_string("test"));
	ACCEPTED(j);
	json_decref(j);
}

static void test_check_number_ranges(void)
{
	static const char *const keys[] = {
	    "median", "max", "mean", "p10", "p90", "cv", "limit", "efficiency"};
	json_t *j = valid_report(), *x = res_at(j, 0);
	size_t i;

	/* each field's range alone: on a skipped result, which the order
	 * and limit rules of an ok one (test_check_stats_median) leave be */
	json_object_set_new(x, "status", json_string("skipped"));
	json_object_set_new(x, "reason", json_string("range test"));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char field[64];
		json_t *old = json_deep_copy(json_object_get(x, keys[i]));

		snprintf(field, sizeof(field), "results[0].%s", keys[i]);
		json_object_set_new(x, keys[i], json_real(1e15));
		ACCEPTED(j);
		/* no rate, bandwidth or latency is negative (review s15) */
		json_object_set_new(x, keys[i], json_real(-1e15));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_integer(1000000000000000));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(1.000001e15));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_real(-1e16));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_integer(1000000000000001));
		REFUSED(j, field);
		/* 0, or at least 1e-9 (issue 15) */
		json_object_set_new(x, keys[i], json_real(0));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(-0.0));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(1e-9));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(-1e-9));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_real(9.9e-10));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_real(1e-310));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_real(-5e-324));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_string("1"));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_true());
		REFUSED(j, field);
		json_object_set_new(x, keys[i], old);
		ACCEPTED(j);
	}
	/* null is allowed, except a median of an ok result (probe rule) */
	json_object_set_new(x, "status", json_string("ok"));
	json_object_del(x, "reason");
	json_object_set_new(x, "limit", json_null());
	ACCEPTED(j);
	json_object_set_new(res_at(j, 1), "median", json_null());
	ACCEPTED(j);
	json_object_set_new(x, "median", json_null());
	REFUSED(j, "results[0].median");
	json_decref(j);
}

static void test_check_integer_ranges(void)
{
	json_t *j = valid_report(), *x = res_at(j, 0);

	/* n: 0..1e6 */
	json_object_set_new(x, "n", json_integer(1000000));
	ACCEPTED(j);
	json_object_set_new(x, "n", json_real(5.0));
	ACCEPTED(j);
	json_object_set_new(x, "n", json_integer(1000001));
	REFUSED(j, "results[0].n");
	json_object_set_new(x, "n", json_integer(-1));
	REFUSED(j, "results[0].n");
	json_object_set_new(x, "n", json_real(5.5));
	REFUSED(j, "results[0].n");
	json_object_set_new(x, "n", json_real(1e300));
	REFUSED(j, "results[0].n");
	json_object_set_new(x, "n", json_integer(5));
	/* peer_index: null or 0..256 */
	json_object_set_new(x, "peer_index", json_integer(256));
	ACCEPTED(j);
	json_object_set_new(x, "peer_index", json_integer(257));
	REFUSED(j, "results[0].peer_index");
	json_object_set_new(x, "peer_index", json_integer(-1));
	REFUSED(j, "results[0].peer_index");
	json_object_set_new(x, "peer_index", json_string("1"));
	REFUSED(j, "results[0].peer_index");
	json_object_set_new(x, "peer_index", json_null());
	ACCEPTED(j);
	/* size_bytes: null or 0..2^50, and, as no number of a report may
	 * pass 1e15 (the server's check_magnitudes), at most 1e15 in effect:
	 * 2^50 was accepted here and answered 400 (review s16b F4) */
	json_object_set_new(x, "size_bytes", json_integer(1000000000000000LL));
	ACCEPTED(j);
	json_object_set_new(x, "size_bytes", json_integer((json_int_t)1 << 50));
	REFUSED(j, "results");
	json_object_set_new(x, "size_bytes", json_real(1024.0));
	ACCEPTED(j);
	json_object_set_new(x, "size_bytes",
			    json_integer(((json_int_t)1 << 50) + 1));
	REFUSED(j, "results[0].size_bytes");
	json_object_set_new(x, "size_bytes", json_integer(-1));
	REFUSED(j, "results[0].size_bytes");
	json_object_set_new(x, "size_bytes", json_real(1024.5));
	REFUSED(j, "results[0].size_bytes");
	json_object_del(x, "size_bytes");
	ACCEPTED(j);
	/* schema_version: 1 (1.0 is the same number to the server) */
	json_object_set_new(j, "schema_version", json_real(1.0));
	ACCEPTED(j);
	json_object_set_new(j, "schema_version", json_integer(2));
	REFUSED(j, "schema_version");
	json_decref(j);
}

/* 1 when name is one of names[0..n). */
static int in_list(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* The documents that repeat contract.h's metric list as an enum name the
 * same set: probe/report.schema.json and openapi.yaml (BenchmarkResult
 * metric, the one enum that starts with gemm_tflops). Run from the
 * repository root, as tests/run.sh does. */
static void test_metrics_documented(void)
{
	size_t n, i, found = 0;
	const char *const *names = probe_metric_names(&n);
	json_t *schema = json_load_file("probe/report.schema.json", 0, NULL);
	json_t *e = json_object_get(
	    json_object_get(
		json_object_get(
		    json_object_get(json_object_get(schema, "$defs"), "result"),
		    "properties"),
		"metric"),
	    "enum");
	FILE *f = fopen("openapi.yaml", "r");
	char *yaml = NULL, *p, *end;
	size_t cap = 0;
	ssize_t got;

	CHECK(json_is_array(e) && json_array_size(e) == n);
	for (i = 0; json_is_array(e) && i < json_array_size(e); i++) {
		const char *m = json_string_value(json_array_get(e, i));
		if (!m || !in_list(names, n, m))
			printf(
			    "# report.schema.json: %s is not in contract.h\n",
			    m ? m : "(not a string)");
		CHECK(m && in_list(names, n, m));
	}
	CHECK(f != NULL);
	got = f ? getdelim(&yaml, &cap, '\0', f) : -1;
	p = got > 0 ? strstr(yaml, "enum: [gemm_tflops,") : NULL;
	end = p ? strchr(p, ']') : NULL;
	CHECK(p && end);
	if (p && end) {
		p += strlen("enum: [");
		while (p < end) {
			size_t l = strcspn(p, ", \n]");
			char m[64];
			if (l > 0 && l < sizeof(m)) {
				memcpy(m, p, l);
				m[l] = '\0';
				if (!in_list(names, n, m))
					printf("# openapi.yaml: %s is not in "
					       "contract.h\n",
					       m);
				CHECK(in_list(names, n, m));
				found++;
			}
			p += l ? l : 1;
		}
		CHECK(found == n);
	}
	free(yaml);
	if (f)
		fclose(f);
	json_decref(schema);
}

static void test_check_metrics(void)
{
	size_t n_names;
	const char *const *server = probe_metric_names(&n_names);
	static const char *const bad[] = {"gemm_flops", "GEMM_TFLOPS", "",
					  "nccl_alltoall_busbw_gbps"};
	json_t *j = valid_report(), *x = res_at(j, 0);
	size_t i;

	for (i = 0; i < n_names; i++) {
		/* each in its unit, with a dtype where it has one (review
		 * s19c F6, F8) */
		int rule = probe_metric_dtype_rule(server[i]);

		CHECK(probe_metric_known(server[i]));
		CHECK(probe_metric_unit(server[i], "bf16") != NULL);
		json_object_set_new(x, "metric", json_string(server[i]));
		json_object_set_new(x, "dtype",
				    rule == PROBE_DTYPE_NONE
					? json_null()
					: json_string("bf16"));
		json_object_set_new(
		    x, "unit",
		    json_string(probe_metric_unit(server[i], "bf16")));
		ACCEPTED(j);
		if (rule == PROBE_DTYPE_NONE) {
			json_object_set_new(x, "dtype", json_string("bf16"));
			REFUSED(j, "results[0].dtype");
		}
	}
	json_object_set_new(x, "dtype", json_string("bf16"));
	json_object_set_new(x, "unit", json_string("TFLOP/s"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!probe_metric_known(bad[i]));
		json_object_set_new(x, "metric", json_string(bad[i]));
		REFUSED(j, "results[0].metric");
	}
	json_object_set_new(x, "metric", json_null());
	REFUSED(j, "results[0].metric");
	json_decref(j);
}

static void test_check_sizes_and_depth(void)
{
	json_t *j = valid_report(), *results = json_object_get(j, "results");
	json_t *deep = json_integer(1);
	int i;

	/* at most 20000 results */
	while (json_array_size(results) < 20000)
		json_array_append(results, json_array_get(results, 2));
	ACCEPTED(j);
	json_array_append(results, json_array_get(results, 2));
	REFUSED(j, "results");
	json_object_set_new(j, "results", json_object());
	REFUSED(j, "results");
	json_object_set_new(j, "results", json_array());
	json_array_append_new(json_object_get(j, "results"), json_integer(1));
	REFUSED(j, "results[0]");
	json_object_set_new(j, "results", json_array());
	ACCEPTED(j);
	/* nesting: the report object is level 1; 32 levels are the most */
	for (i = 0; i < 31; i++)
		deep = json_pack("[o]", deep);
	json_object_set(j, "extra", deep); /* the report + 31 arrays */
	ACCEPTED(j);
	json_object_set_new(j, "extra", json_pack("[O]", deep));
	REFUSED(j, "report");
	json_decref(deep);
	json_decref(j);
}

/* ---- the cases the server's API test feeds it too ------------------- */

/* Sets the JSON value text at path ("node.cpu_model", "gpus.0.name") of
 * j: object members are set (made when missing), array entries replaced.
 * 0, or -1 when the path or the value does not fit. */
static int set_path(json_t *j, char *path, const char *text)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL), *at = j;
	char *seg = path, *dot;
	int rc = -1;

	if (v == NULL)
		goto out;
	for (; (dot = strchr(seg, '.')) != NULL; seg = dot + 1) {
		*dot = '\0';
		at = json_is_array(at)
			 ? json_array_get(at, strtoul(seg, NULL, 10))
			 : json_object_get(at, seg);
		if (at == NULL)
			goto out;
	}
	if (json_is_array(at))
		rc = json_array_set(at, strtoul(seg, NULL, 10), v);
	else
		rc = json_object_set(at, seg, v);
out:
	json_decref(v);
	return rc;
}

/* tests/fixtures/probe/ingest_cases.tsv, which tests/api/t_benchmarks.sh
 * posts to the server: each case the server refuses (400) is refused
 * here naming the same field, each it stores (201) is accepted (review
 * s16b F4: the checker had fallen behind the server). */
static void test_check_server_cases(void)
{
	FILE *f = fopen(FIX "ingest_cases.tsv", "r");
	json_t *base =
	    json_load_file(FIX "report_synthetic_no_device.json", 0, NULL);
	char line[4096];
	int cases = 0;

	CHECK(f != NULL && base != NULL);
	while (f && base && fgets(line, sizeof(line), f)) {
		char *save = NULL, *expect, *field, *path, *val;
		json_t *j;
		int ok = 1;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		expect = strtok_r(line, "\t", &save);
		field = strtok_r(NULL, "\t", &save);
		CHECK(expect && field);
		if (!expect || !field)
			continue;
		j = json_deep_copy(base);
		/* a run that may carry GPUs and results (a no_device one may
		 * not: review s19c F3); a case may set status itself */
		json_object_set_new(j, "status", json_string("partial"));
		while ((path = strtok_r(NULL, "\t", &save)) != NULL) {
			val = strtok_r(NULL, "\t", &save);
			CHECK(val && set_path(j, path, val) == 0);
			ok = ok && val;
		}
		if (ok && !strcmp(expect, "201")) {
			if (!verdict_is(j, NULL, __LINE__))
				printf("# case %d (201) is refused\n", cases);
			ACCEPTED(j);
		} else if (ok) {
			if (!verdict_is(j, field, __LINE__))
				printf("# case %d (400 %s) is not refused\n",
				       cases, field);
			REFUSED(j, field);
		}
		json_decref(j);
		cases++;
	}
	CHECK(cases >= 30);
	if (f)
		fclose(f);
	json_decref(base);
}

/* The encoder's own free text is shown text (review s16c F4): a library
 * message with a line break, an escape or a bidirectional override is
 * written with '?' in their place, so the report is not refused for it. */
static void test_encoder_cleans_shown_text(void)
{
	struct probe_report r;
	char err[256] = "";
	json_t *j;

	make_report(&r);
	snprintf(r.error_message, sizeof(r.error_message),
		 "nccl: remote\nerror \x1b[31m\xe2\x80\xaeX caf\xc3\xa9");
	snprintf(r.results[1].reason, sizeof(r.results[1].reason),
		 "\xc2\x85skipped\x7f");
	j = probe_report_to_json(&r);
	CHECK(j != NULL);
	if (j) {
		json_t *res = json_object_get(j, "results");
		const char *msg = json_string_value(
		    json_object_get(json_object_get(j, "error"), "message"));
		const char *why = json_string_value(
		    json_object_get(json_array_get(res, 1), "reason"));
		CHECK(msg && !strcmp(msg, "nccl: remote?error ?[31m?X "
					  "caf\xc3\xa9"));
		CHECK(why && !strcmp(why, "?skipped?"));
		CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	}
	json_decref(j);
	probe_report_free(&r);
	CHECK(probe_shown_text_ok("caf\xc3\xa9 \xe2\x80\x93 \xc2\xb5s"));
	CHECK(!probe_shown_text_ok("a\xe2\x81\xa6"
				   "b"));
}

int main(void)
{
	RUN(test_check_gpu_uuid_in_gpus);
	RUN(test_check_gpu_uuids);
	RUN(test_check_hostname);
	RUN(test_check_gpus);
	RUN(test_check_dates);
	RUN(test_check_string_limits);
	RUN(test_check_number_ranges);
	RUN(test_check_stats_median);
	RUN(test_check_integer_ranges);
	RUN(test_check_metrics);
	RUN(test_metrics_documented);
	RUN(test_check_sizes_and_depth);
	RUN(test_check_server_cases);
	RUN(test_encoder_cleans_shown_text);
	return testlib_finish();
}

/* Unit tests of gpusizer-probe's report: the in-memory form, its JSON
 * encoding against the fixtures, and what the encoder sanitises. Run from
 * the repository root (fixtures are read from tests/fixtures/probe). */
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

/* ---- report JSON --------------------------------------------------- */

static void test_report_roundtrip(void)
{
	struct probe_report r;
	char *text, err[256];
	json_t *j, *res0, *res1, *res2, *g1;
	json_error_t je;

	make_report(&r);
	probe_report_finalize_status(&r);
	CHECK(r.status == PROBE_RUN_OK); /* not-applicable skip */
	text = probe_report_dumps(&r);
	CHECK(text != NULL);
	j = json_loads(text, 0, &je);
	CHECK(j != NULL);
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	CHECK(json_integer_value(json_object_get(j, "schema_version")) == 1);
	CHECK(strcmp(json_string_value(json_object_get(j, "run_id")),
		     r.run_id) == 0);
	CHECK(strcmp(json_string_value(json_object_get(j, "mode")), "quick") ==
	      0);
	CHECK(json_is_null(json_object_get(j, "only")));
	CHECK(json_is_false(json_object_get(j, "synthetic")));
	CHECK(json_is_null(json_object_get(j, "error")));
	CHECK(json_integer_value(json_object_get(
		  json_object_get(j, "node"), "cuda_driver_version")) == 13000);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "nccl_version")));
	g1 = json_array_get(json_object_get(j, "gpus"), 1);
	CHECK(json_integer_value(json_object_get(g1, "index")) == 1);
	CHECK(json_integer_value(json_object_get(json_object_get(g1, "pcie"),
						 "gen_max")) == 5);
	CHECK_NEAR(json_real_value(json_object_get(json_object_get(g1, "pcie"),
						   "limit_gbps")),
		   63.0154, 1e-6);
	CHECK(json_integer_value(json_object_get(json_object_get(g1, "nvlink"),
						 "active_links")) == 18);
	CHECK(json_is_null(
	    json_object_get(json_object_get(g1, "nvlink"), "per_link_gbps")));
	CHECK(json_is_true(json_object_get(g1, "ecc_enabled")));
	CHECK(json_is_false(json_object_get(g1, "mig_mode")));
	CHECK(json_is_null(json_object_get(g1, "numa_node")));

	res0 = json_array_get(json_object_get(j, "results"), 0);
	CHECK_NEAR(json_number_value(json_object_get(res0, "median")), 795,
		   1e-12);
	CHECK_NEAR(json_number_value(json_object_get(res0, "max")), 800, 1e-12);
	CHECK_NEAR(json_number_value(json_object_get(res0, "mean")), 795.2,
		   1e-12);
	CHECK_NEAR(json_number_value(json_object_get(res0, "p10")), 791.2,
		   1e-12);
	CHECK_NEAR(json_number_value(json_object_get(res0, "efficiency")),
		   795 / 989.4, 1e-5);
	CHECK(json_integer_value(json_object_get(res0, "n")) == 5);
	CHECK(json_array_size(json_object_get(res0, "samples")) == 5);
	CHECK(json_integer_value(json_object_get(json_object_get(res0, "shape"),
						 "k")) == 13312);
	CHECK(json_is_null(json_object_get(res0, "peer_index")));
	CHECK(json_is_null(json_object_get(res0, "size_bytes")));
	CHECK(strcmp(json_string_value(json_array_get(
			 json_object_get(json_object_get(res0, "telemetry"),
					 "clock_event_reasons"),
			 0)),
		     "sw_power_cap") == 0);
	CHECK(json_is_null(json_object_get(json_object_get(res0, "telemetry"),
					   "mem_clock_mhz")));

	res1 = json_array_get(json_object_get(j, "results"), 1);
	CHECK(strcmp(json_string_value(json_object_get(res1, "status")),
		     "skipped") == 0);
	CHECK(strcmp(json_string_value(json_object_get(res1, "reason")),
		     "needs compute capability >= 8.9") == 0);
	CHECK(json_is_null(json_object_get(res1, "median")));
	CHECK(json_integer_value(json_object_get(res1, "n")) == 0);
	CHECK(json_is_null(json_object_get(res1, "telemetry")));
	CHECK(json_is_null(json_object_get(res1, "shape")));

	res2 = json_array_get(json_object_get(j, "results"), 2);
	CHECK(json_is_null(json_object_get(res2, "gpu_index")));
	CHECK(json_is_null(json_object_get(res2, "gpu_uuid")));
	CHECK(json_integer_value(json_object_get(res2, "size_bytes")) ==
	      (json_int_t)8 << 30);
	CHECK(json_integer_value(json_object_get(res2, "nranks")) == 8);
	CHECK(json_is_null(json_object_get(res2, "limit")));
	CHECK(json_is_null(json_object_get(res2, "efficiency")));

	/* the checker names the field it rejects */
	json_object_set_new(res0, "metric", json_string("gemm_flops"));
	CHECK(probe_report_check(j, err, sizeof(err)) == -1);
	CHECK(strstr(err, "results[0].metric") != NULL);
	json_object_set_new(res0, "metric", json_string("gemm_tflops"));
	json_object_set_new(j, "run_id", json_string("not-a-uuid"));
	CHECK(probe_report_check(j, err, sizeof(err)) == -1);
	CHECK(strstr(err, "run_id") != NULL);
	json_object_set_new(j, "run_id", json_string(r.run_id));
	json_object_set_new(j, "started_at", json_string("yesterday"));
	CHECK(probe_report_check(j, err, sizeof(err)) == -1);
	CHECK(strstr(err, "started_at") != NULL);
	json_object_set_new(j, "started_at",
			    json_string("2025-11-21T00:00:00+01:00"));
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	json_object_set_new(res1, "reason", json_null());
	CHECK(probe_report_check(j, err, sizeof(err)) == -1);
	CHECK(strstr(err, "results[1].reason") != NULL);

	json_decref(j);
	free(text);
	probe_report_free(&r);
}

static void test_report_status(void)
{
	struct probe_report r;
	struct probe_result x;

	make_report(&r);
	probe_result_init(&x);
	strcpy(x.metric, "nccl_allreduce_busbw_gbps");
	strcpy(x.unit, "GB/s");
	probe_result_skip(&x, 1, "libnccl.so.2 not found");
	probe_report_add(&r, &x);
	probe_report_finalize_status(&r);
	CHECK(r.status == PROBE_RUN_PARTIAL);
	probe_report_free(&r);

	probe_report_init(&r);
	probe_result_init(&x);
	strcpy(x.metric, "hbm_copy_gbps");
	strcpy(x.unit, "GB/s");
	probe_result_fail(&x, "cudaErrorMemoryAllocation");
	probe_report_add(&r, &x);
	probe_report_finalize_status(&r);
	CHECK(r.status == PROBE_RUN_FAILED);
	r.status = PROBE_RUN_NO_DEVICE;
	probe_report_finalize_status(&r);
	CHECK(r.status == PROBE_RUN_NO_DEVICE);
	probe_report_free(&r);
}

static void check_fixture(const char *name, const char *want_status)
{
	json_error_t je;
	char err[256];
	json_t *j = json_load_file(name, 0, &je);

	CHECK(j != NULL);
	if (j == NULL) {
		printf("# %s: %s\n", name, je.text);
		return;
	}
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	if (probe_report_check(j, err, sizeof(err)) != 0)
		printf("# %s: %s\n", name, err);
	CHECK(json_is_true(json_object_get(j, "synthetic")));
	CHECK(strstr(json_string_value(json_object_get(j, "probe_version")),
		     "synthetic") != NULL);
	CHECK(strcmp(json_string_value(json_object_get(j, "status")),
		     want_status) == 0);
	json_decref(j);
}

static void test_fixtures(void)
{
	check_fixture(FIX "report_synthetic_h100x8.json", "ok");
	check_fixture(FIX "report_synthetic_no_device.json", "no_device");
}

/* The fixture has the same keys as what the encoder writes. */
static void test_fixture_keys_match_encoder(void)
{
	struct probe_report r;
	json_error_t je;
	json_t *mine, *fix, *a, *b;
	const char *key;
	json_t *v;
	int missing = 0;

	make_report(&r);
	mine = probe_report_to_json(&r);
	fix = json_load_file(FIX "report_synthetic_h100x8.json", 0, &je);
	CHECK(mine && fix);
	if (!mine || !fix)
		goto out;
	json_object_foreach(mine, key, v) missing +=
	    json_object_get(fix, key) == NULL;
	json_object_foreach(fix, key, v) missing +=
	    json_object_get(mine, key) == NULL;
	a = json_array_get(json_object_get(mine, "results"), 0);
	b = json_array_get(json_object_get(fix, "results"), 0);
	json_object_foreach(a, key, v) missing +=
	    json_object_get(b, key) == NULL;
	json_object_foreach(b, key, v) missing +=
	    json_object_get(a, key) == NULL;
	a = json_array_get(json_object_get(mine, "gpus"), 0);
	b = json_array_get(json_object_get(fix, "gpus"), 0);
	json_object_foreach(a, key, v) missing +=
	    json_object_get(b, key) == NULL;
	json_object_foreach(b, key, v) missing +=
	    json_object_get(a, key) == NULL;
	a = json_object_get(mine, "node");
	b = json_object_get(fix, "node");
	/* node.gpu_uuids came after the fixture, whose absent one is null */
	json_object_foreach(a, key, v) missing +=
	    json_object_get(b, key) == NULL && strcmp(key, "gpu_uuids") != 0;
	CHECK(missing == 0);
out:
	json_decref(mine);
	json_decref(fix);
	probe_report_free(&r);
}

/* What the probe gathers is made postable by the encoder. */
static void test_encoder_sanitises(void)
{
	struct probe_report r;
	struct probe_result x;
	const double big[] = {2e15, 2e15, 2e15};
	const double s[] = {10, 11, 12};
	char host[PROBE_HOSTNAME_MAX + 1], err[512];
	json_t *j, *gpus, *res;
	int i;

	probe_hostname_sanitize("gpu node#1.example", host, sizeof(host));
	CHECK(strcmp(host, "gpu-node-1.example") == 0);
	probe_hostname_sanitize("h\xc3\xa9te_1", host, sizeof(host));
	CHECK(strcmp(host, "h--te_1") == 0);
	probe_hostname_sanitize("", host, sizeof(host));
	CHECK(strcmp(host, "unknown") == 0);
	probe_hostname_sanitize("ok-Name_1.x", host, sizeof(host));
	CHECK(strcmp(host, "ok-Name_1.x") == 0);

	make_report(&r);
	memset(r.node.hostname, 'h', sizeof(r.node.hostname) - 1);
	r.node.hostname[7] = ' ';
	/* a name longer than 128 bytes with a 2-byte character across the
	 * cut: cut before it */
	memset(r.gpus[0].name, 'N', 200);
	r.gpus[0].name[127] = '\xc3';
	r.gpus[0].name[128] = '\xa9';
	r.gpus[0].name[200] = '\0';
	strcpy(r.gpus[1].name, "bad \xff utf-8");
	/* a GPU without a uuid, one with a uuid already listed */
	r.gpus = realloc(r.gpus, 4 * sizeof(*r.gpus));
	r.n_gpus = 4;
	probe_gpu_init(&r.gpus[2], 2);
	probe_gpu_init(&r.gpus[3], 3);
	strcpy(r.gpus[3].uuid, r.gpus[0].uuid);
	/* results: naming the GPU without uuid (only its index), an ok
	 * result whose median cannot be reported, out-of-range size and
	 * peer, an efficiency over 1e15 */
	probe_result_init(&x);
	x.gpu_index = 2;
	strcpy(x.gpu_uuid, "GPU-never-listed");
	strcpy(x.metric, "hbm_copy_gbps");
	strcpy(x.unit, "GB/s");
	x.size_bytes = ((int64_t)1 << 50) + 1;
	x.peer_index = 300;
	CHECK(probe_result_set_samples(&x, s, 3) == 0);
	x.limit = 1e-14; /* efficiency ~1e15 .. 1.2e15 */
	probe_report_add(&r, &x);
	probe_result_init(&x);
	strcpy(x.metric, "hbm_read_gbps");
	strcpy(x.unit, "GB/s");
	CHECK(probe_result_set_samples(&x, big, 3) == -1);
	probe_report_add(&r, &x); /* status still "ok" in memory */

	j = probe_report_to_json(&r);
	CHECK(j != NULL);
	CHECK(verdict_is(j, NULL, __LINE__));
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	CHECK(strlen(json_string_value(json_object_get(
		  json_object_get(j, "node"), "hostname"))) == 253);
	CHECK(json_string_value(json_object_get(json_object_get(j, "node"),
						"hostname"))[7] == '-');
	gpus = json_object_get(j, "gpus");
	CHECK(json_array_size(gpus) == 2);
	CHECK(json_string_length(json_object_get(gpu_at(j, 0), "name")) == 127);
	CHECK(json_is_null(json_object_get(gpu_at(j, 1), "name")));
	res = res_at(j, 3);
	CHECK(json_integer_value(json_object_get(res, "gpu_index")) == 2);
	CHECK(json_is_null(json_object_get(res, "gpu_uuid")));
	CHECK(json_is_null(json_object_get(res, "size_bytes")));
	CHECK(json_is_null(json_object_get(res, "peer_index")));
	CHECK(json_is_null(json_object_get(res, "efficiency")));
	/* a limit under 1e-9 is null, not a subnormal the server refuses */
	CHECK(json_is_null(json_object_get(res, "limit")));
	CHECK(json_is_null(json_object_get(res, "limit_basis")));
	CHECK_NEAR(json_number_value(json_object_get(res, "median")), 11, 0);
	res = res_at(j, 4);
	CHECK(strcmp(json_string_value(json_object_get(res, "status")),
		     "failed") == 0);
	CHECK(json_string_length(json_object_get(res, "reason")) > 0);
	CHECK(json_is_null(json_object_get(res, "median")));
	CHECK(json_integer_value(json_object_get(res, "n")) == 0);
	json_decref(j);

	/* more results than the server takes: the first 20000 are written */
	for (i = (int)r.n_results; i < PROBE_MAX_RESULTS + 5; i++) {
		probe_result_init(&x);
		strcpy(x.metric, "p2p_latency_us");
		strcpy(x.unit, "us");
		probe_result_skip(&x, 0, "filler");
		probe_report_add(&r, &x);
	}
	j = probe_report_to_json(&r);
	CHECK(json_array_size(json_object_get(j, "results")) ==
	      PROBE_MAX_RESULTS);
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	json_decref(j);
	probe_report_free(&r);
}

/* Review s17c F10: the encoder writes what the server's typed check
 * takes: a gpu_index over 256 as null, samples as numbers >= 0 (one that
 * is not, a timing gone wrong, is left out). */
static void test_encoder_types(void)
{
	struct probe_report r;
	struct probe_result x;
	const double s[] = {-1, 10, 11, 12};
	char err[512];
	json_t *j, *res;

	make_report(&r);
	probe_result_init(&x);
	x.gpu_index = 300;
	strcpy(x.metric, "hbm_copy_gbps");
	strcpy(x.unit, "GB/s");
	CHECK(probe_result_set_samples(&x, s, 4) == 0);
	probe_report_add(&r, &x);
	j = probe_report_to_json(&r);
	CHECK(j != NULL);
	CHECK(verdict_is(j, NULL, __LINE__));
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	res = res_at(j, r.n_results - 1);
	CHECK(json_is_null(json_object_get(res, "gpu_index")));
	CHECK(json_array_size(json_object_get(res, "samples")) == 3);
	CHECK(json_number_value(
		  json_array_get(json_object_get(res, "samples"), 0)) == 10);
	json_decref(j);
	probe_report_free(&r);
}

static void test_set_samples_bounds(void)
{
	struct probe_result x;
	const double ok[] = {1e15, 1e15};
	const double neg[] = {-3e15, -3e15, -3e15};
	const double tiny[] = {1e-310, 1e-310};
	const double small[] = {1e-9, 1e-9}, zero[] = {0, 0};
	double *many = calloc(PROBE_N_MAX + 1, sizeof(double));

	probe_result_init(&x);
	CHECK(probe_result_set_samples(&x, ok, 2) == 0);
	CHECK(probe_result_set_samples(&x, neg, 3) == -1);
	/* a median the server refuses (issue 15) is no measurement */
	CHECK(probe_result_set_samples(&x, tiny, 2) == -1);
	CHECK(probe_result_set_samples(&x, small, 2) == 0);
	CHECK(probe_result_set_samples(&x, zero, 2) == 0);
	CHECK(many != NULL);
	if (many) {
		CHECK(probe_result_set_samples(&x, many, PROBE_N_MAX + 1) ==
		      -1);
		CHECK(x.n_samples == 0 && x.samples == NULL);
	}
	free(many);
	free(x.samples);
}

int main(void)
{
	RUN(test_report_roundtrip);
	RUN(test_report_status);
	RUN(test_fixtures);
	RUN(test_fixture_keys_match_encoder);
	RUN(test_encoder_sanitises);
	RUN(test_encoder_types);
	RUN(test_set_samples_bounds);
	return testlib_finish();
}

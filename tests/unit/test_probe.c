/* Unit tests of gpusizer-probe's GPU-free parts: statistics, limit
 * arithmetic, report JSON, run_id, CLI, spool, HTTP posting (against an
 * in-process HTTP server on 127.0.0.1), NVML-free helpers. Run from the
 * repository root (fixtures are read from tests/fixtures/probe). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "limits.h"
#include "nvml.h"
#include "post.h"
#include "report.h"
#include "report_check.h"
#include "spool.h"
#include "stats.h"
#include "testlib.h"
#include "util.h"

#define FIX "tests/fixtures/probe/"

/* ---- statistics ---------------------------------------------------- */

static void test_stats_odd(void)
{
	const double s[] = {5, 1, 4, 2, 3};
	struct probe_stats st;

	CHECK(probe_stats_compute(s, 5, &st) == 0);
	CHECK_NEAR(st.median, 3.0, 1e-12);
	CHECK_NEAR(st.mean, 3.0, 1e-12);
	CHECK_NEAR(st.max, 5.0, 1e-12);
	CHECK_NEAR(st.p10, 1.4, 1e-12);
	CHECK_NEAR(st.p90, 4.6, 1e-12);
	CHECK_NEAR(st.cv, sqrt(2.5) / 3.0, 1e-12);
	CHECK(st.n == 5);
	CHECK(s[0] == 5); /* input untouched */
}

static void test_stats_even_and_single(void)
{
	const double s[] = {10, 20, 30, 40};
	const double one[] = {7.5};
	struct probe_stats st;

	CHECK(probe_stats_compute(s, 4, &st) == 0);
	CHECK_NEAR(st.median, 25.0, 1e-12);
	CHECK_NEAR(st.p10, 13.0, 1e-12);
	CHECK_NEAR(st.p90, 37.0, 1e-12);
	CHECK(probe_stats_compute(one, 1, &st) == 0);
	CHECK(st.median == 7.5 && st.p10 == 7.5 && st.p90 == 7.5);
	CHECK(st.cv == 0.0 && st.n == 1);
}

static void test_stats_rejects(void)
{
	const double bad[] = {1.0, NAN, 2.0};
	struct probe_stats st;

	CHECK(probe_stats_compute(bad, 0, &st) == -1);
	CHECK(st.n == 0 && isnan(st.median));
	CHECK(probe_stats_compute(bad, 3, &st) == -1);
	CHECK(isnan(probe_cv(bad, 0)));
}

static void test_stopping_rule(void)
{
	const double flat[] = {100, 100.1, 99.9, 100, 100.05, 100};
	const double noisy[] = {100, 120, 80, 110, 90, 105};

	CHECK(!probe_samples_enough(flat, 4, 5, 30, 0.01));
	CHECK(probe_samples_enough(flat, 5, 5, 30, 0.01));
	CHECK(!probe_samples_enough(noisy, 6, 5, 30, 0.01));
	CHECK(probe_samples_enough(noisy, 6, 5, 6, 0.01));
}

/* ---- limits -------------------------------------------------------- */

static void test_pcie(void)
{
	CHECK_NEAR(probe_pcie_gbps(3, 16), 15.7538, 1e-4);
	CHECK_NEAR(probe_pcie_gbps(4, 16), 31.5077, 1e-4);
	CHECK_NEAR(probe_pcie_gbps(5, 16), 63.0154, 1e-4);
	CHECK_NEAR(probe_pcie_gbps(5, 8), 31.5077, 1e-4);
	CHECK_NEAR(probe_pcie_gbps(6, 16), 121.0, 1e-9);
	CHECK_NEAR(probe_pcie_gbps(1, 16), 4.0, 1e-9);
	CHECK_NEAR(probe_pcie_gbps(2, 16), 8.0, 1e-9);
	CHECK(isnan(probe_pcie_gbps(0, 16)));
	CHECK(isnan(probe_pcie_gbps(8, 16)));
	CHECK(isnan(probe_pcie_gbps(5, 0)));
	CHECK(isnan(probe_pcie_gbps(-1, -1)));
}

static void test_nvlink(void)
{
	CHECK_NEAR(probe_nvlink_gbps(18, probe_nvlink_per_link_gbps(9, 0)),
		   450.0, 1e-12);
	CHECK_NEAR(probe_nvlink_gbps(12, probe_nvlink_per_link_gbps(8, 0)),
		   300.0, 1e-12);
	CHECK_NEAR(probe_nvlink_gbps(18, probe_nvlink_per_link_gbps(10, 0)),
		   900.0, 1e-12);
	CHECK_NEAR(probe_nvlink_per_link_gbps(6, 0), 20.0, 1e-12);
	CHECK(isnan(probe_nvlink_per_link_gbps(8, 9))); /* Ada: none */
	CHECK(isnan(probe_nvlink_gbps(0, 25)));
	CHECK(isnan(probe_nvlink_gbps(-1, 25)));
	CHECK(isnan(probe_nvlink_gbps(18, NAN)));
}

static void test_busbw(void)
{
	CHECK_NEAR(probe_busbw_factor(PROBE_COLL_ALL_REDUCE, 8), 1.75, 1e-12);
	CHECK_NEAR(probe_busbw_factor(PROBE_COLL_ALL_REDUCE, 2), 1.0, 1e-12);
	CHECK(probe_busbw_factor(PROBE_COLL_ALL_REDUCE, 1) == 0.0);
	CHECK_NEAR(probe_busbw_factor(PROBE_COLL_ALL_GATHER, 8), 0.875, 1e-12);
	CHECK_NEAR(probe_busbw_factor(PROBE_COLL_REDUCE_SCATTER, 4), 0.75,
		   1e-12);
	CHECK_NEAR(probe_busbw_factor(PROBE_COLL_ALLTOALL, 8), 0.875, 1e-12);
	CHECK(probe_busbw_factor(PROBE_COLL_SENDRECV, 8) == 1.0);
	CHECK(probe_busbw_factor(PROBE_COLL_BROADCAST, 8) == 1.0);
	CHECK(isnan(probe_busbw_factor(PROBE_COLL_ALL_REDUCE, 0)));
	/* nccl-tests: 8 GiB all-reduce in 31.24 ms -> algbw 275, busbw 481 */
	double alg = probe_algbw_gbps(8.0 * (1 << 30), 31.24e-3);
	CHECK_NEAR(alg, 274.97, 1e-3);
	CHECK_NEAR(alg * probe_busbw_factor(PROBE_COLL_ALL_REDUCE, 8), 481.2,
		   1e-3);
	CHECK(isnan(probe_algbw_gbps(1e9, 0)));
}

static void test_efficiency_and_gemm(void)
{
	const struct probe_datasheet *d = probe_datasheet_lookup(0x2330);

	CHECK_NEAR(probe_efficiency(371.0, 450.0), 0.824444, 1e-5);
	CHECK(isnan(probe_efficiency(371.0, NAN)));
	CHECK(isnan(probe_efficiency(371.0, 0)));
	CHECK(isnan(probe_efficiency(NAN, 450)));
	CHECK_NEAR(probe_gemm_tflops(8192, 8192, 8192, 1e-3), 1099.511627776,
		   1e-12);
	CHECK(isnan(probe_gemm_tflops(1, 1, 1, 0)));
	CHECK(d != NULL);
	CHECK_NEAR(probe_datasheet_gemm(d, "bf16"), 989.4, 1e-12);
	CHECK_NEAR(probe_datasheet_gemm(d, "fp8_e4m3"), 1978.9, 1e-12);
	CHECK(isnan(probe_datasheet_gemm(d, "fp4")));
	CHECK(isnan(
	    probe_datasheet_gemm(probe_datasheet_lookup(0x20b2), "fp8_e4m3")));
	CHECK(probe_datasheet_lookup(0x1234) == NULL);
	CHECK_NEAR(probe_clock_adjusted(989.4, 1755, 1830), 948.85, 1e-4);
	CHECK(isnan(probe_clock_adjusted(989.4, -1, 1830)));
}

/* ---- util ---------------------------------------------------------- */

static void test_uuid(void)
{
	char ids[50][PROBE_UUID_LEN + 1];
	int i, j, dup = 0, bad = 0;

	for (i = 0; i < 50; i++) {
		CHECK(probe_uuid_v4(ids[i]) == 0);
		if (!probe_uuid_is_v4(ids[i]) || strlen(ids[i]) != 36)
			bad++;
		for (j = 0; j < i; j++)
			dup += strcmp(ids[i], ids[j]) == 0;
	}
	CHECK(bad == 0 && dup == 0);
	CHECK(ids[0][14] == '4');
	CHECK(strchr("89ab", ids[0][19]) != NULL);
	CHECK(probe_uuid_is_v4("3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e-9a7d-1c2b-8e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e-9a7d-4c2b-7e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e9a7d-4c2b-8e51-6f2a1d0c9b84-"));
	CHECK(!probe_uuid_is_v4("../../etc/passwd"));
	CHECK(!probe_uuid_is_v4(""));
	CHECK(!probe_uuid_is_v4(NULL));
}

static void test_rfc3339(void)
{
	struct timespec ts = {0, 5000000};
	char buf[40];

	probe_rfc3339_utc(&ts, buf, sizeof(buf));
	CHECK(strcmp(buf, "1970-01-01T00:00:00.005Z") == 0);
	ts.tv_sec = 1763683200; /* 2025-11-21 00:00:00 UTC */
	ts.tv_nsec = 999999999;
	probe_rfc3339_utc(&ts, buf, sizeof(buf));
	CHECK(strcmp(buf, "2025-11-21T00:00:00.999Z") == 0);
}

static void test_cpu_model(void)
{
	char m[256];

	CHECK(probe_cpu_model(FIX "cpuinfo_synthetic_x86.txt", m, sizeof(m)) ==
	      0);
	CHECK(strcmp(m, "Synthetic(R) Xeon(R) Platinum 0000 CPU @ 2.00GHz") ==
	      0);
	CHECK(probe_cpu_model(FIX "cpuinfo_synthetic_arm.txt", m, sizeof(m)) ==
	      0);
	CHECK(strcmp(m, "arm implementer 0x41 part 0xd4f") == 0);
	CHECK(probe_cpu_model(FIX "does-not-exist", m, sizeof(m)) == -1);
	CHECK(strcmp(m, "unknown") == 0);
}

static void test_clock_reasons(void)
{
	const char *n[16];
	size_t k;

	CHECK(probe_clock_event_reason_names(0, n, 16) == 0);
	k = probe_clock_event_reason_names(0x4 | 0x40, n, 16);
	CHECK(k == 2 && strcmp(n[0], "sw_power_cap") == 0 &&
	      strcmp(n[1], "hw_thermal_slowdown") == 0);
	k = probe_clock_event_reason_names(0x1ULL | 0x10000ULL, n, 16);
	CHECK(k == 2 && strcmp(n[0], "gpu_idle") == 0 &&
	      strcmp(n[1], "other") == 0);
	CHECK(probe_clock_event_reason_names(0x1ff, n, 3) == 3);
}

static void test_token(void)
{
	char path[] = "/tmp/probe-token-XXXXXX", tok[128], err[256];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "  s3cr3t-token\nsecond line\n", 27) == 27);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == 0);
	CHECK(strcmp(tok, "s3cr3t-token") == 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "\n", 1) == 1);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
	CHECK(strstr(err, "empty") != NULL);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "a b\n", 4) == 4);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
	CHECK(strstr(err, "a b") == NULL); /* never echo the token */
	unlink(path);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
}

static void test_sysfs(void)
{
	int numa = 7;
	char id[16];

	CHECK(probe_sysfs_pci(FIX "sysfs_synthetic", "0000:5D:00.0", &numa, id,
			      sizeof(id)) == 0);
	CHECK(numa == 1);
	CHECK(strcmp(id, "0x2330") == 0);
	CHECK(probe_sysfs_pci(FIX "sysfs_synthetic", "0000:01:00.0", &numa, id,
			      sizeof(id)) == -1);
	CHECK(numa == -1 && id[0] == '\0');
}

static void test_telemetry_aggregate(void)
{
	struct probe_nvml_sample s[3] = {
	    {0, 1755, 2619, 690, 60, 0x4, 5, 16},
	    {0, 1980, 2619, 650, 64, 0x0, 5, 16},
	    {0, 1800, -1, -1, 62, 0x20, 4, 8},
	};
	struct probe_telemetry t;

	probe_telemetry_aggregate(s, 3, &t);
	CHECK(t.valid && t.samples == 3);
	CHECK_NEAR(t.sm_clock_mhz, 1800, 1e-12);
	CHECK_NEAR(t.mem_clock_mhz, 2619, 1e-12);
	CHECK_NEAR(t.power_w, 670, 1e-12);
	CHECK_NEAR(t.temperature_c, 64, 1e-12);
	CHECK(t.reasons == 0x24);
	CHECK(t.pcie_gen == 4 && t.pcie_width == 8);
	probe_telemetry_aggregate(s, 0, &t);
	CHECK(!t.valid);
}

/* ---- report JSON --------------------------------------------------- */

static void make_report(struct probe_report *r)
{
	struct probe_result x;
	const double s[] = {790, 795, 800, 798, 793};
	int i;

	probe_report_init(r);
	CHECK(probe_uuid_v4(r->run_id) == 0);
	strcpy(r->mode, "quick");
	strcpy(r->sizing, "quick");
	strcpy(r->started_at, "2025-11-21T00:00:00.000Z");
	strcpy(r->finished_at, "2025-11-21T00:00:42.000Z");
	strcpy(r->node.hostname, "node017");
	strcpy(r->node.cpu_model, "Synthetic CPU");
	strcpy(r->node.driver_version, "580.82.07");
	r->node.cuda_driver_version = 13000;
	r->node.cuda_runtime_version = 13000;
	r->node.nvml_available = 1;
	r->node.gpu_count = 2;
	r->gpus = calloc(2, sizeof(*r->gpus));
	r->n_gpus = 2;
	for (i = 0; i < 2; i++) {
		struct probe_gpu *g = &r->gpus[i];
		probe_gpu_init(g, i);
		snprintf(g->uuid, sizeof(g->uuid),
			 "GPU-00000000-0000-4000-8000-00000000000%d", i);
		strcpy(g->name, "NVIDIA H100 80GB HBM3");
		strcpy(g->compute_capability, "9.0");
		g->pcie_gen_current = 5;
		g->pcie_gen_max = 5;
		g->pcie_width_current = 16;
		g->pcie_width_max = 16;
		g->pcie_limit_gbps = probe_pcie_gbps(5, 16);
		g->nvlink_active_links = 18;
		g->ecc_enabled = 1;
		g->mig_mode = 0;
	}
	/* ok, with shape and telemetry */
	probe_result_init(&x);
	x.gpu_index = 0;
	strcpy(x.gpu_uuid, r->gpus[0].uuid);
	strcpy(x.metric, "gemm_tflops");
	strcpy(x.dtype, "bf16");
	strcpy(x.method, "cublaslt");
	strcpy(x.unit, "TFLOP/s");
	x.m = 2048;
	x.n = 2048;
	x.k = 13312;
	x.limit = 989.4;
	strcpy(x.limit_basis, "datasheet");
	strcpy(x.limit_source, "datasheet H100");
	x.telemetry.valid = 1;
	x.telemetry.sm_clock_mhz = 1755;
	x.telemetry.mem_clock_mhz = NAN;
	x.telemetry.power_w = 690;
	x.telemetry.temperature_c = 62;
	x.telemetry.reasons = 0x4;
	x.telemetry.pcie_gen = -1;
	x.telemetry.pcie_width = -1;
	CHECK(probe_result_set_samples(&x, s, 5) == 0);
	CHECK(probe_report_add(r, &x) != NULL);
	CHECK(x.samples == NULL); /* ownership moved */
	/* skipped */
	probe_result_init(&x);
	x.gpu_index = 1;
	strcpy(x.metric, "gemm_tflops");
	strcpy(x.dtype, "fp8_e4m3");
	strcpy(x.unit, "TFLOP/s");
	probe_result_skip(&x, 0, "needs compute capability >= %.1f", 8.9);
	CHECK(probe_report_add(r, &x) != NULL);
	/* node-wide */
	probe_result_init(&x);
	strcpy(x.metric, "nccl_allreduce_busbw_gbps");
	strcpy(x.unit, "GB/s");
	x.size_bytes = (int64_t)8 << 30;
	x.nranks = 8;
	CHECK(probe_result_set_samples(&x, s, 3) == 0);
	CHECK(probe_report_add(r, &x) != NULL);
}

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
	json_object_foreach(a, key, v) missing +=
	    json_object_get(b, key) == NULL;
	CHECK(missing == 0);
out:
	json_decref(mine);
	json_decref(fix);
	probe_report_free(&r);
}

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

/* The checker's verdict on j, with the refused field as the message's
 * start; prints what differs from want (want_field NULL: accepted). */
static int verdict_is(const json_t *j, const char *want_field, int line)
{
	char err[512] = "";
	int rc = probe_report_check(j, err, sizeof(err));
	int ok = want_field
		     ? rc == -1 &&
			   strncmp(err, want_field, strlen(want_field)) == 0 &&
			   err[strlen(want_field)] == ':'
		     : rc == 0;

	if (!ok)
		printf("# line %d: want %s%s, got rc %d \"%s\"\n", line,
		       want_field ? "refusal of " : "acceptance",
		       want_field ? want_field : "", rc, err);
	return ok;
}
#define ACCEPTED(j)	  CHECK(verdict_is((j), NULL, __LINE__))
#define REFUSED(j, field) CHECK(verdict_is((j), (field), __LINE__))

static json_t *res_at(json_t *j, size_t i)
{
	return json_array_get(json_object_get(j, "results"), i);
}

static json_t *gpu_at(json_t *j, size_t i)
{
	return json_array_get(json_object_get(j, "gpus"), i);
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
		json_array_append_new(gpus, x);
	}
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
	    "0001-01-01T00:00:00Z", /* year 1 */
	    "2016-12-31T23:59:60Z", /* leap second */
	    "2025-11-21t00:00:00z",
	    "2025-11-21T05:30:00+05:30",
	    "2025-11-21T00:00:00-23:59",
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
	json_object_set_new(x, "unit", json_string("TOP/s"));
	ACCEPTED(j);
	/* dtype: null or 1..16 bytes */
	json_object_set_new(x, "dtype", str_of('d', 16));
	ACCEPTED(j);
	json_object_set_new(x, "dtype", str_of('d', 17));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_string(""));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_stringn("bf\0", 3));
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_true());
	REFUSED(j, "results[0].dtype");
	json_object_set_new(x, "dtype", json_null());
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

static void test_check_number_ranges(void)
{
	static const char *const keys[] = {
	    "median", "max", "mean", "p10", "p90", "cv", "limit", "efficiency"};
	json_t *j = valid_report(), *x = res_at(j, 0);
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char field[64];
		json_t *old = json_deep_copy(json_object_get(x, keys[i]));

		snprintf(field, sizeof(field), "results[0].%s", keys[i]);
		json_object_set_new(x, keys[i], json_real(1e15));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(-1e15));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_integer(1000000000000000));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(1.000001e15));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_real(-1e16));
		REFUSED(j, field);
		json_object_set_new(x, keys[i], json_integer(1000000000000001));
		REFUSED(j, field);
		/* 0, or at least 1e-9 in magnitude (issue 15) */
		json_object_set_new(x, keys[i], json_real(0));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(-0.0));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(1e-9));
		ACCEPTED(j);
		json_object_set_new(x, keys[i], json_real(-1e-9));
		ACCEPTED(j);
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
	/* size_bytes: null or 0..2^50 */
	json_object_set_new(x, "size_bytes", json_integer((json_int_t)1 << 50));
	ACCEPTED(j);
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
		CHECK(probe_metric_known(server[i]));
		json_object_set_new(x, "metric", json_string(server[i]));
		ACCEPTED(j);
	}
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

/* ---- CLI ----------------------------------------------------------- */

static int parse(struct probe_cli *c, const char *env, char *err, size_t errlen,
		 int argc, ...)
{
	char *argv[32];
	va_list ap;
	int i;

	argv[0] = (char *)"gpusizer-probe";
	va_start(ap, argc);
	for (i = 1; i <= argc && i < 31; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return probe_cli_parse(argc + 1, argv, env, c, err, errlen);
}

static void test_cli_ok(void)
{
	struct probe_cli c;
	char err[256];

	CHECK(parse(&c, NULL, err, sizeof(err), 0) == 0);
	CHECK(!c.quick && c.only_mask == PROBE_ONLY_ALL && !c.only_given);
	CHECK(strcmp(c.spool_dir, PROBE_DEFAULT_SPOOL_DIR) == 0);
	CHECK(c.output == NULL && c.server == NULL);
	CHECK(c.retries == 4 && c.timeout_ms == 30000);
	CHECK(c.sustain_s == 60 && !c.list);
	CHECK(parse(&c, NULL, err, sizeof(err), 3, "--full", "--sustain-s",
		    "120") == 0);
	CHECK(c.sustain_s == 120);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--list") == 0 && c.list);

	CHECK(parse(&c, "/env/spool", err, sizeof(err), 6, "--quick", "--only",
		    "p2p,gemm", "--output=/tmp/r.json", "--devices",
		    "0,2") == 0);
	CHECK(c.quick && c.only_given);
	CHECK(c.only_mask == (PROBE_ONLY_GEMM | PROBE_ONLY_P2P));
	CHECK(strcmp(c.only_text, "gemm,p2p") == 0);
	CHECK(strcmp(c.output, "/tmp/r.json") == 0);
	CHECK(strcmp(c.spool_dir, "/env/spool") == 0);
	CHECK(c.n_devices == 2 && c.devices[0] == 0 && c.devices[1] == 2);

	CHECK(parse(&c, "/env/spool", err, sizeof(err), 10, "--server",
		    "http://127.0.0.1:8080/", "--token-file", "/etc/tok",
		    "--spool-dir", "/tmp/sp", "--post", "r.json", "--retries",
		    "0") == 0);
	CHECK(strcmp(c.spool_dir, "/tmp/sp") == 0);
	CHECK(strcmp(c.post_file, "r.json") == 0 && c.retries == 0);
	CHECK(strcmp(c.token_file, "/etc/tok") == 0);

	CHECK(parse(&c, NULL, err, sizeof(err), 3, "--flush-spool",
		    "--server=https://gpusizer.example", "--full") == 0);
	CHECK(c.flush_spool && !c.quick);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--help") == 0 && c.help);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--version") == 0 &&
	      c.version);
}

static void expect_cli_error(const char *want, int argc, const char *a,
			     const char *b, const char *c3)
{
	struct probe_cli c;
	char err[256] = "";
	int rc = parse(&c, NULL, err, sizeof(err), argc, a, b, c3);

	CHECK(rc == -1);
	if (strstr(err, want) == NULL) {
		printf("# error '%s' lacks '%s'\n", err, want);
		CHECK(0);
	}
}

static void test_cli_errors(void)
{
	expect_cli_error("unknown option '--fast'", 1, "--fast", NULL, NULL);
	expect_cli_error("--only: unknown measurement 'gpu'", 2, "--only",
			 "gemm,gpu", NULL);
	expect_cli_error("--only: empty", 1, "--only=", NULL, NULL);
	expect_cli_error("--quick and --full", 2, "--quick", "--full", NULL);
	expect_cli_error("--post needs --server", 2, "--post", "x.json", NULL);
	expect_cli_error("--flush-spool needs --server", 1, "--flush-spool",
			 NULL, NULL);
	expect_cli_error("--token-file needs --server", 2, "--token-file", "t",
			 NULL);
	expect_cli_error("--server: expected an http", 2, "--server", "ftp://x",
			 NULL);
	expect_cli_error("--retries: expected an integer", 2, "--retries", "-1",
			 NULL);
	expect_cli_error("--timeout-ms: expected an integer", 2, "--timeout-ms",
			 "12ms", NULL);
	expect_cli_error("--output: missing value", 1, "--output", NULL, NULL);
	expect_cli_error("--devices: 1 given twice", 2, "--devices", "1,1",
			 NULL);
	expect_cli_error("--quick: takes no value", 1, "--quick=1", NULL, NULL);
	expect_cli_error("unexpected argument 'quick'", 1, "quick", NULL, NULL);
	expect_cli_error("--sustain-s: expected an integer in [1, 3600]", 2,
			 "--sustain-s", "0", NULL);
	expect_cli_error("--sustain-s: missing value", 1, "--sustain-s", NULL,
			 NULL);
}

/* ---- spool --------------------------------------------------------- */

static char *tmpdir(void)
{
	static char buf[64];

	strcpy(buf, "/tmp/probe-spool-XXXXXX");
	return mkdtemp(buf);
}

static int count_files(const char *dir)
{
	char **names;
	size_t n;
	char err[256];

	if (probe_spool_list(dir, &names, &n, err, sizeof(err)))
		return -1;
	probe_spool_list_free(names, n);
	return (int)n;
}

static void test_spool(void)
{
	char *base = tmpdir(), dir[128], err[256], path[256];
	const char *id1 = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	const char *id2 = "c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31";
	char **names;
	size_t n, len;
	struct stat st;
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	char *text;

	CHECK(base != NULL);
	snprintf(dir, sizeof(dir), "%s/a/b", base);
	CHECK(count_files(dir) == 0); /* missing dir = empty */
	CHECK(probe_spool_write(dir, id2, "{\"x\":2}", 7, err, sizeof(err)) ==
	      0);
	CHECK(probe_spool_write(dir, id1, "{\"x\":1}", 7, err, sizeof(err)) ==
	      0);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* id1 older by mtime -> listed first although written second */
	snprintf(path, sizeof(path), "%s/%s.json", dir, id1);
	CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
	CHECK(probe_spool_list(dir, &names, &n, err, sizeof(err)) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(strncmp(names[0], id1, 36) == 0);
		CHECK(strncmp(names[1], id2, 36) == 0);
	}
	probe_spool_list_free(names, n);
	text = probe_read_file(path, &len);
	CHECK(text && len == 7 && strcmp(text, "{\"x\":1}") == 0);
	free(text);
	/* no temporary left behind; dot files are not listed */
	snprintf(path, sizeof(path), "%s/.hidden.json", dir);
	CHECK(probe_write_atomic(path, "{}", 2, err, sizeof(err)) == 0);
	CHECK(count_files(dir) == 2);
	/* refuse a run_id that is not a UUID (it names the file) */
	CHECK(probe_spool_write(dir, "../../evil", "{}", 2, err, sizeof(err)) ==
	      -1);
	CHECK(probe_spool_remove(dir, "../x.json", err, sizeof(err)) == -1);
	/* reject moves, remove deletes */
	snprintf(path, sizeof(path), "%s.json", id2);
	CHECK(probe_spool_reject(dir, path, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/rejected/%s.json", dir, id2);
	CHECK(stat(path, &st) == 0);
	CHECK(count_files(dir) == 1);
	snprintf(path, sizeof(path), "%s.json", id1);
	CHECK(probe_spool_remove(dir, path, err, sizeof(err)) == 0);
	CHECK(count_files(dir) == 0);
	CHECK(probe_spool_remove(dir, path, err, sizeof(err)) == -1);
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

/* ---- posting, against a scripted HTTP server ------------------------ */

struct fake_server {
	int fd, port;
	int statuses[8], nstatus, served;
	char last_request[8192];
	char last_auth[256];
	char last_path[128];
	size_t last_body_len;
	pthread_t t;
};

static void *fake_main(void *arg)
{
	struct fake_server *s = arg;

	while (s->served < s->nstatus) {
		char buf[8192];
		size_t got = 0;
		long clen = -1;
		int c = accept(s->fd, NULL, NULL);
		char *hdr_end = NULL;

		if (c < 0)
			break;
		for (;;) {
			ssize_t r =
			    recv(c, buf + got, sizeof(buf) - 1 - got, 0);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			hdr_end = strstr(buf, "\r\n\r\n");
			if (hdr_end && clen < 0) {
				char *cl = strcasestr(buf, "Content-Length:");
				clen = cl ? atol(cl + 15) : 0;
			}
			if (hdr_end &&
			    (long)(got - (size_t)(hdr_end + 4 - buf)) >= clen)
				break;
			if (got >= sizeof(buf) - 1)
				break;
		}
		memcpy(s->last_request, buf, got + 1);
		s->last_body_len =
		    hdr_end ? got - (size_t)(hdr_end + 4 - buf) : 0;
		{
			char *a = strcasestr(buf, "Authorization: ");
			s->last_auth[0] = '\0';
			if (a) {
				size_t n = strcspn(a + 15, "\r\n");
				if (n >= sizeof(s->last_auth))
					n = sizeof(s->last_auth) - 1;
				memcpy(s->last_auth, a + 15, n);
				s->last_auth[n] = '\0';
			}
			sscanf(buf, "%*s %127s", s->last_path);
		}
		{
			char resp[512];
			int st = s->statuses[s->served];
			const char *body =
			    st == 422 ? "{\"type\":\"about:blank\","
					"\"title\":\"Unprocessable\","
					"\"status\":422,\"detail\":"
					"\"results[0].metric: unknown\"}"
				      : "{\"run_id\":\"x\"}";
			int n = snprintf(resp, sizeof(resp),
					 "HTTP/1.1 %d X\r\nContent-Type: "
					 "application/json\r\nContent-Length: "
					 "%zu\r\nConnection: close\r\n\r\n%s",
					 st, strlen(body), body);
			if (send(c, resp, (size_t)n, 0) < 0)
				perror("send");
		}
		close(c);
		s->served++;
	}
	return NULL;
}

static int fake_start(struct fake_server *s, const int *statuses, int n)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int one = 1;

	memset(s, 0, sizeof(*s));
	memcpy(s->statuses, statuses, (size_t)n * sizeof(int));
	s->nstatus = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(s->fd, 8) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0)
		return -1;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->t, NULL, fake_main, s);
}

static void fake_stop(struct fake_server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->t, NULL);
	close(s->fd);
}

static void opts(struct probe_post_opts *o, char *url, size_t urllen, int port)
{
	snprintf(url, urllen, "http://127.0.0.1:%d/", port);
	memset(o, 0, sizeof(*o));
	o->server = url;
	o->token = "tok-123";
	o->timeout_ms = 5000;
	o->connect_timeout_ms = 2000;
	o->retries = 2;
	o->backoff_ms = 1;
	o->backoff_max_ms = 4;
	o->log = NULL;
}

static void test_post_helpers(void)
{
	char url[128];

	CHECK(probe_post_classify(200) == PROBE_POST_DELIVERED);
	CHECK(probe_post_classify(201) == PROBE_POST_DELIVERED);
	CHECK(probe_post_classify(0) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(408) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(429) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(503) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(400) == PROBE_POST_REJECTED);
	CHECK(probe_post_classify(401) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(403) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(422) == PROBE_POST_REJECTED);
	CHECK(probe_post_classify(301) == PROBE_POST_KEEP);
	CHECK(probe_backoff_ms(0, 1000, 30000) == 1000);
	CHECK(probe_backoff_ms(1, 1000, 30000) == 2000);
	CHECK(probe_backoff_ms(3, 1000, 30000) == 8000);
	CHECK(probe_backoff_ms(10, 1000, 30000) == 30000);
	CHECK(probe_backoff_ms(2, 0, 30000) == 0);
	CHECK(probe_benchmarks_url("http://h:1", url, sizeof(url)) == 0);
	CHECK(strcmp(url, "http://h:1/v1/benchmarks") == 0);
	CHECK(probe_benchmarks_url("http://h:1/api//", url, sizeof(url)) == 0);
	CHECK(strcmp(url, "http://h:1/api/v1/benchmarks") == 0);
	CHECK(probe_benchmarks_url("http://h:1", url, 10) == -1);
}

static void test_post_retry_then_ok(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_post_result res;
	char url[64];
	const int st[] = {503, 201};
	const char *body = "{\"run_id\":\"r\"}";

	CHECK(fake_start(&s, st, 2) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_post(&o, body, strlen(body), &res) == PROBE_POST_DELIVERED);
	fake_stop(&s);
	CHECK(res.attempts == 2 && res.http_status == 201);
	CHECK(strcmp(s.last_auth, "Bearer tok-123") == 0);
	CHECK(strcmp(s.last_path, "/v1/benchmarks") == 0);
	CHECK(strncmp(s.last_request, "POST ", 5) == 0);
	CHECK(strcasestr(s.last_request, "Content-Type: application/json") !=
	      NULL);
	CHECK(s.last_body_len == strlen(body));
	CHECK(strstr(s.last_request, body) != NULL);
}

static void test_deliver_rejected_and_unreachable(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {422};
	const char *id = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	int spool_failed = 1, port;
	struct stat sb;

	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_REJECTED);
	fake_stop(&s);
	CHECK(s.served == 1); /* a 4xx is not retried */
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, id);
	CHECK(stat(path, &sb) == 0);
	CHECK(count_files(base) == 0);

	/* closed port: network error, retried, then spooled */
	port = s.port;
	opts(&o, url, sizeof(url), port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_RETRY);
	CHECK(!spool_failed);
	CHECK(count_files(base) == 1);
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

/* A refused token (401/403) is the node's setup, not the report's fault:
 * the report stays in the spool (not rejected/), the outcome says so, and
 * a flush stops at the first refusal, keeping the rest (issue 16). */
static void test_token_refused_keeps_report(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], err[256], *base = tmpdir();
	const int st[] = {401, 403};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const char *id2 = "7f4e9c1b-5a3d-4b8f-a2e6-1c9d7b5f3e4a";
	int spool_failed = 1;
	struct stat sb;

	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_UNAUTHORIZED);
	fake_stop(&s);
	CHECK(s.served == 1); /* not retried */
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/%s.json", base, id);
	CHECK(stat(path, &sb) == 0); /* kept in the spool */
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, id);
	CHECK(stat(path, &sb) != 0); /* not rejected */

	CHECK(probe_spool_write(base, id2, "{}", 2, err, sizeof(err)) == 0);
	CHECK(fake_start(&s, st + 1, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1); /* stops at the first refusal */
	CHECK(fc.unauthorized == 1 && fc.kept == 2 && fc.rejected == 0 &&
	      fc.delivered == 0);
	CHECK(count_files(base) == 2);
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

static void test_flush_spool(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], err[256], path[256], *base = tmpdir();
	const int st[] = {201, 400, 500, 500, 500};
	const char *ids[3] = {"3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
			      "c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31",
			      "0e6a2b7c-1d3f-4a5b-9c8d-7e6f5a4b3c2d"};
	struct timespec t[2];
	int i;
	struct stat sb;

	for (i = 0; i < 3; i++) {
		CHECK(probe_spool_write(base, ids[i], "{}", 2, err,
					sizeof(err)) == 0);
		snprintf(path, sizeof(path), "%s/%s.json", base, ids[i]);
		t[0].tv_sec = t[1].tv_sec = 1000 + i;
		t[0].tv_nsec = t[1].tv_nsec = 0;
		CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
	}
	CHECK(fake_start(&s, st, 5) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.delivered == 1 && fc.rejected == 1 && fc.kept == 1);
	CHECK(s.served == 5); /* 201, 400, 500 x3 (2 retries) */
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[0]);
	CHECK(stat(path, &sb) != 0); /* delivered: deleted */
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, ids[1]);
	CHECK(stat(path, &sb) == 0);
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[2]);
	CHECK(stat(path, &sb) == 0); /* 5xx: kept */
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(test_stats_odd);
	RUN(test_stats_even_and_single);
	RUN(test_stats_rejects);
	RUN(test_stopping_rule);
	RUN(test_pcie);
	RUN(test_nvlink);
	RUN(test_busbw);
	RUN(test_efficiency_and_gemm);
	RUN(test_uuid);
	RUN(test_rfc3339);
	RUN(test_cpu_model);
	RUN(test_clock_reasons);
	RUN(test_token);
	RUN(test_sysfs);
	RUN(test_telemetry_aggregate);
	RUN(test_report_roundtrip);
	RUN(test_report_status);
	RUN(test_fixtures);
	RUN(test_fixture_keys_match_encoder);
	RUN(test_check_gpu_uuid_in_gpus);
	RUN(test_check_hostname);
	RUN(test_check_gpus);
	RUN(test_check_dates);
	RUN(test_check_string_limits);
	RUN(test_check_number_ranges);
	RUN(test_check_integer_ranges);
	RUN(test_check_metrics);
	RUN(test_metrics_documented);
	RUN(test_check_sizes_and_depth);
	RUN(test_encoder_sanitises);
	RUN(test_set_samples_bounds);
	RUN(test_cli_ok);
	RUN(test_cli_errors);
	RUN(test_spool);
	RUN(test_post_helpers);
	RUN(test_post_retry_then_ok);
	RUN(test_deliver_rejected_and_unreachable);
	RUN(test_flush_spool);
	RUN(test_token_refused_keeps_report);
	curl_global_cleanup();
	return testlib_finish();
}

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
	CHECK(strcmp(r.status, "ok") == 0); /* not-applicable skip */
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
	CHECK(strcmp(r.status, "partial") == 0);
	probe_report_free(&r);

	probe_report_init(&r);
	probe_result_init(&x);
	strcpy(x.metric, "hbm_copy_gbps");
	strcpy(x.unit, "GB/s");
	probe_result_fail(&x, "cudaErrorMemoryAllocation");
	probe_report_add(&r, &x);
	probe_report_finalize_status(&r);
	CHECK(strcmp(r.status, "failed") == 0);
	strcpy(r.status, "no_device");
	probe_report_finalize_status(&r);
	CHECK(strcmp(r.status, "no_device") == 0);
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
	CHECK(probe_post_classify(401) == PROBE_POST_KEEP);
	CHECK(probe_post_classify(403) == PROBE_POST_KEEP);
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
	RUN(test_cli_ok);
	RUN(test_cli_errors);
	RUN(test_spool);
	RUN(test_post_helpers);
	RUN(test_post_retry_then_ok);
	RUN(test_deliver_rejected_and_unreachable);
	RUN(test_flush_spool);
	curl_global_cleanup();
	return testlib_finish();
}

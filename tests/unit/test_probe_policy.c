/* Unit tests of the probe's GPU-free decisions and checks (issue 14):
 * launch-queue caps of gated batches, deadlines, whether NCCL applies,
 * the GEMM summary of a sweep, statuses and exit codes, NUMA node and
 * cpulist parsing, thread and memory binding, power from energy
 * counters, the GEMM spot check and copy checksums. Run from the
 * repository root (fixtures in tests/fixtures/probe). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "numa.h"
#include "nvml.h"
#include "policy.h"
#include "report.h"
#include "status.h"
#include "testlib.h"

#define SYSFS "tests/fixtures/probe/sysfs_synthetic"

/* ---- batches and deadlines ------------------------------------------ */

static void test_batch_caps(void)
{
	int cap1 = PROBE_LAUNCH_QUEUE_BUDGET - PROBE_BATCH_OVERHEAD;

	/* A 1 us copy and a 50 ms sample would want 50,000 operations:
	 * far past the ~1,000-entry launch queue (defect 4). */
	CHECK(probe_batch_ops(0.001, 50, 1) == cap1);
	CHECK(probe_batch_ops(0.001, 50, 3) == cap1 / 3);
	CHECK(probe_batch_ops(0.001, 50, 2) * 2 <= cap1);
	CHECK(probe_batch_ops(0.02, 10, 1) == 500);
	CHECK(probe_batch_ops(1.4, 50, 3) == 36);
	CHECK(probe_batch_ops(10, 50, 1) == 5);
	CHECK(probe_batch_ops(100, 10, 1) == 1);
	CHECK(probe_batch_ops(0, 10, 1) == 1);
	CHECK(probe_batch_ops(-1, 10, 1) == 1);
	CHECK(probe_batch_ops(NAN, 10, 1) == 1);
	CHECK(probe_batch_ops(INFINITY, 10, 1) == 1);
	CHECK(probe_batch_ops(1, 10, 0) == 10);
	/* Whatever the inputs, a batch fits the budget. */
	for (double ms = 1e-6; ms < 100; ms *= 3.7)
		for (int per = 1; per <= 8; per++)
			CHECK(probe_batch_ops(ms, 50, per) * per +
				  PROBE_BATCH_OVERHEAD <=
			      PROBE_LAUNCH_QUEUE_BUDGET);
}

static void test_deadlines(void)
{
	struct probe_deadline d;

	probe_deadline_start(&d, 100.0, 30.0);
	CHECK(!probe_deadline_passed(&d, 100.0));
	CHECK(!probe_deadline_passed(&d, 129.99));
	CHECK(probe_deadline_passed(&d, 130.0));
	CHECK_NEAR(probe_deadline_left(&d, 110.0), 20.0, 1e-12);
	CHECK(probe_deadline_left(&d, 200.0) == 0.0);
	probe_deadline_start(&d, 5.0, -1);
	CHECK(probe_deadline_passed(&d, 5.0));
	/* 30 s plus the batch at 0.5 GB/s. */
	CHECK_NEAR(probe_nccl_deadline_s(0, 0), 30.0, 1e-12);
	CHECK_NEAR(probe_nccl_deadline_s(1e9, 20), 30.0 + 40.0, 1e-12);
	CHECK_NEAR(probe_nccl_deadline_s(8.0 * (1 << 30), 20),
		   30.0 + 20 * 8.0 * (1 << 30) / 0.5e9, 1e-12);
	/* Never shorter than what a slow (PCIe, 8 ranks, ~5 GB/s algbw)
	 * node needs for the batch. */
	CHECK(probe_nccl_deadline_s(8.0 * (1 << 30), 20) >
	      20 * 8.0 * (1 << 30) / 5e9);
}

/* ---- NCCL applicability ---------------------------------------------- */

static void test_nccl_plan(void)
{
	/* One GPU without libnccl: not applicable, not "partial" (defect
	 * 8: the library was checked first and the run exited 2). */
	CHECK(probe_nccl_plan(1, 1, 0, 0) == PROBE_NCCL_ONE_GPU);
	CHECK(probe_nccl_plan(1, 1, 0, 1) == PROBE_NCCL_ONE_GPU);
	CHECK(probe_nccl_plan(0, 0, 0, 0) == PROBE_NCCL_ONE_GPU);
	CHECK(probe_nccl_plan(1, 1, 1, 0) == PROBE_NCCL_ONE_GPU);
	CHECK(probe_nccl_plan(2, 2, 1, 0) == PROBE_NCCL_MIG);
	CHECK(probe_nccl_plan(2, 2, 0, 0) == PROBE_NCCL_NO_LIBRARY);
	CHECK(probe_nccl_plan(8, 8, 0, 1) == PROBE_NCCL_RUN);
	/* --devices: one of eight is one GPU; two to seven of eight are a
	 * subset whose ring is not the node's (review s23c F4), whatever the
	 * library or MIG says */
	CHECK(probe_nccl_plan(1, 8, 0, 1) == PROBE_NCCL_ONE_GPU);
	CHECK(probe_nccl_plan(2, 8, 0, 1) == PROBE_NCCL_SUBSET);
	CHECK(probe_nccl_plan(7, 8, 1, 0) == PROBE_NCCL_SUBSET);
	CHECK(probe_nccl_plan(4, 4, 0, 1) == PROBE_NCCL_RUN);
}

static void test_nccl_sizes_and_ranks(void)
{
	size_t sz[PROBE_NCCL_MAX_SIZES], n;
	int r[8], nr;

	n = probe_nccl_sizes(1, (size_t)8 << 30, sz, PROBE_NCCL_MAX_SIZES);
	CHECK(n == 2 && sz[0] == (size_t)64 << 20 && sz[1] == (size_t)1 << 30);
	n = probe_nccl_sizes(0, (size_t)8 << 30, sz, PROBE_NCCL_MAX_SIZES);
	CHECK(n == 11 && sz[0] == (size_t)8 << 20 && sz[10] == (size_t)8 << 30);
	for (size_t i = 1; i < n; i++)
		CHECK(sz[i] == 2 * sz[i - 1]);
	/* A 16 GiB GPU: buffers of at most 4 GiB. */
	n = probe_nccl_sizes(0, (size_t)4 << 30, sz, PROBE_NCCL_MAX_SIZES);
	CHECK(n == 10 && sz[9] == (size_t)4 << 30);
	n = probe_nccl_sizes(1, (size_t)512 << 20, sz, PROBE_NCCL_MAX_SIZES);
	CHECK(n == 1 && sz[0] == (size_t)64 << 20);
	CHECK(probe_nccl_sizes(0, 1 << 20, sz, PROBE_NCCL_MAX_SIZES) == 0);
	CHECK(probe_nccl_sizes(0, (size_t)8 << 30, sz, 3) == 3);

	/* Every mode's largest size fits the buffers on 2..16 ranks, each
	 * collective divides them, and they are no larger than needed
	 * (review s23c F2: rounded down, 3, 5, 6 and 7 ranks failed the
	 * largest size). */
	for (int quick = 0; quick <= 1; quick++) {
		n = probe_nccl_sizes(quick, (size_t)8 << 30, sz,
				     PROBE_NCCL_MAX_SIZES);
		for (int nd = 2; nd <= 16; nd++) {
			size_t f = probe_nccl_buffer_floats(sz[n - 1], nd);
			size_t unit = (size_t)nd * 4;

			CHECK(f * sizeof(float) >= sz[n - 1]);
			CHECK(f % unit == 0);
			CHECK(f * sizeof(float) - sz[n - 1] <
			      unit * sizeof(float));
		}
	}
	CHECK(probe_nccl_buffer_floats(PROBE_NCCL_LATENCY_BYTES, 3) == 12);
	CHECK(probe_nccl_buffer_floats(0, 2) == 8);
	CHECK(probe_nccl_buffer_floats((size_t)8 << 30, 3) ==
	      ((size_t)2 << 30) + 4); /* 2^31 = 8 (mod 12): +4 */
	CHECK(probe_nccl_buffer_floats(64, 0) == 0);

	nr = probe_nccl_rank_counts(8, r, 8);
	CHECK(nr == 3 && r[0] == 2 && r[1] == 4 && r[2] == 8);
	nr = probe_nccl_rank_counts(4, r, 8);
	CHECK(nr == 2 && r[0] == 2 && r[1] == 4);
	nr = probe_nccl_rank_counts(2, r, 8);
	CHECK(nr == 1 && r[0] == 2);
	nr = probe_nccl_rank_counts(6, r, 8);
	CHECK(nr == 3 && r[2] == 6);
	nr = probe_nccl_rank_counts(16, r, 8);
	CHECK(nr == 4 && r[2] == 8 && r[3] == 16);
	CHECK(probe_nccl_rank_counts(1, r, 8) == 0);
	CHECK(probe_nccl_rank_counts(0, r, 8) == 0);
}

/* ---- GEMM summary ------------------------------------------------------ */

static void sweep_ok(struct probe_result *r, int m, double median)
{
	double s[5];

	probe_result_init(r);
	strcpy(r->metric, "gemm_sweep_tflops");
	strcpy(r->dtype, "bf16");
	strcpy(r->unit, "TFLOP/s");
	r->m = m;
	r->n = m;
	r->k = 8192;
	for (int i = 0; i < 5; i++)
		s[i] = median + (i - 2);
	CHECK(probe_result_set_samples(r, s, 5) == 0);
}

static void sweep_free(struct probe_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].samples);
}

static void test_gemm_summary(void)
{
	struct probe_result sw[3], sum;

	/* A skipped shape between two measured ones (defect 8: it used to
	 * drop the summary of every shape). */
	sweep_ok(&sw[0], 8192, 700);
	probe_result_init(&sw[1]);
	strcpy(sw[1].metric, "gemm_sweep_tflops");
	sw[1].m = 2048;
	probe_result_skip(&sw[1], 0, "cuBLASLt has no algorithm");
	sweep_ok(&sw[2], 4096, 790);
	CHECK(probe_gemm_summary(sw, 3, &sum) == 0);
	CHECK(sum.status == PROBE_RESULT_OK);
	CHECK(strcmp(sum.metric, "gemm_tflops") == 0);
	CHECK(sum.m == 4096 && sum.stats.median == 790);
	CHECK(sum.n_samples == 5 && sum.samples != sw[2].samples);
	CHECK(sum.samples && sum.samples[4] == 792);
	free(sum.samples);
	sweep_free(sw, 3);

	/* Nothing measured, every shape not applicable: skipped, not
	 * partial, with the reason. */
	for (int i = 0; i < 2; i++) {
		probe_result_init(&sw[i]);
		sw[i].m = 1024;
		probe_result_skip(&sw[i], 0, "no algorithm %d", i);
	}
	CHECK(probe_gemm_summary(sw, 2, &sum) == 0);
	CHECK(sum.status == PROBE_RESULT_SKIPPED && !sum.partial);
	CHECK(strcmp(sum.reason, "no algorithm 0") == 0);
	CHECK(sum.m == 0 && sum.samples == NULL);

	/* A failure among skips: failed, with the failure's reason. */
	probe_result_fail(&sw[1], "GEMM result wrong");
	CHECK(probe_gemm_summary(sw, 2, &sum) == 0);
	CHECK(sum.status == PROBE_RESULT_FAILED);
	CHECK(strstr(sum.reason, "GEMM result wrong") != NULL);
	CHECK(probe_gemm_summary(sw, 0, &sum) == -1);
}

/* ---- statuses and exit codes -------------------------------------------- */

static void test_status_names(void)
{
	CHECK(strcmp(probe_result_status_name(PROBE_RESULT_OK), "ok") == 0);
	CHECK(strcmp(probe_result_status_name(PROBE_RESULT_SKIPPED),
		     "skipped") == 0);
	CHECK(strcmp(probe_result_status_name(PROBE_RESULT_FAILED), "failed") ==
	      0);
	CHECK(strcmp(probe_run_status_name(PROBE_RUN_PARTIAL), "partial") == 0);
	CHECK(strcmp(probe_run_status_name(PROBE_RUN_NO_DEVICE), "no_device") ==
	      0);
	CHECK(strcmp(probe_run_status_name((enum probe_run_status)42), "?") ==
	      0);
}

static void test_exit_codes(void)
{
	CHECK(probe_exit_for_run(PROBE_RUN_OK, 10, 0, 0) == PROBE_EXIT_OK);
	CHECK(probe_exit_for_run(PROBE_RUN_PARTIAL, 5, 1, 1) ==
	      PROBE_EXIT_PARTIAL);
	CHECK(probe_exit_for_run(PROBE_RUN_NO_DEVICE, 0, 0, 0) ==
	      PROBE_EXIT_NO_DEVICE);
	CHECK(probe_exit_for_run(PROBE_RUN_FAILED, 0, 3, 0) ==
	      PROBE_EXIT_LIB_MISSING);
	CHECK(probe_exit_for_run(PROBE_RUN_FAILED, 0, 3, 1) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_for_run(PROBE_RUN_FAILED, 0, 0, 2) ==
	      PROBE_EXIT_FAILED);

	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_NONE) ==
	      PROBE_EXIT_OK);
	CHECK(probe_exit_final(PROBE_EXIT_OK, 0, PROBE_DELIVERY_NONE) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_DELIVERED) ==
	      PROBE_EXIT_OK);
	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_KEPT) ==
	      PROBE_EXIT_UNDELIVERED);
	/* not delivered and not spooled either: 1, never 5's "in the
	 * spool" (review s24g G2); a partial run stays 2 */
	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_LOST) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_final(PROBE_EXIT_PARTIAL, 1, PROBE_DELIVERY_LOST) ==
	      PROBE_EXIT_PARTIAL);
	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_REJECTED) ==
	      PROBE_EXIT_REJECTED);
	/* 1-4 take precedence over 5 and 6 ... */
	CHECK(probe_exit_final(PROBE_EXIT_PARTIAL, 1, PROBE_DELIVERY_KEPT) ==
	      PROBE_EXIT_PARTIAL);
	CHECK(probe_exit_final(PROBE_EXIT_NO_DEVICE, 1,
			       PROBE_DELIVERY_REJECTED) ==
	      PROBE_EXIT_NO_DEVICE);
	/* ... and 7 over 0 and 2, not over 1, 3, 4. */
	CHECK(probe_exit_final(PROBE_EXIT_OK, 1, PROBE_DELIVERY_UNAUTHORIZED) ==
	      PROBE_EXIT_UNAUTHORIZED);
	CHECK(probe_exit_final(PROBE_EXIT_PARTIAL, 1,
			       PROBE_DELIVERY_UNAUTHORIZED) ==
	      PROBE_EXIT_UNAUTHORIZED);
	CHECK(probe_exit_final(PROBE_EXIT_FAILED, 1,
			       PROBE_DELIVERY_UNAUTHORIZED) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_final(PROBE_EXIT_NO_DEVICE, 1,
			       PROBE_DELIVERY_UNAUTHORIZED) ==
	      PROBE_EXIT_NO_DEVICE);
	/* --flush-spool --post: a refused spool's 1 is not hidden by the
	 * post's 5 or 6 (review s25c K5); otherwise 7 > 5 > 6 > 0, as within
	 * one flush, whichever comes first */
	CHECK(probe_exit_combine(PROBE_EXIT_FAILED, PROBE_EXIT_UNDELIVERED) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_combine(PROBE_EXIT_FAILED, PROBE_EXIT_REJECTED) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_combine(PROBE_EXIT_FAILED, PROBE_EXIT_OK) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_combine(PROBE_EXIT_UNDELIVERED, PROBE_EXIT_FAILED) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_combine(PROBE_EXIT_FAILED, PROBE_EXIT_UNAUTHORIZED) ==
	      PROBE_EXIT_FAILED);
	CHECK(probe_exit_combine(PROBE_EXIT_UNDELIVERED,
				 PROBE_EXIT_UNAUTHORIZED) ==
	      PROBE_EXIT_UNAUTHORIZED);
	CHECK(probe_exit_combine(PROBE_EXIT_REJECTED, PROBE_EXIT_UNDELIVERED) ==
	      PROBE_EXIT_UNDELIVERED);
	CHECK(probe_exit_combine(PROBE_EXIT_UNDELIVERED, PROBE_EXIT_REJECTED) ==
	      PROBE_EXIT_UNDELIVERED);
	CHECK(probe_exit_combine(PROBE_EXIT_OK, PROBE_EXIT_REJECTED) ==
	      PROBE_EXIT_REJECTED);
	CHECK(probe_exit_combine(PROBE_EXIT_OK, PROBE_EXIT_OK) ==
	      PROBE_EXIT_OK);
}

/* A one-GPU node without libnccl: the NCCL result is a not-applicable
 * skip, the run stays ok and exits 0 (defect 8). */
static void test_one_gpu_run_is_ok(void)
{
	struct probe_report r;
	struct probe_result x;
	double s[] = {1, 2, 3};
	size_t i;
	int ok = 0, lib = 0, other = 0;

	probe_report_init(&r);
	probe_result_init(&x);
	strcpy(x.metric, "hbm_copy_gbps");
	CHECK(probe_result_set_samples(&x, s, 3) == 0);
	probe_report_add(&r, &x);
	probe_result_init(&x);
	strcpy(x.metric, "nccl_allreduce_busbw_gbps");
	CHECK(probe_nccl_plan(1, 1, 0, 0) == PROBE_NCCL_ONE_GPU);
	probe_result_skip(&x, 0, "one GPU: NCCL not applicable");
	probe_report_add(&r, &x);
	probe_report_finalize_status(&r);
	CHECK(r.status == PROBE_RUN_OK);
	for (i = 0; i < r.n_results; i++) {
		if (r.results[i].status == PROBE_RESULT_OK)
			ok++;
		else if (r.results[i].lib_missing)
			lib++;
		else if (r.results[i].partial)
			other++;
	}
	CHECK(probe_exit_for_run(r.status, ok, lib, other) == PROBE_EXIT_OK);
	probe_report_free(&r);
}

/* ---- NUMA ------------------------------------------------------------------
 */

static void test_numa_parse(void)
{
	CHECK(probe_numa_parse_node("0\n") == 0);
	CHECK(probe_numa_parse_node("1") == 1);
	CHECK(probe_numa_parse_node("  7 \n") == 7);
	CHECK(probe_numa_parse_node("1023\n") == 1023);
	CHECK(probe_numa_parse_node("-1\n") == -1);
	CHECK(probe_numa_parse_node("") == -1);
	CHECK(probe_numa_parse_node("\n") == -1);
	CHECK(probe_numa_parse_node("abc") == -1);
	CHECK(probe_numa_parse_node("3x") == -1);
	CHECK(probe_numa_parse_node("1 2") == -1);
	CHECK(probe_numa_parse_node("1024") == -1);
	CHECK(probe_numa_parse_node("99999999999999999999") == -1);
	CHECK(probe_numa_parse_node(NULL) == -1);
	CHECK(probe_pci_numa_node(SYSFS, "0000:5D:00.0") == 1);
	CHECK(probe_pci_numa_node(SYSFS, "0000:02:00.0") == -1);
	CHECK(probe_pci_numa_node(SYSFS, "0000:01:00.0") == -1);
}

static void test_cpulist_parse(void)
{
	struct probe_cpuset s;

	CHECK(probe_cpulist_parse("0-3,8\n", &s) == 5);
	CHECK(probe_cpuset_has(&s, 0) && probe_cpuset_has(&s, 3));
	CHECK(!probe_cpuset_has(&s, 4) && probe_cpuset_has(&s, 8));
	CHECK(probe_cpulist_parse("5", &s) == 1 && probe_cpuset_has(&s, 5));
	CHECK(probe_cpulist_parse("0-23,48-71\n", &s) == 48);
	CHECK(probe_cpuset_has(&s, 71) && !probe_cpuset_has(&s, 24));
	CHECK(probe_cpulist_parse("2,2-3", &s) == 2);
	CHECK(probe_cpulist_parse("4095", &s) == 1);
	CHECK(probe_cpulist_parse("4096", &s) == -1);
	CHECK(probe_cpulist_parse("3-1", &s) == -1);
	CHECK(probe_cpulist_parse("", &s) == -1);
	CHECK(probe_cpulist_parse("\n", &s) == -1);
	CHECK(probe_cpulist_parse("0-3,", &s) == -1);
	CHECK(probe_cpulist_parse("0-", &s) == -1);
	CHECK(probe_cpulist_parse("a", &s) == -1);
	CHECK(probe_cpulist_parse("1 2", &s) == -1);
	CHECK(probe_cpulist_parse(NULL, &s) == -1);
	CHECK(!probe_cpuset_has(&s, -1) && !probe_cpuset_has(&s, 5000));
}

/* Binding the thread to a GPU's local CPUs (fixture: CPU 0) and back. */
static void test_thread_binding(void)
{
	struct probe_cpuset saved;
	cpu_set_t before, during, after;
	char err[256];

	CHECK(pthread_getaffinity_np(pthread_self(), sizeof(before), &before) ==
	      0);
	if (!CPU_ISSET(0, &before)) {
		printf("# skipped: CPU 0 is not allowed here\n");
		return;
	}
	CHECK(probe_thread_bind_near(SYSFS, "0000:02:00.0", &saved, err,
				     sizeof(err)) == 0);
	CHECK(pthread_getaffinity_np(pthread_self(), sizeof(during), &during) ==
	      0);
	CHECK(CPU_COUNT(&during) == 1 && CPU_ISSET(0, &during));
	probe_thread_restore(&saved);
	CHECK(pthread_getaffinity_np(pthread_self(), sizeof(after), &after) ==
	      0);
	CHECK(CPU_EQUAL(&before, &after));
	/* No cpulist: an error, the thread unchanged. */
	CHECK(probe_thread_bind_near(SYSFS, "0000:01:00.0", &saved, err,
				     sizeof(err)) == -1);
	CHECK(strstr(err, "local_cpulist") != NULL);
	CHECK(pthread_getaffinity_np(pthread_self(), sizeof(after), &after) ==
	      0);
	CHECK(CPU_EQUAL(&before, &after));
}

/* Host memory bound to node 0 (every Linux machine has it) lands there;
 * where the kernel refuses mbind the reason is reported instead. */
static void test_host_alloc(void)
{
	size_t bytes = (size_t)4 << 20;
	int node = -2;
	char why[160];
	unsigned char *p = probe_host_alloc(bytes, 0, &node, why, sizeof(why));

	CHECK(p != NULL);
	if (p == NULL)
		return;
	if (why[0])
		printf("# mbind refused here: %s\n", why);
	else
		CHECK(node == 0);
	p[0] = 1;
	p[bytes - 1] = 2;
	CHECK(p[0] == 1 && p[bytes - 1] == 2 && p[bytes / 2] == 0);
	probe_host_free(p, bytes);
	p = probe_host_alloc(4096, -1, &node, why, sizeof(why));
	CHECK(p != NULL && strstr(why, "unknown") != NULL);
	probe_host_free(p, 4096);
}

/* ---- power from energy counters --------------------------------------------
 */

static void test_energy_power(void)
{
	unsigned long long e0[3] = {1000, 2000, 5000};
	unsigned long long e1[3] = {701000, 652000, 4000};
	int ok[3] = {1, 1, 0};

	CHECK_NEAR(probe_energy_power_w(e0, e1, ok, 3, 1.0), 675.0, 1e-12);
	CHECK_NEAR(probe_energy_power_w(e0, e1, ok, 2, 2.0), 337.5, 1e-12);
	ok[1] = 0;
	CHECK_NEAR(probe_energy_power_w(e0, e1, ok, 3, 1.0), 700.0, 1e-12);
	ok[2] = 1; /* a counter that went backwards: no figure */
	CHECK(isnan(probe_energy_power_w(e0, e1, ok, 3, 1.0)));
	ok[0] = ok[1] = ok[2] = 0;
	CHECK(isnan(probe_energy_power_w(e0, e1, ok, 3, 1.0)));
	ok[0] = 1;
	CHECK(isnan(probe_energy_power_w(e0, e1, ok, 3, 0.0)));
	/* A window shorter than the counter's steps: no figure (an H200 read
	 * 0 W and 1,407 W over such windows). */
	CHECK(isnan(probe_energy_power_w(e0, e1, ok, 3, 0.25)));
	CHECK_NEAR(
	    probe_energy_power_w(e0, e1, ok, 1, PROBE_ENERGY_MIN_WINDOW_S),
	    700.0 / PROBE_ENERGY_MIN_WINDOW_S, 1e-9);
}

/* ---- correctness checks
 * ------------------------------------------------------ */

static void test_number_formats(void)
{
	uint16_t h;
	uint8_t b;

	h = 0x3f80;
	CHECK(probe_elem_value(PROBE_EL_BF16, &h, 0) == 1.0);
	h = 0xc000;
	CHECK(probe_elem_value(PROBE_EL_BF16, &h, 0) == -2.0);
	h = 0x3c00;
	CHECK(probe_elem_value(PROBE_EL_FP16, &h, 0) == 1.0);
	h = 0x0001;
	CHECK(probe_elem_value(PROBE_EL_FP16, &h, 0) == ldexp(1, -24));
	h = 0x7bff;
	CHECK(probe_elem_value(PROBE_EL_FP16, &h, 0) == 65504.0);
	h = 0xfc00;
	CHECK(isinf(probe_elem_value(PROBE_EL_FP16, &h, 0)));
	h = 0x3555; /* 0.333252 */
	CHECK_NEAR(probe_elem_value(PROBE_EL_FP16, &h, 0), 0.333252, 1e-5);
	b = 0x38;
	CHECK(probe_elem_value(PROBE_EL_E4M3, &b, 0) == 1.0);
	b = 0xb8;
	CHECK(probe_elem_value(PROBE_EL_E4M3, &b, 0) == -1.0);
	b = 0x7e;
	CHECK(probe_elem_value(PROBE_EL_E4M3, &b, 0) == 448.0);
	b = 0x7f;
	CHECK(isnan(probe_elem_value(PROBE_EL_E4M3, &b, 0)));
	b = 0x01;
	CHECK(probe_elem_value(PROBE_EL_E4M3, &b, 0) == ldexp(1, -9));
	b = 0x3c; /* 1.5 */
	CHECK(probe_elem_value(PROBE_EL_E4M3, &b, 0) == 1.5);
	b = 0x81;
	CHECK(probe_elem_value(PROBE_EL_I8, &b, 0) == -127.0);
	CHECK(probe_elem_size(PROBE_EL_E4M3) == 1 &&
	      probe_elem_size(PROBE_EL_F64) == 8);
	CHECK(probe_gemm_cd_elem(GPU_DT_FP8_E4M3) == PROBE_EL_BF16);
	CHECK(probe_gemm_cd_elem(GPU_DT_INT8) == PROBE_EL_I32);
	CHECK(probe_gemm_ab_elem(GPU_DT_TF32) == PROBE_EL_F32);
}

static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
	return (uint16_t)(u >> 16);
}

static void test_gemm_spot_check(void)
{
	enum { K = 4096 };
	static uint16_t a[K], bb[K], a2[K];
	static int8_t ia[K], ib[K];
	double ref = 0;
	struct probe_gemm_check r;
	uint16_t c;
	int32_t ic, iref = 0;
	unsigned x = 12345;

	for (int i = 0; i < K; i++) {
		float fa, fb;
		x = x * 1103515245u + 12345u;
		fa = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
		x = x * 1103515245u + 12345u;
		fb = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
		a[i] = to_bf16(fa);
		bb[i] = to_bf16(fb);
		a2[i] = to_bf16(-fa * 0.5f + 0.25f);
		ref += probe_elem_value(PROBE_EL_BF16, &a[i], 0) *
		       probe_elem_value(PROBE_EL_BF16, &bb[i], 0);
		ia[i] = (int8_t)((x >> 3) % 255 - 127);
		ib[i] = (int8_t)((x >> 11) % 255 - 127);
		iref += ia[i] * ib[i];
	}
	/* The right element, rounded to bf16: passes. */
	c = to_bf16((float)ref);
	CHECK(probe_gemm_check_one(GPU_DT_BF16, K, a, bb, &c, &r) == 1);
	CHECK_NEAR(r.ref, ref, 1e-12);
	CHECK(r.tol > 0);
	/* 5 % off, or another row's dot product (a transposed operand):
	 * fails. */
	c = to_bf16((float)(ref * 1.05 + (ref >= 0 ? 1 : -1)));
	CHECK(probe_gemm_check_one(GPU_DT_BF16, K, a, bb, &c, &r) == 0);
	c = to_bf16((float)ref);
	CHECK(probe_gemm_check_one(GPU_DT_BF16, K, a2, bb, &c, &r) == 0);
	/* NaN never passes. */
	c = 0x7fc0;
	CHECK(probe_gemm_check_one(GPU_DT_BF16, K, a, bb, &c, &r) == 0);
	/* int8 is exact. */
	ic = iref;
	CHECK(probe_gemm_check_one(GPU_DT_INT8, K, ia, ib, &ic, &r) == 1);
	ic = iref + 1;
	CHECK(probe_gemm_check_one(GPU_DT_INT8, K, ia, ib, &ic, &r) == 0);
}

static void test_checksum(void)
{
	enum { N = 1 << 16 };
	static uint32_t w[N];
	uint64_t s0, s1;
	uint32_t t;

	for (int i = 0; i < N; i++)
		w[i] = (uint32_t)i * 2654435761u ^ 0x5bd1e995u;
	s0 = probe_checksum_u32(w, N);
	CHECK(s0 == probe_checksum_u32(w, N));
	t = w[10]; /* two words swapped */
	w[10] = w[20000];
	w[20000] = t;
	s1 = probe_checksum_u32(w, N);
	CHECK(s1 != s0);
	w[20000] = w[10];
	w[10] = t;
	CHECK(probe_checksum_u32(w, N) == s0);
	w[N - 1] ^= 0x100; /* one bit */
	CHECK(probe_checksum_u32(w, N) != s0);
	w[N - 1] ^= 0x100;
	/* The sum is order-free: a GPU may add the shares in any order. */
	s1 = 0;
	for (int i = N - 1; i >= 0; i--)
		s1 += probe_cksum_word(w[i], (uint64_t)i);
	CHECK(s1 == s0);
	/* Shifted by one word (a copy to the wrong offset): differs. */
	CHECK(probe_checksum_u32(w + 1, N - 1) != probe_checksum_u32(w, N - 1));
}

static void test_spot_positions(void)
{
	int r[16], c[16], n;

	n = probe_spot_positions(8192, 4096, 8, 7, r, c);
	CHECK(n == 8);
	CHECK(r[0] == 0 && c[0] == 0 && r[1] == 8191 && c[1] == 4095);
	for (int i = 0; i < n; i++) {
		CHECK(r[i] >= 0 && r[i] < 8192 && c[i] >= 0 && c[i] < 4096);
		for (int j = 0; j < i; j++)
			CHECK(r[i] != r[j] || c[i] != c[j]);
	}
	CHECK(probe_spot_positions(2, 2, 16, 7, r, c) == 4);
	CHECK(probe_spot_positions(1, 1, 8, 7, r, c) == 1);
	CHECK(probe_spot_positions(0, 5, 8, 7, r, c) == 0);
}

int main(void)
{
	RUN(test_batch_caps);
	RUN(test_deadlines);
	RUN(test_nccl_plan);
	RUN(test_nccl_sizes_and_ranks);
	RUN(test_gemm_summary);
	RUN(test_status_names);
	RUN(test_exit_codes);
	RUN(test_one_gpu_run_is_ok);
	RUN(test_numa_parse);
	RUN(test_cpulist_parse);
	RUN(test_thread_binding);
	RUN(test_host_alloc);
	RUN(test_energy_power);
	RUN(test_number_formats);
	RUN(test_gemm_spot_check);
	RUN(test_checksum);
	RUN(test_spot_positions);
	return testlib_finish();
}

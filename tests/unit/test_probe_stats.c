/* Unit tests of gpusizer-probe's statistics (median, stopping rule) and
 * limit arithmetic (PCIe, NVLink, NCCL bus bandwidth, efficiency). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "limits.h"
#include "stats.h"
#include "testlib.h"

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

int main(void)
{
	RUN(test_stats_odd);
	RUN(test_stats_even_and_single);
	RUN(test_stats_rejects);
	RUN(test_stopping_rule);
	RUN(test_pcie);
	RUN(test_nvlink);
	RUN(test_busbw);
	RUN(test_efficiency_and_gemm);
	return testlib_finish();
}

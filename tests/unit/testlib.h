/* Minimal unit-test harness: TAP lines per check, a summary line per binary.
 *
 * Each test binary defines test functions and calls RUN(fn) from main, then
 * returns testlib_finish(). tests/run.sh aggregates the "ok"/"not ok" lines
 * into the suite's closing "N passed, N failed" line.
 */
#ifndef GPUSIZER_TESTLIB_H
#define GPUSIZER_TESTLIB_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int testlib_passed, testlib_failed, testlib_cur_failed;
static const char *testlib_cur_name;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("# %s:%d: check failed: %s\n", __FILE__,        \
			       __LINE__, #cond);                               \
			testlib_cur_failed = 1;                                \
		}                                                              \
	} while (0)

/* Relative closeness: |got - want| <= rel * |want|. */
#define CHECK_NEAR(got, want, rel)                                             \
	do {                                                                   \
		double g_ = (double)(got), w_ = (double)(want);                \
		if (!(fabs(g_ - w_) <= (rel)*fabs(w_))) {                      \
			printf("# %s:%d: %s = %.6g, want %.6g (±%g%%)\n",      \
			       __FILE__, __LINE__, #got, g_, w_,               \
			       (double)(rel)*100.0);                           \
			testlib_cur_failed = 1;                                \
		}                                                              \
	} while (0)

#define RUN(fn)                                                                \
	do {                                                                   \
		testlib_cur_name = #fn;                                        \
		testlib_cur_failed = 0;                                        \
		fn();                                                          \
		if (testlib_cur_failed) {                                      \
			testlib_failed++;                                      \
			printf("not ok - %s\n", testlib_cur_name);             \
		} else {                                                       \
			testlib_passed++;                                      \
			printf("ok - %s\n", testlib_cur_name);                 \
		}                                                              \
	} while (0)

static inline int testlib_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v in place); 0 when n is 0. */
static inline double testlib_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), testlib_cmp_double);
	return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0;
}

static inline int testlib_finish(void)
{
	printf("# %d passed, %d failed\n", testlib_passed, testlib_failed);
	return testlib_failed ? 1 : 0;
}

#endif

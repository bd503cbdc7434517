/* test_engine_gemm_h200.c - the in-step GEMM model (hw_gemm_rate x
 * gemm_shape_factor, datasheet path, no probe calibration) beside the rates
 * our probe measured on one H200 (2026-11-26): the four plan GEMMs of a
 * Llama-2-70B layer at TP 8 with 4,096 tokens, in BF16 and FP8, each run
 * 5 s (tests/fixtures/probe/report_h200x1_full.json) and 20 s
 * (report_h200x1_full_sustain20.json, the same probe before its copy-kernel
 * change, which these GEMMs do not use) at the 700 W limit. Out of sample:
 * no engine value was set from these figures. docs/VALIDATION.md, "GEMM
 * rates against our own H200 measurement".
 *
 * It reports one '#' line per GEMM and the median |error| per run length,
 * and gates loosely on what a user relies on: the median within 10 % and
 * no GEMM beyond 20 % (today: 3.8 % and 11.9 % at 20 s).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_fixtures.h"
#include "gemm.h"
#include "hw.h"
#include "testlib.h"

/* m x n x k as the probe ran them, and the medians of the two reports. */
static const struct {
	const char *name;
	enum eng_dtype dtype;
	double m, n, k;
	double tflops_5s, tflops_20s;
} rows[] = {
    {"qkv", ENG_BF16, 1280, 4096, 8192, 688.279, 672.171},
    {"attn_out", ENG_BF16, 8192, 4096, 1024, 647.331, 637.785},
    {"mlp_gate_up", ENG_BF16, 7168, 4096, 8192, 695.073, 654.422},
    {"mlp_down", ENG_BF16, 8192, 4096, 3584, 685.377, 671.138},
    {"qkv", ENG_FP8, 1280, 4096, 8192, 1169.44, 1145.29},
    {"attn_out", ENG_FP8, 8192, 4096, 1024, 942.44, 921.432},
    {"mlp_gate_up", ENG_FP8, 7168, 4096, 8192, 1173.43, 1176.22},
    {"mlp_down", ENG_FP8, 8192, 4096, 3584, 1159.46, 1119.4},
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static void test_plan_gemms_against_h200(void)
{
	struct hw_spec g = fx_h200();
	double abs5[NROWS], abs20[NROWS], worst = 0;

	for (int i = 0; i < NROWS; i++) {
		double min_dim = fmin(rows[i].m, fmin(rows[i].n, rows[i].k));
		struct hw_rate r = hw_gemm_rate(&g, rows[i].dtype);
		double engine =
		    r.value * gemm_shape_factor(min_dim, rows[i].dtype);
		double e5 = engine / rows[i].tflops_5s - 1;
		double e20 = engine / rows[i].tflops_20s - 1;

		CHECK(!r.measured && isfinite(engine) && engine > 0);
		printf("# %-11s %-4s engine %7.1f  5 s %7.1f (%+5.1f %%)  "
		       "20 s %7.1f (%+5.1f %%)\n",
		       rows[i].name, eng_dtype_name(rows[i].dtype), engine,
		       rows[i].tflops_5s, 100 * e5, rows[i].tflops_20s,
		       100 * e20);
		abs5[i] = fabs(e5);
		abs20[i] = fabs(e20);
		worst = fmax(worst, fmax(abs5[i], abs20[i]));
	}
	double m5 = testlib_median(abs5, NROWS),
	       m20 = testlib_median(abs20, NROWS);
	printf("# median |error|: 5 s %.1f %%, 20 s %.1f %%; worst %.1f %%\n",
	       100 * m5, 100 * m20, 100 * worst);
	CHECK(m5 <= 0.10 && m20 <= 0.10);
	CHECK(worst <= 0.20);
}

int main(void)
{
	RUN(test_plan_gemms_against_h200);
	return testlib_finish();
}

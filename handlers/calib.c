/* calib.c - fleet medians -> struct hw_spec measured fields. */
#include <string.h>

#include "handlers/calib.h"
#include "handlers/problem.h"
#include "storage/bench.h"

/* A fleet median the engine may divide by: measured, and within the
 * bounds every stored statistic has (storage/bench.h; issue 15).
 */
static int usable(const struct fleet_value *v)
{
	return v->samples > 0 && v->value >= BENCH_STAT_MIN &&
	       v->value <= BENCH_STAT_MAX;
}

/* Copies a usable fleet median into the engine's measured field; 1 when
 * it did. */
static int take(struct hw_measured *to, const struct fleet_value *from)
{
	if (!usable(from))
		return 0;
	to->value = from->value;
	to->samples = from->samples;
	return 1;
}

int calib_apply(struct app *app, const char *gpu, enum calib_mode mode,
		struct hw_spec *hw, struct calib_info *ci, const char *field,
		struct response *res)
{
	struct fleet_medians fm;
	struct store_err e;
	int any = 0;

	memset(ci, 0, sizeof(*ci));
	ci->mode = mode;
	ci->window_days = CALIB_WINDOW_DAYS;
	if (mode == CALIB_DATASHEET)
		return 0;
	if (store_fleet_medians(app->db, gpu, CALIB_WINDOW_DAYS,
				app->fleet_synthetic, &fm, &e) != STORE_OK) {
		problem_store(res, &e, "fleet measurements");
		return -1;
	}
	for (int t = 0; t < ENG_DTYPE_COUNT && t < FLEET_DTYPES; t++) {
		any |= take(&hw->gemm_tflops[t], &fm.gemm_tflops[t]);
		any |= take(&hw->gemm_sustained_tflops[t],
			    &fm.gemm_sustained_tflops[t]);
	}
	any |= take(&hw->hbm_gbps, &fm.hbm_gbps);
	any |= take(&hw->intra_node_busbw_gbps, &fm.allreduce_busbw_gbps);
	ci->runs = fm.runs;
	if (mode == CALIB_MEASURED && !any) {
		problem(res, 422, "not-measured", "No measurements",
			"calibration: no probe has measured a \"%s\" (%s) in "
			"the last %d days; use \"calibration\": \"auto\" or "
			"\"datasheet\"",
			gpu, field, CALIB_WINDOW_DAYS);
		json_object_set_new(res->json, "errors",
				    json_pack("[{s:s, s:s}]", "field",
					      "calibration", "message",
					      "no measurements for this GPU "
					      "type"));
		return -1;
	}
	return 0;
}

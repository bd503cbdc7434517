/* calib.c - fleet medians -> struct hw_spec measured fields. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "handlers/calib.h"
#include "handlers/problem.h"
#include "storage/bench.h"

/* A fleet value the engine may divide by: measured, and within the
 * bounds every stored statistic has (storage/bench.h; issue 15).
 */
static int usable(const struct fleet_value *v)
{
	return v->samples > 0 && v->value >= BENCH_STAT_MIN &&
	       v->value <= BENCH_STAT_MAX;
}

bool calib_implausible(double median, double datasheet)
{
	return datasheet > 0.0 &&
	       (median > CALIB_PLAUSIBLE_MAX_RATIO * datasheet ||
		median < CALIB_PLAUSIBLE_MIN_RATIO * datasheet);
}

/* [CALIB_PLAUSIBLE_MIN_RATIO, max_ratio] x datasheet, expecting
 * efficiency x datasheet; none without a datasheet figure. */
static struct fleet_band band_of(double datasheet, double max_ratio,
				 double efficiency)
{
	if (!(datasheet > 0.0))
		return (struct fleet_band){0.0, 0.0, 0.0};
	return (struct fleet_band){CALIB_PLAUSIBLE_MIN_RATIO * datasheet,
				   max_ratio * datasheet,
				   efficiency * datasheet};
}

/* Each calibrating metric's band from hw's datasheet figures (calib.h):
 * GEMMs against the dense peak of their dtype, HBM against its bandwidth,
 * the all-reduce against the one-way link rate; each expecting what a
 * probe of the type measures when the engine's defaults hold, the
 * arbiter of an even split of the nodes (review s19c F2): for a GEMM the
 * best-shape rate, datasheet x default efficiency / in-step retention
 * (0.69 / 0.863 = 0.80 of the H100's peak: its mamf figure), not the
 * in-step rate, beside which a 21 % slow node had looked the healthier
 * (review s19d F2). */
static void calib_bands(const struct hw_spec *hw, struct fleet_bands *b)
{
	memset(b, 0, sizeof(*b));
	for (int t = 0; t < ENG_DTYPE_COUNT && t < FLEET_DTYPES; t++) {
		b->gemm_tflops[t] =
		    band_of(hw->peak_tflops[t], CALIB_PLAUSIBLE_MAX_RATIO,
			    hw_gemm_efficiency_for(hw, (enum eng_dtype)t) /
				hw_gemm_in_step_retention((enum eng_dtype)t));
		b->gemm_sustained_tflops[t] = b->gemm_tflops[t];
	}
	b->hbm_gbps =
	    band_of(hw->memory_bandwidth_gbps, CALIB_PLAUSIBLE_MAX_RATIO,
		    hw_default_hbm_efficiency());
	b->allreduce_busbw_gbps =
	    band_of(hw->intra_node_gbps,
		    hw->intra_node_link == HW_LINK_NVLINK && hw->cc_major >= 9
			? CALIB_BUSBW_MAX_RATIO
			: CALIB_BUSBW_RING_MAX_RATIO,
		    hw_default_link_efficiency(hw->intra_node_link));
	b->degraded_threshold = DEGRADED_THRESHOLD;
}

/* Adds a set-aside entry to ci (the first CALIB_MAX_IGNORED are kept). */
static void set_aside(struct calib_info *ci, const char *metric, double median,
		      int nodes, const char *reason)
{
	if (ci->n_set_aside < CALIB_MAX_IGNORED) {
		struct calib_set_aside *g = &ci->set_aside[ci->n_set_aside];

		snprintf(g->metric, sizeof(g->metric), "%s", metric);
		g->median = median;
		g->nodes = nodes;
		snprintf(g->reason, sizeof(g->reason), "%s", reason);
	}
	ci->n_set_aside++;
}

/* Copies a usable fleet value into the engine's measured field; 1 when
 * it did. Runs outside the plausible band of the GPU type's own datasheet
 * figure were left out (storage's fleet_calib_value) and are listed in ci:
 * no working GPU of that type measures them, so they come from a report
 * filed under the wrong type or a broken probe, and one such node would
 * otherwise move every "auto" sizing of the type. So are nodes left out as
 * degraded, and the half of an even split farther from band's expected
 * figure. */
static int take(struct hw_measured *to, const struct fleet_value *from,
		double datasheet, const struct fleet_band *band,
		const char *metric, struct calib_info *ci)
{
	if (from->implausible > 0) {
		if (ci->n_ignored < CALIB_MAX_IGNORED) {
			struct calib_ignored *g = &ci->ignored[ci->n_ignored];

			snprintf(g->metric, sizeof(g->metric), "%s", metric);
			g->median = from->implausible_median;
			g->datasheet = datasheet;
			g->runs = from->implausible;
		}
		ci->n_ignored++;
	}
	if (from->degraded > 0) {
		if (ci->n_degraded < CALIB_MAX_IGNORED) {
			struct calib_degraded *g =
			    &ci->degraded[ci->n_degraded];

			snprintf(g->metric, sizeof(g->metric), "%s", metric);
			g->median = from->degraded_median;
			g->nodes = from->degraded;
		}
		ci->n_degraded++;
	}
	if (from->disputed > 0) {
		char why[200];

		snprintf(why, sizeof(why),
			 "the nodes split in two halves more than %.0f %% "
			 "apart; this half is the farther from %.4g, what "
			 "the type is expected to measure (datasheet x "
			 "default efficiency)",
			 100.0 * DEGRADED_THRESHOLD, band->expect);
		set_aside(ci, metric, from->disputed_median, from->disputed,
			  why);
	}
	if (!usable(from))
		return 0;
	to->value = from->value;
	to->samples = from->samples;
	return 1;
}

/* Removes the entries of items (n of size bytes, each starting with its
 * metric name) named metric, keeping the others in order; returns how many
 * went. */
static int drop_metric(void *items, size_t size, int n, const char *metric)
{
	char *p = items;
	int kept = 0;

	for (int i = 0; i < n; i++)
		if (strcmp(p + (size_t)i * size, metric))
			memmove(p + (size_t)kept++ * size, p + (size_t)i * size,
				size);
	return n - kept;
}

_Static_assert(offsetof(struct calib_ignored, metric) == 0 &&
		   offsetof(struct calib_degraded, metric) == 0 &&
		   offsetof(struct calib_set_aside, metric) == 0,
	       "drop_metric reads the metric at the start of an entry");

void calib_forget(struct calib_info *ci, const char *metric)
{
	ci->n_ignored -=
	    drop_metric(ci->ignored, sizeof(ci->ignored[0]),
			ci->n_ignored < CALIB_MAX_IGNORED ? ci->n_ignored
							  : CALIB_MAX_IGNORED,
			metric);
	ci->n_degraded -=
	    drop_metric(ci->degraded, sizeof(ci->degraded[0]),
			ci->n_degraded < CALIB_MAX_IGNORED ? ci->n_degraded
							   : CALIB_MAX_IGNORED,
			metric);
	ci->n_set_aside -=
	    drop_metric(ci->set_aside, sizeof(ci->set_aside[0]),
			ci->n_set_aside < CALIB_MAX_IGNORED ? ci->n_set_aside
							    : CALIB_MAX_IGNORED,
			metric);
}

int calib_require_gemm(const struct calib_info *ci, const struct hw_spec *hw,
		       enum eng_dtype dtype, const char *gpu, const char *field,
		       struct response *res)
{
	if (ci->mode != CALIB_MEASURED || hw->gemm_tflops[dtype].samples > 0 ||
	    hw->gemm_sustained_tflops[dtype].samples > 0)
		return 0;
	problem(res, 422, "not-measured", "No measurements",
		"%s: no probe has measured a usable %s GEMM rate of "
		"\"%s\" in the last %d days (what was measured is not what "
		"this job runs, or was implausible); use \"calibration\": "
		"\"auto\" or \"datasheet\"",
		field, eng_dtype_name(dtype), gpu, ci->window_days);
	json_object_set_new(res->json, "errors",
			    json_pack("[{s:s, s:s}]", "field", field, "message",
				      "no measured GEMM rate in the job's "
				      "dtype for this GPU type"));
	return -1;
}

/* Every fleet value calibration uses into hw's measured fields (take);
 * 1 when one was taken. ci lists what was left out. A sustained GEMM
 * figure takes precedence over the best-shape one of its dtype (engine/
 * hw.h hw_gemm_rate) only when at least half as many nodes back it: one
 * node's single result had set aside five nodes' figures (review s19c
 * F1); only full probe runs measure it, so "as many" let one quick run
 * switch a type between the two (review s19d F3). */
static int take_all(struct hw_spec *hw, const struct fleet_medians *fm,
		    const struct fleet_bands *bands, struct calib_info *ci)
{
	int any = 0;

	for (int t = 0; t < ENG_DTYPE_COUNT && t < FLEET_DTYPES; t++) {
		char best[40], sustained[40];
		const struct fleet_value *b = &fm->gemm_tflops[t],
					 *s = &fm->gemm_sustained_tflops[t];

		snprintf(best, sizeof(best), "gemm_tflops.%s",
			 eng_dtype_name(t));
		snprintf(sustained, sizeof(sustained),
			 "gemm_sustained_tflops.%s", eng_dtype_name(t));
		any |= take(&hw->gemm_tflops[t], b, hw->peak_tflops[t],
			    &bands->gemm_tflops[t], best, ci);
		bool aside = usable(s) && usable(b) && 2 * s->nodes < b->nodes;
		struct hw_measured unused = {0};
		int took;

		if (aside) {
			char why[200];

			snprintf(why, sizeof(why),
				 "%d node(s) against the %d behind %s: a "
				 "sustained figure is taken when at least half "
				 "as many nodes back it",
				 s->nodes, b->nodes, best);
			set_aside(ci, sustained, s->value, s->nodes, why);
		}
		/* what it leaves out is listed either way */
		took = take(aside ? &unused : &hw->gemm_sustained_tflops[t], s,
			    hw->peak_tflops[t],
			    &bands->gemm_sustained_tflops[t], sustained, ci);
		any |= took && !aside;
	}
	any |= take(&hw->hbm_gbps, &fm->hbm_gbps, hw->memory_bandwidth_gbps,
		    &bands->hbm_gbps, "hbm_gbps", ci);
	/* held to its own band (CALIB_BUSBW_MAX_RATIO): NCCL's bus
	 * bandwidth may exceed the link's one-way rate (NVLink SHARP
	 * all-reduce on H100: ~480 GB/s against 450) */
	any |= take(&hw->intra_node_busbw_gbps, &fm->allreduce_busbw_gbps,
		    hw->intra_node_gbps, &bands->allreduce_busbw_gbps,
		    "intra_node_gbps", ci);
	return any;
}

int calib_apply(struct app *app, const char *gpu, enum calib_mode mode,
		struct hw_spec *hw, struct calib_info *ci, const char *field,
		const char *calib_field, struct response *res)
{
	struct fleet_medians fm;
	struct fleet_bands bands;
	struct store_err e;
	int any = 0;

	memset(ci, 0, sizeof(*ci));
	ci->mode = mode;
	ci->window_days = CALIB_WINDOW_DAYS;
	if (mode == CALIB_DATASHEET)
		return 0;
	calib_bands(hw, &bands);
	if (store_fleet_medians(app->db, gpu, CALIB_WINDOW_DAYS,
				app->fleet_synthetic, &bands, &fm,
				&e) != STORE_OK) {
		problem_store(res, &e, "fleet measurements");
		return -1;
	}
	any = take_all(hw, &fm, &bands, ci);
	ci->runs = fm.runs;
	ci->used = any;
	if (mode == CALIB_MEASURED && !any) {
		problem(res, 422, "not-measured", "No measurements",
			"%s: no probe has measured a \"%s\" (%s) in the last "
			"%d days; use \"calibration\": \"auto\" or "
			"\"datasheet\"",
			calib_field, gpu, field, CALIB_WINDOW_DAYS);
		json_object_set_new(res->json, "errors",
				    json_pack("[{s:s, s:s}]", "field",
					      calib_field, "message",
					      "no measurements for this GPU "
					      "type"));
		return -1;
	}
	return 0;
}

/* One calibrating value for the fleet view: what calibration takes now,
 * the rate sizing makes of it (used: false when another measurement of
 * the same dtype takes precedence), the figure its band is set from, what
 * it leaves out, and why it is set aside (aside: NULL when it is not). */
static json_t *calib_value_json(const char *field, const char *metric,
				const char *dtype, const char *unit,
				const struct fleet_value *v,
				const struct fleet_band *band, double reference,
				const char *reference_basis,
				const struct hw_rate *rate, bool used,
				const char *aside)
{
	bool use = usable(v), sized = use && used && rate && rate->measured;
	json_t *o = json_pack(
	    "{s:s, s:s, s:s?, s:s, s:o, s:i, s:i, s:o, s:s, s:o, s:o, s:o, "
	    "s:i, s:o, s:i, s:o, s:i, s:o, s:o}",
	    "field", field, "metric", metric, "dtype", dtype, "unit", unit,
	    "value", use ? sizing_real(v->value, 6) : json_null(), "runs",
	    use ? v->samples : 0, "nodes", use ? v->nodes : 0, "reference",
	    reference > 0.0 ? sizing_real(reference, 6) : json_null(),
	    "reference_basis", reference_basis, "fraction",
	    use && reference > 0.0 ? sizing_real(v->value / reference, 4)
				   : json_null(),
	    "band_min", band->hi > 0.0 ? sizing_real(band->lo, 6) : json_null(),
	    "band_max", band->hi > 0.0 ? sizing_real(band->hi, 6) : json_null(),
	    "implausible_runs", v->implausible, "implausible_median",
	    v->implausible > 0 ? sizing_real(v->implausible_median, 6)
			       : json_null(),
	    "degraded_nodes", v->degraded, "degraded_median",
	    v->degraded > 0 ? sizing_real(v->degraded_median, 6) : json_null(),
	    "disputed_nodes", v->disputed, "disputed_median",
	    v->disputed > 0 ? sizing_real(v->disputed_median, 6) : json_null(),
	    "set_aside", aside ? json_string(aside) : json_null());

	/* the rate sizing takes from it: in-step retention, the plan's
	 * shapes taken out, at most the datasheet (review s18d F12: B200
	 * HBM showed 8,400 where sizing took 8,000) */
	if (o) {
		json_object_set_new(o, "sizing_value",
				    sized ? sizing_real(rate->value, 6)
					  : json_null());
		json_object_set_new(o, "capped_at_datasheet",
				    json_boolean(sized && rate->capped));
	}
	return o;
}

/* Why calibration set aside metric's usable value (ci's entry whose
 * value is not taken: a sustained figure fewer nodes back), or NULL. */
static const char *aside_reason(const struct calib_info *ci, const char *metric)
{
	for (int i = 0; i < ci->n_set_aside && i < CALIB_MAX_IGNORED; i++)
		if (!strcmp(ci->set_aside[i].metric, metric) &&
		    !strncmp(metric, "gemm_sustained_tflops.", 22))
			return ci->set_aside[i].reason;
	return NULL;
}

/* Whether the GEMM rate r was measured with metric. */
static bool taken_from(const struct hw_rate *r, const char *metric)
{
	return r->measured_metric && !strcmp(r->measured_metric, metric);
}

/* Whether a fleet value says anything: taken, or runs or nodes left out. */
static bool calib_value_seen(const struct fleet_value *v)
{
	return usable(v) || v->implausible > 0 || v->degraded > 0 ||
	       v->disputed > 0;
}

int calib_fleet_json(struct app *app, const char *gpu, const struct hw_spec *hw,
		     json_t **out, struct store_err *e)
{
	struct fleet_medians fm;
	struct fleet_bands bands;
	struct hw_spec h = *hw;
	struct calib_info scratch = {0};
	struct hw_rate r;
	json_t *values = json_array();
	char key[40];

	*out = NULL;
	calib_bands(hw, &bands);
	if (!values || store_fleet_medians(app->db, gpu, CALIB_WINDOW_DAYS,
					   app->fleet_synthetic, &bands, &fm,
					   e) != STORE_OK) {
		json_decref(values);
		if (e->status == STORE_OK) {
			e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "out of memory");
		}
		return -1;
	}
	/* the rates sizing would make of them, taken as calib_apply takes
	 * them (engine/hw.h) */
	take_all(&h, &fm, &bands, &scratch);
	for (int t = 0; t < ENG_DTYPE_COUNT && t < FLEET_DTYPES; t++) {
		/* the GEMM dtypes sizing computes in: training's precisions
		 * and inference's (int8 and int4 weights are multiplied in
		 * 16-bit); fp64 and int8 rates are shown, not taken (review
		 * s18e F9) */
		bool computes = t != ENG_FP64 && t != ENG_INT8;

		/* a dtype the catalog gives no rate is one sizing refuses
		 * (review s18d F10: listed as if taken) */
		if (!(hw->peak_tflops[t] > 0.0))
			continue;
		r = hw_gemm_rate(&h, (enum eng_dtype)t);
		snprintf(key, sizeof(key), "gemm_sustained_tflops.%s",
			 eng_dtype_name(t));
		if (calib_value_seen(&fm.gemm_tflops[t]))
			json_array_append_new(
			    values,
			    calib_value_json(
				"gemm_tflops", "gemm_tflops", eng_dtype_name(t),
				"TFLOP/s", &fm.gemm_tflops[t],
				&bands.gemm_tflops[t], hw->peak_tflops[t],
				"datasheet", &r,
				computes && taken_from(&r, "gemm_tflops"),
				NULL));
		if (calib_value_seen(&fm.gemm_sustained_tflops[t]))
			json_array_append_new(
			    values,
			    calib_value_json(
				"gemm_sustained_tflops",
				"gemm_sustained_tflops", eng_dtype_name(t),
				"TFLOP/s", &fm.gemm_sustained_tflops[t],
				&bands.gemm_sustained_tflops[t],
				hw->peak_tflops[t], "datasheet", &r,
				computes &&
				    taken_from(&r, "gemm_sustained_tflops"),
				aside_reason(&scratch, key)));
	}
	if (calib_value_seen(&fm.hbm_gbps)) {
		r = hw_hbm_rate(&h);
		json_array_append_new(
		    values,
		    calib_value_json("hbm_gbps", "hbm_read_gbps", NULL, "GB/s",
				     &fm.hbm_gbps, &bands.hbm_gbps,
				     hw->memory_bandwidth_gbps, "datasheet", &r,
				     true, NULL));
	}
	/* the one value the per-GPU metrics cannot show: NCCL's all-reduce
	 * is a node's measurement (review s17c F1) */
	if (calib_value_seen(&fm.allreduce_busbw_gbps)) {
		r = hw_intra_rate(&h);
		json_array_append_new(
		    values, calib_value_json(
				"intra_node_gbps", "nccl_allreduce_busbw_gbps",
				NULL, "GB/s", &fm.allreduce_busbw_gbps,
				&bands.allreduce_busbw_gbps,
				hw->intra_node_gbps, "link", &r, true, NULL));
	}
	*out = json_pack("{s:i, s:i, s:o}", "window_days", CALIB_WINDOW_DAYS,
			 "runs", fm.runs, "values", values);
	if (!*out) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
		return -1;
	}
	return 0;
}

int calib_fleet_annotate(struct app *app, json_t *fleet, struct store_err *e)
{
	json_t *item, *c;
	size_t i;

	json_array_foreach(json_object_get(fleet, "items"), i, item)
	{
		struct hw_spec hw;
		const char *gpu =
		    json_string_value(json_object_get(item, "gpu_type"));

		c = NULL;
		if (gpu && json_is_true(json_object_get(item, "in_catalog"))) {
			if (sizing_catalog_hw(app, gpu, &hw, e) == STORE_OK) {
				if (calib_fleet_json(app, gpu, &hw, &c, e) != 0)
					return -1;
			} else if (e->status != STORE_NOT_FOUND) {
				return -1;
			}
		}
		json_object_set_new(item, "calibration", c ? c : json_null());
	}
	store_err_clear(e);
	return 0;
}

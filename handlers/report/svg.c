/* svg.c - the report's charts: inline SVG primitives (axes, grid lines,
 * bars, legend boxes), the fleet's GPUs per type, and the charts drawn per
 * GPU type (GPU-days asked vs healthy GPU-days, GEMM and bandwidth
 * measured vs reference). Strings from the database go through
 * rpt_esc(); numbers are formatted here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/report/report_int.h"

/* ---- SVG helpers ----------------------------------------------------- */

void rpt_svg_open(struct sbuf *b, const char *chart, int w, int h)
{
	sbuf_printf(b,
		    "<svg class=\"chart\" data-chart=\"%s\" viewBox=\"0 0 %d "
		    "%d\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		    chart, w, h, w, h);
}

/* An axis label for v on an axis whose ticks are step apart: integers
 * (with separators) when the step is whole, else just enough decimals.
 */
void rpt_tick(struct sbuf *b, double v, double step)
{
	if (step >= 1 && fabs(v) < 1000)
		sbuf_printf(b, "%.0f", v);
	else if (step >= 1)
		rpt_num(b, v);
	else
		sbuf_printf(b, "%.*f", (int)ceil(-log10(step) - 1e-9), v);
}

/* A horizontal grid line with its value label at the left of x0. */
void rpt_svg_ytick(struct sbuf *b, double x0, double x1, double y, double v,
		   double step)
{
	sbuf_printf(b,
		    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		    "stroke=\"" C_GRID "\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
		    x0, y, x1, y, x0 - 5, y + 4);
	rpt_tick(b, v, step);
	sbuf_put(b, "</text>\n");
}

/* Axis titles (quantity and unit), static text: centred under the x axis
 * at (x, y); along the y axis, rotated, centred at (x, y).
 */
void rpt_svg_xtitle(struct sbuf *b, double x, double y, const char *text)
{
	sbuf_printf(b,
		    "<text class=\"axis-title\" data-axis=\"x\" x=\"%.1f\" "
		    "y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		    x, y, text);
}

void rpt_svg_ytitle(struct sbuf *b, double x, double y, const char *text)
{
	sbuf_printf(b,
		    "<text class=\"axis-title\" data-axis=\"y\" x=\"%.1f\" "
		    "y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 "
		    "%.1f %.1f)\">%s</text>\n",
		    x, y, x, y, text);
}

void rpt_svg_xaxis(struct sbuf *b, int x0, int x1, double y)
{
	sbuf_printf(b,
		    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		    "stroke=\"" C_AXIS "\"/>\n",
		    x0, y, x1, y);
}

/* The x axis line, both axis titles and the end of a chart's SVG. */
static void svg_close_chart(struct sbuf *b, int left, int right, int w, int h,
			    double top, double plot_h, const char *xtitle,
			    const char *ytitle)
{
	rpt_svg_xaxis(b, left, w - right, top + plot_h);
	rpt_svg_xtitle(b, left + (w - left - right) / 2.0, h - 8, xtitle);
	rpt_svg_ytitle(b, 14, top + plot_h / 2, ytitle);
	sbuf_put(b, "</svg>\n</div>\n");
}

void rpt_svg_rect(struct sbuf *b, const char *cls, double x, double y, double w,
		  double h, const char *fill)
{
	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	sbuf_printf(b,
		    "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		    "height=\"%.1f\" fill=\"%s\">",
		    cls, x, y, w, h, fill);
}

static void svg_legend_box(struct sbuf *b, double x, double y, const char *fill,
			   const char *label)
{
	sbuf_printf(b,
		    "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" "
		    "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
		    x, y, fill, x + 15, y + 10, label);
}

/* The capacity item of (week, type), or NULL. */
static const json_t *capacity_item(const json_t *items, const char *week,
				   const char *type)
{
	const json_t *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		if (!strcmp(rpt_jstr(it, "week"), week) &&
		    !strcmp(rpt_jstr(it, "gpu_type"), type))
			return it;
	}
	return NULL;
}

/* One GPU type's weeks: GPU-days asked beside healthy GPU-days. */
void rpt_capacity_chart(struct sbuf *b, const json_t *d, const char *type)
{
	const json_t *cap = json_object_get(d, "capacity");
	const json_t *weeks = json_object_get(cap, "weeks");
	const json_t *items = json_object_get(cap, "items");
	const json_t *wk;
	size_t nw = json_array_size(weeks), i, label_every;
	double max = 1, step, axis, cw, bw;
	const int w = 520, h = 290, left = 66, right = 12, top = 30,
		  bottom = 52;
	double plot_h = h - top - bottom;

	if (nw == 0)
		return;
	json_array_foreach(weeks, i, wk)
	{
		const json_t *it =
		    capacity_item(items, rpt_jstr(wk, "week"), type);
		double a = 0, hd = 0;
		rpt_jnum(it, "asked_gpu_days", &a);
		rpt_jnum(it, "healthy_gpu_days", &hd);
		if (a > max)
			max = a;
		if (hd > max)
			max = hd;
	}
	step = rpt_nice_step(max * 1.1, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.1 / step) * step;
	cw = (double)(w - left - right) / (double)nw;
	bw = cw * 0.36;
	label_every = (nw + 9) / 10;
	sbuf_put(b, "<div class=\"card\">\n<h3>");
	rpt_type_name(b, d, type, 0);
	sbuf_put(b, "</h3>\n");
	rpt_svg_open(b, "capacity", w, h);
	svg_legend_box(b, left, 6, C_ASKED, "GPU-days asked");
	svg_legend_box(b, left + 130, 6, C_MEASURED, "healthy GPU-days");
	for (double v = 0; v <= axis + step / 2; v += step)
		rpt_svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis),
			      v, step);
	json_array_foreach(weeks, i, wk)
	{
		const char *week = rpt_jstr(wk, "week");
		const json_t *it = capacity_item(items, week, type);
		double a = 0, hd = 0, cx = left + cw * ((double)i + 0.5);
		double ha, hh;

		rpt_jnum(it, "asked_gpu_days", &a);
		rpt_jnum(it, "healthy_gpu_days", &hd);
		ha = plot_h * a / axis;
		hh = plot_h * hd / axis;
		rpt_svg_rect(b, "bar asked", cx - bw - 1, top + plot_h - ha, bw,
			     ha, C_ASKED);
		sbuf_put(b, "<title>");
		rpt_esc(b, week);
		sbuf_put(b, " asked: ");
		rpt_num(b, a);
		sbuf_put(b, " GPU-days</title></rect>\n");
		rpt_svg_rect(b, "bar healthy", cx + 1, top + plot_h - hh, bw,
			     hh, C_MEASURED);
		sbuf_put(b, "<title>");
		rpt_esc(b, week);
		sbuf_printf(b, " healthy: %lld GPUs, ",
			    rpt_jint(it, "healthy_gpus"));
		rpt_num(b, hd);
		sbuf_put(b, " GPU-days</title></rect>\n");
		if (nw <= 10) {
			if (a > 0) {
				sbuf_printf(b,
					    "<text x=\"%.1f\" y=\"%.1f\" "
					    "text-anchor=\"middle\">",
					    cx - bw / 2 - 1,
					    top + plot_h - ha - 4);
				rpt_num(b, a);
				sbuf_put(b, "</text>\n");
			}
			if (hd > 0) {
				sbuf_printf(b,
					    "<text x=\"%.1f\" y=\"%.1f\" "
					    "text-anchor=\"middle\">",
					    cx + bw / 2 + 1,
					    top + plot_h - hh - 4);
				rpt_num(b, hd);
				sbuf_put(b, "</text>\n");
			}
		}
		if (i % label_every == 0) {
			/* "2026-W47" -> "W47" */
			const char *wl = strchr(week, 'W');
			sbuf_printf(b,
				    "<text x=\"%.1f\" y=\"%.1f\" "
				    "text-anchor=\"middle\">",
				    cx, (double)(h - bottom + 15));
			rpt_esc_n(b, wl ? wl : week, 4);
			sbuf_put(b, "</text>\n");
		}
	}
	svg_close_chart(b, left, right, w, h, top, plot_h,
			"ISO week (UTC, Monday to Sunday)", "GPU-days");
}

/* ---- the fleet's GPUs per type ---------------------------------------- */

void rpt_fleet_chart(struct sbuf *b, const json_t *d, const json_t *items)
{
	const json_t *it;
	size_t i, n = json_array_size(items);
	double max = 1, step, axis;
	const int w = 1100, left = 250, right = 250, top = 14, rowh = 30;
	int h = top + (int)n * rowh + 44;
	double span = w - left - right;

	json_array_foreach(items, i, it)
	{
		if ((double)rpt_jint(it, "gpus") > max)
			max = (double)rpt_jint(it, "gpus");
	}
	step = rpt_nice_step(max, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max / step) * step;
	sbuf_put(b, "<div class=\"card\">\n");
	rpt_svg_open(b, "fleet", w, h);
	for (double v = 0; v <= axis + step / 2; v += step) {
		double x = left + span * v / axis;
		sbuf_printf(b,
			    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			    "stroke=\"" C_GRID "\"/><text x=\"%.1f\" y=\"%d\" "
			    "text-anchor=\"middle\">",
			    x, top - 4, x, h - 36, x, h - 24);
		rpt_tick(b, v, step);
		sbuf_put(b, "</text>\n");
	}
	json_array_foreach(items, i, it)
	{
		long long gpus = rpt_jint(it, "gpus");
		long long bad =
		    (long long)json_array_size(json_object_get(it, "degraded"));
		double y = top + (double)i * rowh + 5;
		double wg = span * (double)(gpus - bad) / axis;
		double wb = span * (double)bad / axis;

		sbuf_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			    left - 8, y + 14);
		rpt_type_name(b, d, rpt_jstr(it, "gpu_type"), 34);
		sbuf_put(b, "</text>\n");
		rpt_svg_rect(b, "bar healthy", left, y, wg, rowh - 10,
			     C_MEASURED);
		sbuf_printf(b, "<title>%lld healthy GPUs</title></rect>\n",
			    gpus - bad);
		if (bad > 0) {
			rpt_svg_rect(b, "bar degraded", left + wg, y, wb,
				     rowh - 10, C_DEGRADED);
			sbuf_printf(
			    b, "<title>%lld degraded GPUs</title></rect>\n",
			    bad);
		}
		sbuf_printf(b,
			    "<text x=\"%.1f\" y=\"%.1f\">%lld GPU%s on %lld "
			    "node%s%s",
			    left + wg + wb + 6, y + 14, gpus,
			    gpus == 1 ? "" : "s", rpt_jint(it, "nodes"),
			    rpt_jint(it, "nodes") == 1 ? "" : "s",
			    bad ? ", " : "");
		if (bad)
			sbuf_printf(b, "%lld degraded", bad);
		sbuf_put(b, "</text>\n");
	}
	rpt_svg_xtitle(b, left + span / 2, h - 6, "GPUs (count)");
	rpt_svg_ytitle(b, 14, top + (double)n * rowh / 2, "GPU type");
	sbuf_put(b, "</svg>\n<p class=\"note\"><span class=\"sw\" "
		    "style=\"background:" C_MEASURED "\"></span>healthy"
		    "<span class=\"sw\" style=\"background:" C_DEGRADED
		    "\"></span>degraded (see below) &middot; GPUs whose "
		    "latest probe run falls in the window</p>\n</div>\n");
}

/* ---- measured vs reference ------------------------------------------- */

/* One GPU type's dense GEMM rates per dtype: the reference bar (the
 * catalog's datasheet, or the probe's limit for GPUs the catalog lacks)
 * beside the fleet median, with the efficiency above. Returns whether it
 * drew a chart (the type has GEMM results).
 */

static const char *const gemm_dtypes[] = {"fp64", "fp32",     "tf32", "fp16",
					  "bf16", "fp8_e4m3", "int8", NULL};

/* The metric entry of a fleet item, or NULL. */
static const json_t *find_metric(const json_t *item, const char *metric,
				 const char *dtype)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(item, "metrics"), i, m)
	{
		if (strcmp(rpt_jstr(m, "metric"), metric) != 0)
			continue;
		if (!dtype || !strcmp(rpt_jstr(m, "dtype"), dtype))
			return m;
	}
	return NULL;
}

int rpt_gemm_chart(struct sbuf *b, const json_t *d, const json_t *item)
{
	const json_t *ms[8];
	double meas[8], ref[8], max = 0, step, axis;
	const char *basis[8];
	int n = 0, used_limit = 0;
	const int w = 520, h = 305, left = 58, right = 12, top = 30,
		  bottom = 55;
	double plot_h = h - top - bottom, cw, bw;

	for (int t = 0; gemm_dtypes[t]; t++) {
		const json_t *m =
		    find_metric(item, "gemm_tflops", gemm_dtypes[t]);
		double v;
		if (!m || !rpt_jnum(m, "fleet_median", &v))
			continue;
		ms[n] = m;
		meas[n] = v;
		basis[n] = rpt_reference(m, 1, &ref[n]);
		if (!basis[n])
			ref[n] = 0;
		else if (!strcmp(basis[n], "limit"))
			used_limit = 1;
		if (meas[n] > max)
			max = meas[n];
		if (ref[n] > max)
			max = ref[n];
		n++;
	}
	if (n == 0)
		return 0;
	step = rpt_nice_step(max * 1.08, 5);
	axis = ceil(max * 1.08 / step) * step;
	cw = (double)(w - left - right) / n;
	bw = cw * 0.34;
	sbuf_put(b, "<div class=\"card\">\n<h3>");
	rpt_type_name(b, d, rpt_jstr(item, "gpu_type"), 0);
	sbuf_printf(b, " &middot; %lld GPU%s</h3>\n", rpt_jint(item, "gpus"),
		    rpt_jint(item, "gpus") == 1 ? "" : "s");
	rpt_svg_open(b, "gemm", w, h);
	svg_legend_box(b, left, 6, C_REFERENCE,
		       used_limit ? "datasheet (or probe limit)" : "datasheet");
	svg_legend_box(b, left + 190, 6, C_MEASURED, "measured (fleet median)");
	for (double v = 0; v <= axis + step / 2; v += step)
		rpt_svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis),
			      v, step);
	for (int i = 0; i < n; i++) {
		double cx = left + cw * (i + 0.5);
		double hr = plot_h * ref[i] / axis,
		       hm = plot_h * meas[i] / axis;
		const char *dt = rpt_jstr(ms[i], "dtype");
		const char *unit = rpt_jstr(ms[i], "unit");

		if (ref[i] > 0) {
			rpt_svg_rect(b, "bar reference", cx - bw - 1,
				     top + plot_h - hr, bw, hr, C_REFERENCE);
			sbuf_put(b, "<title>");
			rpt_esc(b, dt);
			sbuf_put(b, " ");
			rpt_esc(b, basis[i]);
			sbuf_put(b, ": ");
			rpt_num(b, ref[i]);
			sbuf_put(b, " ");
			rpt_esc(b, unit);
			sbuf_put(b, "</title></rect>\n");
		}
		rpt_svg_rect(b, "bar measured",
			     ref[i] > 0 ? cx + 1 : cx - bw / 2,
			     top + plot_h - hm, bw, hm, C_MEASURED);
		sbuf_put(b, "<title>");
		rpt_esc(b, dt);
		sbuf_put(b, " measured: ");
		rpt_num(b, meas[i]);
		sbuf_put(b, " ");
		rpt_esc(b, unit);
		sbuf_printf(b, " (median of %lld GPUs)</title></rect>\n",
			    rpt_jint(ms[i], "gpus"));
		if (ref[i] > 0)
			sbuf_printf(b,
				    "<text x=\"%.1f\" y=\"%.1f\" "
				    "text-anchor=\"middle\">%.0f%%</text>\n",
				    cx + 1 + bw / 2, top + plot_h - hm - 4,
				    100 * meas[i] / ref[i]);
		sbuf_printf(
		    b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    cx, top + plot_h + 15);
		rpt_esc_n(b, dt, 9);
		sbuf_put(b, "</text>\n");
	}
	svg_close_chart(b, left, right, w, h, top, plot_h,
			"data type of the dense GEMM", "TFLOP/s (int8: TOP/s)");
	return 1;
}

/* One GPU type's bandwidths: each row its own scale, the reference as a
 * light bar, the fleet median over it, and "measured / reference (eff)".
 * Returns whether it drew a chart.
 */
int rpt_bandwidth_chart(struct sbuf *b, const json_t *d, const json_t *item)
{
	const json_t *ms[16];
	int rows[16], n = 0;
	const int w = 520, left = 128, bar = 190, top = 8, rowh = 26;
	int h;

	for (int r = 0; rpt_bw_rows[r].metric && n < 16; r++) {
		const json_t *m =
		    find_metric(item, rpt_bw_rows[r].metric, NULL);
		double v;
		if (m && rpt_jnum(m, "fleet_median", &v)) {
			ms[n] = m;
			rows[n++] = r;
		}
	}
	if (n == 0)
		return 0;
	h = top + n * rowh + 28;
	sbuf_put(b, "<div class=\"card\">\n<h3>");
	rpt_type_name(b, d, rpt_jstr(item, "gpu_type"), 0);
	sbuf_put(b, "</h3>\n");
	rpt_svg_open(b, "bandwidth", w, h);
	for (int i = 0; i < n; i++) {
		const struct bw_row *row = &rpt_bw_rows[rows[i]];
		double meas = 0, ref = 0, scale;
		const char *basis;
		double y = top + (double)i * rowh;

		rpt_jnum(ms[i], "fleet_median", &meas);
		basis = rpt_reference(ms[i], row->datasheet_first, &ref);
		scale = basis && ref > meas ? ref : meas;
		if (!(scale > 0))
			scale = 1;
		sbuf_printf(b,
			    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
			    "</text>\n",
			    left - 8, y + 15, row->label);
		if (basis) {
			rpt_svg_rect(b, "bar reference", left, y + 3,
				     bar * ref / scale, rowh - 8, C_REFERENCE);
			sbuf_put(b, "<title>");
			rpt_esc(b, basis);
			sbuf_put(b, ": ");
			rpt_num(b, ref);
			sbuf_put(b, " GB/s</title></rect>\n");
		}
		rpt_svg_rect(b, "bar measured", left, y + 7, bar * meas / scale,
			     rowh - 16, C_MEASURED);
		sbuf_put(b, "<title>measured: ");
		rpt_num(b, meas);
		sbuf_printf(b, " GB/s (median of %lld GPUs)</title></rect>\n",
			    rpt_jint(ms[i], "gpus"));
		sbuf_printf(b, "<text x=\"%d\" y=\"%.1f\">", left + bar + 8,
			    y + 15);
		rpt_num(b, meas);
		if (basis) {
			sbuf_put(b, " / ");
			rpt_num(b, ref);
			sbuf_printf(b, " GB/s \xC2\xB7 %.0f%%",
				    100 * meas / ref);
		} else {
			sbuf_put(b, " GB/s");
		}
		sbuf_put(b, "</text>\n");
	}
	rpt_svg_xtitle(b, left + bar / 2.0, h - 8,
		       "bandwidth, GB/s (each row to its own scale)");
	rpt_svg_ytitle(b, 12, top + n * rowh / 2.0, "transfer");
	sbuf_put(b, "</svg>\n</div>\n");
	return 1;
}

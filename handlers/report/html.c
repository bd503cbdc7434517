/* html.c - the capacity report as one HTML page (issue 6): measured vs
 * datasheet throughput and bandwidth per GPU type, fleet counts, degraded
 * GPUs, probe freshness per node and the sizing demand recorded in
 * recommendations, and per GPU type and week the GPU-days the sized jobs
 * ask for beside the healthy GPU-days the fleet has (issue 16). Its plots
 * are SVG drawn here and in svg.c, its style is report.css embedded in
 * the page (no script, no external resource, so it can be saved and
 * mailed).
 *
 * Everything that came from the database (GPU and host names, reasons,
 * statuses) goes through rpt_esc(); numbers are formatted here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/report.h"
#include "handlers/report/report_int.h"

#define REPORT_MAX_DEGRADED_ROWS 500
#define DEMAND_SERIES		 8 /* GPU types coloured; the rest is "other" */

static const char *const palette[DEMAND_SERIES] = {
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f"};

/* ---- HTML: page frame ------------------------------------------------ */

/* <section id><h2>title, and a link to the section's CSV table. */
static void section_open(struct sbuf *b, const json_t *d, const char *id,
			 const char *title, const char *csv)
{
	sbuf_printf(b, "<section id=\"%s\">\n<h2>%s", id, title);
	if (csv)
		sbuf_printf(b,
			    " <a class=\"csv\" href=\"?section=%s&amp;"
			    "window_days=%lld\" download>CSV</a>",
			    csv, rpt_jint(d, "window_days"));
	sbuf_put(b, "</h2>\n");
}

/* What an empty section says: that there is nothing yet, and why. */
static void no_data(struct sbuf *b, const char *why)
{
	sbuf_printf(b, "<p class=\"empty\">No data yet: %s</p>\n", why);
}

static void html_head(struct sbuf *b, const json_t *d)
{
	const json_t *runs = json_object_get(d, "runs");
	long long days = rpt_jint(d, "window_days");

	sbuf_put(b, report_page_top);
	sbuf_put(b, "<p class=\"meta\">Generated ");
	rpt_esc(b, rpt_jstr(d, "generated_at"));
	sbuf_printf(
	    b,
	    " by gpusizer &middot; window: the last %lld day%s "
	    "&middot; %lld probe run%s from %lld node%s in the window "
	    "&middot; each section's CSV link downloads its table</p>\n",
	    days, days == 1 ? "" : "s", rpt_jint(runs, "in_window"),
	    rpt_jint(runs, "in_window") == 1 ? "" : "s",
	    rpt_jint(runs, "nodes_reporting"),
	    rpt_jint(runs, "nodes_reporting") == 1 ? "" : "s");
}

static void tile(struct sbuf *b, const char *id, long long v, const char *label)
{
	sbuf_printf(b,
		    "<div class=\"tile\" id=\"tile-%s\"><b>%lld</b>%s</div>\n",
		    id, v, label);
}

static void html_summary(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *nodes = json_object_get(d, "nodes");
	const json_t *dem = json_object_get(d, "demand");
	const json_t *it;
	long long gpus = 0, degraded = 0;
	size_t i;

	json_array_foreach(items, i, it)
	{
		gpus += rpt_jint(it, "gpus");
		degraded +=
		    (long long)json_array_size(json_object_get(it, "degraded"));
	}
	section_open(b, d, "summary", "Summary", "summary");
	if (rpt_jint(nodes, "total") == 0 && rpt_jint(dem, "requests") == 0)
		no_data(b, "no probe has reported and nothing was sized in the "
			   "window. Run gpusizer-probe on the GPU nodes "
			   "(docs/OPERATIONS.md) and size jobs with POST "
			   "/v1/sizing/training or /v1/sizing/inference.");
	sbuf_put(b, "<div class=\"tiles\">\n");
	tile(b, "types", (long long)json_array_size(items), "GPU types");
	tile(b, "gpus", gpus, "GPUs measured");
	tile(b, "nodes", rpt_jint(nodes, "total"), "nodes seen");
	tile(b, "fresh", rpt_jint(nodes, "fresh"),
	     "<span class=\"fresh\">nodes fresh</span> (&lt; 36 h)");
	tile(b, "stale", rpt_jint(nodes, "stale") + rpt_jint(nodes, "silent"),
	     "<span class=\"stale\">nodes stale or silent</span>");
	tile(b, "degraded", degraded,
	     "<span class=\"silent\">degraded GPUs</span>");
	tile(b, "jobs", rpt_jint(dem, "jobs"), "distinct jobs sized");
	tile(b, "requests", rpt_jint(dem, "requests"), "sizing requests");
	sbuf_put(b, "</div>\n</section>\n");
}

/* Hours as "12 min", "5.5 h" or "3.0 d". */
static void fmt_age(char *out, size_t n, double h)
{
	if (h < 1)
		snprintf(out, n, "%.0f min", h * 60);
	else if (h < 48)
		snprintf(out, n, "%.1f h", h);
	else
		snprintf(out, n, "%.1f d", h / 24);
}

/* ---- HTML: GPU-days asked vs healthy GPU-days, per week --------------- */

/* The sentences that say how the two figures are computed (the page and
 * docs/OPERATIONS.md say the same; storage/report.c computes them).
 */
#define ASKED_RULE                                                             \
	"<b>GPU-days asked</b>: each distinct training job (the same "         \
	"request asked again is one job) adds its top plan's GPUs &times; "    \
	"days in the week of its latest answer (a job without "                \
	"<code>train_tokens</code> has no duration and adds nothing); each "   \
	"distinct inference job adds its top plan's GPUs &times; 7 for "       \
	"every week it was asked in, because serving is assumed to run "       \
	"around the clock; compare requests weigh alternatives and add "       \
	"nothing."
#define HEALTHY_RULE                                                           \
	"<b>Healthy GPU-days</b>: the distinct GPUs of the type in each "      \
	"node's latest probe run of the week (received that week, that "       \
	"measured something) that the rules of the degraded-GPU section, "     \
	"applied to that run, do not call degraded (PCIe state as last "       \
	"reported), &times; 7."

static void html_capacity(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "capacity"), "items");
	const json_t *it;
	const char **types = NULL;
	size_t i, j, ntypes = 0, n = json_array_size(items);

	section_open(b, d, "capacity",
		     "Capacity: GPU-days asked vs healthy GPU-days, per week",
		     "capacity");
	sbuf_put(b, "<p class=\"note\">" ASKED_RULE
		    "</p>\n<p class=\"note\">" HEALTHY_RULE "</p>\n");
	if (n == 0) {
		no_data(b, "no probe has reported GPUs and no training or "
			   "inference job was sized in the window.");
		sbuf_put(b, "</section>\n");
		return;
	}
	types = calloc(n, sizeof(*types));
	if (!types) {
		b->oom = 1;
		return;
	}
	/* GPU types in name order (items come ordered by week, type). */
	json_array_foreach(items, i, it)
	{
		const char *t = rpt_jstr(it, "gpu_type");
		for (j = 0; j < ntypes && strcmp(types[j], t) != 0; j++)
			;
		if (j == ntypes)
			types[ntypes++] = t;
	}
	for (i = 1; i < ntypes; i++)
		for (j = i; j > 0 && strcmp(types[j - 1], types[j]) > 0; j--) {
			const char *t = types[j];
			types[j] = types[j - 1];
			types[j - 1] = t;
		}
	sbuf_put(b, "<div class=\"grid\">\n");
	for (i = 0; i < ntypes; i++)
		rpt_capacity_chart(b, d, types[i]);
	sbuf_put(b, "</div>\n");
	free(types);
	sbuf_put(b, "<table id=\"capacity-table\"><tr><th>week</th>"
		    "<th>GPU type</th><th>training jobs</th>"
		    "<th>training GPU-days</th><th>inference jobs</th>"
		    "<th>inference GPU-days (24&times;7)</th>"
		    "<th>GPU-days asked</th><th>healthy GPUs (of seen)</th>"
		    "<th>healthy GPU-days</th><th>asked &divide; healthy</th>"
		    "</tr>\n");
	json_array_foreach(items, i, it)
	{
		double a = 0, hd = 0, v = 0;

		rpt_jnum(it, "asked_gpu_days", &a);
		rpt_jnum(it, "healthy_gpu_days", &hd);
		sbuf_put(b, "<tr><td>");
		rpt_esc(b, rpt_jstr(it, "week"));
		sbuf_put(b, " (");
		rpt_esc(b, rpt_jstr(it, "week_start"));
		sbuf_put(b, ")</td><td>");
		rpt_type_name(b, d, rpt_jstr(it, "gpu_type"), 0);
		sbuf_printf(b, "</td><td class=\"n\">%lld</td><td class=\"n\">",
			    rpt_jint(it, "training_jobs"));
		rpt_jnum(it, "training_gpu_days", &v);
		rpt_num(b, v);
		sbuf_printf(b, "</td><td class=\"n\">%lld</td><td class=\"n\">",
			    rpt_jint(it, "inference_jobs"));
		v = 0;
		rpt_jnum(it, "inference_gpu_days", &v);
		rpt_num(b, v);
		sbuf_put(b, "</td><td class=\"n\">");
		rpt_num(b, a);
		sbuf_printf(b,
			    "</td><td class=\"n\">%lld (of %lld)</td>"
			    "<td class=\"n\">",
			    rpt_jint(it, "healthy_gpus"),
			    rpt_jint(it, "seen_gpus"));
		rpt_num(b, hd);
		sbuf_put(b, "</td><td class=\"n\">");
		if (hd > 0) {
			rpt_num(b, a / hd);
			sbuf_put(b, "&times;");
		} else {
			sbuf_put(b, a > 0 ? "no healthy GPU" : "&ndash;");
		}
		sbuf_put(b, "</td></tr>\n");
	}
	sbuf_put(b, "</table>\n</section>\n");
}

/* ---- HTML: fleet counts ---------------------------------------------- */

static void html_fleet(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *it;
	size_t i, n = json_array_size(items);

	section_open(b, d, "fleet", "Fleet", "fleet");
	if (n == 0) {
		no_data(b, "no probe has reported GPUs in the window. Run "
			   "gpusizer-probe on the GPU nodes "
			   "(docs/OPERATIONS.md).");
		sbuf_put(b, "</section>\n");
		return;
	}
	rpt_fleet_chart(b, d, items);
	sbuf_put(b, "<table id=\"fleet-table\"><tr><th>GPU type</th>"
		    "<th>catalog name</th><th>GPUs</th><th>nodes</th>"
		    "<th>degraded</th></tr>\n");
	json_array_foreach(items, i, it)
	{
		sbuf_put(b, "<tr><td>");
		rpt_type_name(b, d, rpt_jstr(it, "gpu_type"), 0);
		sbuf_put(b, "</td><td>");
		if (json_is_true(json_object_get(it, "in_catalog")))
			rpt_esc(b, rpt_jstr(it, "gpu_type"));
		else
			sbuf_put(b, "<i>not in the catalog</i>");
		sbuf_printf(b,
			    "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			    "</td><td class=\"n\">%zu</td></tr>\n",
			    rpt_jint(it, "gpus"), rpt_jint(it, "nodes"),
			    json_array_size(json_object_get(it, "degraded")));
	}
	sbuf_put(b, "</table>\n</section>\n");
}

/* ---- HTML: measured vs reference (charts in svg.c) -------------------- */

/* The charts of one measured section, one per GPU type (draw returns 1
 * when it drew one), closing the grid and the section; none says why the
 * grid is empty. */
static void chart_grid(struct sbuf *b, const json_t *d, const json_t *items,
		       int (*draw)(struct sbuf *, const json_t *,
				   const json_t *),
		       const char *none)
{
	const json_t *it;
	size_t i;
	int drawn = 0;

	json_array_foreach(items, i, it)
	{
		drawn += draw(b, d, it);
	}
	sbuf_put(b, "</div>\n");
	if (!drawn)
		no_data(b, none);
	sbuf_put(b, "</section>\n");
}

static void html_measured(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");

	section_open(b, d, "flops",
		     "Measured vs datasheet: dense GEMM throughput",
		     "measured");
	sbuf_put(b,
		 "<p class=\"note\">Per GPU type, the median over its GPUs "
		 "of each GPU's latest run in the window (cuBLASLt, largest "
		 "shape), beside the catalog's dense datasheet peak; the "
		 "percentage is the efficiency.</p>\n<div class=\"grid\">\n");
	chart_grid(b, d, items, rpt_gemm_chart,
		   "no probe has reported a GEMM measurement in the window.");
	section_open(b, d, "bandwidth", "Measured vs reference: bandwidth",
		     "measured");
	sbuf_put(b, "<p class=\"note\">Reference: the catalog's HBM bandwidth "
		    "for HBM read and write; the limit the probe derived for "
		    "the rest (half the HBM figure for copies, whose bytes "
		    "count once; PCIe generation &times; width from NVML; "
		    "active NVLinks &times; per-link rate).</p>\n"
		    "<div class=\"grid\">\n");
	chart_grid(b, d, items, rpt_bandwidth_chart,
		   "no probe has reported a bandwidth measurement in the "
		   "window.");
}

/* ---- HTML: what sizing uses ----------------------------------------- */

/* "3 degraded nodes " when n > 0. */
static void left_out(struct sbuf *b, long long n, const char *what)
{
	if (n > 0)
		sbuf_printf(b, "%lld %s%s ", n, what, n == 1 ? "" : "s");
}

/* Per GPU type, each value "auto" calibration takes now (the fleet items'
 * calibration): the NCCL all-reduce that sets intra_node_gbps is a node's
 * measurement, which the per-GPU charts above cannot show. */
static void html_calibration(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *it, *v, *c;
	size_t i, j;
	int rows = 0;

	section_open(b, d, "calibration",
		     "What sizing uses: calibration per GPU type",
		     "calibration");
	sbuf_put(b,
		 "<p class=\"note\">The fleet values that sizing with "
		 "<code>\"calibration\": \"auto\"</code> takes now, over "
		 "the last 30 days whatever this page's window: each node "
		 "counts once (the median of its runs), runs outside the "
		 "band of their reference and nodes more than 10&nbsp;% under "
		 "the median of nodes are left out. Reference: the datasheet "
		 "(GEMM, HBM) or the one-way NVLink/PCIe rate (the NCCL "
		 "all-reduce, whose bus bandwidth may exceed it under "
		 "NVLink SHARP).</p>\n");
	json_array_foreach(items, i, it)
	{
		c = json_object_get(it, "calibration");
		json_array_foreach(json_object_get(c, "values"), j, v)
		{
			double x;

			if (rows++ == 0)
				sbuf_put(b, "<table id=\"calibration-table\">"
					    "<tr><th>GPU type</th><th>field"
					    "</th><th>measured</th><th>value"
					    "</th><th>reference</th><th>"
					    "fraction</th><th>nodes</th><th>"
					    "runs</th><th>left out</th></tr>"
					    "\n");
			sbuf_put(b, "<tr><td>");
			rpt_type_name(b, d, rpt_jstr(it, "gpu_type"), 0);
			sbuf_put(b, "</td><td>");
			rpt_esc(b, rpt_jstr(v, "field"));
			sbuf_put(b, "</td><td>");
			rpt_esc(b, rpt_jstr(v, "metric"));
			if (*rpt_jstr(v, "dtype")) {
				sbuf_put(b, " ");
				rpt_esc(b, rpt_jstr(v, "dtype"));
			}
			sbuf_put(b, "</td><td class=\"n\">");
			if (rpt_jnum(v, "value", &x)) {
				double y;

				rpt_num(b, x);
				sbuf_put(b, " ");
				rpt_esc(b, rpt_jstr(v, "unit"));
				/* the rate sizing makes of it, where it
				 * differs (retention, shapes, the cap) */
				if (rpt_jnum(v, "sizing_value", &y) && y != x) {
					sbuf_put(b, " (sizing ");
					rpt_num(b, y);
					sbuf_put(b,
						 json_is_true(json_object_get(
						     v, "capped_at_datasheet"))
						     ? ", capped)"
						     : ")");
				}
			} else {
				sbuf_put(b, "&mdash;");
			}
			sbuf_put(b, "</td><td class=\"n\">");
			if (rpt_jnum(v, "reference", &x)) {
				rpt_num(b, x);
				sbuf_put(b, " (");
				rpt_esc(b, rpt_jstr(v, "reference_basis"));
				sbuf_put(b, ")");
			}
			sbuf_put(b, "</td><td class=\"n\">");
			if (rpt_jnum(v, "fraction", &x))
				sbuf_printf(b, "%.0f%%", 100 * x);
			sbuf_printf(b,
				    "</td><td class=\"n\">%lld</td><td "
				    "class=\"n\">%lld</td><td>",
				    rpt_jint(v, "nodes"), rpt_jint(v, "runs"));
			left_out(b, rpt_jint(v, "implausible_runs"),
				 "implausible run");
			left_out(b, rpt_jint(v, "degraded_nodes"),
				 "degraded node");
			left_out(b, rpt_jint(v, "disputed_nodes"),
				 "disputed node");
			if (rpt_jstr(v, "set_aside")) {
				sbuf_put(b, "set aside: ");
				rpt_esc(b, rpt_jstr(v, "set_aside"));
			}
			sbuf_put(b, "</td></tr>\n");
		}
	}
	if (rows)
		sbuf_put(b, "</table>\n");
	else
		no_data(b, "no probe run of a catalog GPU type in the last "
			   "30 days measured what calibration uses (GEMM, "
			   "HBM, NCCL all-reduce).");
	sbuf_put(b, "</section>\n");
}

/* ---- HTML: degraded GPUs --------------------------------------------- */

static void html_degraded(struct sbuf *b, const json_t *d)
{
	const json_t *fleet = json_object_get(d, "fleet");
	const json_t *items = json_object_get(fleet, "items");
	const json_t *it, *g, *why;
	size_t i, j, k, rows = 0, total = 0;
	double thr = 0;
	char title[64];

	rpt_jnum(fleet, "degraded_threshold", &thr);
	json_array_foreach(items, i, it)
	{
		total += json_array_size(json_object_get(it, "degraded"));
	}
	snprintf(title, sizeof(title), "Degraded GPUs (%zu)", total);
	section_open(b, d, "degraded", title, "degraded");
	sbuf_printf(b,
		    "<p class=\"note\">A GPU is degraded when a measurement of "
		    "its latest run is more than %.0f%% worse than its type's "
		    "fleet median (needs two or more GPUs of the type), when "
		    "its PCIe link trained below its maximum, or when hardware "
		    "or thermal slowdowns fired while it was measured.</p>\n",
		    thr * 100);
	if (json_array_size(items) == 0) {
		no_data(b, "no probe has reported GPUs in the window, so none "
			   "can be checked.");
		sbuf_put(b, "</section>\n");
		return;
	}
	if (total == 0) {
		sbuf_put(b, "<p>None: every GPU measured in the window passes "
			    "these checks.</p>\n</section>\n");
		return;
	}
	sbuf_put(b,
		 "<table id=\"degraded-table\"><tr><th>GPU type</th>"
		 "<th>node</th><th>GPU</th><th>UUID</th><th>why</th></tr>\n");
	json_array_foreach(items, i, it)
	{
		json_array_foreach(json_object_get(it, "degraded"), j, g)
		{
			if (rows++ >= REPORT_MAX_DEGRADED_ROWS)
				break;
			sbuf_put(b, "<tr><td>");
			rpt_type_name(b, d, rpt_jstr(it, "gpu_type"), 0);
			sbuf_put(b, "</td><td>");
			rpt_esc(b, rpt_jstr(g, "hostname"));
			sbuf_printf(b, "</td><td class=\"n\">%lld</td><td>",
				    rpt_jint(g, "index"));
			rpt_esc(b, rpt_jstr(g, "uuid"));
			sbuf_put(b, "</td><td><ul>");
			json_array_foreach(json_object_get(g, "reasons"), k,
					   why)
			{
				sbuf_put(b, "<li>");
				rpt_esc(b, json_string_value(why)
					       ? json_string_value(why)
					       : "");
				sbuf_put(b, "</li>");
			}
			sbuf_put(b, "</ul></td></tr>\n");
		}
	}
	sbuf_put(b, "</table>\n");
	if (total > REPORT_MAX_DEGRADED_ROWS)
		sbuf_printf(b,
			    "<p class=\"note\">The first %d of %zu are listed; "
			    "the CSV has them all.</p>\n",
			    REPORT_MAX_DEGRADED_ROWS, total);
	sbuf_put(b, "</section>\n");
}

/* ---- HTML: probe freshness ------------------------------------------- */

static const char *class_colour(const char *cls)
{
	return !strcmp(cls, "fresh")   ? C_FRESH
	       : !strcmp(cls, "stale") ? C_STALE
				       : C_SILENT;
}

static void html_freshness(struct sbuf *b, const json_t *d)
{
	const json_t *nodes = json_object_get(d, "nodes");
	const json_t *ages = json_object_get(nodes, "ages");
	const json_t *items = json_object_get(nodes, "items");
	const json_t *a, *x, *t;
	size_t i, j, n = json_array_size(ages);
	double max = 1, step, axis;
	const int w = 520, h = 270, left = 52, right = 10, top = 14,
		  bottom = 54;
	double plot_h = h - top - bottom, cw;

	section_open(b, d, "freshness", "Probe freshness", "freshness");
	sbuf_printf(
	    b,
	    "<p class=\"note\">When each node's probe last reported: "
	    "<span class=\"fresh\">fresh</span> within 36 hours (a daily "
	    "timer with slack), <span class=\"stale\">stale</span> within "
	    "7 days, <span class=\"silent\">silent</span> after that. "
	    "%lld fresh, %lld stale, %lld silent of %lld nodes.</p>\n",
	    rpt_jint(nodes, "fresh"), rpt_jint(nodes, "stale"),
	    rpt_jint(nodes, "silent"), rpt_jint(nodes, "total"));
	if (rpt_jint(nodes, "total") == 0) {
		no_data(b, "no probe has reported (GET /v1/nodes is empty).");
		sbuf_put(b, "</section>\n");
		return;
	}
	json_array_foreach(ages, i, a)
	{
		if ((double)rpt_jint(a, "nodes") > max)
			max = (double)rpt_jint(a, "nodes");
	}
	step = rpt_nice_step(max, 4);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.1 / step) * step;
	cw = (double)(w - left - right) / (n ? (double)n : 1);
	sbuf_put(b, "<div class=\"grid\"><div class=\"card\">\n"
		    "<h3>Nodes by age of their last report</h3>\n");
	rpt_svg_open(b, "freshness", w, h);
	for (double v = 0; v <= axis + step / 2; v += step)
		rpt_svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis),
			      v, step);
	json_array_foreach(ages, i, a)
	{
		long long c = rpt_jint(a, "nodes");
		double hb = plot_h * (double)c / axis;
		double bx = left + cw * (double)i + cw * 0.15;

		rpt_svg_rect(b, "bar age", bx, top + plot_h - hb, cw * 0.7, hb,
			     class_colour(rpt_jstr(a, "class")));
		sbuf_printf(b, "<title>%lld nodes</title></rect>\n", c);
		if (c > 0)
			sbuf_printf(b,
				    "<text x=\"%.1f\" y=\"%.1f\" "
				    "text-anchor=\"middle\">%lld</text>\n",
				    bx + cw * 0.35, top + plot_h - hb - 4, c);
		sbuf_printf(
		    b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    bx + cw * 0.35, top + plot_h + 16);
		rpt_esc(b, rpt_jstr(a, "label"));
		sbuf_put(b, "</text>\n");
	}
	rpt_svg_xaxis(b, left, w - right, top + plot_h);
	rpt_svg_xtitle(b, left + (w - left - right) / 2.0, h - 8,
		       "age of the node's last report (hours, days)");
	rpt_svg_ytitle(b, 14, top + plot_h / 2, "nodes (count)");
	sbuf_put(b, "</svg>\n</div></div>\n");
	if (rpt_jint(nodes, "listed") < rpt_jint(nodes, "total"))
		sbuf_printf(b,
			    "<p class=\"note\">The %lld stalest of %lld nodes; "
			    "the CSV lists every node.</p>\n",
			    rpt_jint(nodes, "listed"),
			    rpt_jint(nodes, "total"));
	sbuf_put(b, "<table id=\"nodes-table\"><tr><th></th><th>node</th>"
		    "<th>GPUs</th><th>GPU types</th><th>last report (UTC)</th>"
		    "<th>age</th><th>runs in window</th><th>last run</th>"
		    "</tr>\n");
	json_array_foreach(items, i, x)
	{
		char age[32];
		double hours = 0;
		const char *cls = rpt_jstr(x, "class");

		rpt_jnum(x, "age_hours", &hours);
		fmt_age(age, sizeof(age), hours);
		sbuf_printf(b,
			    "<tr><td><svg width=\"10\" height=\"10\" "
			    "aria-hidden=\"true\"><circle cx=\"5\" cy=\"5\" "
			    "r=\"5\" fill=\"%s\"/></svg></td><td>",
			    class_colour(cls));
		rpt_esc(b, rpt_jstr(x, "hostname"));
		sbuf_printf(b, "</td><td class=\"n\">%lld</td><td>",
			    rpt_jint(x, "gpus"));
		json_array_foreach(json_object_get(x, "gpu_types"), j, t)
		{
			if (j)
				sbuf_put(b, ", ");
			rpt_type_name(
			    b, d,
			    json_string_value(t) ? json_string_value(t) : "",
			    0);
		}
		sbuf_put(b, "</td><td>");
		rpt_esc(b, rpt_jstr(x, "last_seen"));
		sbuf_put(b, "</td><td class=\"n ");
		rpt_esc(b, cls);
		sbuf_printf(b, "\">%s</td><td class=\"n\">%lld</td><td>", age,
			    rpt_jint(x, "runs_in_window"));
		rpt_esc(b, rpt_jstr(x, "last_status"));
		sbuf_put(b, "</td></tr>\n");
	}
	sbuf_put(b, "</table>\n</section>\n");
}

/* ---- HTML: sizing demand --------------------------------------------- */

/* The GPU types coloured in the demand chart: the busiest (totals come
 * busiest first) that training or inference jobs asked for, at most
 * DEMAND_SERIES; the rest is "other".
 */
struct demand_colours {
	const char *gpu[DEMAND_SERIES];
	int n;
};

static void demand_colours_init(struct demand_colours *c, const json_t *dem)
{
	const json_t *t, *s;
	size_t i, j;

	c->n = 0;
	json_array_foreach(json_object_get(dem, "totals"), i, t)
	{
		if (c->n == DEMAND_SERIES)
			break;
		json_array_foreach(json_object_get(dem, "series"), j, s)
		{
			if (strcmp(rpt_jstr(s, "kind"), "compare") != 0 &&
			    !strcmp(rpt_jstr(s, "gpu"), rpt_jstr(t, "gpu"))) {
				c->gpu[c->n++] = rpt_jstr(t, "gpu");
				break;
			}
		}
	}
}

static const char *demand_colour(const struct demand_colours *c,
				 const json_t *s)
{
	if (!strcmp(rpt_jstr(s, "kind"), "compare"))
		return C_COMPARE;
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->gpu[i], rpt_jstr(s, "gpu")))
			return palette[i];
	return C_OTHER;
}

static void html_demand(struct sbuf *b, const json_t *d)
{
	const json_t *dem = json_object_get(d, "demand");
	const json_t *kinds = json_object_get(dem, "jobs_by_kind");
	const json_t *periods = json_object_get(dem, "periods");
	const json_t *series = json_object_get(dem, "series");
	const json_t *totals = json_object_get(dem, "totals");
	const json_t *p, *s, *t;
	size_t np = json_array_size(periods), i, j;
	double *stack = NULL, max = 1, step, axis, cw;
	const int w = 1100, h = 320, left = 58, right = 14, top = 14,
		  bottom = 54;
	double plot_h = h - top - bottom;
	size_t label_every;
	const char *bucket = rpt_jstr(d, "bucket");
	struct demand_colours colours;
	int other = 0;

	if (!*bucket)
		bucket = "period";
	section_open(b, d, "demand", "Sizing demand by GPU type", "demand");
	sbuf_printf(b,
		    "<p class=\"note\">%lld distinct jobs in the window (%lld "
		    "training, %lld inference, %lld compare) from %lld sizing "
		    "requests: the same request asked again is one job, "
		    "counted on the %s of its latest answer. Each bar stacks "
		    "that %s's jobs by GPU type; compare jobs are one series "
		    "of their own.</p>\n",
		    rpt_jint(dem, "jobs"), rpt_jint(kinds, "training"),
		    rpt_jint(kinds, "inference"), rpt_jint(kinds, "compare"),
		    rpt_jint(dem, "requests"), bucket, bucket);
	if (json_array_size(series) == 0 || np == 0) {
		no_data(b, "nothing was sized in the window (POST "
			   "/v1/sizing/training, /v1/sizing/inference or "
			   "/v1/sizing/compare).");
		sbuf_put(b, "</section>\n");
		return;
	}
	demand_colours_init(&colours, dem);
	stack = calloc(np, sizeof(double));
	if (!stack) {
		b->oom = 1;
		return;
	}
	/* Stack heights per period (series come ordered by period). */
	json_array_foreach(series, j, s)
	{
		json_array_foreach(periods, i, p)
		{
			if (!strcmp(rpt_jstr(s, "period"),
				    json_string_value(p) ? json_string_value(p)
							 : "")) {
				stack[i] += (double)rpt_jint(s, "jobs");
				break;
			}
		}
	}
	for (i = 0; i < np; i++)
		if (stack[i] > max)
			max = stack[i];
	step = rpt_nice_step(max, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.05 / step) * step;
	cw = (double)(w - left - right) / (double)np;
	label_every = (np + 11) / 12;
	sbuf_put(b, "<div class=\"card\">\n");
	rpt_svg_open(b, "demand", w, h);
	for (double v = 0; v <= axis + step / 2; v += step)
		rpt_svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis),
			      v, step);
	memset(stack, 0, np * sizeof(double));
	json_array_foreach(series, j, s)
	{
		const char *per = rpt_jstr(s, "period");
		const char *fill = demand_colour(&colours, s);
		double c = (double)rpt_jint(s, "jobs");

		if (!strcmp(fill, C_OTHER))
			other = 1;
		json_array_foreach(periods, i, p)
		{
			const char *ps = json_string_value(p);
			double x, hb;
			if (!ps || strcmp(ps, per) != 0)
				continue;
			x = left + cw * (double)i + cw * 0.15;
			hb = plot_h * c / axis;
			rpt_svg_rect(b, "bar demand", x,
				     top + plot_h - plot_h * stack[i] / axis -
					 hb,
				     cw * 0.7, hb, fill);
			sbuf_put(b, "<title>");
			rpt_esc(b, per);
			sbuf_put(b, " ");
			rpt_esc(b, rpt_jstr(s, "kind"));
			sbuf_put(b, " ");
			rpt_esc(b, rpt_jstr(s, "gpu"));
			sbuf_printf(b, ": %.0f job%s</title></rect>\n", c,
				    c == 1 ? "" : "s");
			stack[i] += c;
			break;
		}
	}
	json_array_foreach(periods, i, p)
	{
		const char *ps = json_string_value(p);
		if (!ps || i % label_every != 0)
			continue;
		sbuf_printf(
		    b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		    left + cw * ((double)i + 0.5), top + plot_h + 16);
		/* "2026-11-21": month-day for days and weeks, year-month
		 * for months.
		 */
		rpt_esc_n(b,
			  strlen(ps) == 10 && strcmp(bucket, "month") != 0
			      ? ps + 5
			      : ps,
			  7);
		sbuf_put(b, "</text>\n");
	}
	rpt_svg_xaxis(b, left, w - right, top + plot_h);
	rpt_svg_xtitle(b, left + (w - left - right) / 2.0, h - 8,
		       !strcmp(bucket, "week")	  ? "week starting (UTC, MM-DD)"
		       : !strcmp(bucket, "month") ? "month (UTC)"
						  : "day (UTC, MM-DD)");
	rpt_svg_ytitle(b, 16, top + plot_h / 2, "distinct jobs (count)");
	sbuf_put(b, "</svg>\n<p class=\"note\">");
	for (i = 0; i < (size_t)colours.n; i++) {
		sbuf_printf(b,
			    "<span class=\"sw\" style=\"background:%s\">"
			    "</span>",
			    palette[i]);
		rpt_type_name(b, d, colours.gpu[i], 40);
	}
	if (other)
		sbuf_put(b, "<span class=\"sw\" style=\"background:" C_OTHER
			    "\"></span>other types");
	if (rpt_jint(kinds, "compare") > 0)
		sbuf_put(b, "<span class=\"sw\" style=\"background:" C_COMPARE
			    "\"></span>compare jobs");
	sbuf_put(b, "</p>\n</div>\n<table id=\"demand-table\"><tr><th>GPU type"
		    "</th><th>distinct jobs</th><th>training</th>"
		    "<th>inference</th><th>compare</th><th>requests</th>"
		    "<th>largest top plan (GPUs)</th></tr>\n");
	json_array_foreach(totals, i, t)
	{
		double g = 0;
		sbuf_put(b, "<tr><td>");
		rpt_type_name(b, d, rpt_jstr(t, "gpu"), 0);
		sbuf_printf(b,
			    "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			    "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			    "</td><td class=\"n\">%lld</td><td class=\"n\">",
			    rpt_jint(t, "jobs"), rpt_jint(t, "training"),
			    rpt_jint(t, "inference"), rpt_jint(t, "compare"),
			    rpt_jint(t, "requests"));
		if (rpt_jnum(t, "largest_plan_gpus", &g))
			rpt_num(b, g);
		else
			sbuf_put(b, "&ndash;");
		sbuf_put(b, "</td></tr>\n");
	}
	sbuf_put(b,
		 "</table>\n<p class=\"note\">A compare job counts in the row "
		 "of every GPU type it compared, so the rows add up to more "
		 "than the jobs; requests counts every answer, repeats "
		 "included. The largest top plan is the most GPUs one "
		 "training or inference job's best plan asked for.</p>\n"
		 "</section>\n");
	free(stack);
}

char *report_render_html(const json_t *d)
{
	struct sbuf b = {0};
	long long days = rpt_jint(d, "window_days");

	html_head(&b, d);
	html_summary(&b, d);
	html_capacity(&b, d);
	html_fleet(&b, d);
	html_measured(&b, d);
	html_calibration(&b, d);
	html_degraded(&b, d);
	html_freshness(&b, d);
	html_demand(&b, d);
	sbuf_printf(
	    &b,
	    "<footer class=\"note\"><p>The same figures as JSON: "
	    "<a href=\"/v1/fleet?window_days=%lld\">/v1/fleet</a>, "
	    "<a href=\"/v1/nodes\">/v1/nodes</a>, "
	    "<a href=\"/v1/recommendations\">/v1/recommendations</a>; "
	    "as CSV: each section's CSV link (<code>?section=</code>"
	    "summary, capacity, fleet, measured, calibration, degraded, "
	    "freshness, demand).</p></footer>\n</main>\n</body>\n</html>\n",
	    days);
	return sbuf_finish(&b);
}

/* report.c - GET /v1/reports/capacity (issue 6): what a capacity review
 * puts on a screen. Measured vs datasheet throughput and bandwidth per GPU
 * type, fleet counts, degraded GPUs, probe freshness per node and the
 * sizing demand recorded in recommendations, and per GPU type and week the
 * GPU-days the sized jobs ask for beside the healthy GPU-days the fleet
 * has (issue 16); as one HTML page whose plots are SVG drawn here (no
 * script, no external resource, so it can be saved and mailed), or as one
 * CSV table per section of the page.
 *
 * Everything that came from the database (GPU and host names, reasons,
 * statuses) goes through html_esc() or csv_field(); numbers are formatted
 * here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers/problem.h"
#include "handlers/report.h"
#include "storage/bench.h"
#include "storage/report.h"

#define REPORT_WINDOW_DAYS	  30
#define REPORT_DEGRADED_THRESHOLD 0.10	 /* as GET /v1/fleet */
#define REPORT_HTML_NODES	  200	 /* node rows on the page */
#define REPORT_CSV_NODES	  100000 /* node rows in the CSV */
#define REPORT_MAX_DEGRADED_ROWS  500
#define DEMAND_SERIES		  8 /* GPU types coloured; the rest is "other" */

/* Colours (attributes, so a screenshot can be checked for them). */
#define C_MEASURED  "#4e79a7"
#define C_REFERENCE "#cfd6e0"
#define C_DEGRADED  "#e15759"
#define C_FRESH	    "#59a14f"
#define C_STALE	    "#edc948"
#define C_SILENT    "#e15759"
#define C_OTHER	    "#bab0ac"
#define C_COMPARE   "#79706e"
#define C_ASKED	    "#f28e2b"
#define C_AXIS	    "#9aa3af"
#define C_GRID	    "#e5e7eb"
static const char *const palette[DEMAND_SERIES] = {
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f"};

/* ---- a growing string ------------------------------------------------ */

struct sbuf {
	char *p;
	size_t len, cap;
	int failed; /* out of memory: everything after is dropped */
};

static int sb_reserve(struct sbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 16384;
	while (cap < b->len + n + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	if (sb_reserve(b, n) != 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_put(struct sbuf *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sb_reserve(b, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* The buffer's string (caller frees), or NULL after a failure. */
static char *sb_finish(struct sbuf *b)
{
	if (b->failed || sb_reserve(b, 0) != 0) {
		free(b->p);
		return NULL;
	}
	return b->p;
}

/* Text for HTML element content and quoted attributes. Control
 * characters (never valid in HTML) become U+FFFD. At most max_chars code
 * points, then an ellipsis (max_chars 0: no limit).
 */
static void html_esc_n(struct sbuf *b, const char *s, size_t max_chars)
{
	size_t chars = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c & 0xC0) != 0x80 && max_chars && chars++ == max_chars) {
			sb_put(b, "\xE2\x80\xA6"); /* ... */
			return;
		}
		switch (c) {
		case '&':
			sb_put(b, "&amp;");
			break;
		case '<':
			sb_put(b, "&lt;");
			break;
		case '>':
			sb_put(b, "&gt;");
			break;
		case '"':
			sb_put(b, "&quot;");
			break;
		case '\'':
			sb_put(b, "&#39;");
			break;
		default:
			if (c < 0x20 || c == 0x7F)
				sb_put(b, "\xEF\xBF\xBD");
			else
				sb_putn(b, s, 1);
		}
	}
}

static void html_esc(struct sbuf *b, const char *s)
{
	html_esc_n(b, s, 0);
}

/* ---- reading the report's JSON --------------------------------------- */

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* 1 and *v when o[k] is a number. */
static int jnum(const json_t *o, const char *k, double *v)
{
	const json_t *x = json_object_get(o, k);

	if (!json_is_number(x))
		return 0;
	*v = json_number_value(x);
	return isfinite(*v);
}

static long long jint(const json_t *o, const char *k)
{
	double v;
	return jnum(o, k, &v) ? (long long)llround(v) : 0;
}

/* Number with thousands separators for |v| >= 1000, whole numbers as
 * such, else 3 significant digits: 3,011 / 783 / 64 / 51.2 / 2.40.
 */
static void fmt_num(char *out, size_t n, double v)
{
	double a = fabs(v);

	if (a >= 1000 && a < 1e15) {
		char digits[32];
		size_t len, j = 0;
		int lead;
		snprintf(digits, sizeof(digits), "%.0f", a);
		len = strlen(digits);
		lead = (int)(len % 3 ? len % 3 : 3);
		if (v < 0 && j + 1 < n)
			out[j++] = '-';
		for (size_t i = 0; i < len && j + 2 < n; i++) {
			if (i && (int)((i - (size_t)lead) % 3) == 0 &&
			    i >= (size_t)lead)
				out[j++] = ',';
			out[j++] = digits[i];
		}
		out[j] = '\0';
	} else if (a >= 100 || a == floor(a)) {
		snprintf(out, n, "%.0f", v);
	} else if (a >= 10) {
		snprintf(out, n, "%.1f", v);
	} else {
		snprintf(out, n, "%.2f", v);
	}
}

static void sb_num(struct sbuf *b, double v)
{
	char t[48];
	fmt_num(t, sizeof(t), v);
	sb_put(b, t);
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

/* A GPU type's name for people: the catalog's display name, or for GPUs
 * the catalog does not know (fleet key "nvml:<name>") the NVML name.
 */
static void type_name(struct sbuf *b, const json_t *d, const char *key,
		      size_t max_chars)
{
	const char *disp = json_string_value(
	    json_object_get(json_object_get(d, "catalog"), key));
	if (disp && *disp)
		html_esc_n(b, disp, max_chars);
	else if (!strncmp(key, "nvml:", 5))
		html_esc_n(b, key + 5, max_chars);
	else
		html_esc_n(b, key, max_chars);
}

/* A round axis maximum and step for values up to max (~5 ticks). */
static double nice_step(double max, int ticks)
{
	double raw, mag, f;

	if (!(max > 0))
		max = 1;
	raw = max / ticks;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1	   ? 1
		: f <= 2   ? 2
		: f <= 2.5 ? 2.5
		: f <= 5   ? 5
			   : 10) *
	       mag;
}

/* ---- the measured figures -------------------------------------------- */

static const char *const gemm_dtypes[] = {"fp64", "fp32",     "tf32", "fp16",
					  "bf16", "fp8_e4m3", "int8", NULL};

struct bw_row {
	const char *metric, *label;
	int datasheet_first; /* the catalog's HBM figure is the reference */
};
static const struct bw_row bw_rows[] = {
    {"hbm_read_gbps", "HBM read", 1},
    {"hbm_write_gbps", "HBM write", 1},
    {"hbm_copy_gbps", "HBM copy (kernel)", 0},
    {"hbm_copy_ce_gbps", "HBM copy (engine)", 0},
    {"h2d_pinned_gbps", "Host \xE2\x86\x92 GPU", 0},
    {"d2h_pinned_gbps", "GPU \xE2\x86\x92 host", 0},
    {"bidir_pinned_gbps", "Host \xE2\x86\x94 GPU", 0},
    {"p2p_unidir_gbps", "GPU \xE2\x86\x92 GPU", 0},
    {"p2p_bidir_gbps", "GPU \xE2\x86\x94 GPU", 0},
    {NULL, NULL, 0},
};

/* The metric entry of a fleet item, or NULL. */
static const json_t *find_metric(const json_t *item, const char *metric,
				 const char *dtype)
{
	const json_t *m;
	size_t i;

	json_array_foreach(json_object_get(item, "metrics"), i, m)
	{
		if (strcmp(jstr(m, "metric"), metric) != 0)
			continue;
		if (!dtype || !strcmp(jstr(m, "dtype"), dtype))
			return m;
	}
	return NULL;
}

/* What a measurement is compared with: the catalog's datasheet for GEMM
 * and HBM read/write, otherwise the limit the probe derived (HBM/2 for
 * copies counted once, PCIe from NVML, NVLink links x speed). Returns the
 * basis ("datasheet", "limit") or NULL when there is none.
 */
static const char *reference(const json_t *m, int datasheet_first, double *ref)
{
	if (datasheet_first && jnum(m, "datasheet", ref) && *ref > 0)
		return "datasheet";
	if (jnum(m, "limit", ref) && *ref > 0)
		return "limit";
	return NULL;
}

static int metric_datasheet_first(const char *metric)
{
	if (!strcmp(metric, "gemm_tflops"))
		return 1;
	for (int i = 0; bw_rows[i].metric; i++)
		if (!strcmp(bw_rows[i].metric, metric))
			return bw_rows[i].datasheet_first;
	return 0;
}

/* ---- HTML: page frame ------------------------------------------------ */

static const char css[] =
    "*{box-sizing:border-box}"
    "body{margin:0;background:#f5f6f8;color:#1f2733;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,"
    "'Helvetica Neue',Arial,sans-serif}"
    "main{max-width:1180px;margin:0 auto;padding:20px 24px 40px}"
    "h1{font-size:24px;margin:0 0 2px}"
    "h2{font-size:18px;margin:30px 0 10px;padding-bottom:4px;"
    "border-bottom:1px solid #d5dae1}"
    "h2 a.csv{font-size:12px;font-weight:normal;margin-left:10px}"
    "h3{font-size:14px;margin:0 0 6px}"
    ".meta,.note{color:#5b6472}.note{font-size:12.5px;margin:6px 0}"
    ".empty{background:#fff;border:1px dashed #b8c0cc;border-radius:6px;"
    "padding:10px 14px;color:#5b6472}"
    ".tiles{display:flex;flex-wrap:wrap;gap:10px}"
    ".tile{background:#fff;border:1px solid #d5dae1;border-radius:6px;"
    "padding:8px 14px;min-width:140px}"
    ".tile b{display:block;font-size:22px}"
    ".grid{display:flex;flex-wrap:wrap;gap:12px}"
    ".card{background:#fff;border:1px solid #d5dae1;border-radius:6px;"
    "padding:10px 12px}"
    "svg.chart{display:block;max-width:100%;height:auto;"
    "font:11px system-ui,sans-serif}"
    "svg text{fill:#374151}svg text.axis-title{fill:#5b6472;"
    "font-style:italic}"
    "table{border-collapse:collapse;background:#fff;width:100%;"
    "font-size:13px;margin-top:8px}"
    "th,td{border:1px solid #e1e4e8;padding:4px 8px;text-align:left;"
    "vertical-align:top}"
    "th{background:#eef1f5}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "td ul{margin:0;padding-left:16px}"
    ".fresh{color:#2e7d32}.stale{color:#8a6100}.silent{color:#c62828}"
    ".sw{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;"
    "vertical-align:-1px;border-radius:2px}"
    "@media print{body{background:#fff}.card,.tile{border-color:#999}}";

/* The CSV tables, one per section of the page (?section=NAME). */
static const char *const csv_sections[] = {"summary",  "capacity", "fleet",
					   "measured", "degraded", "freshness",
					   "demand",   NULL};
#define CSV_SECTION_LIST                                                       \
	"summary, capacity, fleet, measured, degraded, freshness, demand"

/* <section id><h2>title, and a link to the section's CSV table. */
static void section_open(struct sbuf *b, const json_t *d, const char *id,
			 const char *title, const char *csv)
{
	sb_printf(b, "<section id=\"%s\">\n<h2>%s", id, title);
	if (csv)
		sb_printf(b,
			  " <a class=\"csv\" href=\"?section=%s&amp;"
			  "window_days=%lld\" download>CSV</a>",
			  csv, jint(d, "window_days"));
	sb_put(b, "</h2>\n");
}

/* What an empty section says: that there is nothing yet, and why. */
static void no_data(struct sbuf *b, const char *why)
{
	sb_printf(b, "<p class=\"empty\">No data yet: %s</p>\n", why);
}

static void html_head(struct sbuf *b, const json_t *d)
{
	const json_t *runs = json_object_get(d, "runs");
	long long days = jint(d, "window_days");

	sb_printf(b,
		  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		  "<meta charset=\"utf-8\">\n"
		  "<meta name=\"viewport\" content=\"width=device-width, "
		  "initial-scale=1\">\n"
		  "<title>GPU capacity report</title>\n<style>%s</style>\n"
		  "</head>\n<body>\n<main>\n"
		  "<h1>GPU capacity report</h1>\n<p class=\"meta\">"
		  "Generated ",
		  css);
	html_esc(b, jstr(d, "generated_at"));
	sb_printf(b,
		  " by gpusizer &middot; window: the last %lld day%s "
		  "&middot; %lld probe run%s from %lld node%s in the window "
		  "&middot; each section's CSV link downloads its table</p>\n",
		  days, days == 1 ? "" : "s", jint(runs, "in_window"),
		  jint(runs, "in_window") == 1 ? "" : "s",
		  jint(runs, "nodes_reporting"),
		  jint(runs, "nodes_reporting") == 1 ? "" : "s");
}

static void tile(struct sbuf *b, const char *id, long long v, const char *label)
{
	sb_printf(b, "<div class=\"tile\" id=\"tile-%s\"><b>%lld</b>%s</div>\n",
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
		gpus += jint(it, "gpus");
		degraded +=
		    (long long)json_array_size(json_object_get(it, "degraded"));
	}
	section_open(b, d, "summary", "Summary", "summary");
	if (jint(nodes, "total") == 0 && jint(dem, "requests") == 0)
		no_data(b, "no probe has reported and nothing was sized in the "
			   "window. Run gpusizer-probe on the GPU nodes "
			   "(docs/OPERATIONS.md) and size jobs with POST "
			   "/v1/sizing/training or /v1/sizing/inference.");
	sb_put(b, "<div class=\"tiles\">\n");
	tile(b, "types", (long long)json_array_size(items), "GPU types");
	tile(b, "gpus", gpus, "GPUs measured");
	tile(b, "nodes", jint(nodes, "total"), "nodes seen");
	tile(b, "fresh", jint(nodes, "fresh"),
	     "<span class=\"fresh\">nodes fresh</span> (&lt; 36 h)");
	tile(b, "stale", jint(nodes, "stale") + jint(nodes, "silent"),
	     "<span class=\"stale\">nodes stale or silent</span>");
	tile(b, "degraded", degraded,
	     "<span class=\"silent\">degraded GPUs</span>");
	tile(b, "jobs", jint(dem, "jobs"), "distinct jobs sized");
	tile(b, "requests", jint(dem, "requests"), "sizing requests");
	sb_put(b, "</div>\n</section>\n");
}

/* ---- SVG helpers ----------------------------------------------------- */

static void svg_open(struct sbuf *b, const char *chart, int w, int h)
{
	sb_printf(b,
		  "<svg class=\"chart\" data-chart=\"%s\" viewBox=\"0 0 %d "
		  "%d\" width=\"%d\" height=\"%d\" role=\"img\">\n",
		  chart, w, h, w, h);
}

/* An axis label for v on an axis whose ticks are step apart: integers
 * (with separators) when the step is whole, else just enough decimals.
 */
static void sb_tick(struct sbuf *b, double v, double step)
{
	if (step >= 1 && fabs(v) < 1000)
		sb_printf(b, "%.0f", v);
	else if (step >= 1)
		sb_num(b, v);
	else
		sb_printf(b, "%.*f", (int)ceil(-log10(step) - 1e-9), v);
}

/* A horizontal grid line with its value label at the left of x0. */
static void svg_ytick(struct sbuf *b, double x0, double x1, double y, double v,
		      double step)
{
	sb_printf(b,
		  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		  "stroke=\"" C_GRID "\"/>"
		  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
		  x0, y, x1, y, x0 - 5, y + 4);
	sb_tick(b, v, step);
	sb_put(b, "</text>\n");
}

/* Axis titles (quantity and unit), static text: centred under the x axis
 * at (x, y); along the y axis, rotated, centred at (x, y).
 */
static void svg_xtitle(struct sbuf *b, double x, double y, const char *text)
{
	sb_printf(b,
		  "<text class=\"axis-title\" data-axis=\"x\" x=\"%.1f\" "
		  "y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		  x, y, text);
}

static void svg_ytitle(struct sbuf *b, double x, double y, const char *text)
{
	sb_printf(b,
		  "<text class=\"axis-title\" data-axis=\"y\" x=\"%.1f\" "
		  "y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 "
		  "%.1f %.1f)\">%s</text>\n",
		  x, y, x, y, text);
}

/* The x axis line, both axis titles and the end of a chart's SVG. */
static void svg_close_chart(struct sbuf *b, int left, int right, int w, int h,
			    double top, double plot_h, const char *xtitle,
			    const char *ytitle)
{
	sb_printf(b,
		  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		  "stroke=\"" C_AXIS "\"/>\n",
		  left, top + plot_h, w - right, top + plot_h);
	svg_xtitle(b, left + (w - left - right) / 2.0, h - 8, xtitle);
	svg_ytitle(b, 14, top + plot_h / 2, ytitle);
	sb_put(b, "</svg>\n</div>\n");
}

static void svg_rect(struct sbuf *b, const char *cls, double x, double y,
		     double w, double h, const char *fill)
{
	if (w < 0)
		w = 0;
	if (h < 0)
		h = 0;
	sb_printf(b,
		  "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
		  "height=\"%.1f\" fill=\"%s\">",
		  cls, x, y, w, h, fill);
}

static void svg_legend_box(struct sbuf *b, double x, double y, const char *fill,
			   const char *label)
{
	sb_printf(b,
		  "<rect x=\"%.1f\" y=\"%.1f\" width=\"11\" height=\"11\" "
		  "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
		  x, y, fill, x + 15, y + 10, label);
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

/* The capacity item of (week, type), or NULL. */
static const json_t *capacity_item(const json_t *items, const char *week,
				   const char *type)
{
	const json_t *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		if (!strcmp(jstr(it, "week"), week) &&
		    !strcmp(jstr(it, "gpu_type"), type))
			return it;
	}
	return NULL;
}

/* One GPU type's weeks: GPU-days asked beside healthy GPU-days. */
static void capacity_chart(struct sbuf *b, const json_t *d, const char *type)
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
		const json_t *it = capacity_item(items, jstr(wk, "week"), type);
		double a = 0, hd = 0;
		jnum(it, "asked_gpu_days", &a);
		jnum(it, "healthy_gpu_days", &hd);
		if (a > max)
			max = a;
		if (hd > max)
			max = hd;
	}
	step = nice_step(max * 1.1, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.1 / step) * step;
	cw = (double)(w - left - right) / (double)nw;
	bw = cw * 0.36;
	label_every = (nw + 9) / 10;
	sb_put(b, "<div class=\"card\">\n<h3>");
	type_name(b, d, type, 0);
	sb_put(b, "</h3>\n");
	svg_open(b, "capacity", w, h);
	svg_legend_box(b, left, 6, C_ASKED, "GPU-days asked");
	svg_legend_box(b, left + 130, 6, C_MEASURED, "healthy GPU-days");
	for (double v = 0; v <= axis + step / 2; v += step)
		svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis), v,
			  step);
	json_array_foreach(weeks, i, wk)
	{
		const char *week = jstr(wk, "week");
		const json_t *it = capacity_item(items, week, type);
		double a = 0, hd = 0, cx = left + cw * ((double)i + 0.5);
		double ha, hh;

		jnum(it, "asked_gpu_days", &a);
		jnum(it, "healthy_gpu_days", &hd);
		ha = plot_h * a / axis;
		hh = plot_h * hd / axis;
		svg_rect(b, "bar asked", cx - bw - 1, top + plot_h - ha, bw, ha,
			 C_ASKED);
		sb_put(b, "<title>");
		html_esc(b, week);
		sb_put(b, " asked: ");
		sb_num(b, a);
		sb_put(b, " GPU-days</title></rect>\n");
		svg_rect(b, "bar healthy", cx + 1, top + plot_h - hh, bw, hh,
			 C_MEASURED);
		sb_put(b, "<title>");
		html_esc(b, week);
		sb_printf(b, " healthy: %lld GPUs, ", jint(it, "healthy_gpus"));
		sb_num(b, hd);
		sb_put(b, " GPU-days</title></rect>\n");
		if (nw <= 10) {
			if (a > 0) {
				sb_printf(b,
					  "<text x=\"%.1f\" y=\"%.1f\" "
					  "text-anchor=\"middle\">",
					  cx - bw / 2 - 1,
					  top + plot_h - ha - 4);
				sb_num(b, a);
				sb_put(b, "</text>\n");
			}
			if (hd > 0) {
				sb_printf(b,
					  "<text x=\"%.1f\" y=\"%.1f\" "
					  "text-anchor=\"middle\">",
					  cx + bw / 2 + 1,
					  top + plot_h - hh - 4);
				sb_num(b, hd);
				sb_put(b, "</text>\n");
			}
		}
		if (i % label_every == 0) {
			/* "2026-W47" -> "W47" */
			const char *wl = strchr(week, 'W');
			sb_printf(b,
				  "<text x=\"%.1f\" y=\"%.1f\" "
				  "text-anchor=\"middle\">",
				  cx, (double)(h - bottom + 15));
			html_esc_n(b, wl ? wl : week, 4);
			sb_put(b, "</text>\n");
		}
	}
	svg_close_chart(b, left, right, w, h, top, plot_h,
			"ISO week (UTC, Monday to Sunday)", "GPU-days");
}

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
	sb_put(b, "<p class=\"note\">" ASKED_RULE
		  "</p>\n<p class=\"note\">" HEALTHY_RULE "</p>\n");
	if (n == 0) {
		no_data(b, "no probe has reported GPUs and no training or "
			   "inference job was sized in the window.");
		sb_put(b, "</section>\n");
		return;
	}
	types = calloc(n, sizeof(*types));
	if (!types) {
		b->failed = 1;
		return;
	}
	/* GPU types in name order (items come ordered by week, type). */
	json_array_foreach(items, i, it)
	{
		const char *t = jstr(it, "gpu_type");
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
	sb_put(b, "<div class=\"grid\">\n");
	for (i = 0; i < ntypes; i++)
		capacity_chart(b, d, types[i]);
	sb_put(b, "</div>\n");
	free(types);
	sb_put(b, "<table id=\"capacity-table\"><tr><th>week</th>"
		  "<th>GPU type</th><th>training jobs</th>"
		  "<th>training GPU-days</th><th>inference jobs</th>"
		  "<th>inference GPU-days (24&times;7)</th>"
		  "<th>GPU-days asked</th><th>healthy GPUs (of seen)</th>"
		  "<th>healthy GPU-days</th><th>asked &divide; healthy</th>"
		  "</tr>\n");
	json_array_foreach(items, i, it)
	{
		double a = 0, hd = 0, v = 0;

		jnum(it, "asked_gpu_days", &a);
		jnum(it, "healthy_gpu_days", &hd);
		sb_put(b, "<tr><td>");
		html_esc(b, jstr(it, "week"));
		sb_put(b, " (");
		html_esc(b, jstr(it, "week_start"));
		sb_put(b, ")</td><td>");
		type_name(b, d, jstr(it, "gpu_type"), 0);
		sb_printf(b, "</td><td class=\"n\">%lld</td><td class=\"n\">",
			  jint(it, "training_jobs"));
		jnum(it, "training_gpu_days", &v);
		sb_num(b, v);
		sb_printf(b, "</td><td class=\"n\">%lld</td><td class=\"n\">",
			  jint(it, "inference_jobs"));
		v = 0;
		jnum(it, "inference_gpu_days", &v);
		sb_num(b, v);
		sb_put(b, "</td><td class=\"n\">");
		sb_num(b, a);
		sb_printf(b,
			  "</td><td class=\"n\">%lld (of %lld)</td>"
			  "<td class=\"n\">",
			  jint(it, "healthy_gpus"), jint(it, "seen_gpus"));
		sb_num(b, hd);
		sb_put(b, "</td><td class=\"n\">");
		if (hd > 0) {
			sb_num(b, a / hd);
			sb_put(b, "&times;");
		} else {
			sb_put(b, a > 0 ? "no healthy GPU" : "&ndash;");
		}
		sb_put(b, "</td></tr>\n");
	}
	sb_put(b, "</table>\n</section>\n");
}

/* ---- HTML: fleet counts ---------------------------------------------- */

static void html_fleet(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *it;
	size_t i, n = json_array_size(items);
	double max = 1, step, axis;
	const int w = 1100, left = 250, right = 250, top = 14, rowh = 30;
	int h = top + (int)n * rowh + 44;
	double span = w - left - right;

	section_open(b, d, "fleet", "Fleet", "fleet");
	if (n == 0) {
		no_data(b, "no probe has reported GPUs in the window. Run "
			   "gpusizer-probe on the GPU nodes "
			   "(docs/OPERATIONS.md).");
		sb_put(b, "</section>\n");
		return;
	}
	json_array_foreach(items, i, it)
	{
		if ((double)jint(it, "gpus") > max)
			max = (double)jint(it, "gpus");
	}
	step = nice_step(max, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max / step) * step;
	sb_put(b, "<div class=\"card\">\n");
	svg_open(b, "fleet", w, h);
	for (double v = 0; v <= axis + step / 2; v += step) {
		double x = left + span * v / axis;
		sb_printf(b,
			  "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			  "stroke=\"" C_GRID "\"/><text x=\"%.1f\" y=\"%d\" "
			  "text-anchor=\"middle\">",
			  x, top - 4, x, h - 36, x, h - 24);
		sb_tick(b, v, step);
		sb_put(b, "</text>\n");
	}
	json_array_foreach(items, i, it)
	{
		long long gpus = jint(it, "gpus");
		long long bad =
		    (long long)json_array_size(json_object_get(it, "degraded"));
		double y = top + (double)i * rowh + 5;
		double wg = span * (double)(gpus - bad) / axis;
		double wb = span * (double)bad / axis;

		sb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
			  left - 8, y + 14);
		type_name(b, d, jstr(it, "gpu_type"), 34);
		sb_put(b, "</text>\n");
		svg_rect(b, "bar healthy", left, y, wg, rowh - 10, C_MEASURED);
		sb_printf(b, "<title>%lld healthy GPUs</title></rect>\n",
			  gpus - bad);
		if (bad > 0) {
			svg_rect(b, "bar degraded", left + wg, y, wb, rowh - 10,
				 C_DEGRADED);
			sb_printf(b,
				  "<title>%lld degraded GPUs</title></rect>\n",
				  bad);
		}
		sb_printf(b,
			  "<text x=\"%.1f\" y=\"%.1f\">%lld GPU%s on %lld "
			  "node%s%s",
			  left + wg + wb + 6, y + 14, gpus,
			  gpus == 1 ? "" : "s", jint(it, "nodes"),
			  jint(it, "nodes") == 1 ? "" : "s", bad ? ", " : "");
		if (bad)
			sb_printf(b, "%lld degraded", bad);
		sb_put(b, "</text>\n");
	}
	svg_xtitle(b, left + span / 2, h - 6, "GPUs (count)");
	svg_ytitle(b, 14, top + (double)n * rowh / 2, "GPU type");
	sb_put(b, "</svg>\n<p class=\"note\"><span class=\"sw\" "
		  "style=\"background:" C_MEASURED "\"></span>healthy"
		  "<span class=\"sw\" style=\"background:" C_DEGRADED
		  "\"></span>degraded (see below) &middot; GPUs whose "
		  "latest probe run falls in the window</p>\n</div>\n");
	sb_put(b, "<table id=\"fleet-table\"><tr><th>GPU type</th>"
		  "<th>catalog name</th><th>GPUs</th><th>nodes</th>"
		  "<th>degraded</th></tr>\n");
	json_array_foreach(items, i, it)
	{
		sb_put(b, "<tr><td>");
		type_name(b, d, jstr(it, "gpu_type"), 0);
		sb_put(b, "</td><td>");
		if (json_is_true(json_object_get(it, "in_catalog")))
			html_esc(b, jstr(it, "gpu_type"));
		else
			sb_put(b, "<i>not in the catalog</i>");
		sb_printf(b,
			  "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			  "</td><td class=\"n\">%zu</td></tr>\n",
			  jint(it, "gpus"), jint(it, "nodes"),
			  json_array_size(json_object_get(it, "degraded")));
	}
	sb_put(b, "</table>\n</section>\n");
}

/* ---- HTML: measured vs datasheet ------------------------------------- */

/* One GPU type's dense GEMM rates per dtype: the reference bar (the
 * catalog's datasheet, or the probe's limit for GPUs the catalog lacks)
 * beside the fleet median, with the efficiency above. Returns whether it
 * drew a chart (the type has GEMM results).
 */
static int gemm_chart(struct sbuf *b, const json_t *d, const json_t *item)
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
		if (!m || !jnum(m, "fleet_median", &v))
			continue;
		ms[n] = m;
		meas[n] = v;
		basis[n] = reference(m, 1, &ref[n]);
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
	step = nice_step(max * 1.08, 5);
	axis = ceil(max * 1.08 / step) * step;
	cw = (double)(w - left - right) / n;
	bw = cw * 0.34;
	sb_put(b, "<div class=\"card\">\n<h3>");
	type_name(b, d, jstr(item, "gpu_type"), 0);
	sb_printf(b, " &middot; %lld GPU%s</h3>\n", jint(item, "gpus"),
		  jint(item, "gpus") == 1 ? "" : "s");
	svg_open(b, "gemm", w, h);
	svg_legend_box(b, left, 6, C_REFERENCE,
		       used_limit ? "datasheet (or probe limit)" : "datasheet");
	svg_legend_box(b, left + 190, 6, C_MEASURED, "measured (fleet median)");
	for (double v = 0; v <= axis + step / 2; v += step)
		svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis), v,
			  step);
	for (int i = 0; i < n; i++) {
		double cx = left + cw * (i + 0.5);
		double hr = plot_h * ref[i] / axis,
		       hm = plot_h * meas[i] / axis;
		const char *dt = jstr(ms[i], "dtype");
		const char *unit = jstr(ms[i], "unit");

		if (ref[i] > 0) {
			svg_rect(b, "bar reference", cx - bw - 1,
				 top + plot_h - hr, bw, hr, C_REFERENCE);
			sb_put(b, "<title>");
			html_esc(b, dt);
			sb_put(b, " ");
			html_esc(b, basis[i]);
			sb_put(b, ": ");
			sb_num(b, ref[i]);
			sb_put(b, " ");
			html_esc(b, unit);
			sb_put(b, "</title></rect>\n");
		}
		svg_rect(b, "bar measured", ref[i] > 0 ? cx + 1 : cx - bw / 2,
			 top + plot_h - hm, bw, hm, C_MEASURED);
		sb_put(b, "<title>");
		html_esc(b, dt);
		sb_put(b, " measured: ");
		sb_num(b, meas[i]);
		sb_put(b, " ");
		html_esc(b, unit);
		sb_printf(b, " (median of %lld GPUs)</title></rect>\n",
			  jint(ms[i], "gpus"));
		if (ref[i] > 0)
			sb_printf(b,
				  "<text x=\"%.1f\" y=\"%.1f\" "
				  "text-anchor=\"middle\">%.0f%%</text>\n",
				  cx + 1 + bw / 2, top + plot_h - hm - 4,
				  100 * meas[i] / ref[i]);
		sb_printf(b,
			  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			  cx, top + plot_h + 15);
		html_esc_n(b, dt, 9);
		sb_put(b, "</text>\n");
	}
	svg_close_chart(b, left, right, w, h, top, plot_h,
			"data type of the dense GEMM", "TFLOP/s (int8: TOP/s)");
	return 1;
}

/* One GPU type's bandwidths: each row its own scale, the reference as a
 * light bar, the fleet median over it, and "measured / reference (eff)".
 * Returns whether it drew a chart.
 */
static int bandwidth_chart(struct sbuf *b, const json_t *d, const json_t *item)
{
	const json_t *ms[16];
	int rows[16], n = 0;
	const int w = 520, left = 128, bar = 190, top = 8, rowh = 26;
	int h;

	for (int r = 0; bw_rows[r].metric && n < 16; r++) {
		const json_t *m = find_metric(item, bw_rows[r].metric, NULL);
		double v;
		if (m && jnum(m, "fleet_median", &v)) {
			ms[n] = m;
			rows[n++] = r;
		}
	}
	if (n == 0)
		return 0;
	h = top + n * rowh + 28;
	sb_put(b, "<div class=\"card\">\n<h3>");
	type_name(b, d, jstr(item, "gpu_type"), 0);
	sb_put(b, "</h3>\n");
	svg_open(b, "bandwidth", w, h);
	for (int i = 0; i < n; i++) {
		const struct bw_row *row = &bw_rows[rows[i]];
		double meas = 0, ref = 0, scale;
		const char *basis;
		double y = top + (double)i * rowh;

		jnum(ms[i], "fleet_median", &meas);
		basis = reference(ms[i], row->datasheet_first, &ref);
		scale = basis && ref > meas ? ref : meas;
		if (!(scale > 0))
			scale = 1;
		sb_printf(b,
			  "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s"
			  "</text>\n",
			  left - 8, y + 15, row->label);
		if (basis) {
			svg_rect(b, "bar reference", left, y + 3,
				 bar * ref / scale, rowh - 8, C_REFERENCE);
			sb_put(b, "<title>");
			html_esc(b, basis);
			sb_put(b, ": ");
			sb_num(b, ref);
			sb_put(b, " GB/s</title></rect>\n");
		}
		svg_rect(b, "bar measured", left, y + 7, bar * meas / scale,
			 rowh - 16, C_MEASURED);
		sb_put(b, "<title>measured: ");
		sb_num(b, meas);
		sb_printf(b, " GB/s (median of %lld GPUs)</title></rect>\n",
			  jint(ms[i], "gpus"));
		sb_printf(b, "<text x=\"%d\" y=\"%.1f\">", left + bar + 8,
			  y + 15);
		sb_num(b, meas);
		if (basis) {
			sb_put(b, " / ");
			sb_num(b, ref);
			sb_printf(b, " GB/s \xC2\xB7 %.0f%%", 100 * meas / ref);
		} else {
			sb_put(b, " GB/s");
		}
		sb_put(b, "</text>\n");
	}
	svg_xtitle(b, left + bar / 2.0, h - 8,
		   "bandwidth, GB/s (each row to its own scale)");
	svg_ytitle(b, 12, top + n * rowh / 2.0, "transfer");
	sb_put(b, "</svg>\n</div>\n");
	return 1;
}

static void html_measured(struct sbuf *b, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *it;
	size_t i;
	int drawn = 0;

	section_open(b, d, "flops",
		     "Measured vs datasheet: dense GEMM throughput",
		     "measured");
	sb_put(b, "<p class=\"note\">Per GPU type, the median over its GPUs "
		  "of each GPU's latest run in the window (cuBLASLt, largest "
		  "shape), beside the catalog's dense datasheet peak; the "
		  "percentage is the efficiency.</p>\n<div class=\"grid\">\n");
	json_array_foreach(items, i, it)
	{
		drawn += gemm_chart(b, d, it);
	}
	sb_put(b, "</div>\n");
	if (!drawn)
		no_data(b, "no probe has reported a GEMM measurement in the "
			   "window.");
	sb_put(b, "</section>\n");
	section_open(b, d, "bandwidth", "Measured vs reference: bandwidth",
		     "measured");
	sb_put(b, "<p class=\"note\">Reference: the catalog's HBM bandwidth "
		  "for HBM read and write; the limit the probe derived for "
		  "the rest (half the HBM figure for copies, whose bytes "
		  "count once; PCIe generation &times; width from NVML; "
		  "active NVLinks &times; per-link rate).</p>\n"
		  "<div class=\"grid\">\n");
	drawn = 0;
	json_array_foreach(items, i, it)
	{
		drawn += bandwidth_chart(b, d, it);
	}
	sb_put(b, "</div>\n");
	if (!drawn)
		no_data(b, "no probe has reported a bandwidth measurement in "
			   "the window.");
	sb_put(b, "</section>\n");
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

	jnum(fleet, "degraded_threshold", &thr);
	json_array_foreach(items, i, it)
	{
		total += json_array_size(json_object_get(it, "degraded"));
	}
	snprintf(title, sizeof(title), "Degraded GPUs (%zu)", total);
	section_open(b, d, "degraded", title, "degraded");
	sb_printf(b,
		  "<p class=\"note\">A GPU is degraded when a measurement of "
		  "its latest run is more than %.0f%% worse than its type's "
		  "fleet median (needs two or more GPUs of the type), when "
		  "its PCIe link trained below its maximum, or when hardware "
		  "or thermal slowdowns fired while it was measured.</p>\n",
		  thr * 100);
	if (json_array_size(items) == 0) {
		no_data(b, "no probe has reported GPUs in the window, so none "
			   "can be checked.");
		sb_put(b, "</section>\n");
		return;
	}
	if (total == 0) {
		sb_put(b, "<p>None: every GPU measured in the window passes "
			  "these checks.</p>\n</section>\n");
		return;
	}
	sb_put(b, "<table id=\"degraded-table\"><tr><th>GPU type</th>"
		  "<th>node</th><th>GPU</th><th>UUID</th><th>why</th></tr>\n");
	json_array_foreach(items, i, it)
	{
		json_array_foreach(json_object_get(it, "degraded"), j, g)
		{
			if (rows++ >= REPORT_MAX_DEGRADED_ROWS)
				break;
			sb_put(b, "<tr><td>");
			type_name(b, d, jstr(it, "gpu_type"), 0);
			sb_put(b, "</td><td>");
			html_esc(b, jstr(g, "hostname"));
			sb_printf(b, "</td><td class=\"n\">%lld</td><td>",
				  jint(g, "index"));
			html_esc(b, jstr(g, "uuid"));
			sb_put(b, "</td><td><ul>");
			json_array_foreach(json_object_get(g, "reasons"), k,
					   why)
			{
				sb_put(b, "<li>");
				html_esc(b, json_string_value(why)
						? json_string_value(why)
						: "");
				sb_put(b, "</li>");
			}
			sb_put(b, "</ul></td></tr>\n");
		}
	}
	sb_put(b, "</table>\n");
	if (total > REPORT_MAX_DEGRADED_ROWS)
		sb_printf(b,
			  "<p class=\"note\">The first %d of %zu are listed; "
			  "the CSV has them all.</p>\n",
			  REPORT_MAX_DEGRADED_ROWS, total);
	sb_put(b, "</section>\n");
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
	sb_printf(
	    b,
	    "<p class=\"note\">When each node's probe last reported: "
	    "<span class=\"fresh\">fresh</span> within 36 hours (a daily "
	    "timer with slack), <span class=\"stale\">stale</span> within "
	    "7 days, <span class=\"silent\">silent</span> after that. "
	    "%lld fresh, %lld stale, %lld silent of %lld nodes.</p>\n",
	    jint(nodes, "fresh"), jint(nodes, "stale"), jint(nodes, "silent"),
	    jint(nodes, "total"));
	if (jint(nodes, "total") == 0) {
		no_data(b, "no probe has reported (GET /v1/nodes is empty).");
		sb_put(b, "</section>\n");
		return;
	}
	json_array_foreach(ages, i, a)
	{
		if ((double)jint(a, "nodes") > max)
			max = (double)jint(a, "nodes");
	}
	step = nice_step(max, 4);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.1 / step) * step;
	cw = (double)(w - left - right) / (n ? (double)n : 1);
	sb_put(b, "<div class=\"grid\"><div class=\"card\">\n"
		  "<h3>Nodes by age of their last report</h3>\n");
	svg_open(b, "freshness", w, h);
	for (double v = 0; v <= axis + step / 2; v += step)
		svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis), v,
			  step);
	json_array_foreach(ages, i, a)
	{
		long long c = jint(a, "nodes");
		double hb = plot_h * (double)c / axis;
		double bx = left + cw * (double)i + cw * 0.15;

		svg_rect(b, "bar age", bx, top + plot_h - hb, cw * 0.7, hb,
			 class_colour(jstr(a, "class")));
		sb_printf(b, "<title>%lld nodes</title></rect>\n", c);
		if (c > 0)
			sb_printf(b,
				  "<text x=\"%.1f\" y=\"%.1f\" "
				  "text-anchor=\"middle\">%lld</text>\n",
				  bx + cw * 0.35, top + plot_h - hb - 4, c);
		sb_printf(b,
			  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			  bx + cw * 0.35, top + plot_h + 16);
		html_esc(b, jstr(a, "label"));
		sb_put(b, "</text>\n");
	}
	sb_printf(b,
		  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		  "stroke=\"" C_AXIS "\"/>\n",
		  left, top + plot_h, w - right, top + plot_h);
	svg_xtitle(b, left + (w - left - right) / 2.0, h - 8,
		   "age of the node's last report (hours, days)");
	svg_ytitle(b, 14, top + plot_h / 2, "nodes (count)");
	sb_put(b, "</svg>\n</div></div>\n");
	if (jint(nodes, "listed") < jint(nodes, "total"))
		sb_printf(b,
			  "<p class=\"note\">The %lld stalest of %lld nodes; "
			  "the CSV lists every node.</p>\n",
			  jint(nodes, "listed"), jint(nodes, "total"));
	sb_put(b, "<table id=\"nodes-table\"><tr><th></th><th>node</th>"
		  "<th>GPUs</th><th>GPU types</th><th>last report (UTC)</th>"
		  "<th>age</th><th>runs in window</th><th>last run</th>"
		  "</tr>\n");
	json_array_foreach(items, i, x)
	{
		char age[32];
		double hours = 0;
		const char *cls = jstr(x, "class");

		jnum(x, "age_hours", &hours);
		fmt_age(age, sizeof(age), hours);
		sb_printf(b,
			  "<tr><td><svg width=\"10\" height=\"10\" "
			  "aria-hidden=\"true\"><circle cx=\"5\" cy=\"5\" "
			  "r=\"5\" fill=\"%s\"/></svg></td><td>",
			  class_colour(cls));
		html_esc(b, jstr(x, "hostname"));
		sb_printf(b, "</td><td class=\"n\">%lld</td><td>",
			  jint(x, "gpus"));
		json_array_foreach(json_object_get(x, "gpu_types"), j, t)
		{
			if (j)
				sb_put(b, ", ");
			type_name(b, d,
				  json_string_value(t) ? json_string_value(t)
						       : "",
				  0);
		}
		sb_put(b, "</td><td>");
		html_esc(b, jstr(x, "last_seen"));
		sb_put(b, "</td><td class=\"n ");
		html_esc(b, cls);
		sb_printf(b, "\">%s</td><td class=\"n\">%lld</td><td>", age,
			  jint(x, "runs_in_window"));
		html_esc(b, jstr(x, "last_status"));
		sb_put(b, "</td></tr>\n");
	}
	sb_put(b, "</table>\n</section>\n");
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
			if (strcmp(jstr(s, "kind"), "compare") != 0 &&
			    !strcmp(jstr(s, "gpu"), jstr(t, "gpu"))) {
				c->gpu[c->n++] = jstr(t, "gpu");
				break;
			}
		}
	}
}

static const char *demand_colour(const struct demand_colours *c,
				 const json_t *s)
{
	if (!strcmp(jstr(s, "kind"), "compare"))
		return C_COMPARE;
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->gpu[i], jstr(s, "gpu")))
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
	const char *bucket = jstr(d, "bucket");
	struct demand_colours colours;
	int other = 0;

	if (!*bucket)
		bucket = "period";
	section_open(b, d, "demand", "Sizing demand by GPU type", "demand");
	sb_printf(b,
		  "<p class=\"note\">%lld distinct jobs in the window (%lld "
		  "training, %lld inference, %lld compare) from %lld sizing "
		  "requests: the same request asked again is one job, "
		  "counted on the %s of its latest answer. Each bar stacks "
		  "that %s's jobs by GPU type; compare jobs are one series "
		  "of their own.</p>\n",
		  jint(dem, "jobs"), jint(kinds, "training"),
		  jint(kinds, "inference"), jint(kinds, "compare"),
		  jint(dem, "requests"), bucket, bucket);
	if (json_array_size(series) == 0 || np == 0) {
		no_data(b, "nothing was sized in the window (POST "
			   "/v1/sizing/training, /v1/sizing/inference or "
			   "/v1/sizing/compare).");
		sb_put(b, "</section>\n");
		return;
	}
	demand_colours_init(&colours, dem);
	stack = calloc(np, sizeof(double));
	if (!stack) {
		b->failed = 1;
		return;
	}
	/* Stack heights per period (series come ordered by period). */
	json_array_foreach(series, j, s)
	{
		json_array_foreach(periods, i, p)
		{
			if (!strcmp(jstr(s, "period"),
				    json_string_value(p) ? json_string_value(p)
							 : "")) {
				stack[i] += (double)jint(s, "jobs");
				break;
			}
		}
	}
	for (i = 0; i < np; i++)
		if (stack[i] > max)
			max = stack[i];
	step = nice_step(max, 5);
	if (step < 1)
		step = 1;
	axis = ceil(max * 1.05 / step) * step;
	cw = (double)(w - left - right) / (double)np;
	label_every = (np + 11) / 12;
	sb_put(b, "<div class=\"card\">\n");
	svg_open(b, "demand", w, h);
	for (double v = 0; v <= axis + step / 2; v += step)
		svg_ytick(b, left, w - right, top + plot_h * (1 - v / axis), v,
			  step);
	memset(stack, 0, np * sizeof(double));
	json_array_foreach(series, j, s)
	{
		const char *per = jstr(s, "period");
		const char *fill = demand_colour(&colours, s);
		double c = (double)jint(s, "jobs");

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
			svg_rect(b, "bar demand", x,
				 top + plot_h - plot_h * stack[i] / axis - hb,
				 cw * 0.7, hb, fill);
			sb_put(b, "<title>");
			html_esc(b, per);
			sb_put(b, " ");
			html_esc(b, jstr(s, "kind"));
			sb_put(b, " ");
			html_esc(b, jstr(s, "gpu"));
			sb_printf(b, ": %.0f job%s</title></rect>\n", c,
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
		sb_printf(b,
			  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			  left + cw * ((double)i + 0.5), top + plot_h + 16);
		/* "2026-11-21": month-day for days and weeks, year-month
		 * for months.
		 */
		html_esc_n(b,
			   strlen(ps) == 10 && strcmp(bucket, "month") != 0
			       ? ps + 5
			       : ps,
			   7);
		sb_put(b, "</text>\n");
	}
	sb_printf(b,
		  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
		  "stroke=\"" C_AXIS "\"/>\n",
		  left, top + plot_h, w - right, top + plot_h);
	svg_xtitle(b, left + (w - left - right) / 2.0, h - 8,
		   !strcmp(bucket, "week")    ? "week starting (UTC, MM-DD)"
		   : !strcmp(bucket, "month") ? "month (UTC)"
					      : "day (UTC, MM-DD)");
	svg_ytitle(b, 16, top + plot_h / 2, "distinct jobs (count)");
	sb_put(b, "</svg>\n<p class=\"note\">");
	for (i = 0; i < (size_t)colours.n; i++) {
		sb_printf(b,
			  "<span class=\"sw\" style=\"background:%s\">"
			  "</span>",
			  palette[i]);
		type_name(b, d, colours.gpu[i], 40);
	}
	if (other)
		sb_put(b, "<span class=\"sw\" style=\"background:" C_OTHER
			  "\"></span>other types");
	if (jint(kinds, "compare") > 0)
		sb_put(b, "<span class=\"sw\" style=\"background:" C_COMPARE
			  "\"></span>compare jobs");
	sb_put(b, "</p>\n</div>\n<table id=\"demand-table\"><tr><th>GPU type"
		  "</th><th>distinct jobs</th><th>training</th>"
		  "<th>inference</th><th>compare</th><th>requests</th>"
		  "<th>largest top plan (GPUs)</th></tr>\n");
	json_array_foreach(totals, i, t)
	{
		double g = 0;
		sb_put(b, "<tr><td>");
		type_name(b, d, jstr(t, "gpu"), 0);
		sb_printf(b,
			  "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			  "</td><td class=\"n\">%lld</td><td class=\"n\">%lld"
			  "</td><td class=\"n\">%lld</td><td class=\"n\">",
			  jint(t, "jobs"), jint(t, "training"),
			  jint(t, "inference"), jint(t, "compare"),
			  jint(t, "requests"));
		if (jnum(t, "largest_plan_gpus", &g))
			sb_num(b, g);
		else
			sb_put(b, "&ndash;");
		sb_put(b, "</td></tr>\n");
	}
	sb_put(b, "</table>\n<p class=\"note\">A compare job counts in the row "
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
	long long days = jint(d, "window_days");

	html_head(&b, d);
	html_summary(&b, d);
	html_capacity(&b, d);
	html_fleet(&b, d);
	html_measured(&b, d);
	html_degraded(&b, d);
	html_freshness(&b, d);
	html_demand(&b, d);
	sb_printf(&b,
		  "<footer class=\"note\"><p>The same figures as JSON: "
		  "<a href=\"/v1/fleet?window_days=%lld\">/v1/fleet</a>, "
		  "<a href=\"/v1/nodes\">/v1/nodes</a>, "
		  "<a href=\"/v1/recommendations\">/v1/recommendations</a>; "
		  "as CSV: each section's CSV link (<code>?section=</code>"
		  "summary, capacity, fleet, measured, degraded, freshness, "
		  "demand).</p></footer>\n</main>\n</body>\n</html>\n",
		  days);
	return sb_finish(&b);
}

/* ---- CSV: one table per section --------------------------------------- */

/* RFC 4180: quoted when it holds a comma, quote or line break. A text
 * value that a spreadsheet would run as a formula (=, +, -, @, tab, CR
 * first) gets a leading apostrophe (OWASP "CSV injection"); numbers are
 * ours and left alone.
 */
static void csv_field(struct sbuf *b, const char *s, int is_text)
{
	int quote = strpbrk(s, ",\"\r\n") != NULL;
	int defuse = is_text && *s && strchr("=+-@\t\r", *s);

	if (quote || defuse)
		sb_put(b, "\"");
	if (defuse)
		sb_put(b, "'");
	for (; *s; s++) {
		if (*s == '"')
			sb_put(b, "\"\"");
		else
			sb_putn(b, s, 1);
	}
	if (quote || defuse)
		sb_put(b, "\"");
}

/* A row is written cell by cell; the first cell of a row has no comma. */
struct csv_out {
	struct sbuf *b;
	int cells; /* cells written on the current row */
};

static void csv_sep(struct csv_out *o)
{
	if (o->cells++)
		sb_put(o->b, ",");
}

static void csv_text(struct csv_out *o, const char *s)
{
	csv_sep(o);
	csv_field(o->b, s ? s : "", 1);
}

static void csv_num(struct csv_out *o, double v)
{
	csv_sep(o);
	sb_printf(o->b, "%.10g", v);
}

static void csv_int(struct csv_out *o, long long v)
{
	csv_sep(o);
	sb_printf(o->b, "%lld", v);
}

static void csv_empty(struct csv_out *o)
{
	csv_sep(o);
}

/* o[k] when it is a number, else an empty cell. */
static void csv_jnum(struct csv_out *o, const json_t *x, const char *k)
{
	double v;
	if (jnum(x, k, &v))
		csv_num(o, v);
	else
		csv_empty(o);
}

static void csv_eol(struct csv_out *o)
{
	sb_put(o->b, "\r\n");
	o->cells = 0;
}

/* The header line: names separated by commas (our own, plain). */
static void csv_header(struct csv_out *o, const char *names)
{
	sb_put(o->b, names);
	sb_put(o->b, "\r\n");
}

static void csv_summary(struct csv_out *o, const json_t *d)
{
	const json_t *items =
	    json_object_get(json_object_get(d, "fleet"), "items");
	const json_t *nodes = json_object_get(d, "nodes");
	const json_t *dem = json_object_get(d, "demand");
	const json_t *kinds = json_object_get(dem, "jobs_by_kind");
	const json_t *it;
	long long gpus = 0, degraded = 0;
	double asked = 0, healthy = 0;
	size_t i;

	json_array_foreach(items, i, it)
	{
		gpus += jint(it, "gpus");
		degraded +=
		    (long long)json_array_size(json_object_get(it, "degraded"));
	}
	json_array_foreach(
	    json_object_get(json_object_get(d, "capacity"), "items"), i, it)
	{
		double v;
		if (jnum(it, "asked_gpu_days", &v))
			asked += v;
		if (jnum(it, "healthy_gpu_days", &v))
			healthy += v;
	}
	csv_header(o, "generated_at,window_days,gpu_types,gpus_measured,"
		      "degraded_gpus,nodes,nodes_fresh,nodes_stale,"
		      "nodes_silent,probe_runs,sizing_requests,jobs,"
		      "training_jobs,inference_jobs,compare_jobs,"
		      "asked_gpu_days,healthy_gpu_days");
	csv_text(o, jstr(d, "generated_at"));
	csv_int(o, jint(d, "window_days"));
	csv_int(o, (long long)json_array_size(items));
	csv_int(o, gpus);
	csv_int(o, degraded);
	csv_int(o, jint(nodes, "total"));
	csv_int(o, jint(nodes, "fresh"));
	csv_int(o, jint(nodes, "stale"));
	csv_int(o, jint(nodes, "silent"));
	csv_int(o, jint(json_object_get(d, "runs"), "in_window"));
	csv_int(o, jint(dem, "requests"));
	csv_int(o, jint(dem, "jobs"));
	csv_int(o, jint(kinds, "training"));
	csv_int(o, jint(kinds, "inference"));
	csv_int(o, jint(kinds, "compare"));
	csv_num(o, round(asked * 10) / 10);
	csv_num(o, healthy);
	csv_eol(o);
}

/* The weekly table. The column names carry the rules: inference GPU-days
 * assume serving around the clock (24x7); docs/OPERATIONS.md has the rest.
 */
static void csv_capacity(struct csv_out *o, const json_t *d)
{
	const json_t *it;
	size_t i;

	csv_header(o, "week,week_start,gpu_type,training_jobs,"
		      "training_gpu_days,inference_jobs,"
		      "inference_gpu_days_24x7,asked_gpu_days,seen_gpus,"
		      "healthy_gpus,healthy_gpu_days");
	json_array_foreach(
	    json_object_get(json_object_get(d, "capacity"), "items"), i, it)
	{
		csv_text(o, jstr(it, "week"));
		csv_text(o, jstr(it, "week_start"));
		csv_text(o, jstr(it, "gpu_type"));
		csv_int(o, jint(it, "training_jobs"));
		csv_jnum(o, it, "training_gpu_days");
		csv_int(o, jint(it, "inference_jobs"));
		csv_jnum(o, it, "inference_gpu_days");
		csv_jnum(o, it, "asked_gpu_days");
		csv_int(o, jint(it, "seen_gpus"));
		csv_int(o, jint(it, "healthy_gpus"));
		csv_jnum(o, it, "healthy_gpu_days");
		csv_eol(o);
	}
}

static void csv_fleet(struct csv_out *o, const json_t *d)
{
	const json_t *it;
	size_t i;

	csv_header(o, "gpu_type,display_name,in_catalog,gpus,healthy_gpus,"
		      "degraded_gpus,nodes");
	json_array_foreach(
	    json_object_get(json_object_get(d, "fleet"), "items"), i, it)
	{
		const char *k = jstr(it, "gpu_type");
		const char *disp = json_string_value(
		    json_object_get(json_object_get(d, "catalog"), k));
		long long bad =
		    (long long)json_array_size(json_object_get(it, "degraded"));

		csv_text(o, k);
		csv_text(o, disp ? disp : !strncmp(k, "nvml:", 5) ? k + 5 : k);
		csv_text(o, json_is_true(json_object_get(it, "in_catalog"))
				? "true"
				: "false");
		csv_int(o, jint(it, "gpus"));
		csv_int(o, jint(it, "gpus") - bad);
		csv_int(o, bad);
		csv_int(o, jint(it, "nodes"));
		csv_eol(o);
	}
}

static void csv_measured(struct csv_out *o, const json_t *d)
{
	const json_t *it, *m;
	size_t i, j;

	csv_header(o, "gpu_type,metric,dtype,unit,measured,reference,"
		      "reference_basis,efficiency,gpus");
	json_array_foreach(
	    json_object_get(json_object_get(d, "fleet"), "items"), i, it)
	{
		json_array_foreach(json_object_get(it, "metrics"), j, m)
		{
			double v = 0, ref = 0;
			int has_v = jnum(m, "fleet_median", &v);
			const char *basis = reference(
			    m, metric_datasheet_first(jstr(m, "metric")), &ref);

			csv_text(o, jstr(it, "gpu_type"));
			csv_text(o, jstr(m, "metric"));
			csv_text(o, jstr(m, "dtype"));
			csv_text(o, jstr(m, "unit"));
			if (has_v)
				csv_num(o, v);
			else
				csv_empty(o);
			if (basis) {
				csv_num(o, ref);
				csv_text(o, basis);
				if (has_v)
					csv_num(o, round(v / ref * 1e4) / 1e4);
				else
					csv_empty(o);
			} else {
				csv_empty(o);
				csv_empty(o);
				csv_empty(o);
			}
			csv_int(o, jint(m, "gpus"));
			csv_eol(o);
		}
	}
}

static void csv_degraded(struct csv_out *o, const json_t *d)
{
	const json_t *it, *g, *why;
	size_t i, j, k;

	csv_header(o, "gpu_type,hostname,gpu_index,gpu_uuid,reasons");
	json_array_foreach(
	    json_object_get(json_object_get(d, "fleet"), "items"), i, it)
	{
		json_array_foreach(json_object_get(it, "degraded"), j, g)
		{
			struct sbuf reasons = {0};
			json_array_foreach(json_object_get(g, "reasons"), k,
					   why)
			{
				if (k)
					sb_put(&reasons, "; ");
				sb_put(&reasons, json_string_value(why)
						     ? json_string_value(why)
						     : "");
			}
			csv_text(o, jstr(it, "gpu_type"));
			csv_text(o, jstr(g, "hostname"));
			csv_int(o, jint(g, "index"));
			csv_text(o, jstr(g, "uuid"));
			csv_text(o,
				 reasons.p && !reasons.failed ? reasons.p : "");
			csv_eol(o);
			free(reasons.p);
		}
	}
}

static void csv_freshness(struct csv_out *o, const json_t *d)
{
	const json_t *x, *t;
	size_t i, j;

	csv_header(o, "hostname,gpu_types,gpus,last_seen,age_hours,"
		      "freshness,last_status,runs_in_window");
	json_array_foreach(
	    json_object_get(json_object_get(d, "nodes"), "items"), i, x)
	{
		struct sbuf types = {0};
		json_array_foreach(json_object_get(x, "gpu_types"), j, t)
		{
			if (j)
				sb_put(&types, " ");
			sb_put(&types, json_string_value(t)
					   ? json_string_value(t)
					   : "");
		}
		csv_text(o, jstr(x, "hostname"));
		csv_text(o, types.p && !types.failed ? types.p : "");
		csv_int(o, jint(x, "gpus"));
		csv_text(o, jstr(x, "last_seen"));
		csv_jnum(o, x, "age_hours");
		csv_text(o, jstr(x, "class"));
		csv_text(o, jstr(x, "last_status"));
		csv_int(o, jint(x, "runs_in_window"));
		csv_eol(o);
		free(types.p);
	}
}

static void csv_demand(struct csv_out *o, const json_t *d)
{
	const json_t *s;
	size_t i;

	csv_header(o, "period,kind,gpu_type,jobs,largest_plan_gpus");
	json_array_foreach(
	    json_object_get(json_object_get(d, "demand"), "series"), i, s)
	{
		csv_text(o, jstr(s, "period"));
		csv_text(o, jstr(s, "kind"));
		csv_text(o, jstr(s, "gpu"));
		csv_int(o, jint(s, "jobs"));
		csv_jnum(o, s, "largest_plan_gpus");
		csv_eol(o);
	}
}

int report_csv_section_valid(const char *section)
{
	for (int i = 0; csv_sections[i]; i++)
		if (!strcmp(csv_sections[i], section))
			return 1;
	return 0;
}

char *report_render_csv(const json_t *d, const char *section)
{
	static const struct {
		const char *name;
		void (*fn)(struct csv_out *, const json_t *);
	} writers[] = {
	    {"summary", csv_summary},	{"capacity", csv_capacity},
	    {"fleet", csv_fleet},	{"measured", csv_measured},
	    {"degraded", csv_degraded}, {"freshness", csv_freshness},
	    {"demand", csv_demand},
	};
	struct sbuf b = {0};
	struct csv_out o = {&b, 0};

	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(writers[i].name, section)) {
			writers[i].fn(&o, d);
			sb_reserve(&b,
				   0); /* an empty table is still a string */
			return sb_finish(&b);
		}
	return NULL;
}
/* ---- content negotiation and the handler ----------------------------- */

/* q x 1000 that accept gives type ("text/html"), or -1 when no range
 * matches. The most specific matching range decides.
 */
static int accept_q(const char *accept, const char *type)
{
	const char *p = accept;
	size_t major = (size_t)(strchr(type, '/') - type);
	int best_spec = 0, best_q = -1;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char item[160], *media, *param, *save = NULL;
		int spec = 0, q = 1000;

		if (n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			media = strtok_r(item, ";", &save);
			while (media && (*media == ' ' || *media == '\t'))
				media++;
			if (media) {
				size_t ml = strcspn(media, " \t");
				media[ml] = '\0';
				if (!strcasecmp(media, type))
					spec = 3;
				else if (ml == major + 2 &&
					 !strncasecmp(media, type, major + 1) &&
					 media[major + 1] == '*')
					spec = 2;
				else if (!strcmp(media, "*/*"))
					spec = 1;
			}
			while ((param = strtok_r(NULL, ";", &save))) {
				while (*param == ' ' || *param == '\t')
					param++;
				if ((param[0] == 'q' || param[0] == 'Q') &&
				    param[1] == '=') {
					double v = strtod(param + 2, NULL);
					q = v <= 0   ? 0
					    : v >= 1 ? 1000
						     : (int)(v * 1000 + 0.5);
				}
			}
			if (spec > best_spec) {
				best_spec = spec;
				best_q = q;
			}
		}
		p = end ? end + 1 : p + n;
	}
	return best_q;
}

enum report_format report_negotiate(const char *accept)
{
	int qh, qc;

	if (!accept || !*accept)
		return REPORT_HTML;
	qh = accept_q(accept, "text/html");
	qc = accept_q(accept, "text/csv");
	if (qh <= 0 && qc <= 0)
		return REPORT_NONE;
	return qc > qh ? REPORT_CSV : REPORT_HTML;
}

void h_report_capacity(struct app *app, const struct request *req,
		       struct response *res)
{
	struct report_query q = {REPORT_WINDOW_DAYS, REPORT_DEGRADED_THRESHOLD,
				 "day", REPORT_HTML_NODES, false};
	const char *w = req_query(req, "window_days");
	const char *f = req_query(req, "format");
	const char *section = req_query(req, "section");
	enum report_format fmt = REPORT_NONE;
	struct store_err e;
	json_t *data = NULL;
	char *text, date[11];
	size_t n;

	if (w) {
		char *end;
		long days = strtol(w, &end, 10);
		if (!*w || *end || days < 1 || days > FLEET_MAX_WINDOW_DAYS)
			problem_field(res, "window_days",
				      "must be an integer in [1, %d]",
				      FLEET_MAX_WINDOW_DAYS);
		else
			q.window_days = (int)days;
	}
	if (f) {
		fmt = !strcmp(f, "html")  ? REPORT_HTML
		      : !strcmp(f, "csv") ? REPORT_CSV
					  : REPORT_NONE;
		if (fmt == REPORT_NONE)
			problem_field(res, "format", "must be html or csv");
	}
	if (section && !report_csv_section_valid(section))
		problem_field(res, "section",
			      "must be one of: " CSV_SECTION_LIST);
	else if (section && fmt == REPORT_HTML)
		problem_field(res, "section",
			      "selects one CSV table; the HTML page has every "
			      "section (leave section out, or use format=csv)");
	if (problem_field_count(res) > 0)
		return;
	if (!f) {
		/* A section is a CSV table: it only needs Accept to allow
		 * text/csv, as a browser's wildcard does.
		 */
		if (section)
			fmt = !req->accept || !*req->accept ||
				      accept_q(req->accept, "text/csv") > 0
				  ? REPORT_CSV
				  : REPORT_NONE;
		else
			fmt = report_negotiate(req->accept);
	}
	if (fmt == REPORT_NONE) {
		problem(res, 406, "not-acceptable", "Not acceptable",
			"this report is text/html or text/csv (or pass "
			"?format=html|csv); the Accept header allows neither");
		return;
	}
	if (fmt == REPORT_CSV && !section) {
		problem_field(res, "section",
			      "is needed for CSV, which is one table per "
			      "section: one of: " CSV_SECTION_LIST);
		return;
	}
	/* About 60 bars at most in the demand plot. */
	q.bucket = q.window_days <= 62 ? "day" : "week";
	q.with_synthetic = app->fleet_synthetic;
	if (fmt == REPORT_CSV)
		q.max_nodes = REPORT_CSV_NODES;
	if (store_report_capacity(app->db, &q, &data, &e) != STORE_OK) {
		problem_store(res, &e, "capacity report");
		return;
	}
	/* The download's date: generated_at's, the database's clock. */
	snprintf(date, sizeof(date), "%s", jstr(data, "generated_at"));
	n = strspn(date, "0123456789-");
	date[n] = '\0';
	text = fmt == REPORT_CSV ? report_render_csv(data, section)
				 : report_render_html(data);
	json_decref(data);
	if (!text) {
		problem(res, 503, "unavailable", "Service unavailable",
			"out of memory while rendering the report");
		return;
	}
	res_text(res, 200,
		 fmt == REPORT_CSV ? "text/csv; charset=utf-8; header=present"
				   : "text/html; charset=utf-8",
		 text, strlen(text));
	free(text);
	if (fmt == REPORT_CSV && res->status == 200)
		snprintf(res->content_disposition,
			 sizeof(res->content_disposition),
			 "attachment; filename=\"gpusizer-capacity-%s-%s.csv\"",
			 section, date);
}

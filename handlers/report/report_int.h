/* report_int.h - what the modules of the capacity report share (private
 * to handlers/report/; the route and the renderers' public face is
 * handlers/report.h).
 *
 *   handler.c  GET /v1/reports/capacity: query, Accept, storage, answer
 *   html.c     the page and its sections
 *   svg.c      chart primitives and the per-GPU-type charts
 *   csv.c      one CSV table per section
 *   common.c   the growing string, HTML escaping, the JSON readers,
 *              number formatting, the measured figures' references
 *   head.html, report.css   the static top of the page and its style,
 *              embedded at build time (report_page_top, below)
 */
#ifndef GPUSIZER_HANDLERS_REPORT_REPORT_INT_H
#define GPUSIZER_HANDLERS_REPORT_REPORT_INT_H

#include <stddef.h>

#include <jansson.h>

#include "lib/sbuf.h"

/* Colours of the plots (Tableau 10), shared by the page and its charts. */
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

/* The CSV tables, one per section of the page (?section=NAME). */
#define CSV_SECTION_LIST                                                       \
	"summary, capacity, fleet, measured, calibration, degraded, "          \
	"freshness, demand"

/* head.html with report.css in its <style>, from the build directory's
 * report_assets.c (made by handlers/report/embed.sh): from <!DOCTYPE> to
 * the page's <h1>, ending in a newline.
 */
extern const char report_page_top[];

/* Text for HTML element content and quoted attributes; rpt_esc_n stops
 * after max_chars code points with an ellipsis (0: no limit).
 */
void rpt_esc_n(struct sbuf *b, const char *s, size_t max_chars);
void rpt_esc(struct sbuf *b, const char *s);

/* v formatted for people: 3,011 / 783 / 64 / 51.2 / 2.40. */
void rpt_num(struct sbuf *b, double v);

/* A GPU type's name for people (escaped, at most max_chars, 0: all). */
void rpt_type_name(struct sbuf *b, const json_t *d, const char *key,
		   size_t max_chars);

/* A round axis step for values up to max (about `ticks` ticks). */
double rpt_nice_step(double max, int ticks);

/* ---- reading the report's JSON (common.c) ---------------------------- */

/* o[k] as a string, "" when it is not one. */
const char *rpt_jstr(const json_t *o, const char *k);
/* 1 and *v when o[k] is a finite number, else 0. */
int rpt_jnum(const json_t *o, const char *k, double *v);
/* o[k] rounded, 0 when it is not a number. */
long long rpt_jint(const json_t *o, const char *k);

/* ---- the measured figures (common.c) ---------------------------------- */

struct bw_row {
	const char *metric, *label;
	int datasheet_first; /* the catalog's HBM figure is the reference */
};
/* The bandwidth metrics in chart order, ended by a NULL metric. */
extern const struct bw_row rpt_bw_rows[];

/* What measurement m is compared with: "datasheet" or "limit" and *ref,
 * or NULL when there is none.
 */
const char *rpt_reference(const json_t *m, int datasheet_first, double *ref);
/* Whether metric's reference is the catalog's datasheet first. */
int rpt_datasheet_first(const char *metric);

/* ---- SVG (svg.c) -------------------------------------------------------- */

void rpt_svg_open(struct sbuf *b, const char *chart, int w, int h);
/* An axis label for v on an axis whose ticks are step apart. */
void rpt_tick(struct sbuf *b, double v, double step);
/* A horizontal grid line with its value label at the left of x0. */
void rpt_svg_ytick(struct sbuf *b, double x0, double x1, double y, double v,
		   double step);
/* The x axis: a line from (x0, y) to (x1, y). */
void rpt_svg_xaxis(struct sbuf *b, int x0, int x1, double y);
/* Axis titles (static text), centred at (x, y). */
void rpt_svg_xtitle(struct sbuf *b, double x, double y, const char *text);
void rpt_svg_ytitle(struct sbuf *b, double x, double y, const char *text);
/* An open <rect> (the caller adds its <title> and </rect>). */
void rpt_svg_rect(struct sbuf *b, const char *cls, double x, double y, double w,
		  double h, const char *fill);

/* One GPU type's weeks: GPU-days asked beside healthy GPU-days. */
void rpt_capacity_chart(struct sbuf *b, const json_t *d, const char *type);
/* The fleet's GPUs per type, healthy and degraded; items is not empty. */
void rpt_fleet_chart(struct sbuf *b, const json_t *d, const json_t *items);
/* One GPU type's GEMM or bandwidth figures beside their references;
 * return whether a chart was drawn (the type has such results).
 */
int rpt_gemm_chart(struct sbuf *b, const json_t *d, const json_t *item);
int rpt_bandwidth_chart(struct sbuf *b, const json_t *d, const json_t *item);

#endif

/* report.h - GET /v1/reports/capacity: the capacity report as a
 * self-contained HTML page (inline CSS and SVG plots, no script, no
 * external resource) or as CSV.
 */
#ifndef GPUSIZER_HANDLERS_REPORT_H
#define GPUSIZER_HANDLERS_REPORT_H

#include <jansson.h>

#include "handlers/handler.h"

/* GET /v1/reports/capacity[?window_days=N][&format=html|csv]
 * [&section=NAME]. The HTML page has every section; the CSV is one table
 * per section, named by section (a 400 naming section without it). Without
 * format, the Accept header decides (text/html unless text/csv is
 * preferred; with section, text/csv only has to be acceptable); 406 when
 * it accepts neither. A CSV answer has Content-Disposition: attachment;
 * filename="gpusizer-capacity-SECTION-YYYY-MM-DD.csv".
 */
void h_report_capacity(struct app *app, const struct request *req,
		       struct response *res);

/* Formats the report may take. */
enum report_format {
	REPORT_NONE = 0, /* neither is acceptable */
	REPORT_HTML,
	REPORT_CSV,
};

/* The format an Accept header asks for (RFC 9110 12.5.1: the most
 * specific matching range sets the q value; ties go to HTML). NULL or
 * empty means HTML.
 */
enum report_format report_negotiate(const char *accept);

/* Whether section names a CSV table: summary, capacity, fleet, measured,
 * degraded, freshness or demand (the page's sections; measured holds the
 * GEMM and bandwidth figures).
 */
int report_csv_section_valid(const char *section);

/* Render store_report_capacity()'s object (borrowed): the whole page, or
 * one section's CSV table (a header line, then its rows). Every string
 * that comes from the database is escaped (HTML) or quoted and defused
 * against spreadsheet formulas (CSV). Return a NUL-terminated string the
 * caller free()s, or NULL when out of memory (or, for CSV, when section
 * is not valid).
 */
char *report_render_html(const json_t *data);
char *report_render_csv(const json_t *data, const char *section);

#endif

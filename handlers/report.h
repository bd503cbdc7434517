/* report.h - GET /v1/reports/capacity: the capacity report as a
 * self-contained HTML page (inline CSS and SVG plots, no script, no
 * external resource) or as CSV.
 */
#ifndef GPUSIZER_HANDLERS_REPORT_H
#define GPUSIZER_HANDLERS_REPORT_H

#include <jansson.h>

#include "handlers/handler.h"

/* GET /v1/reports/capacity[?window_days=N][&format=html|csv]. Without
 * format, the Accept header decides (text/html unless text/csv is
 * preferred); 406 when it accepts neither.
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

/* Render store_report_capacity()'s object (borrowed). Every string that
 * comes from the database is escaped (HTML) or quoted and defused
 * against spreadsheet formulas (CSV). Return a NUL-terminated string the
 * caller free()s, or NULL when out of memory.
 */
char *report_render_html(const json_t *data);
char *report_render_csv(const json_t *data);

#endif

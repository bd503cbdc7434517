/* handler.c - GET /v1/reports/capacity (issue 6): the query (window,
 * format, section), content negotiation (Accept), the report's data from
 * storage, and the answer: the HTML page (html.c) or one section's CSV
 * table (csv.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "handlers/calib.h"
#include "handlers/problem.h"
#include "handlers/report.h"
#include "handlers/report/report_int.h"
#include "handlers/util.h"
#include "storage/bench.h"
#include "storage/report.h"

#define REPORT_WINDOW_DAYS	  30
#define REPORT_DEGRADED_THRESHOLD 0.10	 /* as GET /v1/fleet */
#define REPORT_HTML_NODES	  200	 /* node rows on the page */
#define REPORT_CSV_NODES	  100000 /* node rows in the CSV */

/* ---- content negotiation ---------------------------------------------- */

enum report_format report_negotiate(const char *accept)
{
	int qh, qc;

	if (!accept || !*accept)
		return REPORT_HTML;
	qh = http_accept_q(accept, "text/html");
	qc = http_accept_q(accept, "text/csv");
	if (qh <= 0 && qc <= 0)
		return REPORT_NONE;
	return qc > qh ? REPORT_CSV : REPORT_HTML;
}

void h_report_capacity(struct app *app, const struct request *req,
		       struct response *res)
{
	struct report_query q = {REPORT_WINDOW_DAYS, REPORT_DEGRADED_THRESHOLD,
				 "day", REPORT_HTML_NODES, false};
	long days = query_int(req, "window_days", 1, FLEET_MAX_WINDOW_DAYS,
			      REPORT_WINDOW_DAYS, res);
	const char *f = req_query(req, "format");
	const char *section = req_query(req, "section");
	enum report_format fmt = REPORT_NONE;
	struct store_err e;
	json_t *data = NULL;
	char *text, date[11];
	size_t n;

	if (days > 0)
		q.window_days = (int)days;
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
				      http_accept_q(req->accept, "text/csv") > 0
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
	if (calib_fleet_annotate(app, json_object_get(data, "fleet"), &e) !=
	    0) {
		json_decref(data);
		problem_store(res, &e, "capacity report calibration");
		return;
	}
	/* The download's date: generated_at's, the database's clock. */
	snprintf(date, sizeof(date), "%s", rpt_jstr(data, "generated_at"));
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

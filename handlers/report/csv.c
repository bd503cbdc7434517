/* csv.c - the capacity report as CSV: one table per section of the page
 * (?section=NAME), a header line and then its rows. Text that came from
 * the database goes through lib/csv.h's csv_cell(): quoted per RFC 4180
 * and defused against spreadsheet formulas; numbers are formatted here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/report.h"
#include "handlers/report/report_int.h"
#include "lib/csv.h"

/* The CSV tables, in the page's order (CSV_SECTION_LIST says the same). */
static const char *const csv_sections[] = {
    "summary",	"capacity",  "fleet",  "measured", "calibration",
    "degraded", "freshness", "demand", NULL};

/* Cells: text from the database through csv_cell (quoted per RFC 4180 and
 * defused against spreadsheet formulas, lib/csv.h); numbers are ours and
 * formatted here.
 */
static void csv_text(struct csv *o, const char *s)
{
	csv_cell(o, s);
}

static void csv_num(struct csv *o, double v)
{
	csv_cellf(o, "%.10g", v);
}

static void csv_int(struct csv *o, long long v)
{
	csv_cellf(o, "%lld", v);
}

/* o[k] when it is a number, else an empty cell. */
static void csv_jnum(struct csv *o, const json_t *x, const char *k)
{
	double v;
	if (rpt_jnum(x, k, &v))
		csv_num(o, v);
	else
		csv_empty(o);
}

/* The header line: names separated by commas (our own, plain). */
static void csv_header(struct csv *o, const char *names)
{
	sbuf_put(o->b, names);
	csv_eol(o);
}

static void csv_summary(struct csv *o, const json_t *d)
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
		gpus += rpt_jint(it, "gpus");
		degraded +=
		    (long long)json_array_size(json_object_get(it, "degraded"));
	}
	json_array_foreach(
	    json_object_get(json_object_get(d, "capacity"), "items"), i, it)
	{
		double v;
		if (rpt_jnum(it, "asked_gpu_days", &v))
			asked += v;
		if (rpt_jnum(it, "healthy_gpu_days", &v))
			healthy += v;
	}
	csv_header(o, "generated_at,window_days,gpu_types,gpus_measured,"
		      "degraded_gpus,nodes,nodes_fresh,nodes_stale,"
		      "nodes_silent,probe_runs,sizing_requests,jobs,"
		      "training_jobs,inference_jobs,compare_jobs,"
		      "asked_gpu_days,healthy_gpu_days");
	csv_text(o, rpt_jstr(d, "generated_at"));
	csv_int(o, rpt_jint(d, "window_days"));
	csv_int(o, (long long)json_array_size(items));
	csv_int(o, gpus);
	csv_int(o, degraded);
	csv_int(o, rpt_jint(nodes, "total"));
	csv_int(o, rpt_jint(nodes, "fresh"));
	csv_int(o, rpt_jint(nodes, "stale"));
	csv_int(o, rpt_jint(nodes, "silent"));
	csv_int(o, rpt_jint(json_object_get(d, "runs"), "in_window"));
	csv_int(o, rpt_jint(dem, "requests"));
	csv_int(o, rpt_jint(dem, "jobs"));
	csv_int(o, rpt_jint(kinds, "training"));
	csv_int(o, rpt_jint(kinds, "inference"));
	csv_int(o, rpt_jint(kinds, "compare"));
	csv_num(o, round(asked * 10) / 10);
	csv_num(o, healthy);
	csv_eol(o);
}

/* The weekly table. The column names carry the rules: inference GPU-days
 * assume serving around the clock (24x7); docs/OPERATIONS.md has the rest.
 */
static void csv_capacity(struct csv *o, const json_t *d)
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
		csv_text(o, rpt_jstr(it, "week"));
		csv_text(o, rpt_jstr(it, "week_start"));
		csv_text(o, rpt_jstr(it, "gpu_type"));
		csv_int(o, rpt_jint(it, "training_jobs"));
		csv_jnum(o, it, "training_gpu_days");
		csv_int(o, rpt_jint(it, "inference_jobs"));
		csv_jnum(o, it, "inference_gpu_days");
		csv_jnum(o, it, "asked_gpu_days");
		csv_int(o, rpt_jint(it, "seen_gpus"));
		csv_int(o, rpt_jint(it, "healthy_gpus"));
		csv_jnum(o, it, "healthy_gpu_days");
		csv_eol(o);
	}
}

static void csv_fleet(struct csv *o, const json_t *d)
{
	const json_t *it;
	size_t i;

	csv_header(o, "gpu_type,display_name,in_catalog,gpus,healthy_gpus,"
		      "degraded_gpus,nodes");
	json_array_foreach(
	    json_object_get(json_object_get(d, "fleet"), "items"), i, it)
	{
		const char *k = rpt_jstr(it, "gpu_type");
		const char *disp = json_string_value(
		    json_object_get(json_object_get(d, "catalog"), k));
		long long bad =
		    (long long)json_array_size(json_object_get(it, "degraded"));

		csv_text(o, k);
		csv_text(o, disp ? disp : !strncmp(k, "nvml:", 5) ? k + 5 : k);
		csv_text(o, json_is_true(json_object_get(it, "in_catalog"))
				? "true"
				: "false");
		csv_int(o, rpt_jint(it, "gpus"));
		csv_int(o, rpt_jint(it, "gpus") - bad);
		csv_int(o, bad);
		csv_int(o, rpt_jint(it, "nodes"));
		csv_eol(o);
	}
}

static void csv_measured(struct csv *o, const json_t *d)
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
			int has_v = rpt_jnum(m, "fleet_median", &v);
			const char *basis = rpt_reference(
			    m, rpt_datasheet_first(rpt_jstr(m, "metric")),
			    &ref);

			csv_text(o, rpt_jstr(it, "gpu_type"));
			csv_text(o, rpt_jstr(m, "metric"));
			csv_text(o, rpt_jstr(m, "dtype"));
			csv_text(o, rpt_jstr(m, "unit"));
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
			csv_int(o, rpt_jint(m, "gpus"));
			csv_eol(o);
		}
	}
}

static void csv_degraded(struct csv *o, const json_t *d)
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
					sbuf_put(&reasons, "; ");
				sbuf_put(&reasons, json_string_value(why)
						       ? json_string_value(why)
						       : "");
			}
			csv_text(o, rpt_jstr(it, "gpu_type"));
			csv_text(o, rpt_jstr(g, "hostname"));
			csv_int(o, rpt_jint(g, "index"));
			csv_text(o, rpt_jstr(g, "uuid"));
			csv_text(o, reasons.p && !reasons.oom ? reasons.p : "");
			csv_eol(o);
			sbuf_free(&reasons);
		}
	}
}

static void csv_freshness(struct csv *o, const json_t *d)
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
				sbuf_put(&types, " ");
			sbuf_put(&types, json_string_value(t)
					     ? json_string_value(t)
					     : "");
		}
		csv_text(o, rpt_jstr(x, "hostname"));
		csv_text(o, types.p && !types.oom ? types.p : "");
		csv_int(o, rpt_jint(x, "gpus"));
		csv_text(o, rpt_jstr(x, "last_seen"));
		csv_jnum(o, x, "age_hours");
		csv_text(o, rpt_jstr(x, "class"));
		csv_text(o, rpt_jstr(x, "last_status"));
		csv_int(o, rpt_jint(x, "runs_in_window"));
		csv_eol(o);
		sbuf_free(&types);
	}
}

static void csv_demand(struct csv *o, const json_t *d)
{
	const json_t *s;
	size_t i;

	csv_header(o, "period,kind,gpu_type,jobs,largest_plan_gpus");
	json_array_foreach(
	    json_object_get(json_object_get(d, "demand"), "series"), i, s)
	{
		csv_text(o, rpt_jstr(s, "period"));
		csv_text(o, rpt_jstr(s, "kind"));
		csv_text(o, rpt_jstr(s, "gpu"));
		csv_int(o, rpt_jint(s, "jobs"));
		csv_jnum(o, s, "largest_plan_gpus");
		csv_eol(o);
	}
}

/* What "auto" sizing takes from the fleet per GPU type (the fleet items'
 * calibration, handlers/calib.h calib_fleet_json): one row per value. */
static void csv_calibration(struct csv *o, const json_t *d)
{
	const json_t *it, *v;
	size_t i, j;

	csv_header(o, "gpu_type,field,metric,dtype,unit,value,runs,nodes,"
		      "reference,reference_basis,fraction,implausible_runs,"
		      "degraded_nodes,disputed_nodes,sizing_value,"
		      "capped_at_datasheet,window_days,set_aside");
	json_array_foreach(
	    json_object_get(json_object_get(d, "fleet"), "items"), i, it)
	{
		const json_t *c = json_object_get(it, "calibration");

		json_array_foreach(json_object_get(c, "values"), j, v)
		{
			csv_text(o, rpt_jstr(it, "gpu_type"));
			csv_text(o, rpt_jstr(v, "field"));
			csv_text(o, rpt_jstr(v, "metric"));
			csv_text(o, rpt_jstr(v, "dtype"));
			csv_text(o, rpt_jstr(v, "unit"));
			csv_jnum(o, v, "value");
			csv_int(o, rpt_jint(v, "runs"));
			csv_int(o, rpt_jint(v, "nodes"));
			csv_jnum(o, v, "reference");
			csv_text(o, rpt_jstr(v, "reference_basis"));
			csv_jnum(o, v, "fraction");
			csv_int(o, rpt_jint(v, "implausible_runs"));
			csv_int(o, rpt_jint(v, "degraded_nodes"));
			csv_int(o, rpt_jint(v, "disputed_nodes"));
			csv_jnum(o, v, "sizing_value");
			csv_text(o, json_is_true(json_object_get(
					v, "capped_at_datasheet"))
					? "true"
					: "false");
			csv_int(o, rpt_jint(c, "window_days"));
			csv_text(o, rpt_jstr(v, "set_aside"));
			csv_eol(o);
		}
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
		void (*fn)(struct csv *, const json_t *);
	} writers[] = {
	    {"summary", csv_summary},
	    {"capacity", csv_capacity},
	    {"fleet", csv_fleet},
	    {"measured", csv_measured},
	    {"calibration", csv_calibration},
	    {"degraded", csv_degraded},
	    {"freshness", csv_freshness},
	    {"demand", csv_demand},
	};
	struct sbuf b = {0};
	struct csv o;

	csv_init(&o, &b, 0);

	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(writers[i].name, section)) {
			writers[i].fn(&o, d);
			return sbuf_finish(&b);
		}
	return NULL;
}

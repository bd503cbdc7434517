/* report.h - the data behind GET /v1/reports/capacity.
 *
 * One call gathers what a capacity review looks at: per GPU type the
 * fleet's measured medians beside the datasheet and the degraded GPUs
 * (the same figures as GET /v1/fleet, from store_fleet()), how recently
 * every node's probe reported, and the sizing demand recorded in
 * recommendations. Handlers render it (handlers/report/); nothing here
 * knows HTML or CSV.
 */
#ifndef GPUSIZER_STORAGE_REPORT_H
#define GPUSIZER_STORAGE_REPORT_H

#include <jansson.h>
#include <stdbool.h>

#include "storage/db.h"

struct report_query {
	int window_days;	   /* probe runs and sizing requests: last N */
	double degraded_threshold; /* as store_fleet(), e.g. 0.10; also
				      the weekly healthy GPUs' */
	const char *bucket;	   /* demand periods: "day", "week", "month" */
	int max_nodes;		   /* node rows listed (stalest first), >= 1 */
	bool with_synthetic;	   /* synthetic runs count as healthy GPUs */
};

/* Fills *out (caller json_decref()s) with:
 *
 *   generated_at   RFC 3339 UTC, the database's now()
 *   window_days, bucket
 *   catalog        {gpu name: display name} for every catalog GPU
 *   fleet          store_fleet()'s object: items[] per GPU type with
 *                  gpus, nodes, metrics[] (fleet_median, limit,
 *                  datasheet, efficiency) and degraded[] (reasons)
 *   runs           {in_window, nodes_reporting}: probe runs received
 *   nodes          {total, fresh, stale, silent, listed,
 *                  ages: [{label, class, nodes}] (a histogram of every
 *                  node's last report), items: [{hostname, gpus,
 *                  gpu_types[], last_seen, age_hours, class, last_status,
 *                  runs_in_window}] stalest first, at most max_nodes}.
 *                  class: "fresh" (reported within 36 h: a daily timer
 *                  with slack), "stale" (within 7 days) or "silent".
 *   demand         {requests (answers in the window), jobs (distinct
 *                  requests of a kind, however often asked),
 *                  jobs_by_kind {training, inference, compare},
 *                  periods[] ("YYYY-MM-DD" starts of every bucket in
 *                  the window, oldest first), series[] ({period, gpu,
 *                  kind, jobs, largest_plan_gpus}: each job once, in the
 *                  bucket of its latest answer; a compare job's gpu is
 *                  the comma-joined list it compared), totals[] ({gpu,
 *                  jobs, training, inference, compare, requests,
 *                  largest_plan_gpus}, busiest GPU first: a compare job
 *                  counts for every GPU type it compared)}.
 *   capacity       {weeks[] ({week "2026-W47", start "YYYY-MM-DD"}: the
 *                  ISO weeks of the window), items[] per (week, GPU
 *                  type) with any figure: {week, week_start, gpu_type,
 *                  training_jobs, training_gpu_days, inference_jobs,
 *                  inference_gpu_days, asked_gpu_days, seen_gpus,
 *                  healthy_gpus, healthy_gpu_days}}, computed as
 *                  report.c's statement says.
 *
 * The parts are read by two statements, so they may be a moment apart.
 * Returns STORE_OK, or why not (e filled).
 */
enum store_status store_report_capacity(struct db_pool *pool,
					const struct report_query *q,
					json_t **out, struct store_err *e);

#endif

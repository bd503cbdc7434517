/* week_mirror.h - internal to storage/: the capacity report's weekly
 * table from the daemon's in-memory copy of each node's latest runs a
 * week (issue 18), brought up to date at every read as mirror.h
 * describes.
 */
#ifndef GPUSIZER_STORAGE_WEEK_MIRROR_H
#define GPUSIZER_STORAGE_WEEK_MIRROR_H

#include <stdbool.h>

#include "storage/db.h"

/* The capacity report's weekly table (storage/report.c): per ISO week
 * (weeks start on Monday, UTC) and GPU type key (node_gpus' gpu_type, or
 * 'nvml:' and its name), the distinct GPUs measured in each node's latest
 * ok or partial run of the week received in the last window_days
 * (synthetic runs only when with_synthetic) that node_gpus knows, and
 * those of them not degraded: no v_week value more than threshold under
 * the median of its week, type, metric and dtype (over, for latencies;
 * two or more values, a median above 0), no clock slowdown, no PCIe link
 * below its maximum. Reduced from the daemon's copy of those runs
 * (migrations/0021_week_mirror.sql), brought up to date first; the copy
 * holds the widest window asked for so far. lits: four array literals
 * (the caller frees each): the weeks' Mondays (YYYY-MM-DD), type keys,
 * seen and healthy GPU counts, one element per week and type seen.
 */
enum store_status week_mirror_weeks(struct db_pool *pool, int window_days,
				    double threshold, bool with_synthetic,
				    char *lits[4], struct store_err *e);

#endif

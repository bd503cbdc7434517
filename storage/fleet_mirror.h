/* fleet_mirror.h - internal to storage/: GET /v1/fleet, calibration and
 * the capacity report's weekly table from in-memory copies of their
 * rollups (issue 18): each GPU's inventory and latest rollup row, each
 * run's values per GPU type, and each node's latest runs of each week
 * with their GPUs' values.
 *
 * The copy (node_gpus and rollup_gpu_latest) is brought up to date at
 * every read with the rows written since the previous one
 * (migrations/0017_fleet_mirror.sql: change_xid, fleet_mirror_epoch),
 * then reduced in C: the medians over GPUs and the flags, the part of the
 * answer whose cost grows with the fleet. A small statement shapes the
 * answer's JSON from those figures, with the formatting and ordering of
 * the SQL it replaces, so the answer is the same, exactly.
 */
#ifndef GPUSIZER_STORAGE_FLEET_MIRROR_H
#define GPUSIZER_STORAGE_FLEET_MIRROR_H

#include <jansson.h>
#include <stdbool.h>

#include "storage/db.h"

/* store_fleet() (storage/bench.h). One copy per process, of the pool it
 * was last read through; reads are serialised while it is brought up to
 * date and reduced. *out: new reference, caller json_decref()s it.
 */
enum store_status fleet_mirror_fleet(struct db_pool *pool, int window_days,
				     double threshold, bool with_synthetic,
				     json_t **out, struct store_err *e);

/* Calibration's reduction (storage/bench.c store_fleet_medians()) over
 * the daemon's copy of rollup_type_runs (migrations/0018): for GPU type
 * gpu_type and the runs measured in the last window_days (synthetic ones
 * only when with_synthetic), fn is called once per metric and dtype with
 * the median (percentile_cont) of the runs' values within [lo, hi] and
 * their count; *runs is the number of runs with a value there. The copy
 * holds the widest window asked for so far; fn runs under its lock.
 */
enum store_status fleet_mirror_type_medians(
    struct db_pool *pool, const char *gpu_type, int window_days,
    bool with_synthetic, double lo, double hi,
    void (*fn)(void *ctx, const char *metric, const char *dtype, double median,
	       long long n),
    void *ctx, long long *runs, struct store_err *e);

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
enum store_status fleet_mirror_weeks(struct db_pool *pool, int window_days,
				     double threshold, bool with_synthetic,
				     char *lits[4], struct store_err *e);

#endif

/* calib_mirror.h - internal to storage/: calibration's medians per GPU
 * type from the daemon's in-memory copy of rollup_type_runs (issue 18),
 * brought up to date at every read as mirror.h describes.
 */
#ifndef GPUSIZER_STORAGE_CALIB_MIRROR_H
#define GPUSIZER_STORAGE_CALIB_MIRROR_H

#include <stdbool.h>

#include "storage/db.h"

/* Calibration's reduction (storage/bench.c store_fleet_medians()) over
 * the daemon's copy of rollup_type_runs (migrations/0018): for GPU type
 * gpu_type and the runs measured in the last window_days (synthetic ones
 * only when with_synthetic), fn is called once per metric and dtype with
 * the median (percentile_cont) of the runs' values within [lo, hi] and
 * their count; *runs is the number of runs with a value there. The copy
 * holds the widest window asked for so far; fn runs under its lock.
 */
enum store_status calib_mirror_type_medians(
    struct db_pool *pool, const char *gpu_type, int window_days,
    bool with_synthetic, double lo, double hi,
    void (*fn)(void *ctx, const char *metric, const char *dtype, double median,
	       long long n),
    void *ctx, long long *runs, struct store_err *e);

#endif

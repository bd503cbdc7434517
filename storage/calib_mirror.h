/* calib_mirror.h - internal to storage/: calibration's medians per GPU
 * type from the daemon's in-memory copy of rollup_type_runs (issue 18),
 * brought up to date at every read as mirror.h describes.
 */
#ifndef GPUSIZER_STORAGE_CALIB_MIRROR_H
#define GPUSIZER_STORAGE_CALIB_MIRROR_H

#include <stdbool.h>

#include "storage/bench.h"
#include "storage/db.h"

/* Calibration's reduction (storage/bench.c store_fleet_medians()) over
 * the daemon's copy of rollup_type_runs (migrations/0018): for GPU type
 * gpu_type and the runs measured in the last window_days (synthetic ones
 * only when with_synthetic), fn is called once per metric and dtype with
 * the runs' values within [lo, hi], each with its node (the run's host
 * name, 0037; a run without one is a node of its own), in v (n of them,
 * fn may reorder them); *runs is the number of runs with a value there.
 * The copy holds the widest window asked for so far; fn runs under its
 * lock.
 */
enum store_status calib_mirror_type_medians(
    struct db_pool *pool, const char *gpu_type, int window_days,
    bool with_synthetic, double lo, double hi,
    void (*fn)(void *ctx, const char *metric, const char *dtype,
	       struct fleet_run_value *v, size_t n),
    void *ctx, long long *runs, struct store_err *e);

#endif

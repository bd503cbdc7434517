/* fleet_mirror.h - internal to storage/: GET /v1/fleet from an in-memory
 * copy of its rollups (issue 18): each GPU's inventory and latest rollup
 * row. Calibration (calib_mirror.h) and the capacity report's weekly
 * table (week_mirror.h) keep their copies the same way (mirror.h).
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

#endif

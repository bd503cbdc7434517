/* calib.h - calibration: the fleet's measured medians into engine hardware.
 *
 * The sizing engine prefers what the cluster's own GPUs measured (probe
 * runs of the last CALIB_WINDOW_DAYS days, median over runs) to datasheet
 * x default efficiency, and says which it used (docs/MODEL.md §5,
 * issue 5).
 */
#ifndef GPUSIZER_HANDLERS_CALIB_H
#define GPUSIZER_HANDLERS_CALIB_H

#include "engine/hw.h"
#include "handlers/handler.h"
#include "handlers/sizing.h"

#define CALIB_WINDOW_DAYS 30

/* Fills hw's measured fields for GPU type gpu per mode. CALIB_MEASURED
 * with no measurements is a 422 naming field. Returns 0 or -1 (res set).
 */
int calib_apply(struct app *app, const char *gpu, enum calib_mode mode,
		struct hw_spec *hw, struct calib_info *ci, const char *field,
		struct response *res);

#endif

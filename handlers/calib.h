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
/* A fleet median above this multiple of the GPU type's datasheet figure
 * (dense tensor peak per dtype, HBM bandwidth) is not used. Datasheet
 * tensor peaks are quoted at the boost clock and a part runs at most at
 * its maximum clock: H100 SXM's 989.4 TFLOP/s BF16 is 132 SMs x 4,096
 * FLOP/clock at 1,830 MHz, its maximum 1,980 MHz allows 1.08x; our own
 * H200 probe ran 8192^3 BF16 at 805 of 989 (docs/BENCHMARKS.md). 1.10
 * leaves that headroom and nothing a real part reaches. */
#define CALIB_PLAUSIBLE_MAX_RATIO 1.10
/* ... and below this multiple. A part at the lowest power limit it
 * accepts still keeps most of its tensor rate (H100 SXM at 200 of 700 W:
 * 0.61 by the power slope of docs/MODEL.md §5), and the probe's HBM copy,
 * which counts bytes once, reads ~0.45 of the datasheet bandwidth; a
 * tenth is a broken node, a report filed under the wrong type or a wrong
 * unit, and one such report would otherwise set every "auto" sizing of
 * the type (a 1e-9 TFLOP/s median made a 1e11-day plan). */
#define CALIB_PLAUSIBLE_MIN_RATIO 0.10
/* The all-reduce bus bandwidth that calibrates intra_node_gbps is held to
 * [CALIB_PLAUSIBLE_MIN_RATIO, CALIB_BUSBW_MAX_RATIO] x the catalog's
 * one-way link rate (review s17c F1: a report at 1e-9 GB/s, which
 * ingestion takes, made every "auto" H200 answer 9.4e12 ms). nccl-tests'
 * busbw is algbw x 2(n-1)/n: a ring moves 2(n-1)/n of the buffer over
 * each GPU's link, so busbw stays under the link's one-way rate; an
 * in-switch reduction (NVLink SHARP, NVLS) sends the buffer once and
 * receives it once, so algbw reaches the link rate at most and busbw
 * 2(n-1)/n < 2 times it (H100 NVLS: ~480 GB/s against 450). A tenth of
 * the link is a node whose NVLink fabric is down (NCCL then goes through
 * PCIe: ~20 of 450 GB/s) or a wrong unit (MB/s as GB/s), as for GEMMs. */
#define CALIB_BUSBW_MAX_RATIO 2.0
/* ... and that is for in-switch reduction, which NVSwitch has from its
 * third generation (HGX H100/H200/H800, B200, GB200: NVLink and compute
 * capability 9.0 or later). A ring (A100's NVSwitch, PCIe, xGMI, a
 * bridged pair, which the catalog lists as pcie) keeps busbw under the
 * one-way rate, so there the band stops at this multiple, the
 * plausible-max of the other figures (review s19c F7: an A100 node
 * reading H100's 481 GB/s on its 300 GB/s link calibrated every TP
 * all-reduce 60 % faster than the hardware goes). */
#define CALIB_BUSBW_RING_MAX_RATIO CALIB_PLAUSIBLE_MAX_RATIO
/* A node whose value is more than this share under the median of its
 * type's nodes is left out of calibration, as GET /v1/fleet calls a GPU
 * degraded when one of its metrics is that far under its type's median
 * (its degraded_threshold): one broken node beside a healthy one had
 * halved its type's GEMM and HBM rates (review s17c F2). tests/api/
 * fleet_lib.sh reads the value here. */
#define DEGRADED_THRESHOLD 0.10

/* True when a median is outside [CALIB_PLAUSIBLE_MIN_RATIO,
 * CALIB_PLAUSIBLE_MAX_RATIO] x its datasheet figure (datasheet > 0):
 * calibration leaves it out, the fleet view marks it. */
bool calib_implausible(double median, double datasheet);

/* Fills hw's measured fields for GPU type gpu per mode from the fleet's
 * runs (storage/bench.h fleet_calib_value): runs outside the plausible
 * band of hw's datasheet figures are left out (listed in ci->ignored), then
 * each node's runs give one value, and nodes the degraded rule flags are
 * left out (ci->degraded). CALIB_MEASURED with no usable measurement is a
 * 422 naming field. Returns 0 or -1 (res set).
 */
int calib_apply(struct app *app, const char *gpu, enum calib_mode mode,
		struct hw_spec *hw, struct calib_info *ci, const char *field,
		const char *calib_field, struct response *res);

/* Drops what calibration left out of metric ("hbm_gbps") from ci: the
 * request states that rate itself. */
void calib_forget(struct calib_info *ci, const char *metric);

/* CALIB_MEASURED promises measured rates: once the job's GEMM dtype is
 * known, a GPU type whose probes measured (plausibly) some other dtype or
 * metric but not that GEMM is the same 422 as one never measured, naming
 * field (the request's "calibration", under its job in a compare). Returns
 * 0, or -1 with res set. */
int calib_require_gemm(const struct calib_info *ci, const struct hw_spec *hw,
		       enum eng_dtype dtype, const char *gpu, const char *field,
		       struct response *res);

/* What "auto" calibration takes for catalog GPU type gpu now (hw: its
 * datasheet figures, sizing_catalog_hw): each value it would use beside
 * the figure its band is set from, and the runs and nodes it leaves out
 * (openapi FleetCalibration). *out owned by the caller. Returns 0, or -1
 * with e set. */
int calib_fleet_json(struct app *app, const char *gpu, const struct hw_spec *hw,
		     json_t **out, struct store_err *e);

/* Sets `calibration` on each item of a fleet view (store_fleet's shape):
 * calib_fleet_json for catalog types, null for the others. Returns 0, or
 * -1 with e set. */
int calib_fleet_annotate(struct app *app, json_t *fleet, struct store_err *e);

#endif

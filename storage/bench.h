/* bench.h - probe runs: ingestion, queries, fleet view, calibration.
 *
 * A report (docs/PROBE.md "Report format") is stored in one statement:
 * the run, its node, GPUs and every result, idempotent by run_id.
 */
#ifndef GPUSIZER_STORAGE_BENCH_H
#define GPUSIZER_STORAGE_BENCH_H

#include <jansson.h>

#include "storage/db.h"

/* Fleet medians for one GPU type, index = engine dtype order (fp64, fp32,
 * tf32, fp16, bf16, fp8, int8). samples = probe runs contributing.
 */
#define FLEET_DTYPES 7
struct fleet_value {
	double value;
	int samples;
};
struct fleet_medians {
	struct fleet_value gemm_tflops[FLEET_DTYPES];
	struct fleet_value hbm_gbps;             /* streaming read rate */
	struct fleet_value allreduce_busbw_gbps; /* NCCL, intra-node */
	struct fleet_value p2p_gbps;             /* one direction */
	int runs;
};

/* Medians over the runs of the last window_days for gpu_type. */
enum store_status store_fleet_medians(struct db_pool *pool,
				      const char *gpu_type, int window_days,
				      struct fleet_medians *out,
				      struct store_err *e);

#endif

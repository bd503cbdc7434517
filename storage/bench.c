/* bench.c - probe runs in SQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/bench.h"
#include "storage/pgconn.h"

/* Same order as the engine's dtypes (engine/hw.h). */
static const char *const dtype_names[FLEET_DTYPES] = {
	"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};

enum store_status store_fleet_medians(struct db_pool *pool,
				      const char *gpu_type, int window_days,
				      struct fleet_medians *out,
				      struct store_err *e)
{
	char days[16];
	const char *params[2] = {gpu_type, days};
	PGresult *r = NULL;

	memset(out, 0, sizeof(*out));
	snprintf(days, sizeof(days), "%d", window_days);
	/* One value per run first (the run's median over its GPUs), then the
	 * median over runs: a node with 8 GPUs counts once per run.
	 */
	if (db_exec(pool,
		    "WITH per_run AS ("
		    " SELECT metric, coalesce(dtype, '') AS dtype, run_id,"
		    "  percentile_cont(0.5) WITHIN GROUP (ORDER BY median) AS v"
		    " FROM benchmark_results"
		    " WHERE gpu_type = $1 AND status = 'ok' AND median > 0"
		    "  AND measured_at > now() - make_interval(days => $2::int)"
		    "  AND metric IN ('gemm_tflops', 'hbm_read_gbps',"
		    "   'nccl_allreduce_busbw_gbps', 'p2p_unidir_gbps')"
		    " GROUP BY 1, 2, 3)"
		    " SELECT metric, dtype,"
		    "  percentile_cont(0.5) WITHIN GROUP (ORDER BY v),"
		    "  count(*), (SELECT count(DISTINCT run_id) FROM per_run)"
		    " FROM per_run GROUP BY 1, 2",
		    2, params, 1, &r, e) != STORE_OK)
		return e->status;
	for (int i = 0; i < PQntuples(r); i++) {
		const char *metric = PQgetvalue(r, i, 0);
		const char *dtype = PQgetvalue(r, i, 1);
		struct fleet_value v = {atof(PQgetvalue(r, i, 2)),
					atoi(PQgetvalue(r, i, 3))};
		out->runs = atoi(PQgetvalue(r, i, 4));
		if (!strcmp(metric, "gemm_tflops")) {
			for (int t = 0; t < FLEET_DTYPES; t++)
				if (!strcmp(dtype, dtype_names[t]))
					out->gemm_tflops[t] = v;
		} else if (!strcmp(metric, "hbm_read_gbps")) {
			out->hbm_gbps = v;
		} else if (!strcmp(metric, "nccl_allreduce_busbw_gbps")) {
			out->allreduce_busbw_gbps = v;
		} else if (!strcmp(metric, "p2p_unidir_gbps")) {
			out->p2p_gbps = v;
		}
	}
	PQclear(r);
	return STORE_OK;
}

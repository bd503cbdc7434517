/* bench.h - probe runs: ingestion, queries, fleet view, calibration.
 *
 * A report (docs/PROBE.md "Report format") is stored in one statement:
 * the run, its node, GPUs and every result, idempotent by run_id.
 */
#ifndef GPUSIZER_STORAGE_BENCH_H
#define GPUSIZER_STORAGE_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "storage/db.h"

/* A result's statistics (median, max, mean, p10, p90, cv, limit,
 * efficiency) are 0 or between BENCH_STAT_MIN and BENCH_STAT_MAX in
 * magnitude. The floor is a billionth of the unit: 1 kFLOP/s, 1 B/s,
 * 1 fs, a ratio of one in a billion; no GPU measurement comes near it, and
 * its reciprocal stays far inside a double, where a GEMM median of 1e-310
 * made every plan infinitely slow and answers NaN (issue 15). Validation
 * refuses others; the fleet and calibration reads skip any stored
 * outside [BENCH_STAT_MIN, BENCH_STAT_MAX] (and NaN, Infinity).
 */
#define BENCH_STAT_MIN 1e-9
#define BENCH_STAT_MAX 1e15

/* Calibration's figures for one GPU type, index = engine dtype order
 * (fp64, fp32, tf32, fp16, bf16, fp8, int8): per metric and dtype, the
 * statistic fleet_calib_value() takes over the window's runs.
 */
#define FLEET_DTYPES 7
struct fleet_value {
	double value;	 /* the median over the nodes kept */
	int samples;	 /* probe runs behind it (the kept nodes' runs) */
	int nodes;	 /* nodes kept */
	int implausible; /* runs left out: outside the band */
	double implausible_median; /* their median (0 when none) */
	int degraded;		   /* nodes left out as degraded */
	double degraded_median;	   /* their median (0 when none) */
	int disputed;		   /* nodes left out in an even split */
	double disputed_median;	   /* their median (0 when none) */
};
struct fleet_medians {
	struct fleet_value gemm_tflops[FLEET_DTYPES];
	/* the plan GEMMs run --sustain-s on every GPU of the node (0022) */
	struct fleet_value gemm_sustained_tflops[FLEET_DTYPES];
	struct fleet_value hbm_gbps;		 /* streaming read rate */
	struct fleet_value allreduce_busbw_gbps; /* NCCL, intra-node */
	struct fleet_value p2p_gbps;		 /* one direction */
	int runs;
};

/* The values a working GPU of the type can measure, [lo, hi]; hi 0: no
 * band (no datasheet figure to hold it to). The caller derives them from
 * the catalog (handlers/calib.c). */
struct fleet_band {
	double lo, hi;
	/* what a healthy GPU of the type is expected to measure (datasheet
	 * x the engine's default efficiency; 0: not known): the arbiter when
	 * the nodes split in two halves (fleet_calib_value, 3.) */
	double expect;
};
struct fleet_bands {
	struct fleet_band gemm_tflops[FLEET_DTYPES];
	struct fleet_band gemm_sustained_tflops[FLEET_DTYPES];
	struct fleet_band hbm_gbps, allreduce_busbw_gbps, p2p_gbps;
	/* a node more than this share under the median of the nodes is left
	 * out, as GET /v1/fleet calls a GPU degraded (0.10) */
	double degraded_threshold;
};

/* One run's value of a metric and dtype, and the node it ran on: runs of
 * one node share node; a run whose node is not known has one of its own.
 */
struct fleet_run_value {
	long long node;
	double v;
};

/* Calibration's statistic over the n run values of one metric and dtype
 * (review s17c F1, F2; docs/MODEL.md §5), v reordered:
 *  1. a run's value outside band is left out (counted, with their median,
 *     in implausible): no working GPU of the type measures it;
 *  2. each node's remaining runs give one value, their median: a node
 *     that posts more runs does not weigh more;
 *  3. a node more than band.degraded_threshold under the median of the
 *     nodes is left out (counted in degraded): GET /v1/fleet calls its
 *     GPUs degraded by the same rule, and one such node beside one
 *     healthy one had halved its type's rates (the median of two is
 *     their mean). When those are half the nodes, no majority says
 *     which half is broken (with an even count the median is the mean
 *     of the two halves' nearest nodes, so a half reading high put the
 *     other under it: review s19c F2); the half farther from band.expect
 *     (in ratio) is left out, counted in degraded when it is the lower
 *     half and in disputed when it is the upper one;
 *  4. the value is the median of the nodes kept.
 * out->samples 0: nothing usable. Returns 0, or -1 out of memory.
 */
int fleet_calib_value(struct fleet_run_value *v, size_t n,
		      struct fleet_band band, double degraded_threshold,
		      struct fleet_value *out);

/* The statistic over the runs of the last window_days for gpu_type,
 * per metric and dtype, each held to its band in bands; kept 30 s per type
 * and bands (cleared when this process stores a new run). Runs whose
 * report says "synthetic": true (fixtures, make demo) count only when
 * with_synthetic is set (issue 14: a fleet's figures are measurements).
 */
/* How long store_fleet_medians() keeps a GPU type's medians (default 30 s;
 * 0: read them for every call). Set before serving. */
void store_set_calibration_cache_s(int seconds);

enum store_status
store_fleet_medians(struct db_pool *pool, const char *gpu_type, int window_days,
		    bool with_synthetic, const struct fleet_bands *bands,
		    struct fleet_medians *out, struct store_err *e);

/* Outcome of storing one report. */
struct bench_ingest {
	int created;	   /* 1: stored now; 0: run_id already stored */
	int same_report;   /* for a replay: the stored report is identical */
	int gpus, results; /* rows stored for this run */
	char hostname[256];
	char status[32];
	char received_at[64];
};

/* A validated report (docs/PROBE.md "Report format") taken apart for
 * storage. Strings are as the report has them, decoded (NULL: absent or
 * null); numbers as parsed (absent or null: -1 for the integers, which
 * are never negative, and NAN for the statistics, which are finite).
 */
struct bench_result {
	const char *gpu_uuid, *metric, *dtype, *method, *unit, *status;
	long long peer_index, size_bytes, n;
	double median, max, mean, p10, p90, cv, limit, efficiency;
	const char *const *clock_event_reasons; /* from telemetry */
	int n_clock_event_reasons;
};
struct bench_report {
	const char *text; /* the whole report as posted (JSON) */
	const char *run_id, *hostname, *status, *mode, *started_at,
	    *finished_at;
	const char *node_json, *gpus_json; /* JSON text of node and gpus */
	const char *cpu_model, *driver_version, *cuda_driver_version;
	/* node_json's gpu_uuids is the node's whole GPU inventory, checked
	 * (false: the report gives none, and no GPU is marked removed) */
	bool has_gpu_uuids;
	bool synthetic; /* the report says "synthetic": true */
	/* some gpus[i] names a "gpu_type" (store_bench_type_conflict) */
	bool gpu_type_given;
	const struct bench_result *results;
	int n_results;
};

/* A GPU of a report that names the catalog type of another part: the
 * first entry of gpus_json (a report's gpus[] as JSON text) whose
 * "gpu_type" is a catalog type other than the one its NVML "name" maps to
 * (gpu_name_map). STORE_OK with *index (its place in gpus[]), claimed
 * (its gpu_type), named (the type its name maps to) and name (the NVML
 * name) filled, each cut to its length; STORE_NOT_FOUND when there is
 * none; the storage failure otherwise. Review s17c F5: one H100 carrying
 * gpu_type b200-sxm-180gb made every B200 answer "measured" at H100
 * rates. */
struct bench_type_conflict {
	int index;
	char claimed[80], named[80], name[160];
};
enum store_status store_bench_type_conflict(struct db_pool *pool,
					    const char *gpus_json,
					    struct bench_type_conflict *out,
					    struct store_err *e);
/* Stores a report in one statement: node upsert, GPU inventory, run,
 * results; nothing if run_id exists (then *out describes the stored run,
 * and same_report says whether the stored report equals this one as JSON:
 * a replay, not a different report reusing a run_id).
 */
enum store_status store_bench_ingest(struct db_pool *pool,
				     const struct bench_report *rep,
				     struct bench_ingest *out,
				     struct store_err *e);
/* One run: {run_id, hostname, status, mode, started_at, finished_at,
 * received_at, report} (the report as posted). NOT_FOUND when absent.
 */
enum store_status store_bench_get(struct db_pool *pool, const char *run_id,
				  json_t **out, struct store_err *e);

struct bench_filter {
	const char *hostname, *gpu_type, *metric, *dtype, *since, *run_id;
	const char *cursor; /* from a previous page */
	int limit;
};
/* Result rows stored as rows (runs stored before migration 0020, or by a
 * daemon of an earlier release), newest first: at most rows_max objects
 * with id < before_id matching f (f->cursor is not read), as an array
 * (*items, new reference).
 */
enum store_status store_bench_list(struct db_pool *pool,
				   const struct bench_filter *f,
				   long long before_id, int rows_max,
				   json_t **items, struct store_err *e);

/* A compact run (migrations/0020: the report stored zstd-compressed, no
 * result rows) as GET /v1/benchmarks lists its results: the i-th result
 * of report (0-based) has id first_result_id + i. All borrowed for the
 * call only.
 */
struct bench_stored_run {
	const char *run_id, *hostname;
	long long first_result_id;
	json_t *measured_at;   /* the results' measured_at, as a JSON value */
	json_t *types;	       /* {gpu_uuid: gpu_type or null} as stored */
	const char *node_type; /* of results without a GPU, or NULL */
	const char *report;    /* the report as posted, NUL-terminated */
	size_t report_len;
};
/* Nonzero stops the walk. */
typedef int (*bench_run_fn)(void *ctx, const struct bench_stored_run *run);

/* Calls fn for each compact run, newest (highest first_result_id) first,
 * with first_result_id < before_id that f's run-level filters (hostname,
 * since, run_id; gpu_type, metric, dtype among its results) let through,
 * at most runs_max; *runs = runs given, *last_id = the last one's
 * first_result_id (untouched when none).
 */
enum store_status store_bench_runs_each(struct db_pool *pool,
					const struct bench_filter *f,
					long long before_id, int runs_max,
					bench_run_fn fn, void *ctx,
					long long *last_id, int *runs,
					struct store_err *e);

/* Nodes seen by probes ({items}), or one node with its GPUs. */
enum store_status store_nodes_list(struct db_pool *pool, json_t **out,
				   struct store_err *e);
enum store_status store_node_get(struct db_pool *pool, const char *hostname,
				 json_t **out, struct store_err *e);

/* The longest window the fleet view and the capacity report take: a year,
 * leap day included. What they cost grows with the GPUs seen in the window
 * (one rollup row each, migrations/0014_fleet_rollups.sql); older runs are
 * history, kept for as long as the operator's retention says
 * (docs/OPERATIONS.md, "Retention").
 */
#define FLEET_MAX_WINDOW_DAYS 366

/* Per GPU type: counts, fleet medians beside limits and datasheet, and
 * degraded GPUs with reasons (window_days of runs, 1 to
 * FLEET_MAX_WINDOW_DAYS; threshold = fraction under the type's median that
 * flags a GPU, e.g. 0.10).
 */
enum store_status store_fleet(struct db_pool *pool, int window_days,
			      double threshold, bool with_synthetic,
			      json_t **out, struct store_err *e);

#endif

/* The probe's report: in-memory form and its JSON encoding (plain C).
 * Checking an encoded report before it is posted is probe/report_check.h.
 *
 * docs/PROBE.md "Report format" is the contract; probe/report.schema.json
 * is its JSON Schema. Nullable numbers use a sentinel in memory: NaN for
 * doubles, -1 for counts, indexes and sizes; "" for strings.
 */
#ifndef GPUSIZER_PROBE_REPORT_H
#define GPUSIZER_PROBE_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "contract.h"
#include "stats.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PROBE_SCHEMA_VERSION 1
#ifndef PROBE_VERSION
#define PROBE_VERSION "0.1.0"
#endif

struct probe_telemetry {
	int valid;		    /* 0: emitted as null */
	double sm_clock_mhz;	    /* median of samples */
	double mem_clock_mhz;	    /* median of samples */
	double power_w;		    /* mean of samples, per GPU */
	double temperature_c;	    /* max of samples */
	unsigned long long reasons; /* OR of clock-event-reason masks */
	int samples;		    /* number of NVML samples */
	int pcie_gen;		    /* during the measurement, -1 unknown */
	int pcie_width;
};

struct probe_result {
	int gpu_index;	   /* -1: node-wide (null) */
	char gpu_uuid[96]; /* "" when node-wide */
	int peer_index;	   /* -1: none */
	char peer_uuid[96];
	char metric[48];
	char dtype[16];	 /* "" -> null */
	char method[16]; /* "cublaslt", "sm", "ce", "memcpy", "nccl" */
	char bytes_convention[12]; /* "once", "sum", "" -> null */
	int64_t size_bytes;	   /* -1 -> null */
	int64_t m, n, k;	   /* m <= 0 -> shape null */
	int nranks;		   /* NCCL ranks, -1 -> null */
	int concurrent; /* 1: other GPUs were measured at the same time */
	char unit[12];
	enum probe_result_status status;
	char reason[256]; /* for skipped/failed, "" -> null */
	struct probe_stats stats;
	double *samples; /* owned; NULL -> [] */
	size_t n_samples;
	double limit; /* NaN -> null */
	char limit_basis[24];
	char limit_source[128];
	double limit_clock_adjusted;
	char note[160];
	struct probe_telemetry telemetry;
	int partial;	 /* in memory only: a skip/failure that makes the
			    run "partial" (not merely not applicable) */
	int lib_missing; /* in memory only: skipped for a missing library */
};

struct probe_gpu {
	int index;
	char uuid[96];
	char name[256];
	char pci_bus_id[32];   /* "0000:5d:00.0" */
	char pci_device_id[8]; /* "0x2330", "" -> null */
	char compute_capability[8];
	int sm_count;
	int64_t memory_total_bytes;
	int pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max;
	double pcie_limit_gbps;
	int nvlink_active_links; /* -1 unknown */
	int nvlink_version;
	double nvlink_per_link_gbps;
	double nvlink_limit_gbps;
	int numa_node;	 /* -1 unknown / none */
	int ecc_enabled; /* -1 unknown, 0, 1 */
	int mig_mode;	 /* -1 unknown, 0, 1 */
	double power_limit_w;
	double sm_clock_max_mhz;
	int compute_processes; /* other compute processes at start, -1 */
};

struct probe_node {
	char hostname[256];
	char cpu_model[256];
	char driver_version[64]; /* NVML, "" -> null */
	int cuda_driver_version; /* e.g. 13000, -1 -> null */
	int cuda_runtime_version;
	int cublaslt_version;
	int nvml_available;
	int nccl_version; /* e.g. 22703, -1 -> null */
	int gpu_count;
	/* node.gpu_uuids: every GPU NVML enumerates, in NVML index order,
	 * measured or not (probe_gpu_uuids_decide). gpu_uuids_known 0 ->
	 * null (the zeroed report says nothing of the node's GPUs); 1 with
	 * n_gpu_uuids 0 -> []. gpu_uuids is owned (probe_report_free). */
	int gpu_uuids_known;
	size_t n_gpu_uuids;
	char (*gpu_uuids)[PROBE_GPU_UUID_MAX + 1];
};

struct probe_report {
	char run_id[40];
	enum probe_run_status status;
	char mode[16];	 /* "quick", "full", "custom" */
	char sizing[16]; /* "quick", "full" */
	char only[128];	 /* comma list, "" -> null */
	char started_at[40];
	char finished_at[40];
	char probe_version[64];
	int synthetic;
	char error_code[64]; /* "" -> error null */
	char error_message[512];
	struct probe_node node;
	struct probe_gpu *gpus;
	size_t n_gpus;
	struct probe_result *results;
	size_t n_results, cap_results;
};

/* Zero/sentinel initialisation. */
void probe_report_init(struct probe_report *r);
void probe_report_free(struct probe_report *r);
void probe_result_init(struct probe_result *res);
void probe_gpu_init(struct probe_gpu *g, int index);

/* Appends a copy of *res (ownership of res->samples moves to the report).
 * Returns a pointer to the stored result or NULL on allocation failure. */
struct probe_result *probe_report_add(struct probe_report *r,
				      struct probe_result *res);

/* Sets samples (copied), stats, efficiency inputs. Returns 0, or -1 when
 * there are none or more than PROBE_N_MAX, one is not finite, memory runs
 * out, or the median is not 0 or PROBE_NUMBER_MIN to PROBE_NUMBER_MAX in
 * magnitude (the server accepts no such figure; callers mark the result
 * failed). */
int probe_result_set_samples(struct probe_result *res, const double *s,
			     size_t n);

/* Sets status "skipped"/"failed" with a reason (printf-style). */
void probe_result_skip(struct probe_result *res, int partial, const char *fmt,
		       ...) __attribute__((format(printf, 3, 4)));
void probe_result_fail(struct probe_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Derives the report status from its results: "ok" when none is partial
 * or failed, "failed" when no result is ok and one failed or is partial,
 * else "partial". Leaves "no_device" alone. */
void probe_report_finalize_status(struct probe_report *r);

/* Encodes the report; returns a new reference or NULL. What the probe
 * gathered is made postable here rather than refused later: the host name
 * goes through probe_hostname_sanitize, a GPU name is cut to
 * PROBE_GPU_NAME_MAX bytes (never inside a UTF-8 sequence), a GPU without a
 * UUID or with one already listed is left out of gpus[] (a result's gpu_uuid
 * naming no listed GPU becomes null), at most PROBE_MAX_GPUS GPUs and
 * PROBE_MAX_RESULTS results are written, statistics that are not 0 or
 * PROBE_NUMBER_MIN to PROBE_NUMBER_MAX in magnitude, peer_index over
 * PROBE_MAX_GPUS and size_bytes over
 * PROBE_SIZE_BYTES_MAX become null, an "ok" result whose median or n cannot
 * be reported is written as "failed", a string that is not valid UTF-8
 * becomes null, and node.gpu_uuids is null unless it is a list the checker
 * takes (at most PROBE_MAX_GPUS UUIDs of 1..PROBE_GPU_UUID_MAX bytes of
 * shown text, none twice, every UUID written to gpus[] among them).
 * docs/PROBE.md "Sanitising". */
json_t *probe_report_to_json(const struct probe_report *r);

/* Compact JSON text (caller frees), or NULL. */
char *probe_report_dumps(const struct probe_report *r);

/* Writes in as a host name the server accepts: every byte outside
 * [A-Za-z0-9._-] becomes '-', at most PROBE_HOSTNAME_MAX bytes are kept,
 * and an empty name becomes "unknown". out must hold outlen >= 8 bytes. */
void probe_hostname_sanitize(const char *in, char *out, size_t outlen);

/* 1 when metric is one of the documented metric names. */
int probe_metric_known(const char *metric);
/* The documented metric names (the server's list), *n of them. */
const char *const *probe_metric_names(size_t *n);

#ifdef __cplusplus
}
#endif

#endif

/* What a probe report may say and the service accepts (POST
 * /v1/benchmarks): the one copy of the vocabulary the probe (probe/report.c,
 * probe/report_check.c, probe/check.c) and the service (handlers/benchmarks.c)
 * both read. Plain macros and the self-contained inline rules on shown text,
 * no types: the service includes this file and nothing else of the probe.
 *
 * docs/PROBE.md "Report format" documents it; openapi.yaml and
 * probe/report.schema.json repeat the metric names as enums, and
 * tests/unit/test_probe_check.c fails when either differs from PROBE_METRICS.
 */
#ifndef GPUSIZER_PROBE_CONTRACT_H
#define GPUSIZER_PROBE_CONTRACT_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* What POST /v1/benchmarks accepts (handlers/benchmarks.c validate,
 * handlers/jsonv.c, handlers/util.c); the checker applies every one of
 * these and the encoder never writes a value outside them. A statistic is
 * 0 or PROBE_NUMBER_MIN to PROBE_NUMBER_MAX in magnitude: the server's
 * floor (storage/bench.h) keeps subnormals such as 1e-310, which made
 * sizing answers NaN (issue 15), out of the fleet medians. */
#define PROBE_MAX_GPUS	   256	 /* entries of gpus[]; also max index */
#define PROBE_MAX_RESULTS  20000 /* entries of results[] */
#define PROBE_HOSTNAME_MAX 253	 /* [A-Za-z0-9._-]{1,253} */
#define PROBE_GPU_NAME_MAX 128	 /* bytes */
#define PROBE_GPU_UUID_MAX 96	 /* bytes */
#define PROBE_UNIT_MAX	   16
#define PROBE_DTYPE_MAX	   16
#define PROBE_METHOD_MAX   32
#define PROBE_MODE_MAX	   32
#define PROBE_TIME_MAX	   64 /* started_at, finished_at */
/* node.gpu_uuids, the node's whole GPU inventory (every GPU NVML
 * enumerates, measured or not; docs/PROBE.md "node"): null or absent, or
 * an array of at most PROBE_MAX_GPUS strings of 1..PROBE_GPU_UUID_MAX
 * bytes, none twice, holding every gpus[].uuid. The server marks a GPU of
 * the host that a non-null list leaves out as removed. The texts both
 * sides answer, in the order they are checked (the second takes the
 * UUID, the third gpus[]'s position, a size_t). */
#define PROBE_GPU_UUIDS_ERR_TYPE                                               \
	"node.gpu_uuids: must be null or a list of 1 to 256 GPU UUIDs "        \
	"(strings)"
#define PROBE_GPU_UUIDS_ERR_ENTRY                                              \
	"node.gpu_uuids[%zu]: must be a GPU UUID, a string of 1 to 96 bytes"
#define PROBE_GPU_UUIDS_ERR_NO_NVML                                            \
	"node.gpu_uuids: is NVML's list of the node's GPUs: null when "        \
	"nvml_available is false or the status is no_device"
#define PROBE_GPU_UUIDS_ERR_TWICE "node.gpu_uuids: %s appears twice"
#define PROBE_GPU_UUIDS_ERR_MISSING                                            \
	"node.gpu_uuids: must list every gpus[].uuid (gpus[%zu].uuid is "      \
	"missing)"
/* How far after the server's clock started_at and finished_at may be: a
 * run dated later would stay its GPUs' latest until then (the service
 * refuses it; the probe cannot know the server's clock) */
#define PROBE_AHEAD_S 86400
/* The earliest started_at and finished_at taken (2000-01-01T00:00:00Z,
 * seconds since the epoch): before any probe ran; a node whose clock
 * reset to 1970 wrote it. Such a run was shown "fresh" and healthy by the
 * capacity report (which dates by arrival) while its measurements never
 * reached the fleet figures or calibration (which date by the run;
 * review s19c F4). */
#define PROBE_EARLIEST_S     946684800.0
#define PROBE_NUMBER_MAX     1e15 /* |median| .. |efficiency| */
#define PROBE_NUMBER_MIN     1e-9 /* ... when not 0 (BENCH_STAT_MIN) */
#define PROBE_N_MAX	     1000000
#define PROBE_SIZE_BYTES_MAX (1LL << 50)
#define PROBE_JSON_MAX_DEPTH 32 /* nesting of objects and arrays */
/* |UTC offset| of started_at and finished_at, in hours (minutes <= 59):
 * what a PostgreSQL timestamptz takes, so the server's RFC 3339 check
 * (handlers/util.c) and the probe's (probe/report_check.c) both read it */
#define PROBE_UTC_OFFSET_MAX_H 15
/* Numbers anywhere in a report: PostgreSQL prints a larger one back in a
 * form no JSON integer reader takes (handlers/benchmarks.c) */
#define PROBE_REPORT_NUMBER_MAX 1e15

/* The GPU fields the server types beside a report's GPUs, for its
 * validation (handlers/benchmarks.c check_gpu_info) and the probe's checker
 * alike: a member of the "pcie" or "nvlink" object, an integer in [0, max]
 * or (max 0) a number in [0, PROBE_REPORT_NUMBER_MAX]; and the flags, each
 * a boolean. Null or absent is allowed for each. */
struct probe_gpu_member {
	const char *obj, *key;
	long long max;
};
/* clang-format off */
#define PROBE_GPU_MEMBERS {                                                    \
	{"pcie", "gen_current", 16},   {"pcie", "gen_max", 16},                \
	{"pcie", "width_current", 64}, {"pcie", "width_max", 64},              \
	{"pcie", "limit_gbps", 0},     {"nvlink", "active_links", 64},         \
	{"nvlink", "version", 64},     {"nvlink", "per_link_gbps", 0},         \
	{"nvlink", "limit_gbps", 0}}
#define PROBE_GPU_FLAGS {"ecc_enabled", "mig_mode"}
/* clang-format on */

/* The types of the report's other members, as docs/PROBE.md's format
 * tables give them, for the server's validation (handlers/benchmarks.c
 * check_typed) and the probe's checker (probe/report_check.c) alike
 * (review s17c F10: a results[].gpu_index of "0", -5 or 9999, samples of
 * ["a"], a power_limit_w of "x" or -700, a telemetry of "x" were stored).
 * obj "" is a member of the entry itself; otherwise a member of its object
 * obj, checked when obj is an object (obj's own entry, of kind
 * PROBE_KIND_OBJ, comes first). Null or absent is allowed for each. */
enum probe_kind {
	PROBE_KIND_INT,	 /* a whole number in [0, max]; max 0: >= 0 (the
			    rule on any number bounds it) */
	PROBE_KIND_NUM,	 /* a number in [0, PROBE_REPORT_NUMBER_MAX], 0 or at
			    least 1e-300 (a subnormal's reciprocal is inf) */
	PROBE_KIND_STR,	 /* a string */
	PROBE_KIND_BOOL, /* true or false */
	PROBE_KIND_OBJ,	 /* an object */
	PROBE_KIND_NUMS, /* an array of at most max finite numbers >= 0 */
	PROBE_KIND_STRS, /* an array of strings */
};
struct probe_typed {
	const char *obj, *key;
	enum probe_kind kind;
	long long max;
};
/* clang-format off */
#define PROBE_TOP_TYPED {                                                      \
	{"", "sizing", PROBE_KIND_STR, 0},                                     \
	{"", "only", PROBE_KIND_STRS, 0},                                      \
	{"", "probe_version", PROBE_KIND_STR, 0},                              \
	{"", "synthetic", PROBE_KIND_BOOL, 0},                                 \
	{"", "error", PROBE_KIND_OBJ, 0},                                      \
	{"error", "code", PROBE_KIND_STR, 0},                                  \
	{"error", "message", PROBE_KIND_STR, 0}}
#define PROBE_NODE_TYPED {                                                     \
	{"", "cuda_runtime_version", PROBE_KIND_INT, 0},                       \
	{"", "cublaslt_version", PROBE_KIND_INT, 0},                           \
	{"", "nvml_available", PROBE_KIND_BOOL, 0},                            \
	{"", "nccl_version", PROBE_KIND_INT, 0}}
#define PROBE_GPU_TYPED {                                                      \
	{"", "pci_bus_id", PROBE_KIND_STR, 0},                                 \
	{"", "pci_device_id", PROBE_KIND_STR, 0},                              \
	{"", "compute_capability", PROBE_KIND_STR, 0},                         \
	{"", "sm_count", PROBE_KIND_INT, 0},                                   \
	{"", "memory_total_bytes", PROBE_KIND_INT, 0},                         \
	{"", "power_limit_w", PROBE_KIND_NUM, 0},                              \
	{"", "sm_clock_max_mhz", PROBE_KIND_NUM, 0},                           \
	{"", "compute_processes", PROBE_KIND_INT, 0}}
/* gpu_index: a CUDA ordinal, as gpus[].index (a result may name a GPU its
 * report left out of gpus[], so not necessarily one of theirs) */
#define PROBE_RESULT_TYPED {                                                   \
	{"", "gpu_index", PROBE_KIND_INT, PROBE_MAX_GPUS},                     \
	{"", "peer_uuid", PROBE_KIND_STR, 0},                                  \
	{"", "shape", PROBE_KIND_OBJ, 0},                                      \
	{"shape", "m", PROBE_KIND_INT, 0},                                     \
	{"shape", "n", PROBE_KIND_INT, 0},                                     \
	{"shape", "k", PROBE_KIND_INT, 0},                                     \
	{"", "nranks", PROBE_KIND_INT, 0},                                     \
	{"", "concurrent", PROBE_KIND_BOOL, 0},                                \
	{"", "bytes_convention", PROBE_KIND_STR, 0},                           \
	{"", "reason", PROBE_KIND_STR, 0},                                     \
	{"", "limit_basis", PROBE_KIND_STR, 0},                                \
	{"", "limit_source", PROBE_KIND_STR, 0},                               \
	{"", "limit_clock_adjusted", PROBE_KIND_NUM, 0},                       \
	{"", "efficiency_clock_adjusted", PROBE_KIND_NUM, 0},                  \
	{"", "telemetry", PROBE_KIND_OBJ, 0},                                  \
	{"telemetry", "sm_clock_mhz", PROBE_KIND_NUM, 0},                      \
	{"telemetry", "mem_clock_mhz", PROBE_KIND_NUM, 0},                     \
	{"telemetry", "power_w", PROBE_KIND_NUM, 0},                           \
	{"telemetry", "temperature_c", PROBE_KIND_NUM, 0},                     \
	{"telemetry", "clock_event_reasons", PROBE_KIND_STRS, 0},              \
	{"telemetry", "clock_event_reasons_mask", PROBE_KIND_STR, 0},          \
	{"telemetry", "pcie_gen", PROBE_KIND_INT, 0},                          \
	{"telemetry", "pcie_width", PROBE_KIND_INT, 0},                        \
	{"telemetry", "samples", PROBE_KIND_INT, 0},                           \
	{"", "note", PROBE_KIND_STR, 0},                                       \
	{"", "samples", PROBE_KIND_NUMS, PROBE_N_MAX}}
/* clang-format on */

/* A number of kind PROBE_KIND_NUM (the server's jv_num over [0, 1e15]),
 * and an element of PROBE_KIND_NUMS. */
static inline int probe_typed_num_ok(double x)
{
	return x == x && x >= 0 && x <= PROBE_REPORT_NUMBER_MAX &&
	       (x == 0 || x >= 1e-300);
}
static inline int probe_typed_elem_ok(double x)
{
	return x == x && x >= 0 && x <= PROBE_REPORT_NUMBER_MAX;
}

/* What a member of ty must be, for both sides' errors: "must be null or
 * an integer in [0, 256]". */
static inline const char *probe_typed_rule(const struct probe_typed *ty,
					   char *buf, size_t n)
{
	static const char *const rules[] = {
	    [PROBE_KIND_INT] = "must be null or a whole number >= 0",
	    [PROBE_KIND_NUM] = "must be null or a number in [0, 1e15]",
	    [PROBE_KIND_STR] = "must be null or a string",
	    [PROBE_KIND_BOOL] = "must be true, false or null",
	    [PROBE_KIND_OBJ] = "must be an object or null",
	    [PROBE_KIND_NUMS] = "must be null or an array of numbers >= 0",
	    [PROBE_KIND_STRS] = "must be null or an array of strings",
	};

	if (ty->kind == PROBE_KIND_INT && ty->max > 0)
		snprintf(buf, n, "must be null or an integer in [0, %lld]",
			 ty->max);
	else if (ty->kind == PROBE_KIND_NUMS && ty->max > 0)
		snprintf(buf, n,
			 "must be null or an array of at most %lld numbers "
			 ">= 0",
			 ty->max);
	else
		snprintf(buf, n, "%s", rules[ty->kind]);
	return buf;
}

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's
 * days_from_civil): the server's and the probe's date arithmetic. */
static inline long long probe_days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Shown text. probe_shown_text_ok is 1 when the UTF-8 text s may be
 * shown, probe_shown_refused_len the bytes of the refused character at p
 * (0: none starts there): no C0 control, DEL or C1 control
 * (U+0080..U+009F), no line or paragraph separator (U+2028, U+2029), no
 * bidirectional mark, embedding, override or isolate (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069). The fleet view and the capacity
 * report show node.cpu_model, driver versions and GPU names, where a BEL,
 * a line break or a right-to-left override garbles or reorders what an
 * operator reads (review s15, s15b). One function for the server's
 * validation and the probe's checker, so that the two cannot drift apart
 * (review s16b F4). */
static inline size_t probe_shown_refused_len(const unsigned char *p)
{
	/* UTF-8 lead bytes and the continuation range of what is refused;
	 * b1 0: a two-byte sequence b0 lo..hi */
	static const struct {
		unsigned char b0, b1, lo, hi;
	} refused[] = {
	    {0xc2, 0, 0x80, 0x9f},    {0xd8, 0, 0x9c, 0x9c},
	    {0xe2, 0x80, 0x8e, 0x8f}, {0xe2, 0x80, 0xa8, 0xae},
	    {0xe2, 0x81, 0xa6, 0xa9},
	};

	if (*p < 0x20 || *p == 0x7f)
		return 1;
	for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const unsigned char *c = p + 1;
		if (p[0] != refused[i].b0)
			continue;
		if (refused[i].b1) {
			if (p[1] != refused[i].b1)
				continue;
			c = p + 2;
		}
		if (*c >= refused[i].lo && *c <= refused[i].hi)
			return (size_t)(c - p) + 1;
	}
	return 0;
}

static inline int probe_shown_text_ok(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (probe_shown_refused_len(p))
			return 0;
	return 1;
}

/* Replaces, in place, each character probe_shown_text_ok refuses with
 * '?': the probe's own free text (a library's error string, a reason
 * built from one) is shown text too, and a report the server would
 * refuse for it would be lost (review s16c F4). */
static inline void probe_shown_text_clean(char *s)
{
	unsigned char *p = (unsigned char *)s, *out = p;

	while (*p) {
		size_t n = probe_shown_refused_len(p);
		if (n) {
			*out++ = '?';
			p += n;
		} else {
			*out++ = *p++;
		}
	}
	*out = '\0';
}

/* The metric names, as an X-macro so that each reader builds the form it
 * needs (an array of strings) without a second copy of the names. */
#define PROBE_METRICS(X)                                                       \
	X(gemm_tflops)                                                         \
	X(gemm_sweep_tflops)                                                   \
	X(hbm_copy_gbps)                                                       \
	X(hbm_copy_ce_gbps)                                                    \
	X(hbm_read_gbps)                                                       \
	X(hbm_write_gbps)                                                      \
	X(h2d_pinned_gbps)                                                     \
	X(d2h_pinned_gbps)                                                     \
	X(bidir_pinned_gbps)                                                   \
	X(h2d_pageable_gbps)                                                   \
	X(d2h_pageable_gbps)                                                   \
	X(p2p_unidir_gbps)                                                     \
	X(p2p_bidir_gbps)                                                      \
	X(p2p_latency_us)                                                      \
	X(nccl_allreduce_busbw_gbps)                                           \
	X(nccl_allreduce_algbw_gbps)                                           \
	X(gemm_sustained_tflops)                                               \
	X(nccl_allgather_busbw_gbps)                                           \
	X(nccl_allgather_algbw_gbps)                                           \
	X(nccl_reducescatter_busbw_gbps)                                       \
	X(nccl_reducescatter_algbw_gbps)                                       \
	X(nccl_allreduce_latency_us)

/* X(name) -> "name", for an array of the names. */
#define PROBE_METRIC_STRING(name) #name,

/* Whether a result of metric names a dtype: a GEMM's rate is of one
 * (PROBE_DTYPE_REQUIRED), an NCCL collective may name the element type it
 * reduces (the probe writes fp32; PROBE_DTYPE_ALLOWED), and the copies,
 * HBM and P2P rates have none (PROBE_DTYPE_NONE): a dtype on an HBM
 * result split its calibration group, and one node's result replaced the
 * fleet's rate (review s19c F8). */
enum { PROBE_DTYPE_NONE, PROBE_DTYPE_ALLOWED, PROBE_DTYPE_REQUIRED };
static inline int probe_metric_dtype_rule(const char *metric)
{
	if (!strncmp(metric, "gemm_", 5))
		return PROBE_DTYPE_REQUIRED;
	if (!strncmp(metric, "nccl_", 5))
		return PROBE_DTYPE_ALLOWED;
	return PROBE_DTYPE_NONE;
}

/* The unit a result of metric (and dtype, NULL for none) is in, by the
 * name's suffix: _tflops TFLOP/s (TOP/s for int8), _gbps GB/s, _us us;
 * NULL for a name of no known suffix. Any unit was taken, and one report
 * labelled "MB/s" relabelled its type's fleet median (review s19c F6). */
static inline const char *probe_metric_unit(const char *metric,
					    const char *dtype)
{
	size_t n = strlen(metric);

	if (n > 7 && !strcmp(metric + n - 7, "_tflops"))
		return dtype && !strcmp(dtype, "int8") ? "TOP/s" : "TFLOP/s";
	if (n > 5 && !strcmp(metric + n - 5, "_gbps"))
		return "GB/s";
	if (n > 3 && !strcmp(metric + n - 3, "_us"))
		return "us";
	return NULL;
}

/* What an ok result's median must satisfy (the server's validation and
 * the probe's checker alike; NaN: absent): above 0. A rate, bandwidth or
 * latency of 0 measured nothing, and it pulled the fleet's median down
 * (review s23c F1). A rule on the median against the result's own
 * `limit` was tried and left (review s23d F4): the probe's link limits
 * come from NVML's PCIe generation and width, which a VM's virtual root
 * port can understate ~100x, C2C host copies on GH200 / GB200 run ~6x the
 * PCIe limit, and a refusal loses the whole report; the fleet counts each
 * node once instead. Returns the field at fault with the rule in why, or
 * NULL. */
static inline const char *probe_stats_problem(double median, char *why,
					      size_t whylen)
{
	if (median == median && !(median > 0.0)) {
		snprintf(why, whylen,
			 "must be above 0 when status is ok (a result that "
			 "measured nothing is skipped or failed)");
		return "median";
	}
	return NULL;
}

/* The dtypes a result may name (GEMMs; NCCL's fp32), as an X-macro like
 * the metrics: a typo would otherwise make a series no query finds. */
#define PROBE_DTYPES(X)                                                        \
	X(bf16)                                                                \
	X(fp16)                                                                \
	X(fp8_e4m3)                                                            \
	X(tf32)                                                                \
	X(fp32)                                                                \
	X(fp64)                                                                \
	X(int8)

#endif

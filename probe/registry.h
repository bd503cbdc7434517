/* The registry of measurements (plain C): what gpusizer-probe can
 * measure, in the order it runs them. Each entry names a measurement,
 * its scope (per GPU, per GPU pair, per node), the --only group it
 * belongs to, the modes it runs in, the metrics it writes and the
 * function that runs it (probe/m_*.c). `gpusizer-probe --list` prints it.
 * Shaped like nccl-tests' and nvbandwidth's test tables.
 */
#ifndef GPUSIZER_PROBE_REGISTRY_H
#define GPUSIZER_PROBE_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

enum probe_scope {
	PROBE_SCOPE_GPU,	/* each GPU, all GPUs at once (--isolated: in
				   turn) after a warm-up */
	PROBE_SCOPE_GPU_SERIAL, /* each GPU in turn */
	PROBE_SCOPE_PAIR,	/* every GPU pair, in turn */
	PROBE_SCOPE_NODE,	/* the node, once (collectives, all GPUs
				   loaded together) */
};

#define PROBE_MODE_QUICK 0x1
#define PROBE_MODE_FULL	 0x2

struct probe_ctx;
/* Runs a measurement and adds its results to the report. pos: the GPU
 * (position in the measured devices) for PROBE_SCOPE_GPU and
 * PROBE_SCOPE_GPU_SERIAL, -1 otherwise. */
typedef void (*probe_run_fn)(struct probe_ctx *c, int pos);

struct probe_measurement {
	const char *name;
	enum probe_scope scope;
	int group;	     /* PROBE_ONLY_* (cli.h) */
	unsigned modes;	     /* PROBE_MODE_* */
	const char *metrics; /* the metrics it writes, comma-separated */
	const char *what;    /* one line */
	probe_run_fn run;
};

/* The probe's measurements: X(name, scope, group, modes, metrics, what,
 * run). The binary builds its table from this list (registry_table.c);
 * the unit tests build theirs from it too, without the run functions. */
#define PROBE_MEASUREMENTS(X)                                                  \
	X("gemm", PROBE_SCOPE_GPU, PROBE_ONLY_GEMM,                            \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL, "gemm_tflops,gemm_sweep_tflops", \
	  "cuBLASLt TN GEMM per dtype: best of the heuristic algorithms, "     \
	  "full mode a shape sweep; spot-checked against the host",            \
	  probe_run_gemm)                                                      \
	X("hbm", PROBE_SCOPE_GPU, PROBE_ONLY_HBM,                              \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "hbm_copy_gbps,hbm_read_gbps,hbm_write_gbps,hbm_copy_ce_gbps",       \
	  "device memory: own copy/read/write kernels and a copy-engine "      \
	  "copy; copies checksummed",                                          \
	  probe_run_hbm)                                                       \
	X("gemm_sustained", PROBE_SCOPE_NODE, PROBE_ONLY_GEMM,                 \
	  PROBE_MODE_FULL, "gemm_sustained_tflops",                            \
	  "BF16 and FP8 GEMMs of a training plan (a Llama-2-70B layer at "     \
	  "TP 8), each sustained --sustain-s (60) s on all GPUs at once",      \
	  probe_run_gemm_sustained)                                            \
	X("host_copy", PROBE_SCOPE_GPU_SERIAL, PROBE_ONLY_H2D,                 \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "h2d_pinned_gbps,d2h_pinned_gbps,bidir_pinned_gbps,"                 \
	  "h2d_pageable_gbps,d2h_pageable_gbps",                               \
	  "host <-> device copies from the GPU's NUMA node, pinned and "       \
	  "pageable; checksummed",                                             \
	  probe_run_host_copy)                                                 \
	X("p2p_bw", PROBE_SCOPE_PAIR, PROBE_ONLY_P2P,                          \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "p2p_unidir_gbps,p2p_bidir_gbps",                                    \
	  "GPU -> GPU copy-engine writes, one and both directions; "           \
	  "checksummed",                                                       \
	  probe_run_p2p_bw)                                                    \
	X("p2p_latency", PROBE_SCOPE_PAIR, PROBE_ONLY_P2P,                     \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL, "p2p_latency_us",                \
	  "16-byte GPU -> GPU copies, mean of 100", probe_run_p2p_latency)     \
	X("nccl_allreduce", PROBE_SCOPE_NODE, PROBE_ONLY_NCCL,                 \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "nccl_allreduce_busbw_gbps,nccl_allreduce_algbw_gbps",               \
	  "NCCL all-reduce over all GPUs against message size "                \
	  "(nccl-tests busbw)",                                                \
	  probe_run_nccl_allreduce)                                            \
	X("nccl_allgather", PROBE_SCOPE_NODE, PROBE_ONLY_NCCL,                 \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "nccl_allgather_busbw_gbps,nccl_allgather_algbw_gbps",               \
	  "NCCL all-gather against message size (FSDP/ZeRO parameters)",       \
	  probe_run_nccl_allgather)                                            \
	X("nccl_reducescatter", PROBE_SCOPE_NODE, PROBE_ONLY_NCCL,             \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL,                                  \
	  "nccl_reducescatter_busbw_gbps,nccl_reducescatter_algbw_gbps",       \
	  "NCCL reduce-scatter against message size (FSDP/ZeRO gradients)",    \
	  probe_run_nccl_reducescatter)                                        \
	X("nccl_latency", PROBE_SCOPE_NODE, PROBE_ONLY_NCCL,                   \
	  PROBE_MODE_QUICK | PROBE_MODE_FULL, "nccl_allreduce_latency_us",     \
	  "8-byte NCCL all-reduce time at 2, 4, 8 ranks (as many as there "    \
	  "are GPUs)",                                                         \
	  probe_run_nccl_latency)

/* The binary's registry (registry_table.c). */
const struct probe_measurement *probe_registry(size_t *n);

/* "per-GPU", "per-GPU (one at a time)", "per-pair", "per-node". */
const char *probe_scope_name(enum probe_scope s);

/* 1 when m runs for the --only mask and the sizing (quick or full). */
int probe_measurement_selected(const struct probe_measurement *m, int only_mask,
			       int quick);

/* Prints the table for --list: per measurement a line "name  scope
 * --only group  modes", then its metrics and what it does, indented. */
void probe_registry_print(const struct probe_measurement *tab, size_t n,
			  FILE *f);

/* Checks a table: names non-empty and unique, a known group, some mode,
 * every metric one the report knows (probe_metric_known). 0, or -1 with
 * the entry's name in err. */
int probe_registry_check(const struct probe_measurement *tab, size_t n,
			 char *err, size_t errlen);

#endif

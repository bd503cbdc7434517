/* Decisions the probe makes that need no GPU (plain C): how many
 * operations one gated batch may hold, deadlines, whether NCCL applies,
 * which GEMM shape a summary reports. The CUDA code calls these; the unit
 * tests hold them to their rules.
 */
#ifndef GPUSIZER_PROBE_POLICY_H
#define GPUSIZER_PROBE_POLICY_H

#include <stddef.h>

#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries a gated batch may put in a stream's launch queue. The queue
 * holds about 1,000 entries; past that the host blocks inside the
 * launch until the GPU drains it, and with the stream held by the spin
 * gate it never does until the gate times out (issue 14, defect 4).
 * Half of it keeps a margin for the gate, the events and what cuBLASLt
 * or the runtime enqueue on their own. */
#define PROBE_LAUNCH_QUEUE_BUDGET 512
/* Entries of a batch besides its operations: the spin kernel, two
 * events, a stream wait. */
#define PROBE_BATCH_OVERHEAD 4

/* Operations in one gated batch so that it lasts about target_ms when
 * one operation takes op_ms, each operation putting launches_per_op
 * entries in the queue: round(target_ms / op_ms), at least 1, at most
 * (PROBE_LAUNCH_QUEUE_BUDGET - PROBE_BATCH_OVERHEAD) / launches_per_op.
 * An unknown (not positive or not finite) op_ms gives 1. */
int probe_batch_ops(double op_ms, double target_ms, int launches_per_op);

/* A wall-clock deadline on the monotonic clock (probe_now_s). */
struct probe_deadline {
	double end_s;
};
void probe_deadline_start(struct probe_deadline *d, double now_s,
			  double seconds);
/* 1 once now_s is past the deadline. */
int probe_deadline_passed(const struct probe_deadline *d, double now_s);
/* Seconds left (0 when passed). */
double probe_deadline_left(const struct probe_deadline *d, double now_s);

/* Seconds an NCCL batch of ops collectives of bytes each may take before
 * the probe gives up on it and aborts the communicators: 30 s plus the
 * time at 0.5 GB/s (well below any PCIe or NVLink collective; nccl-tests
 * see 10-500 GB/s), so only a hang or a broken link reaches it. */
double probe_nccl_deadline_s(double bytes, int ops);

/* Message sizes of the NCCL bandwidth curves: quick 64 MiB and 1 GiB;
 * full 8 MiB to 8 GiB by powers of 2 (nccl-tests -b 8M -e 8G -f 2);
 * those above max_bytes left out. Returns how many were written (at most
 * max). */
#define PROBE_NCCL_MAX_SIZES 16
size_t probe_nccl_sizes(int quick, size_t max_bytes, size_t *out, size_t max);

/* Floats in each rank's NCCL send and receive buffers for messages of
 * up to `bytes`: the smallest multiple of 4 x ndevs (so every collective
 * divides it among the ranks) that holds `bytes`, at least 4 x ndevs.
 * Rounded up: rounded down, the largest size (a power of two) did not
 * fit on 3, 5, 6 or 7 ranks and failed (review s23c F2). 0 for ndevs
 * < 1. */
size_t probe_nccl_buffer_floats(size_t bytes, int ndevs);

/* Rank counts of the all-reduce latency: 2, 4, 8 as far as the node has
 * GPUs, then the node's count when it is none of them. Returns how many
 * were written (at most max; 0 for fewer than 2 GPUs). */
int probe_nccl_rank_counts(int ngpus, int *out, int max);

/* The latency's message: 8 bytes, nccl-tests' smallest default size. */
#define PROBE_NCCL_LATENCY_BYTES 8

/* Whether an NCCL measurement applies on this node, of ngpus selected
 * out of node_gpus, checked in this order: fewer than 2 GPUs selected
 * (not applicable, not partial: a one-GPU node has no collective to
 * measure whether or not libnccl is installed), fewer than the node's
 * (--devices: not applicable; the report's all-reduce calibrates the
 * GPU type's intra-node link as a whole node's, and a 2-rank ring reads
 * ~370 GB/s on an H100 node against ~480 at 8 ranks, review s23c F4), a
 * GPU in MIG mode (not applicable), libnccl missing (partial). */
enum probe_nccl_plan {
	PROBE_NCCL_RUN,
	PROBE_NCCL_ONE_GPU,
	PROBE_NCCL_SUBSET,
	PROBE_NCCL_MIG,
	PROBE_NCCL_NO_LIBRARY,
};
enum probe_nccl_plan probe_nccl_plan(int ngpus, int node_gpus, int any_mig,
				     int lib_ok);

/* The GEMM summary of one GPU and dtype from its sweep results (one per
 * shape): a copy of the ok result with the best median (metric
 * "gemm_tflops", samples copied); when none is ok, "failed" when any
 * shape failed or was skipped as partial, else "skipped" (not
 * applicable) with the first shape's reason. A skipped shape never hides
 * the others. Returns 0 (out to be freed with the report), or -1 when
 * n == 0. */
int probe_gemm_summary(const struct probe_result *sweep, size_t n,
		       struct probe_result *out);

#ifdef __cplusplus
}
#endif

#endif

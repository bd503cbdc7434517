/* collective.h - time of one NCCL collective, shared by the training and
 * inference engines (docs/MODEL.md §4 "Collective latency").
 *
 * NCCL's own cost model (src/graph/tuning.cc, ncclTopoTuneModel): for each
 * protocol (LL, LL128, Simple) time = latency + bytes moved / (bus
 * bandwidth x the protocol's bandwidth share), and NCCL runs the protocol
 * that is fastest for the message size. Small messages (decode steps,
 * one token per sequence) ride LL; large ones (training micro-batches)
 * ride Simple. Pure: no I/O, no globals.
 */
#ifndef GPUSIZER_ENGINE_COLLECTIVE_H
#define GPUSIZER_ENGINE_COLLECTIVE_H

#include "hw.h"

enum coll_kind { COLL_AR, COLL_AG, COLL_RS };

/* Seconds for one collective over `ranks` ranks on `nodes` nodes.
 * bytes = the full buffer each rank ends with (all-gather) or starts with
 * (reduce-scatter, all-reduce); bw_bytes_per_s = achieved bus bandwidth
 * per rank, one direction; intra = the link inside a node (NVLink or
 * PCIe latencies). 0 for one rank; INFINITY without bandwidth. */
double coll_time_s(enum coll_kind k, double bytes, double ranks, double nodes,
		   double bw_bytes_per_s, enum hw_link intra);

/* Bus bandwidth per rank of a group that leaves the node, when its ranks
 * sit `stride` ranks apart (Megatron order: a data-parallel group's
 * stride is tp x cp) on nodes of gpus_per_node GPUs. The group's ranks on
 * one node, gpus_per_node / stride of them, sit in one NCCL ring and
 * NCCL stripes its channels over every NIC of the node (one ring per NIC,
 * NVLink splitting the data between them: NVIDIA/nccl issue 601; rings
 * keep each NIC on its own rail: NCCL_CROSS_NIC, NCCL User Guide,
 * "Environment Variables"). The stride groups of a node communicate at
 * once and share the NICs: each gets 1/stride of them, i.e. nic_per_gpu
 * times its ranks on the node. Capped by intra, the ring's hops inside the
 * node. stride >= gpus_per_node: one rank per node, nic_per_gpu. */
double coll_node_share_bw(double nic_per_gpu, double intra, int gpus_per_node,
			  long stride);

#endif

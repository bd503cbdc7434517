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

#endif

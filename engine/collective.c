/* collective.c - NCCL's ring/tree cost model (docs/MODEL.md §4). */
#include "collective.h"

#include <math.h>

/* Per protocol, ring algorithm, seconds and bandwidth shares, from NCCL
 * src/graph/tuning.cc: baseLat (ring LL 6.6, LL128 14.0, Simple 8.4 us),
 * hwLat per step (NVLink .6 / 1.9 / 3.4, PCIe 1.0 / 2.5 / 5.7, network
 * 2.7 / 4.0 / 14.0 us). LL carries 8 B of flags per 8 B of data and NCCL
 * caps its bus bandwidth at 1/4 (all-reduce, or across nodes) or 1/3 of
 * Simple's; LL128 keeps 120 of 128 bytes (0.92) and runs on NVLink only.
 * Tree all-reduce (across nodes): Simple 8.4 + 4.0 us per intra-node step
 * and 14 us per tree level, LL 6.8 + 0.6 / 5.0 us. Once a ring leaves
 * the node every step costs at least 3 us (3 x the 1 us network post
 * overhead). */
static const struct proto {
	double base_s, nvlink_step_s, pcie_step_s, net_step_s;
	double bw_share_ar, bw_share_other; /* of Simple's bus bandwidth */
	double tree_base_s, tree_intra_s, tree_net_s;
	int nvlink_only;
} protos[] = {
    /* LL */
    {6.6e-6, 0.6e-6, 1.0e-6, 2.7e-6, 0.25, 1.0 / 3.0, 6.8e-6, 0.6e-6, 5.0e-6,
     0},
    /* LL128 */
    {14.0e-6, 1.9e-6, 2.5e-6, 4.0e-6, 0.92, 0.92, 14.0e-6, 1.25e-6, 8.5e-6, 1},
    /* Simple */
    {8.4e-6, 3.4e-6, 5.7e-6, 14.0e-6, 1.0, 1.0, 8.4e-6, 4.0e-6, 14.0e-6, 0},
};
#define NET_OVERHEAD_STEP_S 3.0e-6

static double proto_time_s(const struct proto *p, enum coll_kind k,
			   double bytes, double n, double nodes, double bw,
			   enum hw_link intra)
{
	double mult = k == COLL_AR ? 2.0 : 1.0;
	double steps = mult * (n - 1.0);
	double inter = nodes > 1.0 ? mult * (nodes - 1.0) : 0.0;
	double share =
	    (k == COLL_AR || nodes > 1.0) ? p->bw_share_ar : p->bw_share_other;
	double step =
	    intra == HW_LINK_NVLINK ? p->nvlink_step_s : p->pcie_step_s;
	double vol = mult * (n - 1.0) / n * bytes, lat;

	if (nodes > 1.0)
		step = fmax(step, NET_OVERHEAD_STEP_S);
	lat = p->base_s + (steps - inter) * step + inter * p->net_step_s;
	if (k == COLL_AR && nodes > 1.0) {
		double tree = p->tree_base_s +
			      2.0 * ((n / nodes - 1.0) * p->tree_intra_s +
				     log2(nodes) * p->tree_net_s);
		lat = fmin(lat, tree);
	}
	return vol / (bw * share) + lat;
}

double coll_time_s(enum coll_kind k, double bytes, double ranks, double nodes,
		   double bw_bytes_per_s, enum hw_link intra)
{
	double best = INFINITY;

	if (ranks <= 1.0)
		return 0.0;
	if (!(bw_bytes_per_s > 0.0))
		return INFINITY;
	for (unsigned i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (protos[i].nvlink_only &&
		    (intra != HW_LINK_NVLINK || nodes > 1.0))
			continue;
		best = fmin(best, proto_time_s(&protos[i], k, bytes, ranks,
					       nodes, bw_bytes_per_s, intra));
	}
	return best;
}

double coll_node_share_bw(double nic_per_gpu, double intra, int gpus_per_node,
			  long stride)
{
	long local;

	if (stride < 1 || gpus_per_node <= stride)
		return nic_per_gpu;
	local = gpus_per_node / stride;
	return fmin(nic_per_gpu * (double)local, intra);
}

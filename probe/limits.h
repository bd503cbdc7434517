/* Limit arithmetic: what a measurement is compared against (plain C).
 *
 * GB/s are decimal (1e9 B/s), per direction unless a name says otherwise.
 */
#ifndef GPUSIZER_PROBE_LIMITS_H
#define GPUSIZER_PROBE_LIMITS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Transfer rate of one PCIe lane in GT/s for generation 1..7, NaN else. */
double probe_pcie_gt_per_s(int gen);

/* Usable fraction after line encoding: 8b/10b (Gen1-2), 128b/130b
 * (Gen3-5), FLIT 242/256 (Gen6-7: 236 B TLP + 6 B DLP per 256 B flit). */
double probe_pcie_encoding(int gen);

/* Per-direction PCIe bandwidth in GB/s = GT/s x lanes x encoding / 8;
 * Gen5 x16 = 63.0. NaN for an unknown gen or width <= 0. */
double probe_pcie_gbps(int gen, int width);

/* Nominal per-link, per-direction NVLink bandwidth in GB/s by the GPU's
 * compute capability: 6.0 (NVLink1) 20; 7.0, 8.0, 9.0 (NVLink2-4) 25;
 * 10.x (NVLink5) 50; NaN otherwise (no NVLink or unknown). Keyed by
 * architecture, not by nvmlDeviceGetNvLinkVersion, whose value is not
 * consistent across drivers (pynvml users work around H100 reporting
 * 5.0). */
double probe_nvlink_per_link_gbps(int cc_major, int cc_minor);

/* active_links x per_link_gbps; NaN when either is unknown or links <= 0. */
double probe_nvlink_gbps(int active_links, double per_link_gbps);

enum probe_collective {
	PROBE_COLL_ALL_REDUCE,
	PROBE_COLL_ALL_GATHER,
	PROBE_COLL_REDUCE_SCATTER,
	PROBE_COLL_ALLTOALL,
	PROBE_COLL_BROADCAST,
	PROBE_COLL_REDUCE,
	PROBE_COLL_SENDRECV,
};

/* nccl-tests busbw = algbw x factor: all_reduce 2(n-1)/n; all_gather,
 * reduce_scatter, alltoall (n-1)/n; broadcast, reduce, sendrecv 1.
 * NaN for nranks < 1. */
double probe_busbw_factor(enum probe_collective c, int nranks);

/* algbw in GB/s from the operation's total size S (bytes) and the mean
 * time per operation in seconds. */
double probe_algbw_gbps(double size_bytes, double seconds);

/* median / limit; NaN when the limit is unknown (not finite or <= 0) or
 * the median is not finite. */
double probe_efficiency(double median, double limit);

/* 2 m n k / seconds / 1e12. */
double probe_gemm_tflops(double m, double n, double k, double seconds);

/* spec x measured_clock / spec_clock; NaN when either clock is unknown. */
double probe_clock_adjusted(double spec, double measured_clock_mhz,
			    double spec_clock_mhz);

/* Datasheet figures for a few SKUs, keyed by PCI device id (the upper 16
 * bits of NVML's pciDeviceId, e.g. 0x2330). Dense, no sparsity. Every
 * field NaN when unknown. The service's GPU catalog is authoritative. */
struct probe_datasheet {
	unsigned pci_device_id;
	const char *name;
	double hbm_gbps; /* DRAM traffic, GB/s */
	double tflops_bf16;
	double tflops_fp16;
	double tflops_fp8;
	double tflops_tf32;
	double tflops_fp32;
	double tflops_fp64; /* tensor-core FP64 where it exists */
	double tops_int8;
	double spec_clock_mhz; /* clock the tensor peaks are quoted at */
};

/* Returns the entry or NULL. */
const struct probe_datasheet *probe_datasheet_lookup(unsigned pci_device_id);

/* The datasheet peak for a GEMM dtype name ("bf16", "fp16", "fp8_e4m3",
 * "tf32", "fp32", "fp64", "int8"); NaN when unknown. */
double probe_datasheet_gemm(const struct probe_datasheet *d, const char *dtype);

#ifdef __cplusplus
}
#endif

#endif

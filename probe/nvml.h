/* NVML, loaded at run time with dlopen("libnvidia-ml.so.1") (plain C).
 * No build-time dependency: the few types used are declared here. When
 * the library or a symbol is missing, the functions report "unknown". */
#ifndef GPUSIZER_PROBE_NVML_H
#define GPUSIZER_PROBE_NVML_H

#include <stddef.h>

#include "report.h"

struct probe_nvml;

/* One NVML reading of a device. Fields < 0 are unknown. */
struct probe_nvml_sample {
	double t_s;
	double sm_clock_mhz;
	double mem_clock_mhz;
	double power_w;
	double temperature_c;
	long long reasons; /* -1 unknown */
	int pcie_gen;
	int pcie_width;
};

/* Loads and initialises NVML. Returns NULL with a message in err. */
struct probe_nvml *probe_nvml_load(char *err, size_t errlen);
void probe_nvml_unload(struct probe_nvml *n);

/* Node facts; return 0 or -1. */
int probe_nvml_driver_version(struct probe_nvml *n, char *out, size_t len);
int probe_nvml_cuda_driver_version(struct probe_nvml *n, int *v);

/* Device handle by UUID ("GPU-...") or, failing that, PCI bus id. */
void *probe_nvml_device(struct probe_nvml *n, const char *uuid,
			const char *pci_bus_id);

/* The node's GPUs as NVML enumerates them (nvmlDeviceGetCount_v2,
 * nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetUUID), whatever this run
 * measures: what probe_nvml_enumerate read, and what
 * probe_gpu_uuids_decide makes of it (node.gpu_uuids, docs/PROBE.md). */
#define PROBE_NVML_ERR_MAX 64

/* One NVML index. uuid_rc is only asked for when handle_rc is 0. */
struct probe_nvml_index {
	int handle_rc; /* nvmlDeviceGetHandleByIndex_v2's return, 0: read */
	int uuid_rc;   /* nvmlDeviceGetUUID's return, 0: read */
	char error[PROBE_NVML_ERR_MAX]; /* NVML's text of the failed call */
	char uuid[PROBE_GPU_UUID_MAX + 1];
};

struct probe_nvml_enum {
	char unavailable[256]; /* why NVML was not asked; "" when it was */
	int count_rc;	       /* nvmlDeviceGetCount_v2's return, 0: read */
	char count_error[PROBE_NVML_ERR_MAX];
	unsigned count;
	/* the first min(count, PROBE_MAX_GPUS) indexes (none when count is
	 * more: such a list is not reported) */
	struct probe_nvml_index gpu[PROBE_MAX_GPUS];
};

/* Reads NVML's enumeration into *e (zeroed first). Without NVML (n NULL)
 * or without one of the three functions (the _v2 ones: the old
 * nvmlDeviceGetCount and nvmlDeviceGetHandleByIndex leave out the GPUs
 * this process may not use, and a partial list would mark GPUs removed)
 * e->unavailable says why. Returns 0, or -1 when e->unavailable is set. */
int probe_nvml_enumerate(struct probe_nvml *n, struct probe_nvml_enum *e);

/* node.gpu_uuids from NVML's enumeration e and the UUIDs of the GPUs the
 * run measured (measured[0..n_measured), CUDA's text; "" for one whose
 * UUID CUDA could not read, left out of gpus[] and so of this rule). Plain
 * logic, no NVML: the unit tests feed it. Returns 0 with the e->count
 * UUIDs in NVML index order in out (room for PROBE_MAX_GPUS), *n_out of
 * them, when NVML was asked, the count and every index's handle and UUID
 * were read, the count is at most PROBE_MAX_GPUS, each UUID is 1 to
 * PROBE_GPU_UUID_MAX bytes of shown text, none repeats, and every
 * non-empty measured UUID is among them (MIG or a CUDA / NVML
 * disagreement breaks that); an empty list only when no GPU was measured.
 * Otherwise -1 (node.gpu_uuids null, never a partial list) with why,
 * e.g. "NVML could not read GPU 3's UUID (Insufficient Permissions)". */
int probe_gpu_uuids_decide(const struct probe_nvml_enum *e,
			   const char *const *measured, size_t n_measured,
			   char (*out)[PROBE_GPU_UUID_MAX + 1], size_t *n_out,
			   char *why, size_t whylen);

/* Fills the NVML parts of the inventory (PCIe, NVLink, ECC, MIG, power
 * limit, max SM clock, other compute processes). cc_major/minor come from
 * CUDA and pick the NVLink per-link speed. */
void probe_nvml_fill_gpu(struct probe_nvml *n, void *dev, struct probe_gpu *g);

/* One reading; returns 0 (fields may still be unknown) or -1. */
int probe_nvml_read(struct probe_nvml *n, void *dev,
		    struct probe_nvml_sample *s);

/* Aggregates samples into telemetry: median SM and memory clock, mean
 * power, max temperature, OR of reasons, the last PCIe gen/width seen
 * (links train down when idle, so the last reading during the transfer
 * is the informative one). valid = 0 when n == 0. */
void probe_telemetry_aggregate(const struct probe_nvml_sample *s, size_t n,
			       struct probe_telemetry *out);

/* Background sampler (100 ms period) over a set of devices. */
struct probe_sampler;
struct probe_sampler *probe_sampler_start(struct probe_nvml *n,
					  void *const *devs, size_t ndevs,
					  int period_ms);
/* Stops and aggregates (over all devices); frees the sampler. power_w is
 * the mean per-GPU power over the window from the energy counters
 * (nvmlDeviceGetTotalEnergyConsumption) of the GPUs that have one (Volta
 * and later), else the mean of the power readings. */
void probe_sampler_stop(struct probe_sampler *s, struct probe_telemetry *out);

/* The shortest window whose energy-counter power is reported. On an H200
 * (driver 580, 2026-11-26) the counter advanced in steps: windows of
 * 0.05-0.3 s read 0 W, 844 W or 1,407 W under a 700 W limit, while windows
 * of 1.5 s and longer read 690-730 W. Shorter windows keep the mean of the
 * power readings (nvmlDeviceGetPowerUsage, itself a ~1 s average). */
#define PROBE_ENERGY_MIN_WINDOW_S 1.0

/* Mean per-GPU power in W over a window of dt_s seconds from energy
 * counters (mJ) read at its start and end, counting the GPUs whose valid
 * flag is set. NaN when dt_s < PROBE_ENERGY_MIN_WINDOW_S, no GPU is
 * valid, or a counter went backwards (a driver reload resets it). */
double probe_energy_power_w(const unsigned long long *start_mj,
			    const unsigned long long *end_mj, const int *valid,
			    size_t n, double dt_s);

/* Reads sysfs facts of a PCI device ("0000:5d:00.0"): numa node (-1
 * when none) and the PCI device id ("0x2330"). root is "/sys" normally
 * (tests pass a fixture tree). 0 or -1. */
int probe_sysfs_pci(const char *root, const char *bus_id, int *numa_node,
		    char *device_id, size_t idlen);

#endif

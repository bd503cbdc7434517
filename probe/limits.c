#include "limits.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

double probe_pcie_gt_per_s(int gen)
{
	static const double gt[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};

	if (gen < 1 || gen > 7)
		return NAN;
	return gt[gen];
}

double probe_pcie_encoding(int gen)
{
	if (gen == 1 || gen == 2)
		return 8.0 / 10.0;
	if (gen >= 3 && gen <= 5)
		return 128.0 / 130.0;
	if (gen == 6 || gen == 7)
		return 242.0 / 256.0;
	return NAN;
}

double probe_pcie_gbps(int gen, int width)
{
	if (width <= 0 || width > 32)
		return NAN;
	return probe_pcie_gt_per_s(gen) * (double)width *
	       probe_pcie_encoding(gen) / 8.0;
}

double probe_nvlink_per_link_gbps(int cc_major, int cc_minor)
{
	if (cc_major == 6 && cc_minor == 0)
		return 20.0;
	if ((cc_major == 7 || cc_major == 8 || cc_major == 9) && cc_minor == 0)
		return 25.0;
	if (cc_major == 10)
		return 50.0;
	return NAN;
}

double probe_nvlink_gbps(int active_links, double per_link_gbps)
{
	if (active_links <= 0 || !isfinite(per_link_gbps) || per_link_gbps <= 0)
		return NAN;
	return (double)active_links * per_link_gbps;
}

double probe_busbw_factor(enum probe_collective c, int nranks)
{
	double n = (double)nranks;

	if (nranks < 1)
		return NAN;
	switch (c) {
	case PROBE_COLL_ALL_REDUCE:
		return 2.0 * (n - 1.0) / n;
	case PROBE_COLL_ALL_GATHER:
	case PROBE_COLL_REDUCE_SCATTER:
	case PROBE_COLL_ALLTOALL:
		return (n - 1.0) / n;
	case PROBE_COLL_BROADCAST:
	case PROBE_COLL_REDUCE:
	case PROBE_COLL_SENDRECV:
		return 1.0;
	}
	return NAN;
}

double probe_algbw_gbps(double size_bytes, double seconds)
{
	if (!(seconds > 0) || !(size_bytes >= 0))
		return NAN;
	return size_bytes / seconds / 1e9;
}

double probe_efficiency(double median, double limit)
{
	if (!isfinite(limit) || limit <= 0 || !isfinite(median))
		return NAN;
	return median / limit;
}

double probe_gemm_tflops(double m, double n, double k, double seconds)
{
	if (!(seconds > 0))
		return NAN;
	return 2.0 * m * n * k / seconds / 1e12;
}

double probe_clock_adjusted(double spec, double measured_clock_mhz,
			    double spec_clock_mhz)
{
	if (!isfinite(spec) || !(measured_clock_mhz > 0) ||
	    !(spec_clock_mhz > 0))
		return NAN;
	return spec * measured_clock_mhz / spec_clock_mhz;
}

/* Public datasheets (dense). H100/H200 tensor peaks are quoted at
 * 1830 MHz (528 TCs x 1024 FLOP/clk); A100 at 1410 MHz. */
static const struct probe_datasheet datasheets[] = {
    {0x2330, "NVIDIA H100 SXM5 80GB", 3350, 989.4, 989.4, 1978.9, 494.7, 66.9,
     66.9, 1978.9, 1830},
    {0x2335, "NVIDIA H200 141GB", 4800, 989.4, 989.4, 1978.9, 494.7, 66.9, 66.9,
     1978.9, 1830},
    {0x20b0, "NVIDIA A100 SXM4 40GB", 1555, 312, 312, NAN, 156, 19.5, 19.5, 624,
     1410},
    {0x20b2, "NVIDIA A100 SXM4 80GB", 2039, 312, 312, NAN, 156, 19.5, 19.5, 624,
     1410},
};

const struct probe_datasheet *probe_datasheet_lookup(unsigned pci_device_id)
{
	size_t i;

	for (i = 0; i < sizeof(datasheets) / sizeof(datasheets[0]); i++)
		if (datasheets[i].pci_device_id == pci_device_id)
			return &datasheets[i];
	return NULL;
}

double probe_datasheet_gemm(const struct probe_datasheet *d, const char *dtype)
{
	if (d == NULL || dtype == NULL)
		return NAN;
	if (strcmp(dtype, "bf16") == 0)
		return d->tflops_bf16;
	if (strcmp(dtype, "fp16") == 0)
		return d->tflops_fp16;
	if (strcmp(dtype, "fp8_e4m3") == 0)
		return d->tflops_fp8;
	if (strcmp(dtype, "tf32") == 0)
		return d->tflops_tf32;
	if (strcmp(dtype, "fp32") == 0)
		return d->tflops_fp32;
	if (strcmp(dtype, "fp64") == 0)
		return d->tflops_fp64;
	if (strcmp(dtype, "int8") == 0)
		return d->tops_int8;
	return NAN;
}

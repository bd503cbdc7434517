/* The node's and the GPUs' inventory: CUDA, sysfs, NVML. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

void probe_inventory(struct probe_ctx *c)
{
	int i, drv = -1, rt = -1;
	char err[512];

	gethostname(c->rep.node.hostname, sizeof(c->rep.node.hostname) - 1);
	if (c->rep.node.hostname[0] == '\0')
		probe_strlcpy(c->rep.node.hostname, "unknown",
			      sizeof(c->rep.node.hostname));
	probe_cpu_model("/proc/cpuinfo", c->rep.node.cpu_model,
			sizeof(c->rep.node.cpu_model));
	gpu_versions(&drv, &rt);
	c->rep.node.cuda_driver_version = drv;
	c->rep.node.cuda_runtime_version = rt;
	if (!c->cli.no_nvml) {
		c->nvml = probe_nvml_load(err, sizeof(err));
		if (c->nvml == NULL)
			probe_log(
			    "NVML unavailable (%s): topology fields will be "
			    "null, telemetry off",
			    err);
	}
	c->rep.node.nvml_available = c->nvml != NULL;
	probe_nvml_driver_version(c->nvml, c->rep.node.driver_version,
				  sizeof(c->rep.node.driver_version));
	c->rep.gpus = calloc((size_t)c->ndev, sizeof(*c->rep.gpus));
	c->rep.n_gpus = (size_t)c->ndev;
	c->rep.node.gpu_count = c->ndev;
	for (i = 0; i < c->ndev; i++) {
		struct probe_gpu *g = &c->rep.gpus[i];
		struct gpu_info *in = &c->info[i];
		char devid[16];
		unsigned id = 0;

		probe_gpu_init(g, c->devs[i]);
		if (gpu_get_info(c->devs[i], in, err, sizeof(err)) != GPU_OK) {
			probe_log("gpu %d: %s", c->devs[i], err);
			continue;
		}
		probe_strlcpy(g->uuid, in->uuid, sizeof(g->uuid));
		probe_strlcpy(g->name, in->name, sizeof(g->name));
		probe_strlcpy(g->pci_bus_id, in->pci_bus_id,
			      sizeof(g->pci_bus_id));
		snprintf(g->compute_capability, sizeof(g->compute_capability),
			 "%d.%d", in->cc_major, in->cc_minor);
		g->sm_count = in->sm_count;
		g->memory_total_bytes = in->memory_total_bytes;
		probe_sysfs_pci("/sys", in->pci_bus_id, &g->numa_node, devid,
				sizeof(devid));
		if (devid[0]) {
			probe_strlcpy(g->pci_device_id, devid,
				      sizeof(g->pci_device_id));
			id = (unsigned)strtoul(devid, NULL, 16);
		}
		c->ds[i] = probe_datasheet_lookup(id);
		c->nvdev[i] =
		    probe_nvml_device(c->nvml, in->uuid, in->pci_bus_id);
		probe_nvml_fill_gpu(c->nvml, c->nvdev[i], g);
		if (g->compute_processes > 0)
			probe_log(
			    "gpu %d: %d other compute process(es) running: "
			    "figures may be low",
			    c->devs[i], g->compute_processes);
	}
}

/* The node's and the GPUs' inventory: CUDA, sysfs, NVML. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

/* node.gpu_uuids: NVML's enumeration of the node's GPUs, all of them
 * whatever --devices selected, or null with one line saying why (the
 * server marks a GPU of the host that a non-null list leaves out as
 * removed, so never a partial list). nvml_err: why NVML did not load.
 * Returns 0 (listed) or -1 (null). */
static int node_gpu_uuids(struct probe_ctx *c, const char *nvml_err)
{
	struct probe_nvml_enum *e = NULL;	    /* owned */
	const char **measured = NULL;		    /* owned */
	char(*list)[PROBE_GPU_UUID_MAX + 1] = NULL; /* owned until moved */
	char why[512] = "out of memory";
	size_t i, n = 0;
	int rc = -1;

	e = calloc(1, sizeof(*e));
	measured = calloc(c->rep.n_gpus + 1, sizeof(*measured));
	list = calloc(PROBE_MAX_GPUS, sizeof(*list));
	if (e == NULL || measured == NULL || list == NULL ||
	    (c->rep.gpus == NULL && c->rep.n_gpus))
		goto out;
	if (c->nvml == NULL && c->cli.no_nvml)
		snprintf(e->unavailable, sizeof(e->unavailable),
			 "--no-nvml given");
	else if (c->nvml == NULL)
		snprintf(e->unavailable, sizeof(e->unavailable),
			 "NVML unavailable (%.200s)", nvml_err);
	else
		probe_nvml_enumerate(c->nvml, e);
	for (i = 0; i < c->rep.n_gpus; i++)
		measured[i] = c->rep.gpus[i].uuid;
	if (probe_gpu_uuids_decide(e, measured, c->rep.n_gpus, list, &n, why,
				   sizeof(why)) != 0)
		goto out;
	c->rep.node.gpu_uuids = list; /* the report owns it */
	c->rep.node.n_gpu_uuids = n;
	c->rep.node.gpu_uuids_known = 1;
	list = NULL;
	rc = 0;
out:
	if (rc != 0)
		probe_log("node inventory not reported: %s", why);
	free(list);
	free(measured);
	free(e);
	return rc;
}

void probe_inventory(struct probe_ctx *c)
{
	int i, drv = -1, rt = -1;
	char err[512], nvml_err[512] = "";

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
		c->nvml = probe_nvml_load(nvml_err, sizeof(nvml_err));
		if (c->nvml == NULL)
			probe_log(
			    "NVML unavailable (%s): topology fields will be "
			    "null, telemetry off",
			    nvml_err);
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
	node_gpu_uuids(c, nvml_err); /* -1: null, and logged */
}

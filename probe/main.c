/* gpusizer-probe: measures a GPU node and reports to gpusizer.
 * See docs/PROBE.md (method, report format, CLI, exit codes). The
 * measurements are listed in registry.h and live in probe/m_*.c. */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deliver.h"
#include "registry.h"
#include "run.h"
#include "util.h"

static void now_rfc3339(char *out, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	probe_rfc3339_utc(&ts, out, len);
}

/* libcuda.so.1 present? Distinguishes "no driver" from CUDA errors. */
static int driver_present(char *why, size_t len)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(why, len, "%s", dlerror());
		return 0;
	}
	dlclose(h);
	return 1;
}

/* 0 with c->rep.error_* empty when GPUs are there (*count of them),
 * else -1 with the reason in c->rep.error_code/message. */
static int find_devices(struct probe_ctx *c, int *count)
{
	char errname[64], msg[512];

	if (!driver_present(msg, sizeof(msg))) {
		probe_strlcpy(c->rep.error_code, "no_driver",
			      sizeof(c->rep.error_code));
		snprintf(c->rep.error_message, sizeof(c->rep.error_message),
			 "NVIDIA driver not found (%.400s)", msg);
		return -1;
	}
	if (gpu_device_count(count, errname, sizeof(errname), msg,
			     sizeof(msg)) != 0) {
		probe_strlcpy(c->rep.error_code, errname,
			      sizeof(c->rep.error_code));
		probe_strlcpy(c->rep.error_message, msg,
			      sizeof(c->rep.error_message));
		return -1;
	}
	return 0;
}

/* The no_device report: node facts that need no GPU. */
static void no_device_report(struct probe_ctx *c)
{
	int drv = -1, rt = -1;

	fprintf(stderr,
		"gpusizer-probe: FATAL: no usable NVIDIA GPU (%s: %s)\n",
		c->rep.error_code, c->rep.error_message);
	c->rep.status = PROBE_RUN_NO_DEVICE;
	gethostname(c->rep.node.hostname, sizeof(c->rep.node.hostname) - 1);
	if (!c->rep.node.hostname[0])
		probe_strlcpy(c->rep.node.hostname, "unknown",
			      sizeof(c->rep.node.hostname));
	probe_cpu_model("/proc/cpuinfo", c->rep.node.cpu_model,
			sizeof(c->rep.node.cpu_model));
	gpu_versions(&drv, &rt);
	c->rep.node.cuda_driver_version = drv > 0 ? drv : -1;
	c->rep.node.cuda_runtime_version = rt > 0 ? rt : -1;
}

/* --devices (each must exist) or all. 0 or -1 (usage error). */
static int select_devices(struct probe_ctx *c, int count)
{
	int i;

	c->node_gpus = count < PROBE_MAXG ? count : PROBE_MAXG;
	if (c->cli.n_devices == 0) {
		c->ndev = c->node_gpus;
		for (i = 0; i < c->ndev; i++)
			c->devs[i] = i;
		return 0;
	}
	for (i = 0; i < c->cli.n_devices; i++) {
		if (c->cli.devices[i] >= count) {
			fprintf(stderr,
				"gpusizer-probe: --devices: GPU %d does not "
				"exist (%d found)\n",
				c->cli.devices[i], count);
			return -1;
		}
		c->devs[i] = c->cli.devices[i];
	}
	c->ndev = c->cli.n_devices;
	return 0;
}

/* Inventory, kernels, sampling and libraries, then every selected
 * measurement of the registry. */
static void measure(struct probe_ctx *c)
{
	const struct probe_measurement *tab;
	char err[512];
	size_t n;
	int i;

	probe_inventory(c);
	for (i = 0; i < c->ndev; i++)
		if (gpu_preload(c->devs[i], err, sizeof(err)) != GPU_OK)
			probe_log("gpu %d: preloading kernels: %s", c->devs[i],
				  err);
	c->smp.min_samples = 5;
	c->smp.max_samples = c->cli.quick ? 5 : 30;
	c->smp.cv_target = 0.01;
	c->smp.sample_ms = c->cli.quick ? 10 : 50;
	c->smp.warmup_ops = c->cli.quick ? 2 : 4;
	c->smp.min_seconds = 0;
	if (c->cli.only_mask & PROBE_ONLY_GEMM)
		c->gemm_lib_ok =
		    gpu_gemm_load(&c->rep.node.cublaslt_version,
				  c->gemm_lib_err,
				  sizeof(c->gemm_lib_err)) == GPU_OK;
	if (c->cli.only_mask & PROBE_ONLY_NCCL)
		c->nccl_lib_ok =
		    gpu_nccl_load(&c->rep.node.nccl_version, c->nccl_lib_err,
				  sizeof(c->nccl_lib_err)) == GPU_OK;
	tab = probe_registry(&n);
	probe_run_all(c, tab, n);
}

static enum probe_exit measurement_code(const struct probe_report *r)
{
	size_t i;
	int ok = 0, lib = 0, other = 0;

	for (i = 0; i < r->n_results; i++) {
		const struct probe_result *x = &r->results[i];
		if (x->status == PROBE_RESULT_OK)
			ok++;
		else if (x->lib_missing)
			lib++;
		else if (x->partial)
			other++;
	}
	return probe_exit_for_run(r->status, ok, lib, other);
}

int main(int argc, char **argv)
{
	static struct probe_ctx c;
	char err[512], token[4096] = "";
	struct probe_post_opts po;
	enum probe_exit code;
	enum probe_delivery delivery = PROBE_DELIVERY_NONE;
	int count = 0, written;

	if (probe_cli_parse(argc, argv, getenv("GPUSIZER_SPOOL_DIR"), &c.cli,
			    err, sizeof(err)) != 0) {
		fprintf(stderr, "gpusizer-probe: %s\n%s", err, probe_usage());
		return PROBE_EXIT_USAGE;
	}
	if (c.cli.help) {
		fputs(probe_usage(), stdout);
		return PROBE_EXIT_OK;
	}
	if (c.cli.version) {
		printf("gpusizer-probe %s (report schema %d)\n", PROBE_VERSION,
		       PROBE_SCHEMA_VERSION);
		return PROBE_EXIT_OK;
	}
	if (c.cli.list) {
		size_t n;
		const struct probe_measurement *tab = probe_registry(&n);
		probe_registry_print(tab, n, stdout);
		return PROBE_EXIT_OK;
	}
	if (c.cli.server) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		if (probe_post_setup(&c, &po, token, sizeof(token)) != 0)
			return PROBE_EXIT_USAGE;
	}
	if (c.cli.post_file || c.cli.flush_spool) {
		enum probe_exit rc = PROBE_EXIT_OK;
		if (c.cli.flush_spool)
			rc = (enum probe_exit)probe_do_flush(&c, &po);
		/* a refused spool's 1 is not hidden by the post's 5 or 6
		 * (review s25c K5) */
		if (c.cli.post_file)
			rc = probe_exit_combine(
			    rc, (enum probe_exit)probe_do_post_file(&c, &po));
		curl_global_cleanup();
		return (int)rc;
	}

	pthread_mutex_init(&c.mu, NULL);
	probe_report_init(&c.rep);
	if (probe_uuid_v4(c.rep.run_id) != 0) {
		fprintf(stderr, "gpusizer-probe: FATAL: cannot generate a "
				"run id (no randomness)\n");
		return PROBE_EXIT_FAILED;
	}
	now_rfc3339(c.rep.started_at, sizeof(c.rep.started_at));
	probe_strlcpy(c.rep.sizing, c.cli.quick ? "quick" : "full",
		      sizeof(c.rep.sizing));
	probe_strlcpy(c.rep.mode, c.cli.only_given ? "custom" : c.rep.sizing,
		      sizeof(c.rep.mode));
	if (c.cli.only_given)
		probe_strlcpy(c.rep.only, c.cli.only_text, sizeof(c.rep.only));

	if (find_devices(&c, &count) != 0) {
		no_device_report(&c);
		code = PROBE_EXIT_NO_DEVICE;
	} else {
		if (select_devices(&c, count) != 0)
			return PROBE_EXIT_USAGE;
		measure(&c);
		probe_report_finalize_status(&c.rep);
		code = measurement_code(&c.rep);
	}
	now_rfc3339(c.rep.finished_at, sizeof(c.rep.finished_at));
	written = probe_emit(&c) == 0;
	if (c.cli.server) {
		delivery = probe_deliver_report(&c, &po);
		curl_global_cleanup();
	}
	code = probe_exit_final(code, written, delivery);
	probe_nvml_unload(c.nvml);
	probe_report_free(&c.rep);
	return (int)code;
}

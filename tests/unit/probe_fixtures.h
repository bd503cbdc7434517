/* Fixtures shared by the probe's unit tests (tests/unit/test_probe_*.c):
 * the fixture directory, a sample report, and the checker's verdict. Static
 * inline so a test file that uses some of them compiles with -Werror.
 * Include after testlib.h (CHECK) and the probe headers it names. */
#ifndef GPUSIZER_TESTS_PROBE_FIXTURES_H
#define GPUSIZER_TESTS_PROBE_FIXTURES_H

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "report.h"
#include "report_check.h"
#include "testlib.h"
#include "util.h"

#define FIX "tests/fixtures/probe/"

/* A report of 2 GPUs and 3 results: 0 ok on GPU 0 with shape and
 * telemetry, 1 skipped on GPU 1, 2 node-wide (NCCL). Caller frees. */
static inline void make_report(struct probe_report *r)
{
	struct probe_result x;
	const double s[] = {790, 795, 800, 798, 793};
	int i;

	probe_report_init(r);
	CHECK(probe_uuid_v4(r->run_id) == 0);
	strcpy(r->mode, "quick");
	strcpy(r->sizing, "quick");
	strcpy(r->started_at, "2025-11-21T00:00:00.000Z");
	strcpy(r->finished_at, "2025-11-21T00:00:42.000Z");
	strcpy(r->node.hostname, "node017");
	strcpy(r->node.cpu_model, "Synthetic CPU");
	strcpy(r->node.driver_version, "580.82.07");
	r->node.cuda_driver_version = 13000;
	r->node.cuda_runtime_version = 13000;
	r->node.nvml_available = 1;
	r->node.gpu_count = 2;
	r->gpus = calloc(2, sizeof(*r->gpus));
	r->n_gpus = 2;
	for (i = 0; i < 2; i++) {
		struct probe_gpu *g = &r->gpus[i];
		probe_gpu_init(g, i);
		snprintf(g->uuid, sizeof(g->uuid),
			 "GPU-00000000-0000-4000-8000-00000000000%d", i);
		strcpy(g->name, "NVIDIA H100 80GB HBM3");
		strcpy(g->compute_capability, "9.0");
		g->pcie_gen_current = 5;
		g->pcie_gen_max = 5;
		g->pcie_width_current = 16;
		g->pcie_width_max = 16;
		g->pcie_limit_gbps = probe_pcie_gbps(5, 16);
		g->nvlink_active_links = 18;
		g->ecc_enabled = 1;
		g->mig_mode = 0;
	}
	/* ok, with shape and telemetry */
	probe_result_init(&x);
	x.gpu_index = 0;
	strcpy(x.gpu_uuid, r->gpus[0].uuid);
	strcpy(x.metric, "gemm_tflops");
	strcpy(x.dtype, "bf16");
	strcpy(x.method, "cublaslt");
	strcpy(x.unit, "TFLOP/s");
	x.m = 2048;
	x.n = 2048;
	x.k = 13312;
	x.limit = 989.4;
	strcpy(x.limit_basis, "datasheet");
	strcpy(x.limit_source, "datasheet H100");
	x.telemetry.valid = 1;
	x.telemetry.sm_clock_mhz = 1755;
	x.telemetry.mem_clock_mhz = NAN;
	x.telemetry.power_w = 690;
	x.telemetry.temperature_c = 62;
	x.telemetry.reasons = 0x4;
	x.telemetry.pcie_gen = -1;
	x.telemetry.pcie_width = -1;
	CHECK(probe_result_set_samples(&x, s, 5) == 0);
	CHECK(probe_report_add(r, &x) != NULL);
	CHECK(x.samples == NULL); /* ownership moved */
	/* skipped */
	probe_result_init(&x);
	x.gpu_index = 1;
	strcpy(x.metric, "gemm_tflops");
	strcpy(x.dtype, "fp8_e4m3");
	strcpy(x.unit, "TFLOP/s");
	probe_result_skip(&x, 0, "needs compute capability >= %.1f", 8.9);
	CHECK(probe_report_add(r, &x) != NULL);
	/* node-wide */
	probe_result_init(&x);
	strcpy(x.metric, "nccl_allreduce_busbw_gbps");
	strcpy(x.unit, "GB/s");
	x.size_bytes = (int64_t)8 << 30;
	x.nranks = 8;
	CHECK(probe_result_set_samples(&x, s, 3) == 0);
	CHECK(probe_report_add(r, &x) != NULL);
}

/* The checker's verdict on j, with the refused field as the message's
 * start; prints what differs from want (want_field NULL: accepted). */
static inline int verdict_is(const json_t *j, const char *want_field, int line)
{
	char err[512] = "";
	int rc = probe_report_check(j, err, sizeof(err));
	int ok = want_field
		     ? rc == -1 &&
			   strncmp(err, want_field, strlen(want_field)) == 0 &&
			   err[strlen(want_field)] == ':'
		     : rc == 0;

	if (!ok)
		printf("# line %d: want %s%s, got rc %d \"%s\"\n", line,
		       want_field ? "refusal of " : "acceptance",
		       want_field ? want_field : "", rc, err);
	return ok;
}
#define ACCEPTED(j)	  CHECK(verdict_is((j), NULL, __LINE__))
#define REFUSED(j, field) CHECK(verdict_is((j), (field), __LINE__))

static inline json_t *res_at(json_t *j, size_t i)
{
	return json_array_get(json_object_get(j, "results"), i);
}

static inline json_t *gpu_at(json_t *j, size_t i)
{
	return json_array_get(json_object_get(j, "gpus"), i);
}

#endif

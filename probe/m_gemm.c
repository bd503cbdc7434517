/* gemm: cuBLASLt GEMM throughput per GPU and dtype (registry.h). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "run.h"
#include "util.h"

struct shape {
	int m, n, k;
};

struct dtype_plan {
	enum gpu_dtype dt;
	const char *name;
	const char *unit;
	const struct shape *shapes;
	int nshapes;
};

static const struct shape big_full[] = {
    {8192, 8192, 8192},
    {4096, 4096, 16384},
    {2048, 2048, 13312},
    {16384, 8192, 8192},
};
/* FP8 adds mamf-finder's best FP8 shape on H100 SXM, 1024 x 9216 x
 * 14336 (1402.6 TFLOP/s, ml-engineering compute/accelerator/README.md;
 * PROBE.md section 4): the sweep then holds the shape the reference
 * figure was taken at. */
static const struct shape fp8_full[] = {
    {8192, 8192, 8192},	 {4096, 4096, 16384}, {2048, 2048, 13312},
    {16384, 8192, 8192}, {1024, 9216, 14336},
};
static const struct shape tf32_full[] = {{8192, 8192, 8192},
					 {4096, 4096, 4096}};
static const struct shape cube8k[] = {{8192, 8192, 8192}};
static const struct shape cube4k[] = {{4096, 4096, 4096}};

static void gemm_plan(int quick, struct dtype_plan *p)
{
	const struct dtype_plan full[7] = {
	    {GPU_DT_BF16, "bf16", "TFLOP/s", big_full, 4},
	    {GPU_DT_FP16, "fp16", "TFLOP/s", big_full, 4},
	    {GPU_DT_FP8_E4M3, "fp8_e4m3", "TFLOP/s", fp8_full, 5},
	    {GPU_DT_TF32, "tf32", "TFLOP/s", tf32_full, 2},
	    {GPU_DT_FP32, "fp32", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP64, "fp64", "TFLOP/s", cube8k, 1},
	    {GPU_DT_INT8, "int8", "TOP/s", big_full, 4},
	};
	const struct dtype_plan q[7] = {
	    {GPU_DT_BF16, "bf16", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP16, "fp16", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP8_E4M3, "fp8_e4m3", "TFLOP/s", cube8k, 1},
	    {GPU_DT_TF32, "tf32", "TFLOP/s", cube8k, 1},
	    {GPU_DT_FP32, "fp32", "TFLOP/s", cube4k, 1},
	    {GPU_DT_FP64, "fp64", "TFLOP/s", cube4k, 1},
	    {GPU_DT_INT8, "int8", "TOP/s", cube8k, 1},
	};
	memcpy(p, quick ? q : full, sizeof(full));
}

void probe_gemm_limits(struct probe_ctx *c, int pos, struct probe_result *r)
{
	const struct probe_datasheet *d = c->ds[pos];
	double spec = probe_datasheet_gemm(d, r->dtype);

	if (!isfinite(spec))
		return;
	r->limit = spec;
	probe_strlcpy(r->limit_basis, "datasheet", sizeof(r->limit_basis));
	snprintf(r->limit_source, sizeof(r->limit_source),
		 "datasheet %s dense %s at %.0f MHz", d->name, r->dtype,
		 d->spec_clock_mhz);
	if (r->telemetry.valid)
		r->limit_clock_adjusted = probe_clock_adjusted(
		    spec, r->telemetry.sm_clock_mhz, d->spec_clock_mhz);
}

void probe_run_gemm(struct probe_ctx *c, int pos)
{
	struct dtype_plan plan[7];
	int di, si;
	int max_algos = c->cli.quick ? 4 : 16;

	gemm_plan(c->cli.quick, plan);
	for (di = 0; di < 7; di++) {
		struct probe_result sweep[8], sum, r;
		char err[512] = "";
		int nsweep = 0;

		probe_result_for(c, &r, pos, "gemm_tflops", plan[di].unit);
		probe_strlcpy(r.dtype, plan[di].name, sizeof(r.dtype));
		probe_strlcpy(r.method, "cublaslt", sizeof(r.method));
		r.concurrent = !c->cli.isolated && c->ndev > 1;
		if (!c->gemm_lib_ok) {
			probe_skip(c, &r, 1, 1, c->gemm_lib_err);
			continue;
		}
		/* Not applicable (compute capability): one summary says so. */
		if (gpu_gemm_supported(c->devs[pos], plan[di].dt, err,
				       sizeof(err)) != GPU_OK) {
			probe_skip(c, &r, 0, 0, err);
			continue;
		}
		for (si = 0; si < plan[di].nshapes; si++) {
			const struct shape *s = &plan[di].shapes[si];
			double samples[PROBE_MAXSAMPLES];
			char note[160] = "";
			int n = 0, rc;
			struct probe_result *x = &sweep[nsweep++];
			struct probe_tel_window tw;
			struct gpu_window win;

			*x = r;
			probe_strlcpy(x->metric, "gemm_sweep_tflops",
				      sizeof(x->metric));
			x->m = s->m;
			x->n = s->n;
			x->k = s->k;
			win = probe_tel_window(&tw, c, &pos, 1, &x->telemetry);
			err[0] = '\0';
			rc = gpu_gemm(c->devs[pos], plan[di].dt, s->m, s->n,
				      s->k, max_algos, &c->smp, &win, samples,
				      &n, note, sizeof(note), err, sizeof(err));
			probe_strlcpy(x->note, note, sizeof(x->note));
			probe_gemm_limits(c, pos, x);
			if (rc == GPU_OK && n > 0) {
				if (probe_result_set_samples(x, samples,
							     (size_t)n) != 0)
					probe_result_fail(
					    x, "could not compute statistics");
			} else if (rc == GPU_SKIP) {
				/* No algorithm for this shape: the other
				 * shapes still count. */
				probe_result_skip(x, 0, "%s", err);
			} else {
				probe_result_fail(
				    x, "%s",
				    err[0] ? err : "measurement failed");
			}
		}
		/* The summary: the best shape (issue 14, defect 8: a skipped
		 * shape no longer drops it). */
		if (probe_gemm_summary(sweep, (size_t)nsweep, &sum) == 0)
			probe_store(c, &sum);
		/* Every shape as a sweep result when there are several. */
		for (si = 0; si < nsweep; si++) {
			if (plan[di].nshapes > 1)
				probe_store(c, &sweep[si]);
			else
				free(sweep[si].samples);
		}
	}
}

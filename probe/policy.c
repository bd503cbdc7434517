#include "policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int probe_batch_ops(double op_ms, double target_ms, int launches_per_op)
{
	int cap, per = launches_per_op > 0 ? launches_per_op : 1;
	double l;

	cap = (PROBE_LAUNCH_QUEUE_BUDGET - PROBE_BATCH_OVERHEAD) / per;
	if (cap < 1)
		cap = 1;
	if (!(op_ms > 0) || !isfinite(op_ms) || !(target_ms > 0))
		return 1;
	l = target_ms / op_ms;
	if (!(l >= 1))
		return 1;
	if (l >= cap)
		return cap;
	return (int)(l + 0.5) > cap ? cap : (int)(l + 0.5);
}

void probe_deadline_start(struct probe_deadline *d, double now_s,
			  double seconds)
{
	d->end_s = now_s + (seconds > 0 ? seconds : 0);
}

int probe_deadline_passed(const struct probe_deadline *d, double now_s)
{
	return now_s >= d->end_s;
}

double probe_deadline_left(const struct probe_deadline *d, double now_s)
{
	return now_s >= d->end_s ? 0.0 : d->end_s - now_s;
}

double probe_nccl_deadline_s(double bytes, int ops)
{
	double b = bytes > 0 ? bytes : 0;

	return 30.0 + (ops > 0 ? ops : 1) * b / 0.5e9;
}

size_t probe_nccl_sizes(int quick, size_t max_bytes, size_t *out, size_t max)
{
	size_t n = 0, s;

	if (quick) {
		const size_t q[2] = {(size_t)64 << 20, (size_t)1 << 30};
		for (s = 0; s < 2 && n < max; s++)
			if (q[s] <= max_bytes)
				out[n++] = q[s];
		return n;
	}
	for (s = (size_t)8 << 20; s <= (size_t)8 << 30 && n < max; s *= 2)
		if (s <= max_bytes)
			out[n++] = s;
	return n;
}

size_t probe_nccl_buffer_floats(size_t bytes, int ndevs)
{
	size_t unit, floats;

	if (ndevs < 1)
		return 0;
	unit = (size_t)ndevs * 4;
	floats = (bytes + sizeof(float) - 1) / sizeof(float);
	floats = (floats + unit - 1) / unit * unit;
	return floats < unit ? unit : floats;
}

int probe_nccl_rank_counts(int ngpus, int *out, int max)
{
	int n = 0, r;

	for (r = 2; r <= 8 && r <= ngpus && n < max; r *= 2)
		out[n++] = r;
	if (ngpus >= 2 && n < max && n > 0 && out[n - 1] != ngpus)
		out[n++] = ngpus;
	return n;
}

enum probe_nccl_plan probe_nccl_plan(int ngpus, int node_gpus, int any_mig,
				     int lib_ok)
{
	if (ngpus < 2)
		return PROBE_NCCL_ONE_GPU;
	if (ngpus < node_gpus)
		return PROBE_NCCL_SUBSET;
	if (any_mig)
		return PROBE_NCCL_MIG;
	if (!lib_ok)
		return PROBE_NCCL_NO_LIBRARY;
	return PROBE_NCCL_RUN;
}

int probe_gemm_summary(const struct probe_result *sweep, size_t n,
		       struct probe_result *out)
{
	const struct probe_result *best = NULL, *bad = NULL;
	size_t i;

	if (n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct probe_result *x = &sweep[i];
		if (x->status == PROBE_RESULT_OK) {
			if (best == NULL ||
			    x->stats.median > best->stats.median)
				best = x;
		} else if (bad == NULL &&
			   (x->status == PROBE_RESULT_FAILED || x->partial)) {
			bad = x;
		}
	}
	*out = best ? *best : sweep[0];
	out->samples = NULL;
	out->n_samples = 0;
	probe_strlcpy(out->metric, "gemm_tflops", sizeof(out->metric));
	if (best) {
		if (probe_result_set_samples(out, best->samples,
					     best->n_samples) != 0)
			probe_result_fail(out, "could not compute statistics");
		return 0;
	}
	out->m = out->n = out->k = 0;
	if (bad)
		probe_result_fail(out, "no shape succeeded: %s", bad->reason);
	else
		probe_result_skip(out, 0, "%s", sweep[0].reason);
	return 0;
}

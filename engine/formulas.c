/* formulas.c - textbook formulas of docs/MODEL.md (see formulas.h). */
#include "formulas.h"

#include <math.h>
#include <string.h>

const char *const eng_recompute_names[ENG_RC_COUNT + 1] = {
    [ENG_RC_NONE] = "none",	  [ENG_RC_SELECTIVE] = "selective",
    [ENG_RC_PARTIAL] = "partial", [ENG_RC_FULL] = "full",
    [ENG_RC_COUNT] = NULL,
};

const char *eng_recompute_name(enum eng_recompute r)
{
	if ((unsigned)r >= ENG_RC_COUNT)
		return "?";
	return eng_recompute_names[r];
}

double fx_tp_flops_per_byte(double width, double bytes_per_value)
{
	return 6.0 * width / bytes_per_value;
}

double fx_tp_link_needed_gbps(double peak_tflops, double flops_per_byte)
{
	return peak_tflops * 1e12 / flops_per_byte / 1e9;
}

double fx_tp_t_max(double hidden, double bytes_per_value, double peak_tflops,
		   double link_gbps)
{
	double ratio = peak_tflops * 1e12 / (link_gbps * 1e9);

	return 6.0 * hidden / (bytes_per_value * ratio);
}

double fx_act_bytes_per_layer(double s, double b, double h, double a, int t,
			      bool sequence_parallel, enum eng_recompute rc)
{
	double tt = t > 0 ? (double)t : 1.0;
	double sbh = s * b * h;
	double scores = 5.0 * a * s / h;

	if (rc == ENG_RC_FULL)
		return 2.0 * sbh / (sequence_parallel ? tt : 1.0);
	if (rc == ENG_RC_SELECTIVE)
		scores = 0.0;
	if (sequence_parallel)
		return sbh * (34.0 + scores) / tt;
	return sbh * (10.0 + 24.0 / tt + scores / tt);
}

struct fx_train_memory fx_train_memory(double n_params, double weight_b,
				       double grad_b, double optim_b,
				       double activations_bytes)
{
	struct fx_train_memory m;

	m.weights_bytes = n_params * weight_b;
	m.gradients_bytes = n_params * grad_b;
	m.optimizer_bytes = n_params * optim_b;
	m.activations_bytes = activations_bytes;
	m.total_bytes = m.weights_bytes + m.gradients_bytes +
			m.optimizer_bytes + m.activations_bytes;
	return m;
}

long fx_min_gpus(double total_bytes, double capacity_bytes)
{
	if (capacity_bytes <= 0.0)
		return 0;
	return (long)ceil(total_bytes / capacity_bytes - 1e-9);
}

long fx_global_batch(long grad_accum, long nnodes, long nproc_per_node,
		     long micro_batch, long tp, long pp)
{
	long mp = tp * pp;

	if (mp <= 0)
		return 0;
	return grad_accum * nnodes * nproc_per_node * micro_batch / mp;
}

double fx_updates_per_epoch(double samples, double global_batch)
{
	return samples / global_batch;
}

double fx_micro_steps(double updates, long grad_accum)
{
	return updates * (double)grad_accum;
}

double fx_bubble_fraction(int p, long m, int v)
{
	if (m <= 0 || v <= 0)
		return 0.0;
	return (double)(p - 1) / ((double)v * (double)m);
}

double fx_pipeline_idle_fraction(int p, long m)
{
	return (double)(p - 1) / (double)(m + p - 1);
}

double fx_ring_allreduce_s(double bytes, long n, double gbps)
{
	if (n <= 1 || gbps <= 0.0)
		return 0.0;
	return 2.0 * (double)(n - 1) / (double)n * bytes / (gbps * 1e9);
}

double fx_send_receive_s(double bytes, double gbps)
{
	return 2.0 * bytes / (gbps * 1e9);
}

double fx_compute_s(double flops, double tflops)
{
	return flops / (tflops * 1e12);
}

double fx_round_sig(double x, int digits)
{
	double r;
	int p;

	if (!isfinite(x) || x == 0)
		return x;
	p = digits - 1 - (int)floor(log10(fabs(x)));
	if (p > 300 || p < -300)
		return x;
	r = round(x * pow(10, p)) / pow(10, p);
	/* Rounding up at the top of the range (1.7977e308) overflows. */
	return isfinite(r) ? r : x;
}

double fx_train_flops_6nd(double n_params, double tokens)
{
	return 6.0 * n_params * tokens;
}

double fx_kv_bytes_per_token(double layers, double kv_heads, double head_dim,
			     double bytes)
{
	return 2.0 * layers * kv_heads * head_dim * bytes;
}

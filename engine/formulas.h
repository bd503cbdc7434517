/* formulas.h - the textbook pieces of docs/MODEL.md, as plain functions so
 * tests (tests/unit/test_engine.c) can pin every worked number and the
 * engine can reuse them.
 *
 * Units are in the names; bytes are bytes (decimal GB = 1e9 B where the
 * source counts that way), bandwidths in GB/s = 1e9 B/s, one direction.
 */
#ifndef GPUSIZER_ENGINE_FORMULAS_H
#define GPUSIZER_ENGINE_FORMULAS_H

#include <stdbool.h>

/* Activation recomputation, lightest first: none; selective (the
 * attention core, or the stack's per-op policy); partial, full recompute
 * of some layers of each pipeline chunk and none of the rest
 * (Megatron-LM --recompute-method block --recompute-num-layers k; the
 * layout's recompute_layers, MODEL.md §3); full, every layer. */
enum eng_recompute {
	ENG_RC_NONE,
	ENG_RC_SELECTIVE,
	ENG_RC_PARTIAL,
	ENG_RC_FULL,
	ENG_RC_COUNT
};
const char *eng_recompute_name(enum eng_recompute r);
/* JSON names, indexed by the enum and NULL-terminated (handlers validate
 * against it). */
extern const char *const eng_recompute_names[ENG_RC_COUNT + 1];

/* §5: FLOPs per byte of TP activation traffic for width x (h/t, or d for
 * one head per GPU): 6*x/B (2 multiply-add x 3 passes). */
double fx_tp_flops_per_byte(double width, double bytes_per_value);
/* §5: one-direction link bandwidth (GB/s) a GPU of peak_tflops needs. */
double fx_tp_link_needed_gbps(double peak_tflops, double flops_per_byte);
/* §5: t_max = 6*h / (B * peak / bw), bw one direction. */
double fx_tp_t_max(double hidden, double bytes_per_value, double peak_tflops,
		   double link_gbps);

/* §3: Korthikanti et al. 2022, Table 2 - activation bytes of ONE layer for
 * one micro-batch, 16-bit, with dropout masks:
 *   no TP:      s*b*h*(34 + 5*a*s/h)
 *   TP:         s*b*h*(10 + 24/t + 5*a*s/(h*t))
 *   TP + SP:    s*b*h*(34 + 5*a*s/h)/t
 *   selective (or flash attention) drops the 5*a*s/h term;
 *   full recompute keeps only the layer input 2*s*b*h (/t with SP);
 *   partial is a mix of whole layers, each counted as none or full. */
double fx_act_bytes_per_layer(double s, double b, double h, double a, int t,
			      bool sequence_parallel, enum eng_recompute rc);

/* §3: textbook training memory (bytes) for n_params parameters. */
struct fx_train_memory {
	double weights_bytes, gradients_bytes, optimizer_bytes;
	double activations_bytes, total_bytes;
};
struct fx_train_memory fx_train_memory(double n_params, double weight_b,
				       double grad_b, double optim_b,
				       double activations_bytes);
/* Smallest GPU count whose capacity holds total_bytes (no sharding loss). */
long fx_min_gpus(double total_bytes, double capacity_bytes);

/* §4 batch arithmetic. */
long fx_global_batch(long grad_accum, long nnodes, long nproc_per_node,
		     long micro_batch, long tp, long pp);
double fx_updates_per_epoch(double samples, double global_batch);
double fx_micro_steps(double updates, long grad_accum);

/* §4, §7.6: pipeline bubble relative to compute, (p-1)/(v*m); and the
 * fraction of wall time idle, (p-1)/(m+p-1). */
double fx_bubble_fraction(int p, long m, int v);
double fx_pipeline_idle_fraction(int p, long m);

/* §4: ring all-reduce time 2*(n-1)/n * bytes / bw; and the naive
 * send-then-receive exchange 2 * bytes / bw of §7.4. */
double fx_ring_allreduce_s(double bytes, long n, double gbps);
double fx_send_receive_s(double bytes, double gbps);
/* flops / (tflops * 1e12). */
double fx_compute_s(double flops, double tflops);
/* x rounded to `digits` significant digits, as answers print their
 * figures (a warning quoting a field must say the same number); x itself
 * when not finite, 0, or beyond 10^+-290 where 10^p is no double. */
double fx_round_sig(double x, int digits);
/* §7.4: FLOPs of a training step, 6 * params * tokens. */
double fx_train_flops_6nd(double n_params, double tokens);

/* §6, §7.8: KV-cache bytes per token 2 * L * k * d * B. */
double fx_kv_bytes_per_token(double layers, double kv_heads, double head_dim,
			     double bytes);

#endif

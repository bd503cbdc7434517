/* inference_int.h - what the parts of the inference engine share (private
 * to engine/inference*.c; the public face is inference.h).
 *
 * inference.c          entry points, validation, the search, the result
 * inference_serving.c  dtypes, serving profiles, memory of a replica
 * inference_replica.c  step times and the operating point at a load
 *
 * Each function is described where it is defined.
 */
#ifndef GPUSIZER_ENGINE_INFERENCE_INT_H
#define GPUSIZER_ENGINE_INFERENCE_INT_H

#include "inference.h"

#define GIB 1073741824.0

/* ---- dtypes, serving profiles, memory (inference_serving.c) ------------- */

struct inf_weight_format {
	bool allowed;
	double scale_bytes;
};
extern const struct inf_weight_format inf_weight_table[ENG_DTYPE_COUNT];

/* The request context: what one request fixes for every (tp, pp). */
struct ictx {
	const struct inf_request *rq;
	struct model_params P;
	double W, W_side, W_layers, W_routed; /* bytes */
	double kvB, R, R_attn, hbm, intra, inter, capacity, price;
	double h, L, f_width;
	double launch_s; /* kernel launch gaps of one step, all layers */
	int gpn;
};

/* Per-GPU memory of a (tp, pp) replica under the serving profile. */
struct mem_plan {
	double weights, workspace, usable, kv_room; /* bytes per GPU */
	double kv_seq; /* bytes one sequence holds, on average */
	long fit;      /* sequences whose KV fits */
};

void inf_memory_of(const struct ictx *c, int tp, int pp,
		   const struct inf_serving *sv, struct mem_plan *m);

/* ---- the replica model (inference_replica.c) ---------------------------- */

/* A replica and the numbers its operating point is built from. */
struct replica {
	const struct ictx *c;
	int tp, pp;
	struct inf_serving sv;
	struct mem_plan mem;
	double n_cap; /* most sequences decoding at once */
	enum inf_limit cap_limit;
	double t_pf; /* prefill latency of one prompt, alone */
	double w_pf; /* GPU time one prompt's prefill takes */
	double ctx;  /* mean context of a decoding sequence */
	/* the share of the arrivals that a request meets from other
	 * requests: 1 for an open loop (Poisson arrivals); (N - 1) / N for a
	 * closed loop of N requests in flight (the arrival theorem of mean
	 * value analysis, Reiser & Lavenberg 1980: an arriving request sees
	 * the system with N - 1 others), so one request alone meets no
	 * prefill of another and waits behind none */
	double others;
};

void inf_ictx_init(struct ictx *c, const struct inf_request *rq);
double inf_weights_read(const struct ictx *c, int tp, double b);
double inf_prefill_s(const struct ictx *c, int tp, int pp, double n_seq);
double inf_decode_s(const struct ictx *c, int tp, int pp, double b, double ctx,
		    double *t_mem_out, double *t_comp_out);
void inf_replica_init(struct replica *r, const struct ictx *c, int tp, int pp);
bool inf_plan_of(const struct ictx *c, const struct replica *r, double u_max,
		 struct inf_plan *p);

#endif

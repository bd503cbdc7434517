/* model.c - parameter counts and per-token quantities (docs/MODEL.md §1,
 * §2, §7.1 derive each term). */
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

long model_head_dim(const struct model_arch *m)
{
	if (m->head_dim > 0)
		return m->head_dim;
	if (m->heads > 0)
		return m->hidden_size / m->heads;
	return 0;
}

long model_kv_heads(const struct model_arch *m)
{
	return m->kv_heads > 0 ? m->kv_heads : m->heads;
}

static bool is_mla(const struct model_arch *m)
{
	return m->mla.kv_lora_rank > 0;
}

static bool is_moe(const struct model_arch *m)
{
	return m->moe.experts > 0;
}

/* One failed rule to the caller's fn; counts it. */
static void fail(int *bad, model_rule_fn fn, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail(int *bad, model_rule_fn fn, void *ctx, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	++*bad;
	if (fn)
		fn(ctx, msg);
}

#define FAIL(...) fail(&bad, fn, ctx, __VA_ARGS__)

int model_validate_each(const struct model_arch *m, model_rule_fn fn, void *ctx)
{
	long k = model_kv_heads(m);
	int bad = 0;

	/* Every rule whose inputs are sound is checked, so that a request
	 * learns of each bad field at once (review s18b F9: fixing kv_heads
	 * revealed heads); a rule that divides by a field checks it first. */
	if (m->layers <= 0 || m->layers > 100000)
		FAIL("model.layers: must be between 1 and 100000");
	if (m->hidden_size <= 0 || m->hidden_size > 1048576)
		FAIL("model.hidden_size: must be between 1 and 1048576");
	if (m->heads <= 0 || m->heads > m->hidden_size)
		FAIL("model.heads: must be between 1 and hidden_size");
	else if (m->kv_heads < 0 || k <= 0 || k > m->heads || m->heads % k != 0)
		FAIL("model.kv_heads: must divide heads (%ld)", m->heads);
	if (m->head_dim < 0)
		FAIL("model.head_dim: must not be negative");
	if (m->head_dim == 0 && !is_mla(m) && m->heads > 0 &&
	    m->hidden_size % m->heads != 0)
		FAIL("model.heads: must divide hidden_size (%ld) when "
		     "head_dim is not given",
		     m->hidden_size);
	if (m->vocab_size <= 0 || m->vocab_size > 100000000)
		FAIL("model.vocab_size: must be between 1 and 1e8");
	if (m->max_seq_len < 0)
		FAIL("model.max_seq_len: must not be negative");
	else if (m->learned_pos_emb && m->max_seq_len <= 0)
		FAIL("model.max_seq_len: required with learned_pos_emb");
	if (m->moe.experts < 0 || m->moe.top_k < 0 ||
	    m->moe.shared_experts < 0 || m->moe.dense_layers < 0 ||
	    m->moe.expert_ffn_hidden_size < 0) {
		FAIL("model.moe: values must not be negative");
	} else if (is_moe(m)) {
		if (m->moe.top_k < 1 || m->moe.top_k > m->moe.experts)
			FAIL("model.moe.top_k: must be between 1 and experts");
		if (m->moe.expert_ffn_hidden_size <= 0)
			FAIL("model.moe.expert_ffn_hidden_size: required with "
			     "experts");
		/* at least one MoE layer: with none the model is dense,
		 * and "moe" would only switch its defaults (stack, warning) */
		if (m->moe.router_groups < 0 ||
		    m->moe.router_groups > MODEL_MAX_ROUTER_GROUPS)
			FAIL("model.moe.router_groups: must be between 1 and "
			     "%d",
			     MODEL_MAX_ROUTER_GROUPS);
		else if (m->moe.router_group_top_k < 0)
			FAIL("model.moe.router_group_top_k: must not be "
			     "negative");
		else if ((m->moe.router_groups > 0) !=
			 (m->moe.router_group_top_k > 0))
			FAIL("model.moe.router_group_top_k: give it with "
			     "router_groups, or neither");
		else if (m->moe.router_groups > 0 &&
			 m->moe.experts % m->moe.router_groups != 0)
			FAIL("model.moe.router_groups: must divide experts "
			     "(%ld)",
			     m->moe.experts);
		else if (m->moe.router_group_top_k > m->moe.router_groups)
			FAIL("model.moe.router_group_top_k: must be between 1 "
			     "and router_groups (%ld)",
			     m->moe.router_groups);
		else if (m->moe.router_groups > 0 &&
			 m->moe.router_group_top_k *
				 (m->moe.experts / m->moe.router_groups) <
			     m->moe.top_k)
			FAIL("model.moe.router_group_top_k: its groups hold "
			     "%ld experts, fewer than top_k (%ld)",
			     m->moe.router_group_top_k *
				 (m->moe.experts / m->moe.router_groups),
			     m->moe.top_k);
		if (m->moe.dense_layers >= m->layers)
			FAIL("model.moe.dense_layers: must be below layers (a "
			     "mixture-of-experts model has at least one MoE "
			     "layer; leave moe out for a dense one)");
	}
	if ((!is_moe(m) || m->moe.dense_layers > 0) && m->ffn_hidden_size <= 0)
		FAIL("model.ffn_hidden_size: must be positive");
	if (m->mla.kv_lora_rank < 0 || m->mla.q_lora_rank < 0 ||
	    m->mla.qk_nope_head_dim < 0 || m->mla.qk_rope_head_dim < 0 ||
	    m->mla.v_head_dim < 0)
		FAIL("model.mla: values must not be negative");
	else if (is_mla(m) &&
		 (m->mla.qk_nope_head_dim <= 0 ||
		  m->mla.qk_rope_head_dim <= 0 || m->mla.v_head_dim <= 0))
		FAIL("model.mla: qk_nope_head_dim, qk_rope_head_dim and "
		     "v_head_dim are required with kv_lora_rank");
	return bad;
}

#undef FAIL

/* model_validate's first message. */
struct first_msg {
	char *err;
	size_t len;
	bool set;
};

static void keep_first(void *ctx, const char *msg)
{
	struct first_msg *f = ctx;

	if (f->set)
		return;
	f->set = true;
	if (f->err && f->len)
		snprintf(f->err, f->len, "%s", msg);
}

int model_validate(const struct model_arch *m, char *err, size_t errlen)
{
	struct first_msg f = {err, errlen, false};

	return model_validate_each(m, keep_first, &f) ? -1 : 0;
}

/* Attention parameters of one layer. GQA: h*(a*d) Q + 2*h*(k*d) K,V +
 * (a*d)*h O = h*(2h + 2kd) when a*d = h. MLA (DeepSeek-V2 §2.1): optional
 * low-rank Q, a shared KV latent plus rotary key, per-head up-projections. */
static double attn_params(const struct model_arch *m)
{
	double h = (double)m->hidden_size, a = (double)m->heads;
	double p;

	if (is_mla(m)) {
		double dqk =
		    (double)(m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim);
		double dv = (double)m->mla.v_head_dim;
		double ql = (double)m->mla.q_lora_rank;
		double kl = (double)m->mla.kv_lora_rank;
		double rope = (double)m->mla.qk_rope_head_dim;

		p = ql > 0 ? h * ql + ql + ql * a * dqk : h * a * dqk;
		p += h * (kl + rope) + kl +
		     kl * a * ((double)m->mla.qk_nope_head_dim + dv);
		p += a * dv * h;
		return p;
	}
	{
		double d = (double)model_head_dim(m);
		double k = (double)model_kv_heads(m);

		p = h * a * d + 2.0 * h * k * d + a * d * h;
		if (m->linear_biases)
			p += a * d + 2.0 * k * d + h;
	}
	return p;
}

/* One FFN of width f: gated 3*h*f, plain 2*h*f (+ biases). */
static double ffn_params(const struct model_arch *m, double f)
{
	double h = (double)m->hidden_size;
	double p = (m->gated_mlp ? 3.0 : 2.0) * h * f;

	if (m->linear_biases)
		p += (m->gated_mlp ? 2.0 : 1.0) * f + h;
	return p;
}

/* RMSNorm (gated/Llama style) has a scale; LayerNorm (GPT) scale + bias. */
static double norm_params(const struct model_arch *m)
{
	return (m->gated_mlp ? 1.0 : 2.0) * (double)m->hidden_size;
}

void model_count_params(const struct model_arch *m, struct model_params *out)
{
	double h = (double)m->hidden_size, V = (double)m->vocab_size;
	double L = (double)m->layers;
	double attn = attn_params(m) + 2.0 * norm_params(m);
	double dense_layers = L, moe_layers = 0.0;
	double moe_total = 0.0, moe_active = 0.0, routed = 0.0;
	double dense_ffn = 0.0;

	if (is_moe(m)) {
		double E = (double)m->moe.experts;
		double fe = (double)m->moe.expert_ffn_hidden_size;
		double sh = (double)m->moe.shared_experts;
		double one = ffn_params(m, fe);

		dense_layers = (double)m->moe.dense_layers;
		moe_layers = L - dense_layers;
		routed = E * one;
		/* router h*E; shared experts always active */
		moe_total = routed + h * E + sh * one;
		moe_active = (double)m->moe.top_k * one + h * E + sh * one;
	}
	if (dense_layers > 0)
		dense_ffn = ffn_params(m, (double)m->ffn_hidden_size);

	out->attn_layer = attn;
	out->layers =
	    L * attn + dense_layers * dense_ffn + moe_layers * moe_total;
	out->layers_active =
	    L * attn + dense_layers * dense_ffn + moe_layers * moe_active;
	out->routed_expert = moe_layers * routed;
	out->per_layer = out->layers / L;
	out->embedding = V * h;
	if (m->learned_pos_emb)
		out->embedding += (double)m->max_seq_len * h;
	out->lm_head = m->tied_embeddings ? 0.0 : V * h;
	/* + final norm */
	out->total =
	    out->layers + out->embedding + out->lm_head + norm_params(m);
	out->active =
	    out->layers_active + out->embedding + out->lm_head + norm_params(m);
	out->matmul_active = out->layers_active + V * h;
}

double model_attn_fwd_flops_per_token(const struct model_arch *m, double ctx)
{
	double a = (double)m->heads, L = (double)m->layers;
	double dqk, dv;

	if (is_mla(m)) {
		dqk =
		    (double)(m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim);
		dv = (double)m->mla.v_head_dim;
	} else {
		dqk = dv = (double)model_head_dim(m);
	}
	return 2.0 * ctx * a * (dqk + dv) * L;
}

double model_train_flops_per_token(const struct model_arch *m, double s)
{
	struct model_params p;

	model_count_params(m, &p);
	return 6.0 * p.matmul_active +
	       3.0 * model_attn_fwd_flops_per_token(m, s);
}

double model_kv_bytes_per_token(const struct model_arch *m, double bytes,
				int tp)
{
	double L = (double)m->layers;
	long k = model_kv_heads(m);
	long t = tp > 0 ? tp : 1;

	if (is_mla(m))
		return (double)(m->mla.kv_lora_rank + m->mla.qk_rope_head_dim) *
		       L * bytes;
	/* K and V heads are split over TP; with k < t each GPU keeps one. */
	return 2.0 * L * (double)((k + t - 1) / t) * (double)model_head_dim(m) *
	       bytes;
}

double model_params_textbook(const struct model_arch *m)
{
	double h = (double)m->hidden_size, f = (double)m->ffn_hidden_size;
	double k = (double)model_kv_heads(m), d = (double)model_head_dim(m);
	double V = (double)m->vocab_size;
	double layer =
	    h * (2.0 * h + 2.0 * k * d) + (m->gated_mlp ? 3.0 : 2.0) * h * f;

	return (double)m->layers * layer +
	       (m->tied_embeddings ? 1.0 : 2.0) * V * h;
}

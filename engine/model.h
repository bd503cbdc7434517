/* model.h - transformer architecture description and parameter counts.
 *
 * A plain struct filled by handlers/ (from a preset or a request's
 * architecture object) and read by the sizing engine. Counts follow
 * docs/MODEL.md §1, which derives each term.
 */
#ifndef GPUSIZER_ENGINE_MODEL_H
#define GPUSIZER_ENGINE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* Multi-head latent attention (DeepSeek-V2/V3). All zero when unused. */
struct model_mla {
	long q_lora_rank;      /* 0 = queries projected directly from h */
	long kv_lora_rank;     /* compressed KV width (what the cache holds) */
	long qk_nope_head_dim; /* per-head non-rotary query/key width */
	long qk_rope_head_dim; /* per-head rotary width (shared key part) */
	long v_head_dim;       /* per-head value width */
};

/* Mixture of experts. experts == 0 means a dense model. */
struct model_moe {
	long experts;		     /* routed experts per MoE layer */
	long top_k;		     /* routed experts active per token */
	long expert_ffn_hidden_size; /* FFN width of one expert */
	long shared_experts;	     /* always-active experts per MoE layer */
	long dense_layers;	     /* leading layers with a dense FFN */
	/* group-limited routing (DeepSeek's n_group / topk_group): a
	 * token's top_k experts come from router_group_top_k of
	 * router_groups equal groups of consecutive experts; 0: not
	 * limited */
	long router_groups, router_group_top_k;
};

/* At most this many router groups: DeepSeek-V2/V3 use 8, and Megatron-Core
 * suggests one a node or one an EP rank; the all-to-all's cost takes
 * time in the groups (engine/moe_dispatch.c). */
#define MODEL_MAX_ROUTER_GROUPS 1024

struct model_arch {
	long layers;	      /* L */
	long hidden_size;     /* h */
	long heads;	      /* a, attention (query) heads */
	long kv_heads;	      /* k, key/value heads (== heads without GQA) */
	long head_dim;	      /* d; 0 means hidden_size / heads */
	long ffn_hidden_size; /* f, dense FFN width */
	long vocab_size;      /* V */
	bool gated_mlp;	      /* SwiGLU-style 3 matrices instead of 2 */
	bool tied_embeddings; /* output head shares the input embedding */
	bool
	    learned_pos_emb; /* GPT-style learned positions (adds s*h params) */
	long max_seq_len;    /* for learned positions; 0 = unknown */
	bool linear_biases;  /* GPT-style biases on every linear layer */
	struct model_moe moe;
	struct model_mla mla;
};

/* Parameter counts, in parameters (not bytes). */
struct model_params {
	double total;	   /* every parameter, all experts */
	double active;	   /* parameters touched per token (top_k experts) */
	double embedding;  /* input embedding (+ learned positions) */
	double lm_head;	   /* output projection, 0 when tied */
	double per_layer;  /* mean parameters of one transformer layer */
	double attn_layer; /* attention parameters of one layer */
	/* Added by the engine (docs/MODEL.md §1): */
	double layers;	      /* all transformer-layer parameters */
	double layers_active; /* layer parameters touched per token */
	double routed_expert; /* routed-expert parameters (shardable by EP) */
	double matmul_active; /* per-token matmul parameters: layers_active +
				 the LM head (V*h, tied or not) */
};

/* Returns 0, or -1 with the first message naming a field in err (e.g.
 * "model.heads: must divide hidden_size") when *m is inconsistent. No
 * allocation.
 */
int model_validate(const struct model_arch *m, char *err, size_t errlen);
/* Each rule *m breaks, one message ("model.<field>: ...") per call of fn
 * (may be NULL); returns how many. */
typedef void (*model_rule_fn)(void *ctx, const char *msg);
int model_validate_each(const struct model_arch *m, model_rule_fn fn,
			void *ctx);
void model_count_params(const struct model_arch *m, struct model_params *out);
long model_head_dim(const struct model_arch *m);

/* k; kv_heads == 0 is read as "no GQA" (== heads). */
long model_kv_heads(const struct model_arch *m);

/* Attention-score FLOPs of one token's forward pass over a context of
 * ctx tokens, all layers: 2*ctx*a*d_qk (QK^T) + 2*ctx*a*d_v (AV). No causal
 * halving (the Megatron/PaLM accounting convention). */
double model_attn_fwd_flops_per_token(const struct model_arch *m, double ctx);

/* Model FLOPs per trained token at sequence length s (MODEL.md §2, Korthikanti
 * Eq. 7 / PaLM): 6 * matmul_active + 3 * attention forward. Embedding
 * lookups are not FLOPs; the LM head is. */
double model_train_flops_per_token(const struct model_arch *m, double s);

/* KV-cache bytes per token, all layers, held by ONE GPU of a tp-way
 * tensor-parallel group: 2 * L * ceil(k/tp) * d * bytes (MODEL.md §7.1);
 * MLA caches (kv_lora_rank + qk_rope_head_dim) * L * bytes, replicated. */
double model_kv_bytes_per_token(const struct model_arch *m, double bytes,
				int tp);

/* Textbook dense parameter count of MODEL.md §1 (no norms, no biases). */
double model_params_textbook(const struct model_arch *m);

#endif

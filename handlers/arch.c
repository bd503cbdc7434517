/* arch.c - model architecture parsing and preset resolution. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "handlers/arch.h"
#include "handlers/names.h"
#include "handlers/jsonv.h"
#include "handlers/problem.h"
#include "storage/catalog.h"

/* Bounds generous enough for any published model and small enough that
 * products of them cannot overflow a double's exact integer range.
 */
#define MAX_DIM	   1048576LL
#define MAX_LAYERS 4096LL
#define MAX_VOCAB  4194304LL

static const char *const arch_keys[] = {
    "layers",
    "hidden_size",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn_hidden_size",
    "vocab_size",
    "gated_mlp",
    "tied_embeddings",
    "learned_pos_emb",
    "max_seq_len",
    "moe",
    "mla",
    NULL,
};
static const char *const moe_keys[] = {
    "experts",	    "top_k",	     "expert_ffn_hidden_size", "shared_experts",
    "dense_layers", "router_groups", "router_group_top_k",     NULL};
static const char *const mla_keys[] = {"q_lora_rank",	   "kv_lora_rank",
				       "qk_nope_head_dim", "qk_rope_head_dim",
				       "v_head_dim",	   NULL};

static int get_long(struct jv *v, const json_t *o, const char *key,
		    bool required, long long min, long long max, long *out)
{
	long long x = *out;
	int rc = jv_int(v, o, key, required, min, max, &x);

	*out = (long)x;
	return rc;
}

/* A broken cross-field rule of the engine ("model.x: why") as a field
 * error under the object's own prefix. */
struct arch_rule_ctx {
	struct response *res;
	const char *prefix;
};

static void arch_rule_failed(void *ctx, const char *msg)
{
	const struct arch_rule_ctx *c = ctx;
	const char *colon = strchr(msg, ':');
	const char *f = msg;
	char field[96];

	if (!colon || (size_t)(colon - msg) >= 64) {
		problem_field(c->res, c->prefix[0] ? "model" : "arch", "%s",
			      msg);
		return;
	}
	/* the engine names fields "model.x"; re-rooted under the prefix */
	if (!strncmp(f, "model.", 6))
		f += 6;
	snprintf(field, sizeof(field), "%s%.*s", c->prefix, (int)(colon - f),
		 f);
	problem_field(c->res, field, "%s", colon + 2);
}

int arch_parse(const json_t *o, const char *prefix, struct model_arch *m,
	       struct response *res)
{
	struct jv v = {.res = res};
	int before = problem_field_count(res);
	const json_t *moe, *mla;

	snprintf(v.prefix, sizeof(v.prefix), "%s", prefix);
	memset(m, 0, sizeof(*m));
	m->gated_mlp = true;
	jv_reject_unknown(&v, o, arch_keys);
	get_long(&v, o, "layers", true, 1, MAX_LAYERS, &m->layers);
	get_long(&v, o, "hidden_size", true, 1, MAX_DIM, &m->hidden_size);
	get_long(&v, o, "heads", true, 1, 65536, &m->heads);
	m->kv_heads = m->heads;
	get_long(&v, o, "kv_heads", false, 1, 65536, &m->kv_heads);
	get_long(&v, o, "head_dim", false, 1, 65536, &m->head_dim);
	get_long(&v, o, "ffn_hidden_size", true, 1, MAX_DIM * 8,
		 &m->ffn_hidden_size);
	get_long(&v, o, "vocab_size", true, 1, MAX_VOCAB, &m->vocab_size);
	jv_bool(&v, o, "gated_mlp", &m->gated_mlp);
	jv_bool(&v, o, "tied_embeddings", &m->tied_embeddings);
	jv_bool(&v, o, "learned_pos_emb", &m->learned_pos_emb);
	get_long(&v, o, "max_seq_len", false, 1, 1LL << 24, &m->max_seq_len);

	moe = json_object_get(o, "moe");
	if (moe && !json_is_null(moe)) {
		struct jv mv = {.res = res};
		snprintf(mv.prefix, sizeof(mv.prefix), "%smoe.", prefix);
		if (!json_is_object(moe)) {
			jv_error(&v, "moe", "must be an object");
		} else {
			jv_reject_unknown(&mv, moe, moe_keys);
			get_long(&mv, moe, "experts", true, 1, 65536,
				 &m->moe.experts);
			get_long(&mv, moe, "top_k", true, 1, 65536,
				 &m->moe.top_k);
			get_long(&mv, moe, "expert_ffn_hidden_size", true, 1,
				 MAX_DIM * 8, &m->moe.expert_ffn_hidden_size);
			get_long(&mv, moe, "shared_experts", false, 0, 65536,
				 &m->moe.shared_experts);
			get_long(&mv, moe, "dense_layers", false, 0, MAX_LAYERS,
				 &m->moe.dense_layers);
			get_long(&mv, moe, "router_groups", false, 1,
				 MODEL_MAX_ROUTER_GROUPS,
				 &m->moe.router_groups);
			get_long(&mv, moe, "router_group_top_k", false, 1,
				 MODEL_MAX_ROUTER_GROUPS,
				 &m->moe.router_group_top_k);
		}
	}
	mla = json_object_get(o, "mla");
	if (mla && !json_is_null(mla)) {
		struct jv lv = {.res = res};
		snprintf(lv.prefix, sizeof(lv.prefix), "%smla.", prefix);
		if (!json_is_object(mla)) {
			jv_error(&v, "mla", "must be an object");
		} else {
			jv_reject_unknown(&lv, mla, mla_keys);
			get_long(&lv, mla, "q_lora_rank", false, 0, MAX_DIM,
				 &m->mla.q_lora_rank);
			get_long(&lv, mla, "kv_lora_rank", true, 1, MAX_DIM,
				 &m->mla.kv_lora_rank);
			get_long(&lv, mla, "qk_nope_head_dim", true, 1, 65536,
				 &m->mla.qk_nope_head_dim);
			get_long(&lv, mla, "qk_rope_head_dim", true, 1, 65536,
				 &m->mla.qk_rope_head_dim);
			get_long(&lv, mla, "v_head_dim", true, 1, 65536,
				 &m->mla.v_head_dim);
		}
	}
	if (problem_field_count(res) > before)
		return -1;
	/* Cross-field rules live in the engine, which names the field;
	 * every one broken is listed (review s18b F9) */
	{
		struct arch_rule_ctx c = {res, prefix};

		if (model_validate_each(m, arch_rule_failed, &c) > 0)
			return -1;
	}
	return 0;
}

int arch_resolve(struct app *app, const json_t *model, struct model_arch *m,
		 const char **name, json_t **arch_json, struct response *res)
{
	struct store_err e;
	json_t *row = NULL;
	int rc = -1;

	*arch_json = NULL;
	if (!model || json_is_null(model)) {
		problem_field(res, "model",
			      "is required: a preset name (GET /v1/models) or "
			      "an architecture object");
		return -1;
	}
	if (json_is_object(model)) {
		*name = "custom";
		if (arch_parse(model, "model.", m, res) != 0)
			return -1;
		*arch_json = json_incref((json_t *)model);
		return 0;
	}
	if (!json_is_string(model) || json_string_length(model) == 0) {
		problem_field(res, "model",
			      "must be a preset name or an architecture "
			      "object");
		return -1;
	}
	if (json_string_length(model) > 64) { /* review s23a F4 */
		problem_field(res, "model",
			      "is a name of %zu bytes: a preset name has at "
			      "most 64 (GET /v1/models), or give an "
			      "architecture object",
			      json_string_length(model));
		return -1;
	}
	{
		char suggest[3][80];
		int n = 0;
		const char *canon;

		if (names_get(app, NAMES_MODEL, json_string_value(model), &row,
			      &e, suggest, &n) != 0) {
			if (e.status != STORE_NOT_FOUND) {
				problem_store(res, &e, "model");
				return -1;
			}
			problem_field(
			    res, "model",
			    "unknown preset \"%.64s\"; GET /v1/models "
			    "lists them, or send an architecture "
			    "object",
			    json_string_value(model));
			names_suggest(res, suggest, n);
			return -1;
		}
		/* Another case or spelling of a preset: the request then
		 * carries the preset's own name, so the answer and the
		 * stored request say which preset was used. */
		canon = json_string_value(json_object_get(row, "name"));
		if (canon && strcmp(canon, json_string_value(model)) != 0)
			json_string_set((json_t *)model, canon);
	}
	*name = json_string_value(model);
	if (arch_parse(json_object_get(row, "arch"), "model.", m, res) != 0)
		goto out;
	*arch_json = json_incref(json_object_get(row, "arch"));
	rc = 0;
out:
	json_decref(row);
	return rc;
}

json_t *arch_params_json(const struct model_arch *m)
{
	struct model_params p;

	model_count_params(m, &p);
	/* Counts are whole numbers (exact in a double below 2^53); the mean
	 * layer of a MoE model with dense layers may not be.
	 */
	return json_pack(
	    "{s:o, s:o, s:o, s:o, s:o}", "total", arch_count_json(p.total),
	    "active", arch_count_json(p.active), "embedding",
	    arch_count_json(p.embedding), "lm_head", arch_count_json(p.lm_head),
	    "per_layer", arch_count_json(p.per_layer));
}

json_t *arch_count_json(double count)
{
	if (isfinite(count) && count == floor(count) && fabs(count) < 9e15)
		return json_integer((json_int_t)count);
	return json_real(count);
}

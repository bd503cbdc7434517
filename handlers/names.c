/* names.c - see names.h. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "handlers/jsonv.h"
#include "handlers/names.h"
#include "storage/catalog.h"

/* Short names users type, and the catalog entry they usually mean: the
 * SXM/flagship part of a family (NVIDIA's and AMD's own short names), and
 * model names as their papers and hubs spell them. Data, not code: add a
 * row to forgive another spelling. */
static const struct {
	enum names_kind kind;
	const char *alias, *name;
} aliases[] = {
    {NAMES_GPU, "h100", "h100-sxm5-80gb"},
    {NAMES_GPU, "h100-sxm", "h100-sxm5-80gb"},
    {NAMES_GPU, "h100-pcie", "h100-pcie-80gb"},
    {NAMES_GPU, "h100-nvl", "h100-nvl-94gb"},
    {NAMES_GPU, "h200", "h200-sxm-141gb"},
    {NAMES_GPU, "h200-nvl", "h200-nvl-141gb"},
    {NAMES_GPU, "h800", "h800-sxm5-80gb"},
    {NAMES_GPU, "a100", "a100-sxm4-80gb"},
    {NAMES_GPU, "a100-80gb", "a100-sxm4-80gb"},
    {NAMES_GPU, "a100-40gb", "a100-sxm4-40gb"},
    {NAMES_GPU, "a100-pcie", "a100-pcie-80gb"},
    {NAMES_GPU, "a800", "a800-sxm4-80gb"},
    {NAMES_GPU, "b200", "b200-sxm-180gb"},
    {NAMES_GPU, "gb200", "gb200-nvl72-186gb"},
    {NAMES_GPU, "l40s", "l40s-48gb"},
    {NAMES_GPU, "l4", "l4-24gb"},
    {NAMES_GPU, "mi300x", "mi300x-192gb"},
    {NAMES_GPU, "rtx-4090", "rtx-4090-24gb"},
    {NAMES_GPU, "4090", "rtx-4090-24gb"},
    {NAMES_GPU, "rtx-3090", "rtx-3090-24gb"},
    {NAMES_GPU, "3090", "rtx-3090-24gb"},
    {NAMES_GPU, "rtx-5090", "rtx-5090-32gb"},
    {NAMES_GPU, "5090", "rtx-5090-32gb"},
    /* Llama 3 405B exists only as 3.1; GPT-3 is 175B. */
    {NAMES_MODEL, "llama-3-405b", "llama-3.1-405b"},
    {NAMES_MODEL, "llama3-405b", "llama-3.1-405b"},
    {NAMES_MODEL, "gpt3", "gpt-3-175b"},
    {NAMES_MODEL, "gpt-3", "gpt-3-175b"},
    {NAMES_MODEL, "deepseek-v3-671b", "deepseek-v3"},
    {NAMES_MODEL, "mixtral", "mixtral-8x7b"},
    /* stacks (issue 13): the names users give their framework */
    {NAMES_STACK, "megatron", "megatron-core"},
    {NAMES_STACK, "mcore", "megatron-core"},
    {NAMES_STACK, "megatron-lm", "megatron-lm-2021"},
    {NAMES_STACK, "fsdp", "pytorch-fsdp2-fa2"},
    {NAMES_STACK, "fsdp2", "pytorch-fsdp2-fa2"},
    {NAMES_STACK, "deepspeed", "deepspeed-zero"},
    {NAMES_STACK, "qlora", "hf-peft-bnb4"},
    {NAMES_STACK, "peft", "hf-peft-bnb4"},
    {NAMES_STACK, "huggingface", "hf-peft-bnb4"},
};

/* The catalog each kind of name lives in (storage/catalog.h). */
static const struct {
	enum store_status (*list)(struct db_pool *, json_t **,
				  struct store_err *);
	enum store_status (*get)(struct db_pool *, const char *, json_t **,
				 struct store_err *);
} catalogs[] = {
    [NAMES_GPU] = {store_gpu_list, store_gpu_get},
    [NAMES_MODEL] = {store_model_list, store_model_get},
    [NAMES_STACK] = {store_stack_list, store_stack_get},
};

/* Lower case, letters and digits only: "Llama-2_70B" -> "llama270b". */
static void squash(const char *in, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *in && n + 1 < outlen; in++)
		if (isalnum((unsigned char)*in))
			out[n++] = (char)tolower((unsigned char)*in);
	out[n] = '\0';
}

/* How far a name is from what was asked (both squashed): Levenshtein
 * distance of the asked text to the closest prefix of the name first (a
 * short name is close to the entries it starts), then to the whole name.
 * Names are at most 64 bytes. */
static int score(const char *asked_sq, const char *name)
{
	int prev[81], cur[81], best;
	char b[80];
	size_t la = strlen(asked_sq), lb;

	squash(name, b, sizeof(b));
	lb = strlen(b);
	if (la > 79)
		return 1 << 20;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (asked_sq[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins)
					   : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	best = prev[0];
	for (size_t j = 1; j <= lb; j++)
		if (prev[j] < best)
			best = prev[j];
	return best * 100 + prev[lb];
}

/* How many names of items (and extra, when not NULL) asked is the leading
 * dash-separated words of; *only, when not NULL, one of them. */
static int prefixed(const json_t *items, const char *extra, const char *asked,
		    const char **only)
{
	size_t len = strlen(asked), n_names = json_array_size(items);
	int n = 0;

	for (size_t i = 0; len && i <= n_names; i++) {
		const char *name = i < n_names
				       ? json_string_value(json_object_get(
					     json_array_get(items, i), "name"))
				       : extra;
		if (name && !strncasecmp(name, asked, len) &&
		    name[len] == '-') {
			if (only)
				*only = name;
			n++;
		}
	}
	return n;
}

/* The entry of items - and extra, a name being created, when not NULL -
 * that asked finds, in names.h's order; NULL when none. */
static const char *match(const json_t *items, const char *extra,
			 enum names_kind kind, const char *asked)
{
	const char *found = NULL, *only = NULL;
	char asked_sq[80], sq[80];
	size_t i, n_names = json_array_size(items) + (extra != NULL);

#define NAME_AT(k)                                                             \
	((k) < json_array_size(items)                                          \
	     ? json_string_value(                                              \
		   json_object_get(json_array_get(items, (k)), "name"))        \
	     : extra)
	squash(asked, asked_sq, sizeof(asked_sq));
	/* the same name in any case */
	for (i = 0; i < n_names; i++)
		if (NAME_AT(i) && !strcasecmp(NAME_AT(i), asked))
			return NAME_AT(i);
	/* an alias, in any case and punctuation, that names an entry */
	for (size_t a = 0; a < sizeof(aliases) / sizeof(aliases[0]); a++) {
		squash(aliases[a].alias, sq, sizeof(sq));
		if (aliases[a].kind != kind || strcmp(sq, asked_sq) != 0)
			continue;
		for (i = 0; i < n_names; i++)
			if (NAME_AT(i) && !strcmp(NAME_AT(i), aliases[a].name))
				found = NAME_AT(i);
		if (found)
			return found;
	}
	/* the same letters and digits */
	for (i = 0; i < n_names; i++) {
		if (!NAME_AT(i))
			continue;
		squash(NAME_AT(i), sq, sizeof(sq));
		if (asked_sq[0] && !strcmp(sq, asked_sq))
			return NAME_AT(i);
	}
	/* the leading dash-separated words of exactly one entry
	 * ("h100-sxm5" -> "h100-sxm5-80gb"); a prefix of several, as "h100",
	 * resolves only through the alias table: a short name never switches
	 * silently to another entry (review s15b: a rule preferring the
	 * fewest words let a shorter entry added later take it); an entry
	 * added later can make it ambiguous, a 400 with did_you_mean, and
	 * the PUT that does so warns (names_shared) */
#undef NAME_AT
	return prefixed(items, extra, asked, &only) == 1 ? only : NULL;
}

int names_resolve(struct app *app, enum names_kind kind, const char *asked,
		  char *out, size_t outlen, char (*suggest)[80], int n_suggest,
		  int *n_suggested)
{
	struct store_err e;
	json_t *items = NULL, *row;
	char asked_sq[80];
	const char *found;
	int best[8], rc = -1;
	size_t i;

	*n_suggested = 0;
	if (n_suggest > 8)
		n_suggest = 8;
	if (catalogs[kind].list(app->db, &items, &e) != STORE_OK)
		return -1;
	squash(asked, asked_sq, sizeof(asked_sq));
	found = match(items, NULL, kind, asked);
	if (found) {
		snprintf(out, outlen, "%s", found);
		rc = 0;
		goto out;
	}
	/* the closest names, best first (insertion into a short list) */
	json_array_foreach(items, i, row)
	{
		const char *name =
		    json_string_value(json_object_get(row, "name"));
		int s, k;

		if (!name || strlen(name) >= 80)
			continue;
		s = score(asked_sq, name);
		k = *n_suggested < n_suggest ? (*n_suggested)++ : n_suggest;
		if (k == n_suggest && (k == 0 || s >= best[k - 1]))
			continue;
		if (k == n_suggest)
			k--;
		while (k > 0 && best[k - 1] > s) {
			best[k] = best[k - 1];
			memcpy(suggest[k], suggest[k - 1], 80);
			k--;
		}
		best[k] = s;
		snprintf(suggest[k], 80, "%s", name);
	}
out:
	json_decref(items);
	return rc;
}

int names_get(struct app *app, enum names_kind kind, const char *asked,
	      json_t **row, struct store_err *e, char (*suggest)[80],
	      int *n_suggested)
{
	enum store_status (*get)(struct db_pool *, const char *, json_t **,
				 struct store_err *) = catalogs[kind].get;
	char canon[80];

	*n_suggested = 0;
	if (get(app->db, asked, row, e) == STORE_OK)
		return 0;
	if (e->status == STORE_NOT_FOUND &&
	    names_resolve(app, kind, asked, canon, sizeof(canon), suggest, 3,
			  n_suggested) == 0 &&
	    get(app->db, canon, row, e) == STORE_OK)
		return 0;
	return -1;
}

/* 1 when a PUT creating name would shadow another entry of kind: no
 * entry is named name exactly, yet lookups forgive it to the entry canon
 * (written to canon), which every request using that short name would
 * then stop finding. 0 otherwise, a storage failure included (the PUT
 * reports it). */
static int names_shadows(struct app *app, enum names_kind kind,
			 const char *name, char *canon, size_t canonlen)
{
	enum store_status (*get)(struct db_pool *, const char *, json_t **,
				 struct store_err *) = catalogs[kind].get;
	char suggest[3][80];
	struct store_err e;
	json_t *row = NULL;
	int n = 0;

	if (get(app->db, name, &row, &e) == STORE_OK) {
		json_decref(row);
		return 0;
	}
	if (e.status != STORE_NOT_FOUND)
		return 0;
	return names_resolve(app, kind, name, canon, canonlen, suggest, 3,
			     &n) == 0 &&
	       strcmp(canon, name) != 0;
}

int names_prefix_entries(struct app *app, enum names_kind kind,
			 const char *asked)
{
	struct store_err e;
	json_t *items = NULL;
	int n;

	if (catalogs[kind].list(app->db, &items, &e) != STORE_OK)
		return 0;
	n = prefixed(items, NULL, asked, NULL);
	json_decref(items);
	return n;
}

json_t *names_shared(struct app *app, enum names_kind kind, const char *name)
{
	struct store_err e;
	json_t *items = NULL, *out = json_array();
	char p[80];

	if (!out || catalogs[kind].list(app->db, &items, &e) != STORE_OK)
		goto out;
	for (size_t i = 0; i < json_array_size(items); i++) {
		const char *have = json_string_value(
		    json_object_get(json_array_get(items, i), "name"));
		if (have && !strcmp(name, have))
			goto out; /* a replacement adds no name */
	}
	/* each leading run of dash-separated words of name, itself left
	 * out: what it finds today against what it will find with name */
	for (const char *d = strchr(name, '-'); d; d = strchr(d + 1, '-')) {
		const char *before, *after;

		snprintf(p, sizeof(p), "%.*s", (int)(d - name), name);
		before = match(items, NULL, kind, p);
		after = match(items, name, kind, p);
		if (before && strcmp(before, name) != 0 &&
		    (!after || strcmp(before, after) != 0))
			json_array_append_new(
			    out,
			    json_sprintf("the short name \"%s\" found %s; "
					 "it now names more than one "
					 "entry, and a request that uses "
					 "it gets a 400 with did_you_mean: "
					 "use the full name",
					 p, before));
	}
out:
	json_decref(items);
	return out;
}

void names_check_new(struct app *app, enum names_kind kind, const char *name,
		     struct jv *v)
{
	static const char *const paths[] = {[NAMES_GPU] = "gpus",
					    [NAMES_MODEL] = "models",
					    [NAMES_STACK] = "stacks"};
	char canon[80];

	if (names_shadows(app, kind, name, canon, sizeof(canon)))
		jv_error(v, "name",
			 "\"%s\" already finds %s (requests may name it so): "
			 "PUT /v1/%s/%s to change that entry, or choose a "
			 "name no entry answers to",
			 name, canon, paths[kind], canon);
}

int names_valid_slug(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

void names_suggest(struct response *res, char (*suggest)[80], int n)
{
	json_t *errors = json_object_get(res->json, "errors"), *last, *list;
	char msg[512];
	size_t len;

	if (n <= 0 || !json_is_array(errors) || !json_array_size(errors))
		return;
	last = json_array_get(errors, json_array_size(errors) - 1);
	list = json_array();
	snprintf(msg, sizeof(msg), "%s; did you mean ",
		 json_string_value(json_object_get(last, "message")));
	for (int i = 0; i < n; i++) {
		json_array_append_new(list, json_string(suggest[i]));
		len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, "%s%s",
			 i ? (i + 1 == n ? " or " : ", ") : "", suggest[i]);
	}
	len = strlen(msg);
	snprintf(msg + len, sizeof(msg) - len, "?");
	json_object_set_new(last, "message", json_string(msg));
	json_object_set_new(last, "did_you_mean", list);
	if (json_array_size(errors) == 1) {
		char detail[800];
		snprintf(detail, sizeof(detail), "%s: %s",
			 json_string_value(json_object_get(last, "field")),
			 msg);
		json_object_set_new(res->json, "detail", json_string(detail));
	}
}

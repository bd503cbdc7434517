/* names.h - forgiving catalog names (issue 16): "h100", "H100-SXM5-80GB",
 * "llama2-70b" and "llama-3-405b" find the entry a user means, and a name
 * that finds nothing gets the closest catalog names as "did you mean".
 *
 * Order: the exact name (the caller's own lookup), then the same name in
 * any case, then the alias table (common short names, data in names.c),
 * then the name with case and punctuation ignored ("llama2-70b" ->
 * "llama-2-70b"), then the leading dash-separated words of exactly one
 * entry ("h100-sxm5" -> "h100-sxm5-80gb"). A short name shared by several
 * entries resolves only through the alias table, which names the usual
 * part.
 */
#ifndef GPUSIZER_HANDLERS_NAMES_H
#define GPUSIZER_HANDLERS_NAMES_H

#include <stddef.h>

#include "handlers/handler.h"

struct jv;
struct store_err;

enum names_kind { NAMES_GPU, NAMES_MODEL, NAMES_STACK };

/* Resolves asked among the catalog's names of kind: 0 with the canonical
 * name in out, -1 when none matches (a storage failure is -1 too: the
 * caller's own not-found answer stands), with up to n_suggest closest
 * names in suggest[] (each of suggest_len bytes) and their count in
 * *n_suggested. */
int names_resolve(struct app *app, enum names_kind kind, const char *asked,
		  char *out, size_t outlen, char (*suggest)[80], int n_suggest,
		  int *n_suggested);

/* The catalog row of kind named asked, the name forgiven as
 * names_resolve does when the exact one is not found: 0 with *row (owned
 * by the caller), -1 with e (STORE_NOT_FOUND, or the storage failure) and
 * up to 3 closest names in suggest[] (their count in *n_suggested). */
int names_get(struct app *app, enum names_kind kind, const char *asked,
	      json_t **row, struct store_err *e, char (*suggest)[80],
	      int *n_suggested);

/* The name error of a PUT creating name (kind's collection), into v: a
 * name lookups already forgive to another entry would take that name away
 * from every request using it. */
void names_check_new(struct app *app, enum names_kind kind, const char *name,
		     struct jv *v);

/* How many entries of kind asked is the leading dash-separated words of
 * (2 or more: a short name shared, which names_resolve leaves to the
 * alias table); 0 on a storage failure. */
int names_prefix_entries(struct app *app, enum names_kind kind,
			 const char *asked);

/* The short names a PUT creating name takes away from other entries of
 * kind (review s15): each leading run of name's dash-separated words that
 * finds one entry today and will name two once name exists, as a list of
 * warnings for the PUT's answer (new reference; empty when none, or on a
 * storage failure, which the PUT itself reports). */
json_t *names_shared(struct app *app, enum names_kind kind, const char *name);

/* 1 when s is a catalog name as a PUT may create it: a lowercase slug of
 * 1-64 characters [a-z0-9._-] starting with a letter or digit (the CHECK
 * of the gpus, models and stacks tables, migrations/0001 and 0015). */
int names_valid_slug(const char *s);

/* Adds "did_you_mean": [...] to the last errors[] entry of res (a problem
 * with errors), and "; did you mean X, Y?" to its message. */
void names_suggest(struct response *res, char (*suggest)[80], int n);

#endif

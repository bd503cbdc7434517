/* jsonv.c - JSON field validation. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/jsonv.h"
#include "lib/jtape.h"
#include "handlers/problem.h"

/* Deeper bodies are refused: no request of this API nests more than a few
 * levels, and a bound keeps parsing cost and recursion predictable.
 */
#define MAX_DEPTH 32

static int depth_ok(const char *s, size_t n)
{
	int depth = 0, in_str = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > MAX_DEPTH)
				return 0;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return 1;
}

json_t *jv_parse_body(const struct request *req, struct response *res)
{
	json_error_t err;
	json_t *o;

	if (!req->body || req->body_len == 0) {
		problem(res, 400, "malformed-json", "Malformed JSON",
			"the request body is empty; send a JSON object");
		return NULL;
	}
	if (!depth_ok(req->body, req->body_len)) {
		problem(res, 400, "malformed-json", "Malformed JSON",
			"the request body nests deeper than %d levels",
			MAX_DEPTH);
		return NULL;
	}
	/* jansson validates UTF-8 and rejects NaN/Infinity literals;
	 * numbers that overflow a double are errors too (int64: below).
	 */
	o = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err);
	/* An integer beyond int64 is valid JSON that jansson refuses as an
	 * integer: read the body again with integers as reals, so that the
	 * field's own range check names it (every integer field accepts a
	 * whole real, and none reaches 2^63). */
	if (!o && strstr(err.text, "too big integer"))
		o = json_loadb(req->body, req->body_len,
			       JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL,
			       &err);
	if (!o) {
		/* jansson names a flag the client cannot set (review s23a
		 * F4): say what the service refuses instead */
		const char *why =
		    strstr(err.text, "JSON_ALLOW_NUL")
			? "a string holds \\u0000 (NUL), which no field takes"
			: err.text;

		problem(res, 400, "malformed-json", "Malformed JSON",
			"invalid JSON at line %d, column %d: %s", err.line,
			err.column, why);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		problem(res, 400, "malformed-json", "Malformed JSON",
			"the request body must be a JSON object");
		return NULL;
	}
	return o;
}

int jv_present(const json_t *o, const char *key)
{
	const json_t *m = json_object_get(o, key);

	return m && !json_is_null(m);
}

void jv_error(struct jv *v, const char *key, const char *fmt, ...)
{
	char field[160], msg[400];
	va_list ap;

	snprintf(field, sizeof(field), "%s%s", v->prefix, key);
	/* An error about the whole entry ("results[1].") names the entry. */
	if (!*key && field[0] && field[strlen(field) - 1] == '.')
		field[strlen(field) - 1] = '\0';
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	problem_field(v->res, field, "%s", msg);
}

static int str_len_error(struct jv *v, const char *key, size_t max_len)
{
	jv_error(v, key, "must be a string of 1 to %zu characters without NUL",
		 max_len);
	return -1;
}

static const json_t *member(struct jv *v, const json_t *o, const char *key,
			    bool required, int *rc)
{
	const json_t *m = json_object_get(o, key);

	*rc = 0;
	if (!m || json_is_null(m)) {
		if (required) {
			jv_error(v, key, "is required");
			*rc = -1;
		}
		return NULL;
	}
	return m;
}

int jv_int(struct jv *v, const json_t *o, const char *key, bool required,
	   long long min, long long max, long long *out)
{
	int rc;
	const json_t *m = member(v, o, key, required, &rc);
	long long x;

	if (!m)
		return rc;
	if (json_is_integer(m)) {
		x = json_integer_value(m);
	} else if (json_is_real(m) &&
		   json_real_value(m) == floor(json_real_value(m)) &&
		   fabs(json_real_value(m)) < 9.0e15) {
		/* 1e12 is a whole number written as a real: accept it. */
		x = (long long)json_real_value(m);
	} else {
		jv_error(v, key, "must be an integer in [%lld, %lld]", min,
			 max);
		return -1;
	}
	if (x < min || x > max) {
		jv_error(v, key, "must be an integer in [%lld, %lld], got %lld",
			 min, max, x);
		return -1;
	}
	*out = x;
	return 0;
}

/* The range a number field allows, in the words of its errors:
 * "a number in [1, 10]", "0 or a number in [1e-06, 10000]".
 */
static void num_range_text(double min, double max, double floor, char *buf,
			   size_t len)
{
	if (floor <= 0)
		snprintf(buf, len, "a number in [%g, %g]%s", min, max,
			 min < JV_NUM_TINY
			     ? ", 0 or at least 1e-300 in magnitude"
			     : "");
	else if (min < 0)
		snprintf(buf, len, "0 or a number in [%g, %g] or [%g, %g]", min,
			 -floor, floor, max);
	else
		snprintf(buf, len, "0 or a number in [%g, %g]", floor, max);
}

/* Checks x against [min, max] and, when non-zero, against floor (at
 * least JV_NUM_TINY) in magnitude; stores it (-0 as 0) or records the
 * field error. is_num: the member was a JSON number at all.
 */
static int num_check(struct jv *v, const char *key, int is_num, double x,
		     double min, double max, double floor, double *out)
{
	double lo = floor > JV_NUM_TINY ? floor : JV_NUM_TINY;
	char range[128];

	if (is_num && isfinite(x) && x >= min && x <= max &&
	    (x == 0 || fabs(x) >= lo)) {
		*out = x == 0 ? 0.0 : x; /* -0 is 0 */
		return 0;
	}
	num_range_text(min, max, floor, range, sizeof(range));
	if (is_num)
		jv_error(v, key, "must be %s, got %g", range, x);
	else
		jv_error(v, key, "must be %s", range);
	return -1;
}

int jv_num(struct jv *v, const json_t *o, const char *key, bool required,
	   double min, double max, double *out)
{
	return jv_num0(v, o, key, required, min, max, 0, out);
}

int jv_num0(struct jv *v, const json_t *o, const char *key, bool required,
	    double min, double max, double floor, double *out)
{
	int rc;
	const json_t *m = member(v, o, key, required, &rc);

	if (!m)
		return rc;
	return num_check(v, key, json_is_number(m),
			 json_is_number(m) ? json_number_value(m) : 0, min, max,
			 floor, out);
}

int jv_bool(struct jv *v, const json_t *o, const char *key, bool *out)
{
	int rc;
	const json_t *m = member(v, o, key, false, &rc);

	if (!m)
		return rc;
	if (!json_is_boolean(m)) {
		jv_error(v, key, "must be true or false");
		return -1;
	}
	*out = json_is_true(m);
	return 0;
}

int jv_str(struct jv *v, const json_t *o, const char *key, bool required,
	   size_t max_len, const char **out)
{
	int rc;
	const json_t *m = member(v, o, key, required, &rc);

	if (!m)
		return rc;
	if (!json_is_string(m)) {
		jv_error(v, key, "must be a string");
		return -1;
	}
	if (json_string_length(m) == 0 || json_string_length(m) > max_len ||
	    strlen(json_string_value(m)) != json_string_length(m))
		return str_len_error(v, key, max_len);
	*out = json_string_value(m);
	return 0;
}

static void list_choices(const char *const *choices, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; choices[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? ", " : "", choices[i]);
}

int jv_enum(struct jv *v, const json_t *o, const char *key, bool required,
	    const char *const *choices, int *out)
{
	int rc;
	const json_t *m = member(v, o, key, required, &rc);
	char all[256];

	if (!m)
		return rc;
	if (json_is_string(m))
		for (int i = 0; choices[i]; i++)
			if (strcmp(json_string_value(m), choices[i]) == 0) {
				*out = i;
				return 0;
			}
	list_choices(choices, all, sizeof(all));
	jv_error(v, key, "must be one of: %s", all);
	return -1;
}

int jv_reject_unknown(struct jv *v, const json_t *o, const char *const *known)
{
	const char *key;
	json_t *val;
	int n = 0;

	json_object_foreach((json_t *)o, key, val)
	{
		int ok = 0;
		(void)val;
		for (int i = 0; known[i] && !ok; i++)
			ok = strcmp(key, known[i]) == 0;
		if (!ok) {
			char shown[64];
			/* Never echo a huge key back. */
			snprintf(shown, sizeof(shown), "%s", key);
			jv_error(v, shown, "is not a known field");
			n++;
		}
	}
	return n;
}

int jv_check_rules(struct jv *v, const json_t *o, const struct jv_rule *rules,
		   int n)
{
	const char *known[64];
	int errors = 0;

	for (int i = 0; i < n && i < 63; i++) {
		const struct jv_rule *r = &rules[i];
		const json_t *m = json_object_get(o, r->key);
		long long ix;
		double dx;
		bool bx;
		const char *sx;
		int ex;

		known[i] = r->key;
		if (m && json_is_null(m)) {
			if (!r->nullable) {
				jv_error(v, r->key, "must not be null%s",
					 r->required ? ""
						     : " (omit it for the "
						       "default)");
				errors++;
			}
			continue;
		}
		switch (r->kind) {
		case JV_INT:
			errors +=
			    jv_int(v, o, r->key, r->required, (long long)r->min,
				   (long long)r->max, &ix) != 0;
			break;
		case JV_POW2:
			ix = 0;
			if (jv_int(v, o, r->key, r->required, (long long)r->min,
				   (long long)r->max, &ix) != 0) {
				errors++;
			} else if (m && (ix & (ix - 1)) != 0) {
				jv_error(v, r->key,
					 "must be a power of two in [%lld, "
					 "%lld]",
					 (long long)r->min, (long long)r->max);
				errors++;
			}
			break;
		case JV_NUM:
			errors += jv_num(v, o, r->key, r->required, r->min,
					 r->max, &dx) != 0;
			break;
		case JV_NUM0:
			errors += jv_num0(v, o, r->key, r->required, 0, r->max,
					  r->min, &dx) != 0;
			break;
		case JV_BOOL:
			errors += jv_bool(v, o, r->key, &bx) != 0;
			break;
		case JV_STR0:
			if (json_is_string(m) && json_string_length(m) == 0)
				break;
			/* fall through */
		case JV_STR:
			errors += jv_str(v, o, r->key, r->required,
					 (size_t)r->max, &sx) != 0;
			break;
		case JV_ENUM:
			errors += jv_enum(v, o, r->key, r->required, r->choices,
					  &ex) != 0;
			break;
		}
	}
	known[n < 63 ? n : 63] = NULL;
	return errors + jv_reject_unknown(v, o, known);
}

/* ---- the same getters on a token tape -------------------------------- */

int jv_parse_tape(const struct request *req, struct response *res,
		  struct jtape *t, struct jv_arena *a)
{
	char err[256];

	memset(t, 0, sizeof(*t));
	memset(a, 0, sizeof(*a));
	if (!req->body || req->body_len == 0) {
		problem(res, 400, "malformed-json", "Malformed JSON",
			"the request body is empty; send a JSON object");
		return -1;
	}
	/* jtape_parse bounds the nesting itself: no pre-scan. */
	if (jtape_parse(t, req->body, req->body_len, MAX_DEPTH, err,
			sizeof(err)) != 0) {
		problem(res, 400, "malformed-json", "Malformed JSON", "%s",
			err);
		return -1;
	}
	if (t->tok[0].type != JT_OBJECT) {
		problem(res, 400, "malformed-json", "Malformed JSON",
			"the request body must be a JSON object");
		return -1;
	}
	/* Decoded strings are never longer than their source text, plus one
	 * NUL per token; jvt_text may copy disjoint subtrees' text once more.
	 */
	a->cap = 2 * req->body_len + t->n_tok + 1;
	if (!(a->p = malloc(a->cap))) {
		problem(res, 503, "unavailable", "Service unavailable",
			"out of memory reading the request body");
		return -1;
	}
	return 0;
}

void jv_tape_free(struct jtape *t, struct jv_arena *a)
{
	jtape_free(t);
	free(a->p);
	memset(a, 0, sizeof(*a));
}

static uint32_t tmember(struct jv *v, const struct jtape *t, uint32_t o,
			const char *key, bool required, int *rc)
{
	uint32_t m = jtape_get(t, o, key);

	*rc = 0;
	if (!m || t->tok[m].type == JT_NULL) {
		if (required) {
			jv_error(v, key, "is required");
			*rc = -1;
		}
		return 0;
	}
	return m;
}

int jvt_present(const struct jtape *t, uint32_t o, const char *key)
{
	uint32_t m = jtape_get(t, o, key);

	return m && t->tok[m].type != JT_NULL;
}

int jvt_int(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, long long min, long long max, long long *out)
{
	int rc;
	uint32_t m = tmember(v, t, o, key, required, &rc);
	long long x;
	double d;

	if (!m)
		return rc;
	if (t->tok[m].type != JT_NUMBER || jtape_num(t, m, &d) != 0)
		goto bad;
	if (t->tok[m].integer)
		x = strtoll(t->src + t->tok[m].start, NULL, 10);
	else if (d == floor(d) && fabs(d) < 9.0e15)
		x = (long long)d; /* 1e12: a whole number written as a real */
	else
		goto bad;
	if (x < min || x > max) {
		jv_error(v, key, "must be an integer in [%lld, %lld], got %lld",
			 min, max, x);
		return -1;
	}
	*out = x;
	return 0;
bad:
	jv_error(v, key, "must be an integer in [%lld, %lld]", min, max);
	return -1;
}

int jvt_num(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, double min, double max, double *out)
{
	return jvt_num0(v, t, o, key, required, min, max, 0, out);
}

int jvt_num0(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	     bool required, double min, double max, double floor, double *out)
{
	int rc;
	uint32_t m = tmember(v, t, o, key, required, &rc);
	double x = 0;
	int is_num;

	if (!m)
		return rc;
	is_num = t->tok[m].type == JT_NUMBER && jtape_num(t, m, &x) == 0;
	return num_check(v, key, is_num, x, min, max, floor, out);
}

static const char *arena_str(const struct jtape *t, uint32_t i,
			     struct jv_arena *a, long *len)
{
	char *dst = a->p + a->used;
	long n = jtape_str(t, i, dst, a->cap - a->used);

	if (n < 0)
		return NULL;
	a->used += (size_t)n + 1;
	if (len)
		*len = n;
	return dst;
}

int jvt_str(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, size_t max_len, struct jv_arena *a, const char **out)
{
	int rc;
	uint32_t m = tmember(v, t, o, key, required, &rc);
	const char *s;
	long n = 0;

	if (!m)
		return rc;
	if (t->tok[m].type != JT_STRING || !(s = arena_str(t, m, a, &n))) {
		jv_error(v, key, "must be a string");
		return -1;
	}
	/* The tape refuses \u0000, so a decoded string has no NUL. */
	if (n == 0 || (size_t)n > max_len)
		return str_len_error(v, key, max_len);
	*out = s;
	return 0;
}

int jvt_enum(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	     bool required, const char *const *choices, int *out)
{
	int rc;
	uint32_t m = tmember(v, t, o, key, required, &rc);
	char all[256];

	if (!m)
		return rc;
	for (int i = 0; choices[i]; i++)
		if (jtape_streq(t, m, choices[i])) {
			*out = i;
			return 0;
		}
	list_choices(choices, all, sizeof(all));
	jv_error(v, key, "must be one of: %s", all);
	return -1;
}

const char *jvt_text(const struct jtape *t, uint32_t i, struct jv_arena *a)
{
	const struct jt_tok *k;
	char *dst;

	if (i == 0 || t->tok[i].type == JT_NULL)
		return NULL;
	k = &t->tok[i];
	if (k->type == JT_STRING)
		return arena_str(t, i, a, NULL);
	if (a->used + k->len + 1 > a->cap)
		return NULL;
	dst = a->p + a->used;
	memcpy(dst, t->src + k->start, k->len);
	dst[k->len] = '\0';
	a->used += k->len + 1;
	return dst;
}

void jv_ints_as_integers(json_t *o, const struct jv_rule *rules, int n)
{
	for (int i = 0; i < n; i++) {
		json_t *x = json_object_get(o, rules[i].key);
		if ((rules[i].kind == JV_INT || rules[i].kind == JV_POW2) &&
		    json_is_real(x))
			json_object_set_new(
			    o, rules[i].key,
			    json_integer((json_int_t)json_real_value(x)));
	}
}

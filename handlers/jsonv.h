/* jsonv.h - field validation of request bodies, errors named by path.
 *
 * Each getter reads one member of an object, checks its type and range,
 * stores it, and on failure records a field error ("model.hidden_size:
 * must be an integer in [1, 1048576]") in the response. Getters return 0 on
 * success or absence (defaults applied), -1 after recording an error, so a
 * handler can validate every field and report all errors at once.
 */
#ifndef GPUSIZER_HANDLERS_JSONV_H
#define GPUSIZER_HANDLERS_JSONV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "handlers/handler.h"

struct jv {
	struct response *res;
	char prefix[64]; /* "model." for nested objects, "" at top level */
};

/* Parses req->body as one JSON object. On failure fills a 400 problem
 * (malformed, duplicate key, invalid UTF-8, too deep) and returns NULL.
 * Caller decrefs.
 */
json_t *jv_parse_body(const struct request *req, struct response *res);

int jv_int(struct jv *v, const json_t *o, const char *key, bool required,
	   long long min, long long max, long long *out);
/* A finite number in [min, max]; -0 is stored as 0. Whatever the range, a
 * non-zero number smaller in magnitude than JV_NUM_TINY is refused: a
 * subnormal (5e-324) or near one makes x * 10^k overflow and 1 / x
 * infinite in the arithmetic behind the answer (issue 15). A field whose
 * range includes 0 states its own floor with jv_num0.
 */
#define JV_NUM_TINY 1e-300
int jv_num(struct jv *v, const json_t *o, const char *key, bool required,
	   double min, double max, double *out);
/* 0, or a number in [min, max] that is at least floor in magnitude
 * (min <= 0 < floor <= max): the per-field floor of a real-valued field
 * where 0 means "not given" (a price, a token count) or is a measured
 * value (a probe statistic). The error states both ranges.
 */
int jv_num0(struct jv *v, const json_t *o, const char *key, bool required,
	    double min, double max, double floor, double *out);
int jv_bool(struct jv *v, const json_t *o, const char *key, bool *out);
int jv_str(struct jv *v, const json_t *o, const char *key, bool required,
	   size_t max_len, const char **out);
/* choices is NULL-terminated; *out = index of the match. */
int jv_enum(struct jv *v, const json_t *o, const char *key, bool required,
	    const char *const *choices, int *out);
/* Records an error for every member of o not in known (NULL-terminated),
 * catching typos such as "seqlen". Returns the number found.
 */
int jv_reject_unknown(struct jv *v, const json_t *o, const char *const *known);
/* 1 when o has member key with a non-null value (null means "left out"). */
int jv_present(const json_t *o, const char *key);
/* Records an error for field key of this object. */
void jv_error(struct jv *v, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Table-driven validation of a flat object: one rule per field. */
enum jv_kind {
	JV_INT,
	JV_POW2, /* as JV_INT, and a power of two (PCIe lane widths) */
	JV_NUM,
	JV_NUM0, /* 0, or in [min, max] with min > 0 the non-zero floor */
	JV_BOOL,
	JV_STR,
	JV_STR0, /* as JV_STR, or "" (what a GET returns for none) */
	JV_ENUM
};
struct jv_rule {
	const char *key;
	enum jv_kind kind;
	bool required;
	double min, max; /* JV_INT / JV_POW2 / JV_NUM range; JV_STR max len */
	const char *const *choices; /* JV_ENUM */
	bool nullable;		    /* JSON null allowed (unknown value) */
};
/* Validates o against rules (n of them) and rejects unknown members;
 * returns the number of errors recorded.
 */
int jv_check_rules(struct jv *v, const json_t *o, const struct jv_rule *rules,
		   int n);
/* After jv_check_rules: each JV_INT or JV_POW2 member of o given as a whole
 * real
 * (8.0) is replaced by its integer, as PostgreSQL's integer columns take
 * it. */
void jv_ints_as_integers(json_t *o, const struct jv_rule *rules, int n);

/* The same, on a token tape (lib/jtape.h) instead of a jansson tree:
 * for large bodies (probe reports), where building the tree costs more than
 * everything else. Same rules and messages as the jv_ getters; o is the
 * index of an object token. Decoded strings live in the arena.
 */
struct jtape;
struct jv_arena {
	char *p; /* owned: jv_tape_free() frees it */
	size_t used, cap;
};
/* Parses req->body as one JSON object into *t, with an arena big enough
 * for every string of it. On failure fills the same 400 problems as
 * jv_parse_body and returns -1. Caller jv_tape_free()s either way.
 */
int jv_parse_tape(const struct request *req, struct response *res,
		  struct jtape *t, struct jv_arena *a);
void jv_tape_free(struct jtape *t, struct jv_arena *a);
int jvt_present(const struct jtape *t, uint32_t o, const char *key);
int jvt_int(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, long long min, long long max, long long *out);
int jvt_num(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, double min, double max, double *out);
int jvt_num0(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	     bool required, double min, double max, double floor, double *out);
int jvt_str(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	    bool required, size_t max_len, struct jv_arena *a,
	    const char **out);
int jvt_enum(struct jv *v, const struct jtape *t, uint32_t o, const char *key,
	     bool required, const char *const *choices, int *out);
/* Token i as PostgreSQL's ->> would give it: a string decoded, a number's
 * or literal's text, an object's or array's JSON text; NULL for null or
 * i == 0 (absent). In the arena.
 */
const char *jvt_text(const struct jtape *t, uint32_t i, struct jv_arena *a);

#endif

/* jtape.h - strict JSON (RFC 8259) parsed into a flat token array.
 *
 * One pass over the text, no DOM and no allocation per value: the tokens
 * (a "tape", as in jsmn or simdjson) point back into the source, strings
 * stay escaped until asked for. Meant for large request bodies (probe
 * reports of ~250 KB) that jansson builds a full tree for only to be read
 * once. It refuses what jansson (JSON_REJECT_DUPLICATES) refuses, plus
 * nesting deeper than the caller's limit.
 */
#ifndef GPUSIZER_LIB_JTAPE_H
#define GPUSIZER_LIB_JTAPE_H

#include <stddef.h>
#include <stdint.h>

enum jt_type {
	JT_OBJECT,
	JT_ARRAY,
	JT_STRING,
	JT_NUMBER,
	JT_TRUE,
	JT_FALSE,
	JT_NULL
};

struct jt_tok {
	uint8_t type;	 /* enum jt_type */
	uint8_t escaped; /* JT_STRING: contains backslash escapes */
	uint8_t integer; /* JT_NUMBER: no fraction and no exponent */
	/* Bytes in src: a string's contents between the quotes (raw, escapes
	 * not decoded); a number's text; a container's whole text.
	 */
	uint32_t start, len;
	uint32_t next;	/* index of the first token after this value and
			   everything inside it */
	uint32_t count; /* JT_OBJECT: members; JT_ARRAY: elements */
};

/* An object at index o is followed by its members: key token (JT_STRING),
 * then the value's tokens. Iterate:
 *   for (uint32_t k = o + 1; k < t->tok[o].next; k = t->tok[k + 1].next)
 *   -> key k, value k + 1
 * An array's elements:
 *   for (uint32_t i = a + 1; i < t->tok[a].next; i = t->tok[i].next)
 * The root value is token 0.
 */
struct jtape {
	const char *src;
	size_t src_len;
	struct jt_tok *tok;
	uint32_t n_tok, cap;
	/* jtape_get's memo: the object and member key it found last. Lookups
	 * update it, so a tape is read by one thread at a time.
	 */
	uint32_t memo_obj, memo_key;
};

/* Parses src[0..len) (one JSON value, surrounding whitespace allowed).
 * t need not be initialised; every field is set. 0 on success, and then
 * t->tok is the caller's to release with jtape_free(). -1 on failure with
 * nothing left allocated, and err (when err_len > 0) set to "invalid JSON
 * at line L, column C: <reason>" (1-based line/column, column in bytes)
 * on a syntax error or nesting deeper than max_depth, or to a message
 * naming the limit (over 2^31 bytes) or "out of memory".
 * The tape borrows src (must outlive it). Refuses: documents over 2^31
 * bytes, nesting deeper than max_depth, invalid UTF-8 anywhere in strings
 * (overlongs, surrogates encoded in UTF-8, > U+10FFFF), unescaped control
 * characters (< 0x20) in strings, invalid escapes, \u escapes with a lone
 * surrogate, \u0000 (PostgreSQL text/jsonb cannot hold NUL), duplicate
 * keys in any object (decoded: "a" and "\u0061" are duplicates), numbers
 * outside the RFC 8259 grammar (leading zeros, "+1", ".5", "1.", NaN,
 * Infinity, hex), numbers that overflow a double (1e400; underflow to 0
 * is fine), integer-form numbers outside int64, trailing data, empty
 * input.
 */
int jtape_parse(struct jtape *t, const char *src, size_t len, int max_depth,
		char *err, size_t err_len);
/* Frees tok; the struct may be reused. */
void jtape_free(struct jtape *t);
/* Value token of member key in object o, or 0 when absent (0 is the root,
 * never a member value) or o is not an object. The search starts at the
 * member found last in o (t->memo_*) and wraps around: lookups made in the
 * document's key order take a step or two each, not a scan of the object.
 */
uint32_t jtape_get(const struct jtape *t, uint32_t o, const char *key);
/* 1 when token i is a string equal to s (decoded comparison). */
int jtape_streq(const struct jtape *t, uint32_t i, const char *s);
/* Decodes string token i into buf (NUL-terminated, UTF-8). Returns the
 * decoded length, or -1 when i is not a string or it does not fit in
 * cap-1 bytes.
 */
long jtape_str(const struct jtape *t, uint32_t i, char *buf, size_t cap);
/* Number token i as a double (strtod on its text; JSON numbers only use
 * '.', and the daemon never calls setlocale). 0, or -1 when i is not a
 * number.
 */
int jtape_num(const struct jtape *t, uint32_t i, double *out);

#endif

/* fuzz_jtape.c - lib/jtape.c against jansson, the parser it stands in
 * for on large bodies.
 *
 * Properties beyond "no crash, no sanitizer report":
 *  - both accept or both refuse (jansson with JSON_REJECT_DUPLICATES and
 *    JSON_DECODE_ANY: RFC 8259 allows a scalar at the top, jtape too);
 *    inputs nesting deeper than 32 skip jansson (it allows 2048) and must
 *    be refused by jtape; so must inputs holding a NUL byte, which skip
 *    jansson too: its stream takes a NUL for "buffer empty", so a NUL
 *    right after a number or literal is silently dropped ("5\0" and
 *    "[true\0]" are accepted by jansson 2.14; RFC 8259 has no place for
 *    a raw NUL outside strings, nor inside, where it is a control
 *    character; regressions/fuzz_jtape/jansson-skips-nul-after-number);
 *  - when both accept, the trees are the same: types, object sizes and
 *    keys, decoded strings byte for byte, integer vs real and the value;
 *  - the tape is well formed: next/count agree with the iteration, tokens
 *    point at their text, jtape_get finds every key, jtape_str honours
 *    its cap;
 *  - a refusal says where: "invalid JSON at line L, column C: ...".
 */
#include <math.h>

#include "lib/jtape.h"
#include "tests/fuzz/fuzz_common.h"

#define DEPTH 32

/* Container nesting as jv_parse_body's pre-check counts it (exact for
 * valid JSON, which is all that matters: deeper inputs must be refused).
 */
static int max_nesting(const uint8_t *s, size_t n)
{
	int depth = 0, max = 0, in_str = 0;

	for (size_t i = 0; i < n; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = 0;
		} else if (s[i] == '"') {
			in_str = 1;
		} else if (s[i] == '{' || s[i] == '[') {
			if (++depth > max)
				max = depth;
		} else if (s[i] == '}' || s[i] == ']') {
			depth--;
		}
	}
	return max;
}

/* Token i's text as a NUL-terminated copy; caller frees. */
static char *tok_text(const struct jtape *t, uint32_t i)
{
	return fz_strndup((const uint8_t *)t->src + t->tok[i].start,
			  t->tok[i].len);
}

/* The checks every string token gets, key or value: between quotes, the
 * escaped flag right, jtape_str within its cap, jtape_streq on its own
 * decoding. Returns the decoded text; caller frees.
 */
static char *check_string(const struct jtape *t, uint32_t i, long *len)
{
	const struct jt_tok *k = &t->tok[i];
	const char *src = t->src;
	size_t cap = (size_t)k->len + 1;
	char *buf = malloc(cap);

	if (!buf)
		abort();
	if (k->type != JT_STRING)
		FZ_FAIL("token %u: type %d, want a string", i, k->type);
	if (k->start == 0 || src[k->start - 1] != '"' ||
	    src[k->start + k->len] != '"')
		FZ_FAIL("token %u: string not between quotes", i);
	if (!!memchr(src + k->start, '\\', k->len) != k->escaped)
		FZ_FAIL("token %u: escaped flag wrong", i);
	*len = jtape_str(t, i, buf, cap);
	if (*len < 0 || buf[*len] != '\0' || strlen(buf) != (size_t)*len)
		FZ_FAIL("token %u: jtape_str failed", i);
	if (jtape_str(t, i, buf, (size_t)*len) != -1)
		FZ_FAIL("token %u: jtape_str ignored its cap", i);
	jtape_str(t, i, buf, cap);
	if (!jtape_streq(t, i, buf))
		FZ_FAIL("token %u: jtape_streq of its own text", i);
	return buf;
}

/* Walks value i of the tape and j of jansson's tree in step. */
static void same(const struct jtape *t, uint32_t i, const json_t *j)
{
	const struct jt_tok *k = &t->tok[i];
	const char *src = t->src;
	uint32_t m, n = 0;

	if (k->next <= i || k->next > t->n_tok)
		FZ_FAIL("token %u: next %u out of order", i, k->next);
	if ((size_t)k->start + k->len > t->src_len)
		FZ_FAIL("token %u: text past the end", i);
	switch (k->type) {
	case JT_OBJECT:
		if (!json_is_object(j))
			FZ_FAIL("token %u: object, jansson type %d", i,
				json_typeof(j));
		if (src[k->start] != '{' || src[k->start + k->len - 1] != '}')
			FZ_FAIL("token %u: object text not {...}", i);
		if (json_object_size(j) != k->count)
			FZ_FAIL("token %u: %u members, jansson %zu", i,
				k->count, json_object_size(j));
		for (m = i + 1; m < k->next; m = t->tok[m + 1].next, n++) {
			long kl;
			char *key = check_string(t, m, &kl);
			const json_t *v = json_object_getn(j, key, (size_t)kl);

			if (!v)
				FZ_FAIL("token %u: key '%s' not in jansson's "
					"object",
					m, key);
			if (jtape_get(t, i, key) != m + 1)
				FZ_FAIL("jtape_get(%u, '%s') = %u, want %u", i,
					key, jtape_get(t, i, key), m + 1);
			free(key);
			same(t, m + 1, v);
		}
		if (n != k->count || m != k->next)
			FZ_FAIL("token %u: iteration saw %u of %u members", i,
				n, k->count);
		return;
	case JT_ARRAY:
		if (!json_is_array(j))
			FZ_FAIL("token %u: array, jansson type %d", i,
				json_typeof(j));
		if (src[k->start] != '[' || src[k->start + k->len - 1] != ']')
			FZ_FAIL("token %u: array text not [...]", i);
		if (json_array_size(j) != k->count)
			FZ_FAIL("token %u: %u elements, jansson %zu", i,
				k->count, json_array_size(j));
		for (m = i + 1; m < k->next; m = t->tok[m].next)
			same(t, m, json_array_get(j, n++));
		if (n != k->count || m != k->next)
			FZ_FAIL("token %u: iteration saw %u of %u elements", i,
				n, k->count);
		return;
	case JT_STRING: {
		long len;
		char *buf = check_string(t, i, &len);

		if (!json_is_string(j) ||
		    json_string_length(j) != (size_t)len ||
		    memcmp(json_string_value(j), buf, (size_t)len))
			FZ_FAIL("token %u: string differs from jansson's", i);
		free(buf);
		return;
	}
	case JT_NUMBER: {
		char *text = tok_text(t, i);
		int integer = !strpbrk(text, ".eE");
		double d;

		if (integer != k->integer)
			FZ_FAIL("number %s: integer flag %d", text, k->integer);
		if (jtape_num(t, i, &d) || !isfinite(d))
			FZ_FAIL("number %s: jtape_num %g", text, d);
		if (k->integer) {
			if (!json_is_integer(j) ||
			    json_integer_value(j) != strtoll(text, NULL, 10))
				FZ_FAIL("integer %s differs from jansson's",
					text);
		} else if (!json_is_real(j) || json_real_value(j) != d) {
			FZ_FAIL("real %s: %.17g, jansson %.17g", text, d,
				json_is_real(j) ? json_real_value(j) : NAN);
		}
		free(text);
		return;
	}
	case JT_TRUE:
	case JT_FALSE:
	case JT_NULL:
		if (json_typeof(j) != (k->type == JT_TRUE    ? JSON_TRUE
				       : k->type == JT_FALSE ? JSON_FALSE
							     : JSON_NULL))
			FZ_FAIL("token %u: literal differs from jansson's", i);
		if (k->next != i + 1)
			FZ_FAIL("token %u: literal with children", i);
		return;
	}
	FZ_FAIL("token %u: type %d", i, k->type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jtape t;
	char err[160];
	json_error_t je;
	json_t *j;
	unsigned line, col;
	int rc, deep;

	/* The fuzzer's own buffer, not a copy: ASan sees any overread. */
	rc = jtape_parse(&t, (const char *)data, size, DEPTH, err, sizeof(err));
	if (rc) {
		if (t.tok || t.n_tok)
			FZ_FAIL("a refusal left tokens behind");
		if (sscanf(err, "invalid JSON at line %u, column %u: ", &line,
			   &col) != 2 ||
		    line < 1 || col < 1 || col > size + 1)
			FZ_FAIL("refusal without a position: '%s'", err);
		{
			unsigned nl = 0;

			for (size_t i = 0; i < size; i++)
				nl += data[i] == '\n';
			if (line > nl + 1)
				FZ_FAIL("line %u past the last line", line);
		}
	}
	deep = max_nesting(data, size) > DEPTH;
	if (deep) {
		if (!rc)
			FZ_FAIL("accepted nesting deeper than %d", DEPTH);
		return 0;
	}
	if (size && memchr(data, 0, size)) {
		if (!rc)
			FZ_FAIL("accepted a NUL byte");
		return 0;
	}
	j = json_loadb((const char *)data, size,
		       JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!j != !!rc)
		FZ_FAIL("jtape %s (%s), jansson %s (%s)",
			rc ? "refuses" : "accepts", rc ? err : "",
			j ? "accepts" : "refuses", j ? "" : je.text);
	if (j) {
		if (t.tok[0].next != t.n_tok)
			FZ_FAIL("root next %u, %u tokens", t.tok[0].next,
				t.n_tok);
		same(&t, 0, j);
		json_decref(j);
		jtape_free(&t);
	}
	return 0;
}

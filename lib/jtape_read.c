/* jtape_read.c - reading a parsed tape (see jtape.h): string tokens
 * decoded (escapes, surrogate pairs to UTF-8), compared without
 * allocating, member lookup and the string and number getters. The
 * parser (jtape.c) uses the decoding to find duplicate keys.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/jtape.h"
#include "lib/jtape_int.h"

/* Writes code point cp (valid, not a surrogate) as UTF-8; its length. */
static size_t utf8_put(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (unsigned char)(0xf0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the escape at p (its backslash; validated by the parser) into
 * out; the bytes written, *adv the source bytes used.
 */
static size_t decode_escape(const unsigned char *p, const unsigned char *end,
			    unsigned char out[4], size_t *adv)
{
	int32_t cp, lo;

	*adv = 2;
	if (end - p < 2) {
		*adv = (size_t)(end - p);
		return 0;
	}
	switch (p[1]) {
	case 'b':
		out[0] = '\b';
		return 1;
	case 'f':
		out[0] = '\f';
		return 1;
	case 'n':
		out[0] = '\n';
		return 1;
	case 'r':
		out[0] = '\r';
		return 1;
	case 't':
		out[0] = '\t';
		return 1;
	case 'u':
		break;
	default: /* '"', '\\', '/' stand for themselves */
		out[0] = p[1];
		return 1;
	}
	if (end - p < 6 || (cp = jt_hex4(p + 2)) < 0) {
		*adv = (size_t)(end - p);
		return 0;
	}
	*adv = 6;
	if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 12 && p[6] == '\\' &&
	    p[7] == 'u' && (lo = jt_hex4(p + 8)) >= 0xdc00 && lo <= 0xdfff) {
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		*adv = 12;
	}
	return utf8_put((uint32_t)cp, out);
}

/* Decodes raw string contents into out (room for n bytes: decoding never
 * lengthens); the decoded length.
 */
size_t jt_decode(const unsigned char *s, size_t n, unsigned char *out)
{
	const unsigned char *end = s + n, *bs;
	size_t o = 0, adv;

	while (s < end) {
		bs = memchr(s, '\\', (size_t)(end - s));
		if (!bs)
			bs = end;
		memcpy(out + o, s, (size_t)(bs - s));
		o += (size_t)(bs - s);
		s = bs;
		if (s < end) {
			o += decode_escape(s, end, out + o, &adv);
			s += adv;
		}
	}
	return o;
}

/* A cursor over a string's decoded bytes, for comparisons that must not
 * allocate.
 */
struct dcur {
	const unsigned char *p, *end;
	unsigned char buf[4];
	size_t bi, bn;
};

static int dnext(struct dcur *c)
{
	size_t adv;

	if (c->bi < c->bn)
		return c->buf[c->bi++];
	while (c->p < c->end) {
		if (*c->p != '\\')
			return *c->p++;
		c->bn = decode_escape(c->p, c->end, c->buf, &adv);
		c->p += adv;
		c->bi = 0;
		if (c->bn) {
			c->bi = 1;
			return c->buf[0];
		}
	}
	return -1;
}

static void dcur_init(struct dcur *c, const struct jtape *t, uint32_t i)
{
	c->p = (const unsigned char *)t->src + t->tok[i].start;
	c->end = c->p + t->tok[i].len;
	c->bi = c->bn = 0;
}

/* 1 when string tokens a and b decode to the same bytes. */
int jt_tok_streq(const struct jtape *t, uint32_t a, uint32_t b)
{
	const struct jt_tok *ta = &t->tok[a], *tb = &t->tok[b];
	struct dcur ca, cb;
	int x;

	if (!ta->escaped && !tb->escaped)
		return ta->len == tb->len &&
		       !memcmp(t->src + ta->start, t->src + tb->start, ta->len);
	dcur_init(&ca, t, a);
	dcur_init(&cb, t, b);
	do {
		x = dnext(&ca);
		if (x != dnext(&cb))
			return 0;
	} while (x >= 0);
	return 1;
}

/* 1 when string token i decodes to s[0..n). */
static int tok_eq_bytes(const struct jtape *t, uint32_t i, const char *s,
			size_t n)
{
	const struct jt_tok *k = &t->tok[i];
	struct dcur c;
	int x;

	if (!k->escaped)
		return k->len == n && !memcmp(t->src + k->start, s, n);
	/* Escapes only shorten: a raw text shorter than s cannot match. */
	if (k->len < n)
		return 0;
	dcur_init(&c, t, i);
	for (size_t j = 0; j < n; j++) {
		x = dnext(&c);
		if (x != (unsigned char)s[j])
			return 0;
	}
	return dnext(&c) < 0;
}

/* 1 when member key k (a string token) decodes to key[0..n). Most keys
 * differ in length or first byte: those are told apart inline.
 */
static int key_is(const struct jtape *t, uint32_t k, const char *key, size_t n)
{
	const struct jt_tok *m = &t->tok[k];

	if (!m->escaped && (m->len != n || (n && t->src[m->start] != key[0])))
		return 0;
	return tok_eq_bytes(t, k, key, n);
}

uint32_t jtape_get(const struct jtape *t, uint32_t o, const char *key)
{
	/* The memo is the only field a lookup writes (see jtape.h). */
	struct jtape *w = (struct jtape *)t;
	size_t n = strlen(key);
	uint32_t from, end, k;

	if (!t->tok || o >= t->n_tok || t->tok[o].type != JT_OBJECT)
		return 0;
	end = t->tok[o].next;
	from = t->memo_obj == o && t->memo_key > o && t->memo_key < end
		   ? t->memo_key
		   : o + 1;
	for (k = from; k < end; k = t->tok[k + 1].next)
		if (key_is(t, k, key, n))
			goto found;
	for (k = o + 1; k < from; k = t->tok[k + 1].next)
		if (key_is(t, k, key, n))
			goto found;
	return 0;
found:
	w->memo_obj = o;
	w->memo_key = k;
	return k + 1;
}

int jtape_streq(const struct jtape *t, uint32_t i, const char *s)
{
	if (!t->tok || i >= t->n_tok || t->tok[i].type != JT_STRING)
		return 0;
	return tok_eq_bytes(t, i, s, strlen(s));
}

long jtape_str(const struct jtape *t, uint32_t i, char *buf, size_t cap)
{
	const struct jt_tok *k;
	const unsigned char *s, *end;
	unsigned char tmp[4];
	size_t o = 0, w, adv;

	if (!t->tok || i >= t->n_tok || t->tok[i].type != JT_STRING || !cap)
		return -1;
	k = &t->tok[i];
	s = (const unsigned char *)t->src + k->start;
	if (!k->escaped) {
		if (k->len > cap - 1)
			return -1;
		memcpy(buf, s, k->len);
		buf[k->len] = '\0';
		return (long)k->len;
	}
	if (k->len <= cap - 1) {
		o = jt_decode(s, k->len, (unsigned char *)buf);
		buf[o] = '\0';
		return (long)o;
	}
	/* The raw text is longer than buf; decode a piece at a time. */
	end = s + k->len;
	while (s < end) {
		if (*s != '\\') {
			tmp[0] = *s;
			w = 1;
			adv = 1;
		} else {
			w = decode_escape(s, end, tmp, &adv);
		}
		if (o + w > cap - 1)
			return -1;
		memcpy(buf + o, tmp, w);
		o += w;
		s += adv;
	}
	buf[o] = '\0';
	return (long)o;
}

int jtape_num(const struct jtape *t, uint32_t i, double *out)
{
	const struct jt_tok *k;
	char local[64], *buf = local;

	if (!t->tok || i >= t->n_tok || t->tok[i].type != JT_NUMBER)
		return -1;
	k = &t->tok[i];
	if (k->len >= sizeof(local)) {
		buf = malloc((size_t)k->len + 1);
		if (!buf)
			return -1;
	}
	memcpy(buf, t->src + k->start, k->len);
	buf[k->len] = '\0';
	*out = strtod(buf, NULL);
	if (buf != local)
		free(buf);
	return 0;
}

/* jtape.c - strict JSON (RFC 8259) parsed into a flat token array.
 *
 * A loop over an explicit stack of open containers (no recursion, so
 * max_depth bounds the memory and nothing else does), with the hot scans
 * kept cheap: strings are searched 16 bytes at a time for the four things
 * that need attention (quote, backslash, control byte, non-ASCII byte);
 * numbers are checked against the grammar and their range without strtod
 * except near the overflow boundary; duplicate keys are found by a 64-bit
 * hash of each decoded key behind a 256-bit filter per object, so the
 * usual key costs one hash and one bit test. Decoding string tokens and
 * the lookups over a finished tape are in jtape_read.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lib/jtape.h"
#include "lib/jtape_int.h"

/* start/len/next are 32-bit: 2^31 bytes leave room for len + 1 tokens. */
#define JT_MAX_LEN ((size_t)1 << 31)
/* Frames and key hashes that fit here cost no allocation. */
#define LOCAL_FRAMES 40
#define LOCAL_KEYS   256

struct frame {
	uint32_t tok;	   /* the open container's token */
	uint32_t key_base; /* object: its first entry in the key stack */
	int obj;
	uint64_t bloom[4]; /* object: one bit per key hash (top byte) */
};

struct key_ent {
	uint64_t hash;
	uint32_t tok;
};

struct parser {
	struct jtape *t;
	const unsigned char *s;
	size_t n;
	int max_depth;
	char *err;
	size_t err_len;
	struct frame *fr; /* fr_local or heap */
	int depth, fr_cap;
	struct key_ent *keys; /* keys_local or heap */
	size_t n_keys, keys_cap;
	unsigned char *kbuf; /* decoded escaped keys (heap) */
	size_t kbuf_cap;
	struct frame fr_local[LOCAL_FRAMES];
	struct key_ent keys_local[LOCAL_KEYS];
};

/* A hex digit's value + 1, so that 0 marks every other byte. */
static const signed char hexval[256] = {
    ['0'] = 1,	['1'] = 2,  ['2'] = 3,	['3'] = 4,  ['4'] = 5,	['5'] = 6,
    ['6'] = 7,	['7'] = 8,  ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12,
    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
    ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The table stores value + 1 so 0 means invalid. */
int32_t jt_hex4(const unsigned char *p)
{
	int a = hexval[p[0]], b = hexval[p[1]], c = hexval[p[2]],
	    d = hexval[p[3]];

	if (!a || !b || !c || !d)
		return -1;
	return ((a - 1) << 12) | ((b - 1) << 8) | ((c - 1) << 4) | (d - 1);
}

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline size_t skip_ws(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && s[i] <= ' ' && is_ws(s[i]))
		i++;
	return i;
}

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !err_len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

/* Records a syntax error at byte off with its line and column; only
 * failures pay for counting the lines.
 */
static int fail(struct parser *p, size_t off, const char *fmt, ...)
{
	const unsigned char *nl, *line_start = p->s;
	size_t line = 1, used;
	va_list ap;

	if (!p->err || !p->err_len)
		return -1;
	if (off > p->n)
		off = p->n;
	while (off > (size_t)(line_start - p->s) &&
	       (nl = memchr(line_start, '\n',
			    off - (size_t)(line_start - p->s)))) {
		line++;
		line_start = nl + 1;
	}
	snprintf(p->err, p->err_len,
		 "invalid JSON at line %zu, column %zu: ", line,
		 off - (size_t)(line_start - p->s) + 1);
	used = strlen(p->err);
	if (used + 1 < p->err_len) {
		va_start(ap, fmt);
		vsnprintf(p->err + used, p->err_len - used, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* A description of the byte at off for messages (ASCII only, since the
 * message may end up in a JSON problem body).
 */
static int fail_char(struct parser *p, size_t off, const char *what)
{
	unsigned char c;

	if (off >= p->n)
		return fail(p, off, "unexpected end of input, %s", what);
	c = p->s[off];
	if (c > ' ' && c < 0x7f)
		return fail(p, off, "unexpected '%c', %s", c, what);
	return fail(p, off, "unexpected byte 0x%02x, %s", c, what);
}

/* Length of the well-formed UTF-8 sequence at s (lead byte >= 0x80), or 0
 * (Unicode Table 3-7: no overlongs, no surrogates, nothing past U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0)
		return avail >= 2 && s[1] >= 0x80 && s[1] <= 0xbf ? 2 : 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (c < 0xf0)
		return avail >= 3 && s[1] >= lo && s[1] <= hi &&
			       (s[2] & 0xc0) == 0x80
			   ? 3
			   : 0;
	return avail >= 4 && s[1] >= lo && s[1] <= hi &&
		       (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80
		   ? 4
		   : 0;
}

/* Checks the escape whose backslash is at i; *next is past it. */
static int scan_escape(struct parser *p, size_t i, size_t *next)
{
	const unsigned char *s = p->s;
	size_t n = p->n;
	int32_t hi, lo;

	if (i + 1 >= n)
		return fail(p, n, "unexpected end of input in a string");
	switch (s[i + 1]) {
	case '"':
	case '\\':
	case '/':
	case 'b':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		*next = i + 2;
		return 0;
	case 'u':
		break;
	default:
		if (s[i + 1] > ' ' && s[i + 1] < 0x7f)
			return fail(p, i, "invalid escape '\\%c'", s[i + 1]);
		return fail(p, i, "invalid escape");
	}
	if (n - i < 6 || (hi = jt_hex4(s + i + 2)) < 0)
		return fail(p, i,
			    "invalid \\u escape (four hex digits needed)");
	/* jansson refuses it too, and PostgreSQL text cannot hold it. */
	if (hi == 0)
		return fail(p, i, "\\u0000 is not allowed");
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return fail(p, i, "unpaired low surrogate \\u%04X", (int)hi);
	if (hi >= 0xd800 && hi <= 0xdbff) {
		if (n - i < 12 || s[i + 6] != '\\' || s[i + 7] != 'u' ||
		    (lo = jt_hex4(s + i + 8)) < 0xdc00 || lo > 0xdfff)
			return fail(p, i, "unpaired high surrogate \\u%04X",
				    (int)hi);
		*next = i + 12;
		return 0;
	}
	*next = i + 6;
	return 0;
}

/* 1 for the bytes a string may hold as they are: printable ASCII other
 * than the quote and the backslash.
 */
static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* Scans the string whose opening quote is at i; *end is past the closing
 * quote, *escaped whether it holds a backslash.
 */
static int scan_string(struct parser *p, size_t i, size_t *end, int *escaped)
{
	const unsigned char *s = p->s;
	size_t n = p->n, k;
	int esc = 0;

	i++;
	for (;;) {
#ifdef __SSE2__
		const __m128i quote = _mm_set1_epi8('"');
		const __m128i bslash = _mm_set1_epi8('\\');
		const __m128i space = _mm_set1_epi8(' ');

		/* The signed compare flags bytes >= 0x80 along with the
		 * controls: both leave the fast path.
		 */
		while (n - i >= 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(s + i));
			__m128i m = _mm_or_si128(
			    _mm_or_si128(_mm_cmpeq_epi8(v, quote),
					 _mm_cmpeq_epi8(v, bslash)),
			    _mm_cmplt_epi8(v, space));
			unsigned bits = (unsigned)_mm_movemask_epi8(m);

			if (bits) {
				i += (size_t)__builtin_ctz(bits);
				goto special;
			}
			i += 16;
		}
#endif
		while (i < n && plain(s[i]))
			i++;
		if (i >= n)
			return fail(p, n,
				    "unexpected end of input in a string");
#ifdef __SSE2__
	special:
#endif
		if (s[i] == '"') {
			*end = i + 1;
			*escaped = esc;
			return 0;
		}
		if (s[i] == '\\') {
			esc = 1;
			if (scan_escape(p, i, &i))
				return -1;
			continue;
		}
		if (s[i] < 0x20)
			return fail(p, i,
				    "control character 0x%02x in a string "
				    "(must be escaped)",
				    s[i]);
		k = utf8_seq(s + i, n - i);
		if (!k)
			return fail(p, i, "invalid UTF-8 in a string");
		i += k;
	}
}

/* Scans the number at i into tk (len, integer); *end is past it. The
 * range checks follow jansson: integer-form numbers must fit int64 and
 * others must not overflow a double.
 */
static int scan_number(struct parser *p, size_t i, struct jt_tok *tk,
		       size_t *end)
{
	const unsigned char *s = p->s;
	size_t n = p->n, start = i, ds, int_digits, lead = 0;
	int neg = 0, integer = 1, exp_neg = 0, nonzero = 0;
	long long exp = 0, mag;

	if (s[i] == '-') {
		neg = 1;
		i++;
	}
	ds = i;
	if (i >= n || (unsigned)(s[i] - '0') > 9)
		return fail_char(p, i, "expected a digit");
	if (s[i] == '0') {
		i++;
		if (i < n && (unsigned)(s[i] - '0') <= 9)
			return fail(p, ds, "leading zero in a number");
	} else {
		while (i < n && (unsigned)(s[i] - '0') <= 9)
			i++;
	}
	int_digits = i - ds;
	if (s[ds] != '0') {
		nonzero = 1; /* magnitude: int_digits digits before the point */
		lead = int_digits;
	}
	if (i < n && s[i] == '.') {
		size_t fs = ++i;

		integer = 0;
		if (i >= n || (unsigned)(s[i] - '0') > 9)
			return fail_char(p, i, "expected a digit after '.'");
		while (i < n && (unsigned)(s[i] - '0') <= 9)
			i++;
		if (!nonzero) {
			for (size_t j = fs; j < i; j++) {
				if (s[j] != '0') {
					nonzero = 1;
					lead = 0; /* 0.00d: below 10^-(j-fs) */
					exp = -(long long)(j - fs);
					break;
				}
			}
		}
	}
	if (i < n && (s[i] | 0x20) == 'e') {
		long long e = 0;

		integer = 0;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			exp_neg = s[i++] == '-';
		if (i >= n || (unsigned)(s[i] - '0') > 9)
			return fail_char(p, i,
					 "expected a digit in an exponent");
		/* Saturate: past 10^9 the verdict no longer changes. */
		while (i < n && (unsigned)(s[i] - '0') <= 9) {
			if (e < 1000000000)
				e = e * 10 + (s[i] - '0');
			i++;
		}
		exp += exp_neg ? -e : e;
	}
	tk->len = (uint32_t)(i - start);
	tk->integer = (uint8_t)integer;
	*end = i;
	if (integer) {
		/* 19 digits may still fit: compare with INT64_MAX/MIN text. */
		if (int_digits > 19 ||
		    (int_digits == 19 &&
		     memcmp(s + ds,
			    neg ? "9223372036854775808" : "9223372036854775807",
			    19) > 0))
			return fail(p, start,
				    "integer out of range (outside int64)");
		return 0;
	}
	if (!nonzero)
		return 0;
	/* The value lies in [10^(mag-1), 10^mag): below 10^308 it is finite,
	 * from 10^309 on it overflows; in between only strtod can tell.
	 */
	mag = (long long)lead + exp;
	if (mag <= 308)
		return 0;
	if (mag == 309) {
		char local[64], *buf = local;
		double d;

		if (i - start >= sizeof(local)) {
			buf = malloc(i - start + 1);
			if (!buf) {
				set_err(p->err, p->err_len, "out of memory");
				return -1;
			}
		}
		memcpy(buf, s + start, i - start);
		buf[i - start] = '\0';
		d = strtod(buf, NULL);
		if (buf != local)
			free(buf);
		if (!isinf(d))
			return 0;
	}
	return fail(p, start, "number out of range (overflows a double)");
}

/* Doubles the token array (the tape's own: jtape_free releases it). */
static int grow_tok(struct parser *p)
{
	struct jtape *t = p->t;
	uint32_t cap = t->cap > UINT32_MAX / 2 ? UINT32_MAX : t->cap * 2;
	struct jt_tok *tok;

	if (cap == t->cap ||
	    !(tok = realloc(t->tok, (size_t)cap * sizeof(*tok)))) {
		set_err(p->err, p->err_len, "out of memory");
		return -1;
	}
	t->tok = tok;
	t->cap = cap;
	return 0;
}

/* Moves a local stack to the heap or doubles a heap one (freed by
 * jtape_parse).
 */
static int grow_stack(void **arr, void *local, size_t *cap, size_t size)
{
	size_t ncap = *cap * 2;
	void *a;

	if (*arr == local) {
		a = malloc(ncap * size);
		if (a)
			memcpy(a, local, *cap * size);
	} else {
		a = realloc(*arr, ncap * size);
	}
	if (!a)
		return -1;
	*arr = a;
	*cap = ncap;
	return 0;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

/* A 64-bit hash of decoded key bytes, 8 at a time: keys are short and
 * many, a byte-serial hash would cost more than the rest of the parse.
 */
static uint64_t key_hash(const unsigned char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * 0x94d049bb133111ebull;
	}
	return mix(h);
}

/* Records key token ki of the object in frame f; fails on a duplicate.
 * Escaped keys are decoded into p->kbuf (grown here, freed by
 * jtape_parse).
 */
static int add_key(struct parser *p, struct frame *f, uint32_t ki)
{
	const struct jt_tok *k = &p->t->tok[ki];
	const unsigned char *ks = p->s + k->start;
	size_t kn = k->len;
	uint64_t h, bit;

	if (k->escaped) {
		if (kn > p->kbuf_cap) {
			unsigned char *b = realloc(p->kbuf, kn);

			if (!b) {
				set_err(p->err, p->err_len, "out of memory");
				return -1;
			}
			p->kbuf = b;
			p->kbuf_cap = kn;
		}
		kn = jt_decode(ks, kn, p->kbuf);
		ks = p->kbuf;
	}
	h = key_hash(ks, kn);
	bit = h >> 56;
	if (f->bloom[bit >> 6] & (1ull << (bit & 63))) {
		for (size_t j = f->key_base; j < p->n_keys; j++)
			if (p->keys[j].hash == h &&
			    jt_tok_streq(p->t, p->keys[j].tok, ki))
				return fail(p, k->start - 1,
					    "duplicate object key");
	}
	f->bloom[bit >> 6] |= 1ull << (bit & 63);
	if (p->n_keys == p->keys_cap &&
	    grow_stack((void **)&p->keys, p->keys_local, &p->keys_cap,
		       sizeof(*p->keys))) {
		set_err(p->err, p->err_len, "out of memory");
		return -1;
	}
	p->keys[p->n_keys].hash = h;
	p->keys[p->n_keys].tok = ki;
	p->n_keys++;
	return 0;
}

/* Opens the container token ti; fails past max_depth. */
static int open_frame(struct parser *p, uint32_t ti, int obj)
{
	struct frame *f;
	size_t cap = (size_t)p->fr_cap;

	if (p->depth >= p->max_depth)
		return fail(p, p->t->tok[ti].start,
			    "nesting deeper than %d levels", p->max_depth);
	if (p->depth == p->fr_cap) {
		if (grow_stack((void **)&p->fr, p->fr_local, &cap,
			       sizeof(*p->fr))) {
			set_err(p->err, p->err_len, "out of memory");
			return -1;
		}
		p->fr_cap = (int)cap;
	}
	f = &p->fr[p->depth++];
	f->tok = ti;
	f->obj = obj;
	if (obj) {
		f->key_base = (uint32_t)p->n_keys;
		memset(f->bloom, 0, sizeof(f->bloom));
	}
	return 0;
}

static int parse(struct parser *p)
{
	struct jtape *t = p->t;
	const unsigned char *s = p->s;
	size_t n = p->n, i = 0, e;
	struct jt_tok *tk;
	struct frame *f;
	uint32_t ti;
	int esc;

value:
	i = skip_ws(s, n, i);
	if (i >= n)
		return fail(p, i, "unexpected end of input, expected a value");
	if (t->n_tok == t->cap && grow_tok(p))
		return -1;
	ti = t->n_tok++;
	tk = &t->tok[ti];
	tk->start = (uint32_t)i;
	tk->escaped = 0;
	tk->integer = 0;
	tk->count = 0;
	tk->next = ti + 1;
	switch (s[i]) {
	case '{':
		tk->type = JT_OBJECT;
		if (open_frame(p, ti, 1))
			return -1;
		i = skip_ws(s, n, i + 1);
		if (i < n && s[i] == '}') {
			i++;
			goto close;
		}
		goto key;
	case '[':
		tk->type = JT_ARRAY;
		if (open_frame(p, ti, 0))
			return -1;
		i = skip_ws(s, n, i + 1);
		if (i < n && s[i] == ']') {
			i++;
			goto close;
		}
		t->tok[ti].count = 1;
		goto value;
	case '"':
		tk->type = JT_STRING;
		if (scan_string(p, i, &e, &esc))
			return -1;
		tk = &t->tok[ti];
		tk->start = (uint32_t)i + 1;
		tk->len = (uint32_t)(e - i - 2);
		tk->escaped = (uint8_t)esc;
		i = e;
		goto after;
	case '-':
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9':
		tk->type = JT_NUMBER;
		if (scan_number(p, i, tk, &i))
			return -1;
		goto after;
	case 't':
		tk->type = JT_TRUE;
		tk->len = 4;
		if (n - i < 4 || memcmp(s + i, "true", 4))
			return fail(p, i, "invalid literal (expected true)");
		i += 4;
		goto after;
	case 'f':
		tk->type = JT_FALSE;
		tk->len = 5;
		if (n - i < 5 || memcmp(s + i, "false", 5))
			return fail(p, i, "invalid literal (expected false)");
		i += 5;
		goto after;
	case 'n':
		tk->type = JT_NULL;
		tk->len = 4;
		if (n - i < 4 || memcmp(s + i, "null", 4))
			return fail(p, i, "invalid literal (expected null)");
		i += 4;
		goto after;
	default:
		return fail_char(p, i, "expected a value");
	}

close: /* i is past the closing bracket of the top frame */
	f = &p->fr[p->depth - 1];
	tk = &t->tok[f->tok];
	tk->len = (uint32_t)(i - tk->start);
	tk->next = t->n_tok;
	if (f->obj)
		p->n_keys = f->key_base;
	p->depth--;
after:
	if (!p->depth)
		goto done;
	i = skip_ws(s, n, i);
	f = &p->fr[p->depth - 1];
	if (f->obj) {
		if (i < n && s[i] == ',') {
			i = skip_ws(s, n, i + 1);
			goto key;
		}
		if (i < n && s[i] == '}') {
			i++;
			goto close;
		}
		return fail_char(p, i, "expected ',' or '}' in an object");
	}
	if (i < n && s[i] == ',') {
		t->tok[f->tok].count++;
		i++;
		goto value;
	}
	if (i < n && s[i] == ']') {
		i++;
		goto close;
	}
	return fail_char(p, i, "expected ',' or ']' in an array");

key: /* i is at the key's quote, whitespace skipped */
	if (i >= n || s[i] != '"')
		return fail_char(p, i, "expected a string key");
	if (t->n_tok == t->cap && grow_tok(p))
		return -1;
	ti = t->n_tok++;
	if (scan_string(p, i, &e, &esc))
		return -1;
	tk = &t->tok[ti];
	tk->type = JT_STRING;
	tk->escaped = (uint8_t)esc;
	tk->integer = 0;
	tk->start = (uint32_t)i + 1;
	tk->len = (uint32_t)(e - i - 2);
	tk->next = ti + 1;
	tk->count = 0;
	f = &p->fr[p->depth - 1];
	if (add_key(p, f, ti))
		return -1;
	t->tok[f->tok].count++;
	i = skip_ws(s, n, e);
	if (i >= n || s[i] != ':')
		return fail_char(p, i, "expected ':' after an object key");
	i++;
	goto value;

done:
	i = skip_ws(s, n, i);
	if (i < n)
		return fail_char(p, i, "expected the end of input");
	return 0;
}

int jtape_parse(struct jtape *t, const char *src, size_t len, int max_depth,
		char *err, size_t err_len)
{
	/* The local stacks make this ~7 KB: fine on a handler thread. */
	struct parser p;
	int rc = -1;

	t->src = src;
	t->src_len = len;
	t->tok = NULL;
	t->n_tok = 0;
	t->cap = 0;
	t->memo_obj = t->memo_key = 0;
	if (err && err_len)
		err[0] = '\0';
	if (len > JT_MAX_LEN) {
		set_err(err, err_len,
			"JSON document of %zu bytes is over the limit of "
			"2147483648 bytes",
			len);
		return -1;
	}
	p.t = t;
	p.s = (const unsigned char *)(src ? src : "");
	p.n = src ? len : 0;
	p.max_depth = max_depth < 0 ? 0 : max_depth;
	p.err = err;
	p.err_len = err_len;
	p.fr = p.fr_local;
	p.depth = 0;
	p.fr_cap = LOCAL_FRAMES;
	p.keys = p.keys_local;
	p.n_keys = 0;
	p.keys_cap = LOCAL_KEYS;
	p.kbuf = NULL;
	p.kbuf_cap = 0;
	/* Compact probe reports hold one token per ~11 bytes: one
	 * allocation, rarely a realloc. Never more than len + 1 tokens.
	 */
	t->cap = (uint32_t)(p.n / 8 + 16);
	t->tok = malloc((size_t)t->cap * sizeof(*t->tok));
	if (!t->tok) {
		set_err(err, err_len, "out of memory");
		goto out;
	}
	rc = parse(&p);
out:
	if (p.fr != p.fr_local)
		free(p.fr);
	if (p.keys != p.keys_local)
		free(p.keys);
	free(p.kbuf);
	if (rc)
		jtape_free(t);
	return rc;
}

void jtape_free(struct jtape *t)
{
	free(t->tok);
	t->tok = NULL;
	t->n_tok = 0;
	t->cap = 0;
	t->memo_obj = t->memo_key = 0;
}

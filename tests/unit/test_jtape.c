/* test_jtape.c - the strict JSON tape parser: navigation, decoding,
 * numbers, every refusal with its position, the depth limit, agreement
 * with jansson on a table of tricky inputs (accept/reject and, when both
 * accept, the same tree), and the real probe report fixture.
 *
 * Differences from jansson, all on purpose:
 *  - jansson's json_loadb refuses a top-level scalar unless given
 *    JSON_DECODE_ANY; RFC 8259 (section 2) allows any value at the top,
 *    and so does jtape, so the comparisons pass JSON_DECODE_ANY;
 *  - jansson nests up to 2048 levels, jtape up to the caller's max_depth
 *    (the daemon's 32, as jv_parse_body's pre-check).
 *  - jansson 2.14 accepts a raw NUL byte right after a number or a
 *    literal ("5\0", "[true\0]", "{\"a\":1\0}"): its reader takes a
 *    NUL in its look-ahead buffer for "empty", so the byte it puts back
 *    after such a token vanishes. RFC 8259 allows no NUL outside strings
 *    (it is not whitespace) and none inside (a control character), so
 *    jtape refuses; test_jansson_nul pins our side (found by fuzz_jtape).
 * jansson 2.14 refuses \u0000 without JSON_ALLOW_NUL, as jtape does.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/jtape.h"
#include "tests/unit/testlib.h"

#define DEPTH 32

static char err[256];

static int parse(struct jtape *t, const char *s)
{
	return jtape_parse(t, s, strlen(s), DEPTH, err, sizeof(err));
}

/* 1 when the tape's value i is the same tree as j: types, sizes, keys,
 * decoded strings byte for byte, numbers (integer vs real, same value).
 */
static int same_tree(const struct jtape *t, uint32_t i, const json_t *j)
{
	const struct jt_tok *k = &t->tok[i];
	uint32_t m, n = 0;

	switch (k->type) {
	case JT_OBJECT:
		if (!json_is_object(j) || json_object_size(j) != k->count)
			return 0;
		for (m = i + 1; m < k->next; m = t->tok[m + 1].next) {
			char key[512];
			long kl = jtape_str(t, m, key, sizeof(key));
			const json_t *v;

			if (kl < 0)
				return 0;
			v = json_object_getn(j, key, (size_t)kl);
			if (!v || !same_tree(t, m + 1, v))
				return 0;
			n++;
		}
		return n == k->count;
	case JT_ARRAY:
		if (!json_is_array(j) || json_array_size(j) != k->count)
			return 0;
		for (m = i + 1; m < k->next; m = t->tok[m].next)
			if (!same_tree(t, m, json_array_get(j, n++)))
				return 0;
		return n == k->count;
	case JT_STRING: {
		char *buf = malloc((size_t)k->len + 1);
		long len = jtape_str(t, i, buf, (size_t)k->len + 1);
		int ok = json_is_string(j) && len >= 0 &&
			 (size_t)len == json_string_length(j) &&
			 !memcmp(buf, json_string_value(j), (size_t)len);

		free(buf);
		return ok;
	}
	case JT_NUMBER: {
		double d;

		if (jtape_num(t, i, &d))
			return 0;
		if (k->integer)
			return json_is_integer(j) &&
			       json_integer_value(j) ==
				   strtoll(t->src + k->start, NULL, 10);
		return json_is_real(j) && json_real_value(j) == d;
	}
	case JT_TRUE:
		return json_is_true(j);
	case JT_FALSE:
		return json_is_false(j);
	case JT_NULL:
		return json_is_null(j);
	}
	return 0;
}

static void test_navigate(void)
{
	const char *s = " {\"a\": {\"b\": [1, 2, {\"c\": null}], \"d\": true},"
			"\n \"e\": [], \"f\": {}, \"g\": \"x\", \"h\": false} ";
	struct jtape t;
	uint32_t a, b, c, k, n;

	CHECK(parse(&t, s) == 0);
	CHECK(t.tok[0].type == JT_OBJECT && t.tok[0].count == 5);
	CHECK(t.tok[0].next == t.n_tok);
	CHECK(t.tok[0].start == 1 &&
	      s[t.tok[0].start + t.tok[0].len - 1] == '}');
	a = jtape_get(&t, 0, "a");
	CHECK(a && t.tok[a].type == JT_OBJECT && t.tok[a].count == 2);
	b = jtape_get(&t, a, "b");
	CHECK(b && t.tok[b].type == JT_ARRAY && t.tok[b].count == 3);
	CHECK(t.tok[b].len == strlen("[1, 2, {\"c\": null}]"));
	n = 0;
	for (k = b + 1; k < t.tok[b].next; k = t.tok[k].next)
		n++;
	CHECK(n == 3);
	c = b + 1;
	c = t.tok[c].next;
	c = t.tok[c].next; /* the third element */
	CHECK(t.tok[c].type == JT_OBJECT);
	CHECK(t.tok[jtape_get(&t, c, "c")].type == JT_NULL);
	CHECK(t.tok[jtape_get(&t, a, "d")].type == JT_TRUE);
	CHECK(t.tok[jtape_get(&t, 0, "h")].type == JT_FALSE);
	CHECK(t.tok[jtape_get(&t, 0, "e")].count == 0);
	CHECK(t.tok[jtape_get(&t, 0, "f")].type == JT_OBJECT);
	CHECK(jtape_streq(&t, jtape_get(&t, 0, "g"), "x"));
	CHECK(!jtape_streq(&t, jtape_get(&t, 0, "g"), "xy"));
	/* Misses: absent keys, nested keys not at this level, non-objects. */
	CHECK(jtape_get(&t, 0, "b") == 0);
	CHECK(jtape_get(&t, 0, "") == 0);
	CHECK(jtape_get(&t, 0, "A") == 0);
	CHECK(jtape_get(&t, b, "c") == 0);
	CHECK(jtape_get(&t, b + 1, "a") == 0);
	CHECK(jtape_get(&t, t.n_tok + 5, "a") == 0);
	n = 0;
	for (k = 1; k < t.tok[0].next; k = t.tok[k + 1].next)
		n++;
	CHECK(n == 5);
	jtape_free(&t);
	CHECK(t.tok == NULL && t.n_tok == 0);
	/* The struct is reusable; scalars at the top are values too. */
	CHECK(parse(&t, " 42 ") == 0 && t.n_tok == 1 &&
	      t.tok[0].type == JT_NUMBER && t.tok[0].integer);
	CHECK(jtape_get(&t, 0, "a") == 0);
	jtape_free(&t);
	CHECK(parse(&t, "\"s\"") == 0 && jtape_streq(&t, 0, "s"));
	jtape_free(&t);
}

static void test_strings(void)
{
	const char *s = "{\"k\\n\": \"a\\nb\\\"c\\\\d\\/e\\b\\f\\r\\t\","
			"\"u\": \"\\u00e9\\u20AC\\ud83d\\ude00x\","
			"\"raw\": \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f\","
			"\"\\u0061b\": 1}";
	char buf[64];
	struct jtape t;
	uint32_t v;

	CHECK(parse(&t, s) == 0);
	v = jtape_get(&t, 0, "k\n");
	CHECK(v && t.tok[v].escaped);
	CHECK(jtape_str(&t, v, buf, sizeof(buf)) == 13);
	CHECK(!strcmp(buf, "a\nb\"c\\d/e\b\f\r\t"));
	CHECK(jtape_streq(&t, v, "a\nb\"c\\d/e\b\f\r\t"));
	CHECK(!jtape_streq(&t, v, "a\nb\"c\\d/e\b\f\r"));
	CHECK(!jtape_streq(&t, v, "a\nb\"c\\d/e\b\f\r\tz"));
	/* U+00E9, U+20AC and the pair U+1F600 -> 2, 3 and 4 bytes. */
	v = jtape_get(&t, 0, "u");
	CHECK(jtape_str(&t, v, buf, sizeof(buf)) == 10);
	CHECK(!strcmp(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x"));
	CHECK(jtape_streq(&t, v, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x"));
	v = jtape_get(&t, 0, "raw");
	CHECK(v && !t.tok[v].escaped);
	CHECK(jtape_streq(&t, v, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f"));
	CHECK(jtape_get(&t, 0, "ab") != 0); /* an escaped key, decoded */
	/* Too small: the decoded length must fit in cap - 1. */
	CHECK(jtape_str(&t, jtape_get(&t, 0, "u"), buf, 10) == -1);
	CHECK(jtape_str(&t, jtape_get(&t, 0, "u"), buf, 11) == 10);
	CHECK(jtape_str(&t, jtape_get(&t, 0, "raw"), buf, 10) == -1);
	CHECK(jtape_str(&t, jtape_get(&t, 0, "raw"), buf, 11) == 10);
	CHECK(jtape_str(&t, jtape_get(&t, 0, "raw"), buf, 0) == -1);
	CHECK(jtape_str(&t, jtape_get(&t, 0, "ab"), buf, sizeof(buf)) == -1);
	CHECK(jtape_str(&t, 0, buf, sizeof(buf)) == -1);
	CHECK(!jtape_streq(&t, 0, ""));
	jtape_free(&t);
	/* Raw text longer than buf but the decoded text fits. */
	CHECK(parse(&t, "\"\\u0041\\u0042\\u0043\"") == 0);
	CHECK(jtape_str(&t, 0, buf, 4) == 3 && !strcmp(buf, "ABC"));
	CHECK(jtape_str(&t, 0, buf, 3) == -1);
	jtape_free(&t);
	CHECK(parse(&t, "\"\"") == 0 && jtape_str(&t, 0, buf, 1) == 0 &&
	      buf[0] == '\0' && jtape_streq(&t, 0, ""));
	jtape_free(&t);
}

static void test_numbers(void)
{
	const char *s = "[0, -0, 12, -34, 1.5, -0.25, 1e3, 1E+3, 2e-2, 0.5e1,"
			" 1e-400, 9223372036854775807, -9223372036854775808,"
			" 1.7976931348623157e308, 1e308, 0e999, -0.0]";
	static const struct {
		double v;
		int integer;
	} want[] = {{0, 1},
		    {-0.0, 1},
		    {12, 1},
		    {-34, 1},
		    {1.5, 0},
		    {-0.25, 0},
		    {1e3, 0},
		    {1e3, 0},
		    {2e-2, 0},
		    {5, 0},
		    {0, 0},
		    {9.2233720368547758e18, 1},
		    {-9.2233720368547758e18, 1},
		    {1.7976931348623157e308, 0},
		    {1e308, 0},
		    {0, 0},
		    {-0.0, 0}};
	struct jtape t;
	uint32_t i, n = 0;
	double d;

	CHECK(parse(&t, s) == 0);
	CHECK(t.tok[0].count == sizeof(want) / sizeof(want[0]));
	for (i = 1; i < t.tok[0].next; i = t.tok[i].next, n++) {
		CHECK(t.tok[i].type == JT_NUMBER);
		CHECK(t.tok[i].integer == want[n].integer);
		CHECK(jtape_num(&t, i, &d) == 0 && d == want[n].v);
		if (d != want[n].v || t.tok[i].integer != want[n].integer)
			printf("# element %u: %.*s\n", n, (int)t.tok[i].len,
			       s + t.tok[i].start);
	}
	CHECK(jtape_num(&t, 2, &d) == 0 && signbit(d)); /* -0 */
	CHECK(jtape_num(&t, 0, &d) == -1);
	jtape_free(&t);
	CHECK(parse(&t, "\"1\"") == 0 && jtape_num(&t, 0, &d) == -1);
	jtape_free(&t);
}

/* A number whose text is longer than the local buffers: 1 or 2 with 308
 * zeros and ".0" (1e308 is finite, 2e308 overflows; both need strtod).
 */
static void test_long_numbers(void)
{
	char s[400];
	struct jtape t;
	double d;

	s[0] = '1';
	memset(s + 1, '0', 308);
	memcpy(s + 309, ".0", 3);
	CHECK(parse(&t, s) == 0 && !t.tok[0].integer);
	CHECK(jtape_num(&t, 0, &d) == 0 && d == 1e308);
	jtape_free(&t);
	s[0] = '2';
	CHECK(parse(&t, s) == -1 && strstr(err, "overflows a double"));
	/* Integer form with as many digits: outside int64. */
	s[309] = '\0';
	CHECK(parse(&t, s) == -1 && strstr(err, "int64"));
	/* Tiny: 0.000...1 underflows quietly, as jansson does. */
	memcpy(s, "0.", 2);
	memset(s + 2, '0', 340);
	memcpy(s + 342, "1e2", 4);
	CHECK(parse(&t, s) == 0 && jtape_num(&t, 0, &d) == 0 && d < 1e-300);
	jtape_free(&t);
}

struct bad {
	const char *s;
	size_t n; /* 0: strlen */
	const char *why;
};

static const struct bad bads[] = {
    /* structure */
    {"", 0, "end of input"},
    {" \n\t\r ", 0, "end of input"},
    {"\"abc", 0, "end of input"},
    {"\"abc\\", 0, "end of input"},
    {"[1, 2", 0, "end of input"},
    {"[1, 2,", 0, "end of input"},
    {"{\"a\": 1", 0, "end of input"},
    {"{\"a\"", 0, "':'"},
    {"{\"a\" 1}", 0, "':'"},
    {"{\"a\": 1 \"b\": 2}", 0, "',' or '}'"},
    {"[1 2]", 0, "',' or ']'"},
    {"[1,]", 0, "expected a value"},
    {"{\"a\": 1,}", 0, "string key"},
    {"{,}", 0, "string key"},
    {"[,1]", 0, "expected a value"},
    {"{\"a\": 1} // c", 0, "end of input"},
    {"/* c */ 1", 0, "expected a value"},
    {"[1 /* c */]", 0, "',' or ']'"},
    {"{'a': 1}", 0, "string key"},
    {"'a'", 0, "expected a value"},
    {"abc", 0, "expected a value"},
    {"{\"a\": abc}", 0, "expected a value"},
    {"tru", 0, "true"},
    {"nul", 0, "null"},
    {"True", 0, "expected a value"},
    {"falsey", 0, "end of input"},
    {"1 2", 0, "end of input"},
    {"{} {}", 0, "end of input"},
    {"[]]", 0, "end of input"},
    {"[}", 0, "expected a value"},
    {"{]", 0, "string key"},
    {"{1: 2}", 0, "string key"},
    {"\xef\xbb\xbf{}", 0, "expected a value"}, /* no BOM either */
    {"[1]\0", 4, "end of input"},
    /* strings */
    {"\"a\x01\"", 0, "control character"},
    {"\"a\nb\"", 0, "control character"},
    {"\"a\tb\"", 0, "control character"},
    {"\"\0\"", 3, "control character"},
    {"\"\\x41\"", 0, "invalid escape"},
    {"\"\\'\"", 0, "invalid escape"},
    {"\"\\U0041\"", 0, "invalid escape"},
    {"\"\\u12\"", 0, "\\u escape"},
    {"\"\\u12G4\"", 0, "\\u escape"},
    {"\"\\u0000\"", 0, "\\u0000"},
    {"{\"\\u0000\": 1}", 0, "\\u0000"},
    {"\"\\ud800\"", 0, "unpaired high"},
    {"\"\\ud800x\"", 0, "unpaired high"},
    {"\"\\ud800\\n\"", 0, "unpaired high"},
    {"\"\\ud800\\u0041\"", 0, "unpaired high"},
    {"\"\\ud800\\ud800\"", 0, "unpaired high"},
    {"\"\\udc00\"", 0, "unpaired low"},
    {"\"\\udfff\\ud800\"", 0, "unpaired low"},
    /* invalid UTF-8 */
    {"\"\x80\"", 0, "UTF-8"},
    {"\"\xc0\x80\"", 0, "UTF-8"},	  /* overlong NUL */
    {"\"\xc1\xbf\"", 0, "UTF-8"},	  /* overlong */
    {"\"\xe0\x80\xaf\"", 0, "UTF-8"},	  /* overlong '/' */
    {"\"\xf0\x80\x80\xaf\"", 0, "UTF-8"}, /* overlong '/' */
    {"\"\xed\xa0\x80\"", 0, "UTF-8"},	  /* U+D800 encoded */
    {"\"\xed\xbf\xbf\"", 0, "UTF-8"},	  /* U+DFFF encoded */
    {"\"\xf4\x90\x80\x80\"", 0, "UTF-8"}, /* U+110000 */
    {"\"\xf5\x80\x80\x80\"", 0, "UTF-8"},
    {"\"\xff\"", 0, "UTF-8"},
    {"\"\xe2\x82\"", 0, "UTF-8"}, /* truncated before the quote */
    {"\"\xe2\x82", 0, "UTF-8"},	  /* truncated at the end */
    {"\"\xc3\"", 0, "UTF-8"},
    /* duplicate keys, decoded */
    {"{\"a\": 1, \"a\": 2}", 0, "duplicate"},
    {"{\"a\": 1, \"\\u0061\": 2}", 0, "duplicate"},
    {"{\"\\/\": 1, \"/\": 2}", 0, "duplicate"},
    {"{\"\\ud83d\\ude00\": 1, \"\xf0\x9f\x98\x80\": 2}", 0, "duplicate"},
    {"{\"a\": {\"b\": 1, \"c\": {}, \"b\": 2}}", 0, "duplicate"},
    {"{\"a\": {\"x\": 1}, \"b\": [], \"a\": 3}", 0, "duplicate"},
    {"[{}, {\"k\": 1, \"k\": 1}]", 0, "duplicate"},
    /* numbers */
    {"01", 0, "leading zero"},
    {"-01", 0, "leading zero"},
    {"00", 0, "leading zero"},
    {"+1", 0, "expected a value"},
    {".5", 0, "expected a value"},
    {"1.", 0, "after '.'"},
    {"1.e5", 0, "after '.'"},
    {"1e", 0, "exponent"},
    {"1e+", 0, "exponent"},
    {"1E-x", 0, "exponent"},
    {"-", 0, "expected a digit"},
    {"-a", 0, "expected a digit"},
    {"NaN", 0, "expected a value"},
    {"Infinity", 0, "expected a value"},
    {"-Infinity", 0, "expected a digit"},
    {"0x10", 0, "end of input"},
    {"1e400", 0, "overflows a double"},
    {"-1e400", 0, "overflows a double"},
    {"1.7976931348623159e308", 0, "overflows a double"},
    {"0.001e312", 0, "overflows a double"},
    {"9223372036854775808", 0, "int64"},
    {"-9223372036854775809", 0, "int64"},
    {"99999999999999999999", 0, "int64"},
    {"[1, 2e99999999999999999999999]", 0, "overflows a double"},
};

static void test_rejects(void)
{
	struct jtape t;

	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		size_t n = b->n ? b->n : strlen(b->s);
		int rc = jtape_parse(&t, b->s, n, DEPTH, err, sizeof(err));

		if (rc != -1 || !strstr(err, "line") ||
		    !strstr(err, "column") || !strstr(err, b->why)) {
			printf("# case %zu (%s): rc %d, err '%s'\n", i, b->s,
			       rc, err);
			CHECK(0);
		}
		CHECK(t.tok == NULL && t.n_tok == 0);
	}
}

/* Positions are 1-based, columns in bytes, lines counted by '\n'. */
static void test_positions(void)
{
	struct jtape t;

	CHECK(parse(&t, "{\n  \"a\": x\n}") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 2, column 8: unexpected "
			   "'x', expected a value"));
	CHECK(parse(&t, "[1,\n\n \"\xc3\xa9\xff\"]") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 3, column 5: invalid UTF-8 "
			   "in a string"));
	CHECK(parse(&t, "{\"a\": 1,\n \"a\": 2}") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 2, column 2: duplicate "
			   "object key"));
	CHECK(parse(&t, "[1, 2") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 1, column 6: unexpected end "
			   "of input, expected ',' or ']' in an array"));
	CHECK(parse(&t, "") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 1, column 1: unexpected end "
			   "of input, expected a value"));
	CHECK(parse(&t, "[\x01]") == -1);
	CHECK(!strcmp(err, "invalid JSON at line 1, column 2: unexpected byte "
			   "0x01, expected a value"));
	/* A short buffer truncates; none at all is fine. */
	CHECK(jtape_parse(&t, "[1,]", 4, DEPTH, err, 10) == -1 &&
	      strlen(err) == 9);
	CHECK(jtape_parse(&t, "[1,]", 4, DEPTH, NULL, 0) == -1);
	CHECK(jtape_parse(&t, NULL, 0, DEPTH, err, sizeof(err)) == -1);
}

static char *nest(const char *open, const char *mid, const char *close,
		  int depth)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char *s = malloc((size_t)depth * (lo + lc) + lm + 1), *p = s;

	for (int i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, mid, lm);
	p += lm;
	for (int i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

static void test_depth(void)
{
	struct jtape t;
	char *s;

	s = nest("[", "1", "]", DEPTH);
	CHECK(parse(&t, s) == 0 && t.n_tok == DEPTH + 1);
	jtape_free(&t);
	free(s);
	s = nest("[", "1", "]", DEPTH + 1);
	CHECK(parse(&t, s) == -1 && strstr(err, "nesting deeper than 32") &&
	      strstr(err, "column 33"));
	free(s);
	s = nest("{\"a\":", "{}", "}", DEPTH - 1);
	CHECK(parse(&t, s) == 0);
	jtape_free(&t);
	free(s);
	s = nest("{\"a\":[", "{}", "]}", DEPTH / 2);
	CHECK(parse(&t, s) == -1 && strstr(err, "nesting deeper"));
	free(s);
	/* Past the local frames: 200 levels when the caller allows 200. */
	s = nest("{\"k\":[", "0", "]}", 100);
	CHECK(jtape_parse(&t, s, strlen(s), 200, err, sizeof(err)) == 0 &&
	      t.n_tok == 301);
	jtape_free(&t);
	CHECK(jtape_parse(&t, s, strlen(s), 199, err, sizeof(err)) == -1);
	free(s);
	CHECK(jtape_parse(&t, "[]", 2, 0, err, sizeof(err)) == -1);
	CHECK(jtape_parse(&t, "1", 1, 0, err, sizeof(err)) == 0);
	jtape_free(&t);
}

/* More tokens than the first estimate, and more keys in one object than
 * the local key stack: a late duplicate must still be found.
 */
static void test_growth(void)
{
	size_t cap = 20000 * 12 + 64, o = 0;
	char *s = malloc(cap);
	struct jtape t;
	char key[16];

	s[o++] = '[';
	for (int i = 0; i < 20000; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s1", i ? "," : "");
	s[o++] = ']';
	CHECK(jtape_parse(&t, s, o, DEPTH, err, sizeof(err)) == 0);
	CHECK(t.n_tok == 20001 && t.tok[0].count == 20000);
	jtape_free(&t);

	o = 0;
	s[o++] = '{';
	for (int i = 0; i < 1000; i++)
		o += (size_t)snprintf(s + o, cap - o, "%s\"k%d\":[%d]",
				      i ? "," : "", i, i);
	s[o++] = '}';
	CHECK(jtape_parse(&t, s, o, DEPTH, err, sizeof(err)) == 0);
	CHECK(t.tok[0].count == 1000);
	for (int i = 0; i < 1000; i += 111) {
		uint32_t v;
		double d;

		snprintf(key, sizeof(key), "k%d", i);
		v = jtape_get(&t, 0, key);
		CHECK(v && t.tok[v].type == JT_ARRAY &&
		      jtape_num(&t, v + 1, &d) == 0 && d == i);
	}
	jtape_free(&t);
	/* Duplicate the 7th key as the last, escaped. */
	o--;
	o += (size_t)snprintf(s + o, cap - o, ",\"\\u006b7\":0}");
	CHECK(jtape_parse(&t, s, o, DEPTH, err, sizeof(err)) == -1 &&
	      strstr(err, "duplicate"));
	free(s);
}

static void test_limit(void)
{
	struct jtape t;

	/* Refused before a byte is read, so a short buffer is safe here. */
	CHECK(jtape_parse(&t, "[]", ((size_t)1 << 31) + 1, DEPTH, err,
			  sizeof(err)) == -1);
	CHECK(strstr(err, "2147483648") != NULL && t.tok == NULL);
}

/* Accepted and refused alike by jansson; the "ok" column is the verdict
 * both must give.
 */
static const struct bad diffs[] = {
    {"{}", 0, "ok"},
    {"[]", 0, "ok"},
    {" [ ] ", 0, "ok"},
    {"0", 0, "ok"},
    {"-0", 0, "ok"},
    {"-0.0e-0", 0, "ok"},
    {"\"\"", 0, "ok"},
    {"null", 0, "ok"},
    {"[true,false,null]", 0, "ok"},
    {"{\"a\":{\"a\":{\"a\":1}}}", 0, "ok"},
    {"{\"a\":1,\"A\":2}", 0, "ok"},
    {"{\"\":1}", 0, "ok"},
    {"{\"a\":1,\"a \":2,\"\\u0061\\u0062\":3,\"ab \":4}", 0, "ok"},
    {"[\"\\u00e9\",\"\xc3\xa9\",\"\\ud83d\\ude00\",\"\\uDBFF\\uDFFF\"]", 0,
     "ok"},
    {"[\"\xf4\x8f\xbf\xbf\",\"\xef\xbf\xbf\",\"\xee\x80\x80\"]", 0, "ok"},
    {"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", 0, "ok"},
    {"[\"\\u0001\",\"\\u001f\",\"\x7f\"]", 0, "ok"},
    {"[1E2,1e+2,1e-2,1.0,0.0,-1.5E-7]", 0, "ok"},
    {"[1e-400,-1e-400,4.9e-324,2.5e-324]", 0, "ok"},
    {"[9223372036854775807,-9223372036854775808]", 0, "ok"},
    {"[1.7976931348623157e308,1.7976931348623158e308]", 0, "ok"},
    {"[1e308,-1e308,10e307,0.1e309,0e99999]", 0, "ok"},
    {"[123456789012345678901234567890.5]", 0, "ok"},
    {"{\"a\":[{\"b\":1},{\"b\":1}]}", 0, "ok"},
    {"{\"a\":1,\"b\":{\"a\":1}}", 0, "ok"},
    {"\r\n\t [1]\r\n\t ", 0, "ok"},
    {"", 0, "no"},
    {"   ", 0, "no"},
    {"[", 0, "no"},
    {"]", 0, "no"},
    {"[1,]", 0, "no"},
    {"{\"a\":1,}", 0, "no"},
    {"{\"a\"}", 0, "no"},
    {"{\"a\":}", 0, "no"},
    {"[01]", 0, "no"},
    {"[+1]", 0, "no"},
    {"[.5]", 0, "no"},
    {"[1.]", 0, "no"},
    {"[1e]", 0, "no"},
    {"[NaN]", 0, "no"},
    {"[-Infinity]", 0, "no"},
    {"[0x1]", 0, "no"},
    {"[1e400]", 0, "no"},
    {"[1.7976931348623159e308]", 0, "no"},
    {"[9223372036854775808]", 0, "no"},
    {"[-9223372036854775809]", 0, "no"},
    {"[\"\\u0000\"]", 0, "no"},
    {"[\"\\ud800\"]", 0, "no"},
    {"[\"\\udc00\\ud800\"]", 0, "no"},
    {"[\"\\ud800\\ud800\"]", 0, "no"},
    {"[\"\xed\xa0\x80\"]", 0, "no"},
    {"[\"\xc0\xaf\"]", 0, "no"},
    {"[\"\xf4\x90\x80\x80\"]", 0, "no"},
    {"[\"\x1f\"]", 0, "no"},
    {"[\"\\a\"]", 0, "no"},
    {"{\"a\":1,\"a\":1}", 0, "no"},
    {"{\"a\":1,\"\\u0061\":1}", 0, "no"},
    {"[1] [2]", 0, "no"},
    {"[1] x", 0, "no"},
    {"[1]\0", 4, "no"},
    {"[\"a\0\"]", 6, "no"},
    {"[tRue]", 0, "no"},
    {"[nulll]", 0, "no"},
    {"['a']", 0, "no"},
    {"[1]//", 0, "no"},
    {"\xef\xbb\xbf[1]", 0, "no"},
};

static void test_differential(void)
{
	for (size_t i = 0; i < sizeof(diffs) / sizeof(diffs[0]); i++) {
		const struct bad *d = &diffs[i];
		size_t n = d->n ? d->n : strlen(d->s);
		int want = !strcmp(d->why, "ok");
		struct jtape t;
		json_error_t je;
		json_t *j = json_loadb(
		    d->s, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
		int ours =
		    jtape_parse(&t, d->s, n, DEPTH, err, sizeof(err)) == 0;

		if (ours != want || !!j != want) {
			printf("# case %zu (%s): want %d, jtape %d (%s), "
			       "jansson %d (%s)\n",
			       i, d->s, want, ours, err, !!j, j ? "" : je.text);
			CHECK(0);
		}
		if (ours && j && !same_tree(&t, 0, j)) {
			printf("# case %zu (%s): trees differ\n", i, d->s);
			CHECK(0);
		}
		if (ours)
			jtape_free(&t);
		json_decref(j);
	}
}

/* The one divergence found: jtape refuses a raw NUL anywhere, jansson
 * drops one after a number or literal (see the top of this file). Only
 * our side is asserted; jansson's is reported, so a fixed jansson does
 * not break the build.
 */
static void test_jansson_nul(void)
{
	static const struct bad nuls[] = {
	    {"5\0", 2, ""},	 {"[1\0]", 4, ""},	 {"[1.5\0,2]", 8, ""},
	    {"[true\0]", 7, ""}, {"{\"a\":1\0}", 8, ""}, {"[null\0 ]", 8, ""},
	};
	struct jtape t;
	json_error_t je;

	for (size_t i = 0; i < sizeof(nuls) / sizeof(nuls[0]); i++) {
		json_t *j =
		    json_loadb(nuls[i].s, nuls[i].n,
			       JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);

		CHECK(jtape_parse(&t, nuls[i].s, nuls[i].n, DEPTH, err,
				  sizeof(err)) == -1);
		CHECK(strstr(err, "unexpected byte 0x00") != NULL);
		printf("# NUL case %zu: jansson %s\n", i,
		       j ? "accepts (known divergence)" : "refuses");
		json_decref(j);
	}
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)len)) &&
	    fread(s, 1, (size_t)len, f) == (size_t)len) {
		*n = (size_t)len;
	} else {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static void test_fixture(void)
{
	size_t n = 0;
	char *s =
	    slurp("tests/fixtures/probe/report_synthetic_h100x8.json", &n);
	struct jtape t;
	json_error_t je;
	json_t *j;
	uint32_t r, r0, sh, k;
	double d;
	char buf[64];

	CHECK(s != NULL);
	if (!s)
		return;
	CHECK(jtape_parse(&t, s, n, DEPTH, err, sizeof(err)) == 0);
	if (t.tok == NULL) {
		printf("# %s\n", err);
		free(s);
		return;
	}
	r = jtape_get(&t, 0, "results");
	CHECK(r && t.tok[r].type == JT_ARRAY && t.tok[r].count == 290);
	r0 = r + 1;
	CHECK(jtape_streq(&t, jtape_get(&t, r0, "metric"), "gemm_tflops"));
	CHECK(jtape_str(&t, jtape_get(&t, r0, "dtype"), buf, sizeof(buf)) ==
		  4 &&
	      !strcmp(buf, "bf16"));
	sh = jtape_get(&t, r0, "shape");
	CHECK(jtape_num(&t, jtape_get(&t, sh, "k"), &d) == 0 && d == 13312);
	CHECK(t.tok[jtape_get(&t, r0, "peer_index")].type == JT_NULL);
	CHECK(jtape_num(&t, jtape_get(&t, 0, "schema_version"), &d) == 0 &&
	      d == 1);
	CHECK(jtape_streq(&t, jtape_get(&t, 0, "status"), "ok"));
	CHECK(jtape_get(&t, 0, "no_such_key") == 0);
	for (k = r + 1; k < t.tok[r].next; k = t.tok[k].next)
		CHECK(t.tok[k].type == JT_OBJECT &&
		      jtape_get(&t, k, "metric") != 0);
	j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
	CHECK(j && same_tree(&t, 0, j));
	json_decref(j);
	jtape_free(&t);
	free(s);
}

/* jtape_get resumes where its last lookup in the same object stopped
 * (the memo): every order of lookups, with misses, escaped keys and
 * lookups in other objects in between, finds what a fresh scan finds.
 */
static void test_lookup_memo(void)
{
	const char *s =
	    "{\"k0\": \"v0\", \"k1\": {\"k1\": \"inner\", \"k0\": 1},"
	    " \"k2\": \"v2\", \"k\\u0033\": \"v3\", \"k4\": \"v4\","
	    " \"k5\": [\"k0\"], \"k6\": \"v6\", \"k7\": \"v7\"}";
	const char *keys[] = {"k0", "k1", "k2", "k3", "k4",
			      "k5", "k6", "k7", "k8", "k"};
	uint32_t fresh[10], inner_k0, inner;
	struct jtape t, u;
	unsigned seed = 12345;
	int bad = 0;

	CHECK(parse(&t, s) == 0);
	/* Reference: each key looked up on a tape that has done nothing. */
	for (int i = 0; i < 10; i++) {
		CHECK(parse(&u, s) == 0);
		fresh[i] = jtape_get(&u, 0, keys[i]);
		jtape_free(&u);
	}
	CHECK(fresh[3] != 0 && jtape_streq(&t, fresh[3], "v3"));
	CHECK(fresh[8] == 0 && fresh[9] == 0);
	inner = fresh[1];
	for (int step = 0; step < 5000; step++) {
		int i;

		seed = seed * 1103515245u + 12345u;
		i = (int)((seed >> 16) % 12);
		if (i >= 10) {
			/* A lookup elsewhere moves the memo to another object.
			 */
			inner_k0 = jtape_get(&t, inner, i == 10 ? "k0" : "k1");
			bad += inner_k0 == 0;
			continue;
		}
		bad += jtape_get(&t, 0, keys[i]) != fresh[i];
	}
	CHECK(bad == 0);
	/* Reverse and forward document order, twice over. */
	for (int r = 0; r < 2; r++) {
		for (int i = 7; i >= 0; i--)
			bad += jtape_get(&t, 0, keys[i]) != fresh[i];
		for (int i = 0; i < 10; i++)
			bad += jtape_get(&t, 0, keys[i]) != fresh[i];
	}
	CHECK(bad == 0);
	jtape_free(&t);
}

int main(void)
{
	RUN(test_navigate);
	RUN(test_lookup_memo);
	RUN(test_strings);
	RUN(test_numbers);
	RUN(test_long_numbers);
	RUN(test_rejects);
	RUN(test_positions);
	RUN(test_depth);
	RUN(test_growth);
	RUN(test_limit);
	RUN(test_differential);
	RUN(test_jansson_nul);
	RUN(test_fixture);
	return testlib_finish();
}

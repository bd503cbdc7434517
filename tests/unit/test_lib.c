/* test_lib.c - lib/sbuf.h and lib/csv.h: the growing string keeps every
 * byte (binary too) and reports a failed allocation once, at the end;
 * CSV cells are quoted per RFC 4180 and text cells starting a spreadsheet
 * formula (= + - @ tab CR, OWASP "CSV Injection") are defused in both of
 * the project's CSV styles (the report's and /v1/sizing/compare's); a
 * cache entry read before a clear is not stored after it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/csv.h"
#include "lib/sbuf.h"
#include "lib/ttl_cache.h"
#include "tests/unit/testlib.h"

static void test_sbuf_appends_and_grows(void)
{
	struct sbuf b = {0};
	char *s;

	for (int i = 0; i < 10000; i++)
		sbuf_printf(&b, "%d,", i % 10);
	CHECK(b.len == 20000);
	CHECK(b.p[b.len] == '\0');
	CHECK(!memcmp(b.p, "0,1,2,", 6));
	sbuf_put(&b, "end");
	s = sbuf_finish(&b);
	CHECK(s && strlen(s) == 20003 && !strcmp(s + 20000, "end"));
	CHECK(b.p == NULL && b.len == 0 && !b.oom);
	free(s);
}

static void test_sbuf_binary_and_empty(void)
{
	struct sbuf b;
	const unsigned char w[4] = {0, 1, 0, 255};
	char *s;

	sbuf_init(&b);
	s = sbuf_finish(&b); /* nothing appended: "" */
	CHECK(s && s[0] == '\0');
	free(s);
	sbuf_putn(&b, w, sizeof(w));
	sbuf_putn(&b, "", 0);
	CHECK(b.len == 4 && !memcmp(b.p, w, 4) && b.p[4] == '\0');
	CHECK(sbuf_reserve(&b, 100000) == 0 && b.cap >= 100005);
	sbuf_free(&b);
	CHECK(b.p == NULL && b.cap == 0);
}

static void test_sbuf_oom_sticks(void)
{
	struct sbuf b = {0};

	sbuf_put(&b, "abc");
	CHECK(sbuf_reserve(&b, SIZE_MAX - 2) == -1); /* cannot be had */
	CHECK(b.oom);
	sbuf_put(&b, "def"); /* dropped */
	CHECK(b.len == 3);
	CHECK(sbuf_finish(&b) == NULL);
	CHECK(b.p == NULL && !b.oom);
}

/* The text of one writer's output. */
static char *row(unsigned flags, const char *const *cells)
{
	struct sbuf b = {0};
	struct csv c;

	csv_init(&c, &b, flags);
	csv_row(&c, cells);
	return sbuf_finish(&b);
}

static int row_is(unsigned flags, const char *const *cells, const char *want)
{
	char *got = row(flags, cells);
	int same = got && !strcmp(got, want);

	if (!same)
		printf("# got [%s], want [%s]\n", got ? got : "(null)", want);
	free(got);
	return same;
}

static void test_csv_quotes_rfc4180(void)
{
	const char *const plain[] = {"a", "", "b c", NULL};
	const char *const special[] = {"a,b", "say \"hi\"", "two\nlines",
				       "cr\rx", NULL};

	CHECK(row_is(0, plain, "a,,b c\r\n"));
	CHECK(
	    row_is(0, special,
		   "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rx\"\r\n"));
	CHECK(row_is(CSV_QUOTE_ALL | CSV_LF, plain, "\"a\",\"\",\"b c\"\n"));
}

static void test_csv_defuses_formulas(void)
{
	const char *const evil[] = {"=HYPERLINK(\"x\")",
				    "+1",
				    "-2",
				    "@SUM(A1)",
				    "\tx",
				    "\rx",
				    "a=b",
				    NULL};

	/* The report's style: quoted only when needed or defused. */
	CHECK(row_is(0, evil,
		     "\"'=HYPERLINK(\"\"x\"\")\",\"'+1\",\"'-2\",\"'@SUM(A1)\","
		     "\"'\tx\",\"'\rx\",a=b\r\n"));
	/* The compare CSV's style (every cell quoted, LF): the same defusing,
	 * which it lacked before lib/csv.
	 */
	CHECK(row_is(CSV_QUOTE_ALL | CSV_LF, evil,
		     "\"'=HYPERLINK(\"\"x\"\")\",\"'+1\",\"'-2\",\"'@SUM(A1)\","
		     "\"'\tx\",\"'\rx\",\"a=b\"\n"));
}

static void test_csv_numbers_are_not_defused(void)
{
	struct sbuf b = {0};
	struct csv c;
	char *s;

	csv_init(&c, &b, 0);
	csv_cellf(&c, "%.10g", -1.5);
	csv_empty(&c);
	csv_cell(&c, NULL);
	csv_cellf(&c, "%lld", -3LL);
	csv_eol(&c);
	csv_init(&c, &b, CSV_QUOTE_ALL | CSV_LF);
	csv_cellf(&c, "%.6g", -0.25);
	csv_empty(&c);
	csv_eol(&c);
	s = sbuf_finish(&b);
	CHECK(s && !strcmp(s, "-1.5,,,-3\r\n\"-0.25\",\"\"\n"));
	free(s);
}

TTL_CACHE(test_cache, 4, 60000);

/* A reader that read before a write's clear does not put its (old) copy
 * back after it (review s19a F2: a daemon served its own PUT's old record
 * for up to the TTL); one that read after it does. */
static void test_ttl_cache_refill_after_clear(void)
{
	size_t len = 0;
	char *v;
	unsigned long before = ttl_cache_generation(&test_cache);

	ttl_cache_clear(&test_cache); /* the write commits and clears */
	ttl_cache_put(&test_cache, before, "gpu", "old", 4);
	v = ttl_cache_get(&test_cache, "gpu", &len);
	CHECK(v == NULL);
	free(v);
	ttl_cache_put(&test_cache, ttl_cache_generation(&test_cache), "gpu",
		      "new", 4);
	v = ttl_cache_get(&test_cache, "gpu", &len);
	CHECK(v != NULL && len == 4 && !strcmp(v, "new"));
	free(v);
	ttl_cache_clear(&test_cache);
}

int main(void)
{
	RUN(test_sbuf_appends_and_grows);
	RUN(test_sbuf_binary_and_empty);
	RUN(test_sbuf_oom_sticks);
	RUN(test_csv_quotes_rfc4180);
	RUN(test_csv_defuses_formulas);
	RUN(test_csv_numbers_are_not_defused);
	RUN(test_ttl_cache_refill_after_clear);
	return testlib_finish();
}

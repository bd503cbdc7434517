/* fuzz_routes.c - how a request line becomes a route: server/http.c's
 * look at the target as sent (raw_target_scan, from the MHD URI log
 * callback), its percent-decoding (http_unescape, the MHD unescape callback),
 * its UTF-8/control check (text_ok) and media-type check
 * (json_content_type), then routes_match in server/routes.c. http.c's helpers
 * are static, so this harness includes http.c itself (its MHD glue is compiled,
 * never run).
 *
 * Input: byte 0 picks the method; the rest up to the first newline is the
 * request target as sent, the remainder a Content-Type value.
 * Properties: a match names a route of that method (HEAD serves GET);
 * path parameters are the non-empty segments at the pattern's {x}
 * places, inside the caller's path buffer; a 405 lists other methods in
 * Allow; a decoded path never hides a NUL; a path that the scan lets
 * through never gains a slash by decoding; the scan flags a space and an
 * encoded slash, counts the query parameters as MHD splits them, and cuts
 * the query after REQ_MAX_QUERY + 1 of them, nowhere else.
 */
#include "server/http.c"

#include "tests/fuzz/fuzz_common.h"

static const char *const methods[] = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "TRACE"};

static void match(const char *method, const char *path)
{
	struct request req = {0};
	char path_buf[PATH_MAX_BYTES], allow[64];
	int n, idx, want = 0;
	const struct route *t = routes_table(&n);

	idx = routes_match(method, path, path_buf, sizeof(path_buf), &req,
			   allow, sizeof(allow));
	if (strlen(allow) >= sizeof(allow))
		FZ_FAIL("allow overflow");
	if (idx == -404)
		return;
	if (idx == -405) {
		if (!allow[0])
			FZ_FAIL("405 with an empty Allow for %s %s", method,
				path);
		return;
	}
	if (idx < 0 || idx >= n)
		FZ_FAIL("routes_match returned %d", idx);
	if (strcmp(t[idx].method, method) != 0 &&
	    !(strcmp(method, "HEAD") == 0 && !strcmp(t[idx].method, "GET")))
		FZ_FAIL("%s %s matched a %s route", method, path,
			t[idx].method);
	for (const char *p = t[idx].pattern; *p; p++)
		want += *p == '{';
	if (req.nparams != want)
		FZ_FAIL("%s: %d params for pattern %s", path, req.nparams,
			t[idx].pattern);
	for (int i = 0; i < req.nparams; i++) {
		const char *p = req.params[i];
		if (p < path_buf || p >= path_buf + sizeof(path_buf))
			FZ_FAIL("param %d points outside the path buffer", i);
		if (!*p || strchr(p, '/'))
			FZ_FAIL("param %d is \"%s\"", i, p);
	}
}

static size_t count_char(const char *s, size_t n, char c)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += s[i] == c;
	return k;
}

/* Pieces MHD makes of a query: one per '&'-separated piece, none for a
 * trailing '&' (its loop stops at the end of the string).
 */
static int query_pieces(const char *q)
{
	int n = *q ? 1 : 0;

	for (const char *p = q; *p; p++)
		n += *p == '&' && p[1];
	return n;
}

/* The target as MHD's URI log callback sees it: returns 0 when
 * raw_target_refused() would refuse it (then it is not routed).
 */
static int scan(char *target)
{
	size_t len = strlen(target);
	char *copy = strdup(target), *q = strchr(target, '?');
	size_t path_len = q ? (size_t)(q - target) : len;
	int nquery, has_slash = 0, pieces = q ? query_pieces(q + 1) : 0;
	unsigned flags;

	if (!copy)
		abort();
	for (size_t i = 0; i + 2 < path_len; i++)
		if (target[i] == '%' && target[i + 1] == '2' &&
		    (target[i + 2] | 0x20) == 'f')
			has_slash = 1;
	flags = raw_target_scan(target, REQ_MAX_QUERY, &nquery);
	if (!!(flags & RAW_SPACE) != !!strchr(copy, ' '))
		FZ_FAIL("space flag wrong for \"%s\"", copy);
	if (!!(flags & RAW_ENCODED_SLASH) != has_slash)
		FZ_FAIL("encoded-slash flag wrong for \"%s\"", copy);
	if (nquery != pieces)
		FZ_FAIL("%d query parameters counted, %d in \"%s\"", nquery,
			pieces, copy);
	if (!!(flags & RAW_QUERY_CUT) != (pieces > REQ_MAX_QUERY + 1))
		FZ_FAIL("cut flag wrong: %d parameters", pieces);
	if (flags & RAW_QUERY_CUT) {
		size_t cut = strlen(target);
		if (cut <= path_len || copy[cut] != '&' ||
		    memcmp(copy, target, cut) != 0)
			FZ_FAIL(
			    "cut somewhere else than at a '&' of the query");
		/* REQ_MAX_QUERY + 1, one fewer when the last is empty (its
		 * '&' is trailing now): either way bounded, and the flag
		 * makes the 400.
		 */
		if (query_pieces(q + 1) > REQ_MAX_QUERY + 1 ||
		    query_pieces(q + 1) < REQ_MAX_QUERY)
			FZ_FAIL("cut leaves %d parameters",
				query_pieces(q + 1));
	} else if (strcmp(copy, target) != 0) {
		FZ_FAIL("scan changed a target it did not cut");
	}
	free(copy);
	return !(flags & (RAW_SPACE | RAW_ENCODED_SLASH));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *nl, *q;
	const char *method;
	size_t len, slashes;
	int routable;

	if (size < 1)
		return 0;
	method = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
	in = fz_strndup(data + 1, size - 1);
	nl = strchr(in, '\n');
	if (nl) {
		*nl = '\0';
		(void)json_content_type(nl + 1);
	}
	/* The raw target straight into the matcher (a proxy that decoded
	 * already), then as MHD hands it over: query cut off, unescaped.
	 */
	match(method, in);
	routable = scan(in);
	q = strchr(in, '?');
	if (q)
		*q = '\0';
	len = strlen(in);
	slashes = count_char(in, len, '/');
	if (http_unescape(NULL, NULL, in) > len)
		FZ_FAIL("unescape grew the string");
	if (strlen(in) > len)
		FZ_FAIL("unescape grew the string");
	if (routable && count_char(in, strlen(in), '/') != slashes)
		FZ_FAIL("decoding made a slash the scan let through");
	if (routable && text_ok(in))
		match(method, in);
	free(in);
	return 0;
}

/* fuzz_routes.c - how a request line becomes a route: server/http.c's
 * percent-decoding (unescape, the MHD unescape callback), its UTF-8/control
 * check (text_ok) and media-type check (json_content_type), then
 * routes_match in server/routes.c. http.c's helpers are static, so this
 * harness includes http.c itself (its MHD glue is compiled, never run).
 *
 * Input: byte 0 picks the method; the rest up to the first newline is the
 * request target as sent, the remainder a Content-Type value.
 * Properties: a match names a route of that method (HEAD serves GET);
 * path parameters are the non-empty segments at the pattern's {x}
 * places, inside the caller's path buffer; a 405 lists other methods in
 * Allow; a decoded path never hides a NUL.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in, *nl, *q;
	const char *method;
	size_t len;

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
	q = strchr(in, '?');
	if (q)
		*q = '\0';
	len = strlen(in);
	if (unescape(NULL, NULL, in) > len)
		FZ_FAIL("unescape grew the string");
	if (strlen(in) > len)
		FZ_FAIL("unescape grew the string");
	if (text_ok(in))
		match(method, in);
	free(in);
	return 0;
}

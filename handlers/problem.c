/* problem.c - RFC 9457 problem builder. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "handlers/problem.h"

/* Copies in to out (outlen > 0) as valid UTF-8: every byte that does
 * not start a well-formed sequence (RFC 3629) becomes '?', and a sequence
 * that would not fit is not started, so a truncated copy never ends in
 * half a character. jansson refuses invalid UTF-8 (json_pack returns
 * NULL), so everything that reaches a problem body goes through here.
 */
static void utf8_clean(const char *in, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;

	while (*p && o + 1 < outlen) {
		unsigned c = *p, cp;
		int n = c < 0x80		   ? 0
			: (c >= 0xc2 && c <= 0xdf) ? 1
			: (c >= 0xe0 && c <= 0xef) ? 2
			: (c >= 0xf0 && c <= 0xf4) ? 3
						   : -1;
		int ok = n >= 0;

		cp = n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
		for (int i = 1; ok && i <= n; i++) {
			ok = (p[i] & 0xc0) == 0x80;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (ok && ((n == 2 &&
			    (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
			   (n == 3 && (cp < 0x10000 || cp > 0x10ffff))))
			ok = 0;
		if (!ok) {
			out[o++] = '?';
			p++;
			continue;
		}
		if (o + (size_t)n + 1 >= outlen)
			break;
		memcpy(out + o, p, (size_t)n + 1);
		o += (size_t)n + 1;
		p += n + 1;
	}
	out[o] = '\0';
}

static json_t *make(int status, const char *slug, const char *title,
		    const char *detail)
{
	char type[96];

	snprintf(type, sizeof(type), "/problems/%s", slug);
	return json_pack("{s:s, s:s, s:i, s:s}", "type", type, "title", title,
			 "status", status, "detail", detail);
}

void problem(struct response *res, int status, const char *slug,
	     const char *title, const char *detail_fmt, ...)
{
	char detail[1024], clean[1024];
	va_list ap;

	va_start(ap, detail_fmt);
	vsnprintf(detail, sizeof(detail), detail_fmt, ap);
	va_end(ap);
	utf8_clean(detail, clean, sizeof(clean));
	res_json(res, status, make(status, slug, title, clean));
	res->is_problem = 1;
}

/* Counts n more field errors than errors[] lists: errors_total appears
 * once the list is full (it starts at the listed count).
 */
static void count_unlisted(struct response *res, size_t n)
{
	json_t *total = json_object_get(res->json, "errors_total");
	json_int_t was = total ? json_integer_value(total)
			       : (json_int_t)json_array_size(
				     json_object_get(res->json, "errors"));

	json_object_set_new(res->json, "errors_total",
			    json_integer(was + (json_int_t)n));
}

void problem_field(struct response *res, const char *field, const char *msg_fmt,
		   ...)
{
	char raw[1024], f[256], msg[1024];
	va_list ap;
	json_t *errors;

	va_start(ap, msg_fmt);
	vsnprintf(raw, sizeof(raw), msg_fmt, ap);
	va_end(ap);
	/* Both may quote the client (a key, a name): valid UTF-8 only. */
	utf8_clean(field, f, sizeof(f));
	utf8_clean(raw, msg, sizeof(msg));
	field = f;
	if (!res->is_problem || !json_object_get(res->json, "errors")) {
		problem(res, 400, "validation", "Invalid request",
			"the request has invalid fields; see errors");
		json_object_set_new(res->json, "errors", json_array());
	}
	errors = json_object_get(res->json, "errors");
	/* A body of 80,000 unknown keys made a 4 MB answer: list the first
	 * PROBLEM_MAX_ERRORS, count them all.
	 */
	if (json_array_size(errors) >= PROBLEM_MAX_ERRORS) {
		count_unlisted(res, 1);
		return;
	}
	json_array_append_new(
	    errors, json_pack("{s:s, s:s}", "field", field, "message", msg));
	/* The detail names the first bad field, for humans reading curl. */
	if (json_array_size(errors) == 1) {
		char detail[1300];
		snprintf(detail, sizeof(detail), "%s: %s", field, msg);
		json_object_set_new(res->json, "detail", json_string(detail));
	}
}

void problem_merge_fields(struct response *res, const struct response *inner,
			  const char *prefix)
{
	const json_t *errs = json_object_get(inner->json, "errors"), *x;
	size_t i;
	int unlisted = problem_field_count(inner) - (int)json_array_size(errs);

	json_array_foreach(errs, i, x)
	{
		char field[256];
		snprintf(field, sizeof(field), "%s%s", prefix,
			 json_string_value(json_object_get(x, "field")));
		problem_field(res, field, "%s",
			      json_string_value(json_object_get(x, "message")));
	}
	if (unlisted > 0 && problem_field_count(res) > 0)
		count_unlisted(res, (size_t)unlisted);
}

int problem_field_count(const struct response *res)
{
	const json_t *total;

	if (!res->is_problem)
		return 0;
	total = json_object_get(res->json, "errors_total");
	if (json_is_integer(total))
		return (int)json_integer_value(total);
	return (int)json_array_size(json_object_get(res->json, "errors"));
}

/* How each storage status answers: HTTP status, problem slug and title,
 * whether the detail is the store's message (else `what`, the resource),
 * and Retry-After. STORE_ERROR (and any status not here) is a 500 whose
 * detail stays in the log. */
static const struct {
	int http;
	const char *slug, *title;
	bool detail_is_message;
	const char *detail_suffix;
	int retry_after_s; /* 0: no Retry-After */
} store_answers[] = {
    [STORE_NOT_FOUND] = {404, "not-found", "Not found", false, "", 0},
    [STORE_CONFLICT] = {409, "conflict", "Conflict", true, "", 0},
    [STORE_INVALID] = {422, "unprocessable", "Rejected by a constraint", true,
		       "", 0},
    [STORE_UNAVAILABLE] = {503, "unavailable", "Service unavailable", true,
			   "; retry later", 2},
    [STORE_PRECONDITION] = {412, "precondition-failed", "Precondition failed",
			    true, "", 0},
};

void problem_store(struct response *res, const struct store_err *e,
		   const char *what)
{
	unsigned k = (unsigned)e->status;

	if (e->status == STORE_OK)
		return;
	if (k >= sizeof(store_answers) / sizeof(store_answers[0]) ||
	    !store_answers[k].http) {
		problem(res, 500, "internal", "Internal error",
			"the request failed inside the service; the log has "
			"the details under this request id");
		snprintf(res->log_detail, sizeof(res->log_detail), "%s",
			 e->message);
		return;
	}
	problem(res, store_answers[k].http, store_answers[k].slug,
		store_answers[k].title, "%s%s",
		store_answers[k].detail_is_message ? e->message : what,
		store_answers[k].detail_suffix);
	if (store_answers[k].retry_after_s)
		res->retry_after_s = store_answers[k].retry_after_s;
}

/* util.c - ids, timestamps, paging. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "handlers/problem.h"
#include "handlers/util.h"
#include "probe/contract.h"

void uuid_v4(char out[UUID_TEXT])
{
	unsigned char b[16];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, UUID_TEXT,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
}

int uuid_valid(const char *s)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (strlen(s) != sizeof(shape) - 1)
		return 0;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == '-' ? s[i] != '-'
				    : !isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static int digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

int rfc3339_valid(const char *s)
{
	size_t n = strlen(s);
	const char *p;

	if (n < 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) ||
	    s[7] != '-' || !digits(s + 8, 2))
		return 0;
	{
		static const int mdays[] = {31, 29, 31, 30, 31, 30,
					    31, 31, 30, 31, 30, 31};
		int y = atoi(s), mo = atoi(s + 5), d = atoi(s + 8);
		int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
		if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
		    (mo == 2 && d == 29 && !leap))
			return 0;
	}
	if (n == 10)
		return 1;
	p = s + 10;
	if ((*p != 'T' && *p != 't' && *p != ' ') || !digits(p + 1, 2) ||
	    p[3] != ':' || !digits(p + 4, 2) || p[6] != ':' ||
	    !digits(p + 7, 2))
		return 0;
	if (atoi(p + 1) > 23 || atoi(p + 4) > 59 || atoi(p + 7) > 60)
		return 0;
	p += 9;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return 1;
	/* Offsets as PostgreSQL can hold them: at most 15:59 either way
	 * (the probe's checker reads the same bound). */
	return (*p == '+' || *p == '-') && digits(p + 1, 2) && p[3] == ':' &&
	       digits(p + 4, 2) && p[6] == '\0' &&
	       atoi(p + 1) <= PROBE_UTC_OFFSET_MAX_H && atoi(p + 4) <= 59;
}

int rfc3339_epoch_s(const char *s, double *out)
{
	const char *p;
	double secs;

	if (!rfc3339_valid(s))
		return -1;
	secs = 86400.0 *
	       (double)probe_days_from_civil(atoi(s), atoi(s + 5), atoi(s + 8));
	if (strlen(s) == 10) {
		*out = secs;
		return 0;
	}
	p = s + 11;
	secs += 3600.0 * atoi(p) + 60.0 * atoi(p + 3) + atoi(p + 6);
	p += 8;
	if (*p == '.') {
		secs += strtod(p, NULL);
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == '+' || *p == '-')
		secs -= (*p == '+' ? 1 : -1) *
			(3600.0 * atoi(p + 1) + 60.0 * atoi(p + 4));
	*out = secs;
	return 0;
}

long query_int(const struct request *req, const char *key, long lo, long hi,
	       long dflt, struct response *res)
{
	const char *s = req_query(req, key);
	size_t n;
	long v = 0;

	if (!s)
		return dflt;
	n = strspn(s, "0123456789");
	if (n == 0 || s[n] != '\0' || n > 9 || (s[0] == '0' && n > 1))
		v = -1;
	else
		v = strtol(s, NULL, 10);
	if (v < lo || v > hi) {
		problem_field(res, key, "must be an integer in [%ld, %ld]", lo,
			      hi);
		return -1;
	}
	return v;
}

int query_limit(const struct request *req, struct response *res)
{
	return (int)query_int(req, "limit", 1, 500, 50, res);
}

int http_accept_q(const char *accept, const char *type)
{
	const char *p = accept;
	size_t major = (size_t)(strchr(type, '/') - type);
	int best_spec = 0, best_q = -1;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char item[160], *media, *param, *save = NULL;
		int spec = 0, q = 1000;

		if (n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			media = strtok_r(item, ";", &save);
			while (media && (*media == ' ' || *media == '\t'))
				media++;
			if (media) {
				size_t ml = strcspn(media, " \t");
				media[ml] = '\0';
				if (!strcasecmp(media, type))
					spec = 3;
				else if (ml == major + 2 &&
					 !strncasecmp(media, type, major + 1) &&
					 media[major + 1] == '*')
					spec = 2;
				else if (!strcmp(media, "*/*"))
					spec = 1;
			}
			while ((param = strtok_r(NULL, ";", &save))) {
				while (*param == ' ' || *param == '\t')
					param++;
				if ((param[0] == 'q' || param[0] == 'Q') &&
				    param[1] == '=') {
					double v = strtod(param + 2, NULL);
					q = v <= 0   ? 0
					    : v >= 1 ? 1000
						     : (int)(v * 1000 + 0.5);
				}
			}
			if (spec > best_spec) {
				best_spec = spec;
				best_q = q;
			}
		}
		p = end ? end + 1 : p + n;
	}
	return best_q;
}

/* Sets res's ETag from row's updated_at, quoted. */
static void record_etag(struct response *res, const json_t *row)
{
	const char *at = json_string_value(json_object_get(row, "updated_at"));

	if (at && strlen(at) + 3 <= sizeof(res->etag))
		snprintf(res->etag, sizeof(res->etag), "\"%s\"", at);
}

void record_answer(struct response *res, json_t *stored, const json_t *warnings,
		   int created, const char *collection, const char *name)
{
	record_etag(res, stored);
	if (json_array_size(warnings) > 0)
		json_object_set(stored, "warnings", (json_t *)warnings);
	res_json(res, created ? 201 : 200, stored);
	if (created)
		snprintf(res->location, sizeof(res->location), "/v1/%s/%s",
			 collection, name);
}

/* The next entity tag of a list (RFC 9110 8.8.3: 1#entity-tag, empty
 * elements allowed): *weak, and its opaque value at *tag, *n bytes, without
 * the quotes. 1 for a tag, 0 at the end, -1 for anything that is no tag. */
static int etag_next(const char **p, bool *weak, const char **tag, size_t *n)
{
	const char *s = *p, *close;

	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	if (!*s)
		return 0;
	*weak = s[0] == 'W' && s[1] == '/';
	if (*weak)
		s += 2;
	if (*s != '"' || !(close = strchr(s + 1, '"')))
		return -1;
	*tag = s + 1;
	*n = (size_t)(close - s - 1);
	s = close + 1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s && *s != ',')
		return -1;
	*p = s;
	return 1;
}

/* A header that is "*" and nothing else, white space aside. */
static bool is_star(const char *h)
{
	h += strspn(h, " \t");
	return *h == '*' && strspn(h + 1, " \t") == strlen(h + 1);
}

int record_if_match(const struct request *req, char *out, size_t len,
		    const char **cond, struct response *res)
{
	const char *p = req->if_match, *tag;
	size_t n, used = 0;
	bool weak;
	int k;

	*cond = NULL;
	/* If-None-Match: * on a PUT: create only (RFC 9110 13.1.2) */
	if (req->if_none_match) {
		if (p || !is_star(req->if_none_match)) {
			problem(res, 400, "bad-request", "Bad request",
				"If-None-Match on a PUT: only * (create only), "
				"and not with If-Match");
			return -1;
		}
		*cond = "!";
		return 0;
	}
	if (!p)
		return 0;
	if (is_star(p)) {
		*cond = "*";
		return 0;
	}
	/* A list holds when the record is at any of its strong tags (13.1.1:
	 * strong comparison, so a weak tag never matches). This server's tags
	 * are quoted updated_at values; those go to storage comma-separated,
	 * and the upsert's own WHERE compares them. */
	out[0] = '\0';
	while ((k = etag_next(&p, &weak, &tag, &n)) == 1) {
		char v[64];

		if (weak || n == 0 || n >= sizeof(v))
			continue;
		memcpy(v, tag, n);
		v[n] = '\0';
		if (!rfc3339_valid(v))
			continue;
		/* a tag left out could be the current one: say so rather
		 * than answer "not at that version" (review s16c F5) */
		if (used + n + 2 > len) {
			problem(res, 400, "bad-request", "Bad request",
				"If-Match lists more tags than this server "
				"compares (%zu bytes of them); send the one "
				"your GET gave",
				len);
			return -1;
		}
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 used ? "," : "", v);
	}
	if (k == 0 && used > 0) {
		*cond = out;
		return 0;
	}
	problem(res, 412, "precondition-failed", "Precondition failed",
		"If-Match: no entity tag of this server (strong tags as a "
		"GET's ETag gives, or *)");
	return -1;
}

/* The GET's If-None-Match lists the record's current tag, or is *. */
static bool not_modified(const struct request *req, const struct response *res)
{
	const char *p = req->if_none_match, *tag;
	const char *cur = res->etag + 1; /* the quoted tag, without quotes */
	size_t n, cur_n = res->etag[0] ? strlen(res->etag) - 2 : 0;
	bool weak;

	if (!p || !res->etag[0])
		return false;
	if (is_star(p))
		return true;
	/* weak comparison (RFC 9110 13.1.2): W/"x" matches "x" */
	while (etag_next(&p, &weak, &tag, &n) == 1)
		if (n == cur_n && !memcmp(tag, cur, n))
			return true;
	return false;
}

void record_get_answer(const struct request *req, struct response *res,
		       json_t *row)
{
	record_etag(res, row);
	res_json(res, not_modified(req, res) ? 304 : 200, row);
}

void query_since_check(struct response *res, const char *since)
{
	if (rfc3339_valid(since))
		return;
	/* review s17b F9: "+01:00" typed into a URL arrives as " 01:00" */
	problem_field(res, "since",
		      "must be an RFC 3339 date-time such as "
		      "2026-11-21T00:00:00Z%s",
		      strchr(since, ' ') ? "; a '+' in a query string is a "
					   "space: send an offset as %2B01:00"
					 : "");
}

/* http.c - libmicrohttpd glue, the request side: the target and headers
 * checked as sent (hostile input refused before routing), body
 * accumulation, routing, rendering the response. The daemon, its
 * connections and their deadlines are in http_daemon.c.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <ctype.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "handlers/problem.h"
#include "lib/sbuf.h"
#include "server/http.h"
#include "server/http_int.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/routes.h"
#include "storage/db.h"

/* A chunked stream that keeps sending this many times the cap after it
 * was refused is cut off (we cannot answer mid-upload in 0.9.75).
 */
#define ABUSE_FACTOR   8
#define PATH_MAX_BYTES 1024

/* What on_uri() saw in the request target as sent. */
enum raw_flags {
	RAW_SPACE = 1 << 0,	      /* a space inside the target */
	RAW_ENCODED_SLASH = 1 << 1,   /* %2F in the path */
	RAW_QUERY_CUT = 1 << 2,	      /* too many query parameters: cut */
	RAW_ENCODED_CONTROL = 1 << 3, /* %00-%1F or %7F in the path */
};

/* Per-request state, made by on_uri() (or the first access-handler call)
 * and freed when MHD reports the request completed.
 */
struct req_state {
	int started;		/* the access handler has seen this request */
	const char *raw_target; /* the target in MHD's buffer (not owned) */
	size_t raw_target_len;	/* its length up to the first NUL */
	unsigned raw_flags;	/* enum raw_flags */
	int raw_nquery;		/* query parameters in the target as sent */
	int no_instance;	/* the decoded path is not what was sent */
	struct timespec t0;
	char request_id[40];
	int route;	  /* index into the route table, or -1 */
	int decided;	  /* res already holds the answer (an error) */
	int close_after;  /* the answer closes the connection (framing the
			     next request would trust cannot be trusted) */
	int body_allowed; /* route reads a body */
	struct sbuf body; /* the body so far, NUL-terminated */
	size_t discarded;
	struct request req;
	struct response res;
	char path_buf[PATH_MAX_BYTES];
	char token_name[72];
	char allow[64];
};

static struct conn_track *track_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

long long http_mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* UTF-8 well-formedness (RFC 3629: no overlongs, surrogates or > U+10FFFF)
 * and no control characters: what we accept in paths and query strings.
 */
static int text_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p;
		int n;
		unsigned cp;

		if (c < 0x20 || c == 0x7f)
			return 0;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return 0;
		for (int i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 &&
		     (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return 0;
		p += n + 1;
	}
	return 1;
}

/* Bodies are JSON. Besides application/json (and +json types) we take
 * what "curl -d" sends by default (application/x-www-form-urlencoded) and
 * text/plain, since job scripts post JSON that way; anything else (forms,
 * multipart, XML) is refused with 415 rather than misread.
 */
static int json_content_type(const char *ctype)
{
	static const char *const ok[] = {
	    "application/json", "text/json", "text/plain",
	    "application/x-www-form-urlencoded", NULL};
	size_t n = strcspn(ctype, "; \t");
	const char *plus;

	for (int i = 0; ok[i]; i++)
		if (strlen(ok[i]) == n && !strncasecmp(ctype, ok[i], n))
			return 1;
	plus = memchr(ctype, '+', n);
	return !strncasecmp(ctype, "application/", 12) && plus &&
	       n - (size_t)(plus - ctype) == 5 &&
	       !strncasecmp(plus, "+json", 5);
}

/* 1 unless the media type names a charset other than UTF-8 (or its subset
 * US-ASCII): JSON is UTF-8 (RFC 8259 §8.1), and a body declared latin1
 * would otherwise be read as UTF-8 without a word. */
static int charset_utf8(const char *ctype)
{
	const char *p = ctype;

	while ((p = strchr(p, ';')) != NULL) {
		size_t n;

		p++;
		p += strspn(p, " \t");
		if (strncasecmp(p, "charset=", 8) != 0)
			continue;
		p += 8;
		if (*p == '"')
			p++;
		n = strcspn(p, "\"; \t");
		/* every charset parameter: a second one that disagrees is
		 * not UTF-8 (review s14 accepted "utf-8; charset=latin1") */
		if (!((n == 5 && !strncasecmp(p, "utf-8", 5)) ||
		      (n == 4 && !strncasecmp(p, "utf8", 4)) ||
		      (n == 8 && !strncasecmp(p, "us-ascii", 8))))
			return 0;
	}
	return 1;
}

/* 1 when a request's Content-Encoding is absent or "identity": bodies are
 * read as sent, so a compressed one (gzip, br, ...) is a 415 (RFC 9110
 * §15.5.16) rather than "malformed JSON", and a plain body labelled
 * compressed is not read as if the label were wrong. */
static int identity_encoding(const char *enc)
{
	size_t n;

	if (!enc)
		return 1;
	enc += strspn(enc, " \t");
	n = strcspn(enc, " \t,");
	return n == 0 || (n == 8 && !strncasecmp(enc, "identity", 8) &&
			  enc[n + strspn(enc + n, " \t")] == '\0');
}

static _Thread_local uint64_t id_state;

static void new_request_id(struct MHD_Connection *c, char out[40])
{
	const char *given =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id");
	unsigned char b[8] = {0};
	size_t n;

	/* Reuse a caller's id when it is short and tame, so logs join up. */
	if (given && (n = strlen(given)) > 0 && n < 40 &&
	    strspn(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			  "0123456789._-") == n) {
		memcpy(out, given, n + 1);
		return;
	}
	/* Ids need to be unique, not secret: a per-thread xorshift64*
	 * seeded from the kernel once per thread (here: per connection),
	 * not a system call per request.
	 */
	if (!id_state && getrandom(&id_state, sizeof(id_state),
				   GRND_NONBLOCK) != (ssize_t)sizeof(id_state))
		id_state = (uint64_t)http_mono_ms() ^ (uint64_t)(uintptr_t)out;
	id_state |= 1;
	id_state ^= id_state >> 12;
	id_state ^= id_state << 25;
	id_state ^= id_state >> 27;
	{
		uint64_t x = id_state * 0x2545F4914F6CDD1DULL;
		for (int i = 0; i < 8; i++)
			b[i] = (unsigned char)(x >> (8 * i));
	}
	snprintf(out, 40, "%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7]);
}

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind,
				     const char *key, const char *value)
{
	struct req_state *st = cls;

	(void)kind;
	if (st->req.nquery < REQ_MAX_QUERY) {
		st->req.query[st->req.nquery].key = key;
		st->req.query[st->req.nquery].value = value ? value : "";
	}
	/* Counted past the table too: more than it holds is refused,
	 * never silently dropped (a dropped filter widens a query).
	 */
	st->req.nquery++;
	return MHD_YES;
}

static void add_header(struct MHD_Response *r, const char *k, const char *v)
{
	if (MHD_add_response_header(r, k, v) != MHD_YES)
		log_event(LOG_WARN, "cannot add response header", "header", k,
			  NULL);
}

/* Renders st->res and queues it. Always called from the access handler,
 * the only place 0.9.75 accepts a response.
 */
static enum MHD_Result respond(struct http_server *s, struct MHD_Connection *c,
			       struct req_state *st)
{
	struct response *res = &st->res;
	const char *ctype = res->content_type;
	char *buf = NULL;
	size_t len = 0;
	struct MHD_Response *r;
	enum MHD_Result ret;
	int nroutes;
	const struct route *table = routes_table(&nroutes);

	if (res->status == 0 ||
	    (res->status >= 500 && !res->json && !res->text)) {
		/* A handler that forgot to answer is a bug: say so. */
		if (!res->log_detail[0])
			snprintf(res->log_detail, sizeof(res->log_detail),
				 "handler set no response");
		problem(res, 500, "internal", "Internal error",
			"the request failed inside the service; the log has "
			"the details under this request id");
	}
	if (res->is_problem && res->json) {
		json_object_set_new(res->json, "request_id",
				    json_string(st->request_id));
		/* NULL (not set) when the path is not valid UTF-8. */
		if (st->req.path && !st->no_instance)
			json_object_set_new(res->json, "instance",
					    json_string(st->req.path));
	}
	if (res->json) {
		char *j = json_dumps(res->json,
				     JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (j) {
			len = strlen(j);
			buf = malloc(len + 2);
			if (buf) {
				memcpy(buf, j, len);
				buf[len++] = '\n';
				buf[len] = '\0';
			}
			free(j);
		}
		ctype = res->is_problem ? "application/problem+json"
					: "application/json";
	} else if (res->text) {
		buf = res->text;
		len = strlen(buf);
		res->text = NULL;
	}
	/* 304: no content (0.9.75 sends none and gives the Content-Length of
	 * the 200 it stands for, RFC 9110 15.4.5), so no Content-Type */
	if (res->status == 304)
		ctype = NULL;
	if (!buf && res->status != 204) {
		buf = strdup("");
		len = 0;
	}
	r = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	if (ctype)
		add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	add_header(r, "X-Request-Id", st->request_id);
	add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (res->location[0])
		add_header(r, MHD_HTTP_HEADER_LOCATION, res->location);
	if (res->allow[0])
		add_header(r, MHD_HTTP_HEADER_ALLOW, res->allow);
	if (res->content_disposition[0])
		add_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
			   res->content_disposition);
	if (res->www_authenticate)
		add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			   "Bearer realm=\"gpusizer\"");
	if (res->etag[0])
		add_header(r, MHD_HTTP_HEADER_ETAG, res->etag);
	if (res->retry_after_s > 0) {
		char ra[16];
		snprintf(ra, sizeof(ra), "%d", res->retry_after_s);
		add_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	if (atomic_load(&s->app->draining) || st->close_after)
		add_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(c, (unsigned)res->status, r);
	MHD_destroy_response(r);

	{
		double secs = elapsed_s(&st->t0);
		struct log_request lr = {
		    .method = st->req.method ? st->req.method : "?",
		    .path = st->req.path ? st->req.path : "?",
		    .route =
			st->route >= 0 ? table[st->route].pattern : "unmatched",
		    .status = res->status,
		    .duration_ms = secs * 1e3,
		    .request_id = st->request_id,
		    .token_name = st->token_name,
		    .detail = res->log_detail,
		};
		metrics_observe(st->route >= 0 ? st->route : nroutes,
				res->status, secs);
		log_request_line(&lr);
	}
	return ret;
}

/* Looks at a request target as sent, before MHD splits off the query and
 * percent-decodes it, so what decoding hides is still visible: a space
 * (only possible with MHD_OPTION_STRICT_FOR_CLIENT off, see http_start())
 * and an encoded slash in the path, which decoding would turn into a
 * segment separator ("/v1/gpus%2Fh100" routed as "/v1/gpus/h100"). No
 * name in this API holds a slash, so it is refused rather than kept. An
 * encoded control character (%00 cuts the decoded path short) is named as
 * such, not as bad UTF-8.
 *
 * Counts the query parameters as MHD will (one per '&'-separated piece)
 * and, past max_query + 1, cuts the target there (writes a NUL): MHD
 * stores every parameter in the connection's 64 KiB memory pool and, out
 * of pool (from about 1,300 of them), closes the connection without an
 * answer. Cut, it parses max_query + 1 and on_headers() answers the 400.
 * Returns enum raw_flags; *nquery gets the count before any cut.
 */
static unsigned raw_target_scan(char *target, int max_query, int *nquery)
{
	unsigned flags = 0;
	char *q = strchr(target, '?');
	size_t path_len = q ? (size_t)(q - target) : strlen(target);

	*nquery = 0;
	if (strchr(target, ' '))
		flags |= RAW_SPACE;
	for (size_t i = 0; i + 2 < path_len; i++) {
		char h = target[i + 1], l = (char)tolower(target[i + 2]);
		if (target[i] != '%')
			continue;
		if (h == '2' && l == 'f')
			flags |= RAW_ENCODED_SLASH;
		if (((h == '0' || h == '1') && isxdigit((unsigned char)l)) ||
		    (h == '7' && l == 'f'))
			flags |= RAW_ENCODED_CONTROL;
	}
	if (!q || !q[1])
		return flags;
	*nquery = 1;
	for (char *p = q + 1; *p; p++) {
		if (*p != '&' || !p[1])
			continue; /* a trailing '&' starts no parameter */
		if (++*nquery == max_query + 2 && !(flags & RAW_QUERY_CUT)) {
			/* Cut here; keep counting, for the message (the
			 * rest of the target is still there past the NUL).
			 */
			*p = '\0';
			flags |= RAW_QUERY_CUT;
		}
	}
	return flags;
}

/* MHD_OPTION_URI_LOG_CALLBACK: called with the request target as sent,
 * in MHD's own buffer, before MHD parses the query or decodes anything
 * (0.9.75 connection.c: "log callback before we modify URI *or* args").
 * What it returns becomes the request's *con_cls.
 */
void *http_on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req_state *st = calloc(1, sizeof(*st));

	(void)cls;
	(void)c;
	if (!st || !uri)
		return st;
	st->raw_target = uri;
	st->raw_target_len = strlen(uri);
	/* The cast is sound: MHD passes its own writable buffer (const
	 * only in the callback's type), and a cut only shortens the query.
	 */
	st->raw_flags =
	    raw_target_scan((char *)uri, REQ_MAX_QUERY, &st->raw_nquery);
	return st;
}

/* Refuses (400) what on_uri() found in the target, and a raw NUL in it:
 * 0.9.75 reads the target as a C string, so "GET /healthz\0junk" was
 * served as /healthz. The target ends one byte (the space, which MHD
 * overwrote with a NUL) before the HTTP version, in the same buffer; when
 * the string ends earlier, a NUL was sent. 1.0 parses the request line
 * itself, strictly, so the pointer check is for 0.9.7x only.
 */
static int raw_target_refused(struct req_state *st, const char *version)
{
	const char *why = NULL;

#if MHD_VERSION < 0x00097800
	if (st->raw_target && version && version[0] &&
	    (uintptr_t)(st->raw_target + st->raw_target_len + 1) !=
		(uintptr_t)version)
		why = "the request target holds a NUL byte";
#else
	(void)version;
#endif
	if (!why && (st->raw_flags & RAW_SPACE))
		why = "the request target holds a space; encode it as %20";
	if (!why && (st->raw_flags & RAW_ENCODED_CONTROL))
		why = "the path holds an encoded control character (%00-%1F "
		      "or %7F)";
	if (!why && (st->raw_flags & RAW_ENCODED_SLASH))
		why = "the path holds an encoded slash (%2F); no name in this "
		      "API contains a slash";
	if (!why)
		return 0;
	problem(&st->res, 400, "bad-request", "Bad request", "%s", why);
	st->decided = 1;
	/* MHD's path is cut at the NUL or decoded: not the one sent. */
	st->no_instance = 1;
	return 1;
}

/* Counts the headers that frame a body or name the host, and header
 * names with white space in them (see on_headers()).
 */
struct framing {
	int content_length;
	int transfer_encoding;
	int host;
	int spaced_name;
	int content_type;
	int authorization;
	int if_match;
	int if_none_match;
	int fields;   /* header fields */
	size_t bytes; /* their names and values */
};

/* Header fields a request may carry, and their bytes (names and values):
 * 100 fields as Apache's LimitRequestFields, 64 KiB as API.md states.
 * Both keep a request well inside the connection's memory pool
 * (http_daemon.c, twice this), where libmicrohttpd builds the answer's own
 * header block: a request that filled the pool got no answer at all,
 * though its handler ran (review s17b F2: 872 small headers). */
#define REQ_MAX_HEADER_FIELDS 100
#define REQ_MAX_HEADER_BYTES  (64 * 1024)
#define REQ_MAX_TARGET_BYTES  (64 * 1024) /* the request target, raw */

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind,
				     const char *key, size_t key_size,
				     const char *value, size_t value_size)
{
	struct framing *f = cls;

	(void)kind;
	f->fields++;
	f->bytes += key_size + value_size;
	(void)value;
	/* the headers counted, and where (an int of struct framing) */
	static const struct {
		const char *name;
		size_t off;
	} counted[] = {
	    {MHD_HTTP_HEADER_CONTENT_LENGTH,
	     offsetof(struct framing, content_length)},
	    {MHD_HTTP_HEADER_TRANSFER_ENCODING,
	     offsetof(struct framing, transfer_encoding)},
	    {MHD_HTTP_HEADER_HOST, offsetof(struct framing, host)},
	    {MHD_HTTP_HEADER_CONTENT_TYPE,
	     offsetof(struct framing, content_type)},
	    {MHD_HTTP_HEADER_AUTHORIZATION,
	     offsetof(struct framing, authorization)},
	    {MHD_HTTP_HEADER_IF_MATCH, offsetof(struct framing, if_match)},
	    {MHD_HTTP_HEADER_IF_NONE_MATCH,
	     offsetof(struct framing, if_none_match)},
	};

	if (!key)
		return MHD_YES;
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		if (!strcasecmp(key, counted[i].name)) {
			(*(int *)((char *)f + counted[i].off))++;
			break;
		}
	if (strpbrk(key, " \t"))
		f->spaced_name++;
	return MHD_YES;
}

/* First call: headers only. Decide everything that does not need the
 * body; answer at once only where the body must not be read (413, bad
 * framing), since an early answer closes the connection.
 */
/* The path of an absolute-form request target ("GET http://host/v1/gpus
 * HTTP/1.1"), which a server must accept (RFC 9112 §3.2.2): the part from
 * the first "/" after the authority ("/" when none); other targets as
 * they are. */
static const char *origin_path(const char *url)
{
	const char *p = NULL, *slash;

	if (!strncasecmp(url, "http://", 7))
		p = url + 7;
	else if (!strncasecmp(url, "https://", 8))
		p = url + 8;
	if (!p)
		return url;
	slash = strchr(p, '/');
	return slash ? slash : "/";
}

static enum MHD_Result on_headers(struct http_server *s,
				  struct MHD_Connection *c,
				  struct req_state *st, const char *url,
				  const char *method, const char *version,
				  int *early)
{
	const char *te = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	const char *cl = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *ctype = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	struct framing f;
	int nroutes, idx;
	const struct route *table = routes_table(&nroutes);

	*early = 0;
	memset(&f, 0, sizeof(f));
	url = origin_path(url);
	st->req.method = method;
	st->req.path = url;
	st->req.request_id = st->request_id;
	st->req.accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT);
	st->req.if_match = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_MATCH);
	st->req.if_none_match = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
	{
		/* for handlers that stop work whose client has gone */
		const union MHD_ConnectionInfo *fdi = MHD_get_connection_info(
		    c, MHD_CONNECTION_INFO_CONNECTION_FD);
		st->req.client_fd = fdi ? fdi->connect_fd : -1;
	}
	st->route = -1;
	/* Two Content-Length headers: 0.9.75 frames the body by the first
	 * and parses what follows as the next request, which a proxy that
	 * used the other one never sent (request smuggling). RFC 9112 6.3:
	 * answer 400 and close. Identical values are refused too (RFC 9110
	 * 8.6 allows either; nginx refuses): no client sends two. The same
	 * for two Transfer-Encoding headers, which MHD and a proxy may
	 * combine differently. Answered at once, so the body is never read
	 * and the connection closes after the answer: no leftover byte is
	 * ever parsed as a request.
	 */
	MHD_get_connection_values_n(c, MHD_HEADER_KIND, count_framing, &f);
	if (f.fields > REQ_MAX_HEADER_FIELDS ||
	    f.bytes > REQ_MAX_HEADER_BYTES) {
		problem(&st->res, 431, "bad-request",
			"Request header fields too large",
			"at most %d header fields of %d bytes in all are "
			"accepted (this request has %d fields, %zu bytes)",
			REQ_MAX_HEADER_FIELDS, REQ_MAX_HEADER_BYTES, f.fields,
			f.bytes);
		*early = 1;
		return MHD_YES;
	}
	if (f.content_length > 1 || f.transfer_encoding > 1) {
		problem(&st->res, 400, "bad-request", "Bad request",
			"more than one %s header: the body's framing is "
			"ambiguous",
			f.content_length > 1 ? "Content-Length"
					     : "Transfer-Encoding");
		*early = 1;
		return MHD_YES;
	}
	/* "Content-Length : 5" is no Content-Length to MHD, but may be one
	 * to a lenient proxy: RFC 9112 5.1 says refuse, and we close too.
	 */
	if (f.spaced_name) {
		problem(&st->res, 400, "bad-request", "Bad request",
			"a header name holds white space (before the colon?)");
		*early = 1;
		return MHD_YES;
	}
	/* as the headers: within half the pool, or the answer may find no
	 * room (review s17b F2) */
	if (st->raw_target_len > REQ_MAX_TARGET_BYTES) {
		problem(&st->res, 414, "bad-request", "URI too long",
			"the request target is %zu bytes; at most %d are "
			"accepted",
			st->raw_target_len, REQ_MAX_TARGET_BYTES);
		st->no_instance = 1;
		*early = 1;
		return MHD_YES;
	}
	if (raw_target_refused(st, version))
		return MHD_YES;
	/* RFC 9112 3.2; MHD's own check (MHD_OPTION_STRICT_FOR_CLIENT)
	 * answers HTML with its header block sent twice, so it is off.
	 */
	/* Singletons (RFC 9110 5.3): two of them leave the value to
	 * whichever one a reader takes. Content-Type: the first won,
	 * "application/xml" second went unseen (review s14); Authorization
	 * (not a list, 11.6.2): the first credential counted, so a proxy's
	 * added one might not (review s15). */
	{
		static const struct {
			const char *name;
			size_t off; /* an int of struct framing */
		} singletons[] = {
		    {MHD_HTTP_HEADER_CONTENT_TYPE,
		     offsetof(struct framing, content_type)},
		    {MHD_HTTP_HEADER_AUTHORIZATION,
		     offsetof(struct framing, authorization)},
		    /* lists, but read from one header (the first is all
		     * 0.9.75's lookup gives): a second would go unseen
		     * (review s16c F7) */
		    {MHD_HTTP_HEADER_IF_MATCH,
		     offsetof(struct framing, if_match)},
		    {MHD_HTTP_HEADER_IF_NONE_MATCH,
		     offsetof(struct framing, if_none_match)},
		};
		for (size_t i = 0;
		     i < sizeof(singletons) / sizeof(singletons[0]); i++) {
			int n;
			memcpy(&n, (const char *)&f + singletons[i].off,
			       sizeof(n));
			if (n > 1) {
				problem(&st->res, 400, "bad-request",
					"Bad request",
					"more than one %s header",
					singletons[i].name);
				st->decided = 1;
				return MHD_YES;
			}
		}
	}
	if (f.host > 1 || (f.host == 0 && !strcmp(version, "HTTP/1.1"))) {
		problem(&st->res, 400, "bad-request", "Bad request",
			f.host ? "more than one Host header"
			       : "an HTTP/1.1 request needs a Host header");
		st->decided = 1;
		return MHD_YES;
	}
	/* 0.9.75 accepts these framings (fixed upstream in 1.0.0, libmicrohttpd
	 * ChangeLog 2022-2023; RFC 9112 §6.1, §6.3): refuse. */
	if (te && (strcasecmp(te, "chunked") != 0 || cl)) {
		problem(&st->res, 400, "bad-request", "Bad request",
			cl ? "Content-Length and Transfer-Encoding together "
			     "are ambiguous"
			   : "only Transfer-Encoding: chunked is supported");
		/* MHD cannot read a body it does not know how to frame:
		 * answer now. A chunked body (with a stray Content-Length)
		 * is read and dropped first, so the client is not reset
		 * while still sending and sees the answer.
		 */
		if (strcasecmp(te, "chunked") != 0)
			*early = 1;
		else
			st->decided = 1;
		/* RFC 9112 §6.1: "the server MUST close the connection
		 * after responding": a front end that framed by
		 * Content-Length sent what follows the chunked body as part
		 * of this request, and running it as the next one smuggles it
		 * past the front end (review s17b F1) */
		st->close_after = 1;
		return MHD_YES;
	}
	if (!text_ok(url)) {
		problem(&st->res, 400, "bad-request", "Bad request",
			"the path is not valid UTF-8 text");
		st->decided = 1;
		return MHD_YES;
	}
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_query, st);
	if (st->req.nquery > REQ_MAX_QUERY || (st->raw_flags & RAW_QUERY_CUT)) {
		st->req.nquery = REQ_MAX_QUERY;
		problem_field(&st->res, "query",
			      "at most %d query parameters are accepted "
			      "(this request has %d)",
			      REQ_MAX_QUERY,
			      st->raw_nquery > REQ_MAX_QUERY
				  ? st->raw_nquery
				  : REQ_MAX_QUERY + 1);
		st->decided = 1;
		return MHD_YES;
	}
	for (int i = 0; i < st->req.nquery; i++)
		if (!text_ok(st->req.query[i].key) ||
		    !text_ok(st->req.query[i].value)) {
			problem_field(&st->res, "query",
				      "query parameters must be valid UTF-8 "
				      "text");
			st->decided = 1;
			return MHD_YES;
		}
	idx = routes_match(method, url, st->path_buf, sizeof(st->path_buf),
			   &st->req, st->allow, sizeof(st->allow));
	if (idx == -405) {
		problem(&st->res, 405, "method-not-allowed",
			"Method not allowed", "%s is not allowed on %s; use %s",
			method, url, st->allow);
		snprintf(st->res.allow, sizeof(st->res.allow), "%s", st->allow);
		st->decided = 1;
		return MHD_YES;
	}
	if (idx < 0) {
		problem(&st->res, 404, "not-found", "Not found",
			"no such endpoint; GET /openapi.yaml lists them");
		st->decided = 1;
		return MHD_YES;
	}
	/* the probes' listener serves their two endpoints, nothing else */
	if (s->health_only && strcmp(table[idx].pattern, "/healthz") != 0 &&
	    strcmp(table[idx].pattern, "/readyz") != 0) {
		problem(&st->res, 404, "not-found", "Not found",
			"this listener serves /healthz and /readyz only (the "
			"health listener); the API is on the main one");
		st->decided = 1;
		return MHD_YES;
	}
	st->route = idx;
	st->body_allowed = table[idx].has_body;
	if (table[idx].scope != SCOPE_NONE && !atomic_load(&s->app->ready)) {
		problem(&st->res, 503, "unavailable", "Service unavailable",
			"starting: the database schema is not ready yet");
		st->res.retry_after_s = 2;
		st->decided = 1;
		return MHD_YES;
	}
	if (st->body_allowed && cl) {
		char *end;
		unsigned long long n = strtoull(cl, &end, 10);
		if (*end == '\0' && n > (unsigned long long)s->max_body_bytes) {
			problem(&st->res, 413, "too-large",
				"Request body too large",
				"the body has %llu bytes; the limit is %d", n,
				s->max_body_bytes);
			/* up to what a decided request drains anyway, read
			 * and drop it and answer after, so a client that
			 * writes its whole body before reading sees the 413
			 * and keeps the connection (review s15: a broken
			 * pipe); beyond, or awaiting 100-continue (handled
			 * below), answer now and close */
			if (n > (unsigned long long)s->max_body_bytes *
				    ABUSE_FACTOR)
				*early = 1;
			else
				st->decided = 1;
			return MHD_YES;
		}
	}
	if (st->body_allowed) {
		/* a body read as other than what was sent: 415, saying why */
		const char *why = NULL;

		if (ctype && !json_content_type(ctype))
			why = "send the body as application/json";
		else if (!identity_encoding(MHD_lookup_connection_value(
			     c, MHD_HEADER_KIND,
			     MHD_HTTP_HEADER_CONTENT_ENCODING)))
			why = "bodies are read as sent: no Content-Encoding "
			      "(gzip, br, ...) is supported; send the JSON "
			      "uncompressed";
		else if (ctype && !charset_utf8(ctype))
			why = "JSON bodies are read as UTF-8; send "
			      "charset=utf-8 or no charset";
		if (why) {
			problem(&st->res, 415, "unsupported-media-type",
				"Unsupported media type", "%s", why);
			st->decided = 1;
			return MHD_YES;
		}
	}
	if (auth_check(s->app, table[idx].scope,
		       MHD_lookup_connection_value(
			   c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
		       st->token_name, sizeof(st->token_name), &st->res) != 0) {
		st->decided = 1;
		return MHD_YES;
	}
	st->req.token_name = st->token_name;
	return MHD_YES;
}

/* The client waits for "100 Continue" before it sends the body (RFC 9110
 * 10.1.1). 0.9.75 sends that after the first access-handler call unless a
 * response is queued by then (connection.c, need_100_continue()), so a
 * request already refused (401, 403, 404, 415, ...) is answered at once:
 * the body is never invited, and MHD closes the connection after the
 * answer. Without Expect the body is on its way: it is read and dropped
 * instead, which keeps the connection (see on_headers()).
 */
static int awaits_continue(struct MHD_Connection *c, const char *version)
{
	const char *expect = MHD_lookup_connection_value(
	    c, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);

	return expect && !strcasecmp(expect, "100-continue") &&
	       !strcmp(version, MHD_HTTP_VERSION_1_1);
}

enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c,
				const char *url, const char *method,
				const char *version, const char *upload,
				size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct req_state *st = *con_cls;
	int nroutes;
	const struct route *table = routes_table(&nroutes);

	if (!st || !st->started) {
		int early = 0;

		if (!st) /* on_uri() found no memory */
			st = calloc(1, sizeof(*st));
		if (!st)
			return MHD_NO;
		*con_cls = st;
		st->started = 1;
		clock_gettime(CLOCK_MONOTONIC, &st->t0);
		metrics_in_flight(1);
		new_request_id(c, st->request_id);
		if (on_headers(s, c, st, url, method, version, &early) !=
		    MHD_YES)
			return MHD_NO;
		if (early || (st->decided && awaits_continue(c, version))) {
			st->decided = 1;
			return respond(s, c, st);
		}
		return MHD_YES;
	}
	if (*upload_size > 0) {
		size_t n = *upload_size;

		*upload_size = 0;
		if (st->decided || !st->body_allowed) {
			st->discarded += n;
			return st->discarded >
				       (size_t)s->max_body_bytes * ABUSE_FACTOR
				   ? MHD_NO
				   : MHD_YES;
		}
		if (st->body.len + n > (size_t)s->max_body_bytes) {
			problem(&st->res, 413, "too-large",
				"Request body too large",
				"the body exceeds the limit of %d bytes",
				s->max_body_bytes);
			st->decided = 1;
			st->discarded += st->body.len + n;
			sbuf_free(&st->body);
			return MHD_YES;
		}
		sbuf_putn(&st->body, upload, n);
		return st->body.oom ? MHD_NO : MHD_YES;
	}
	/* Final call: the whole request is here. */
	{
		struct conn_track *t = track_of(c);
		if (t)
			atomic_store(&t->since_ms, NO_DEADLINE);
	}
	if (!st->decided) {
		st->req.body = st->body.p;
		st->req.body_len = st->body.len;
		/* one unavailability per request, not one per statement
		 * (storage/db.h) */
		db_request_begin();
		table[st->route].fn(s->app, &st->req, &st->res);
		db_request_end();
	}
	return respond(s, c, st);
}

void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		       enum MHD_RequestTerminationCode toe)
{
	struct req_state *st = *con_cls;
	struct conn_track *t = track_of(c);

	(void)cls;
	(void)toe;
	/* The next request on this connection has its own deadline. */
	if (t)
		atomic_store(&t->since_ms, http_mono_ms());
	if (!st)
		return;
	res_release(&st->res);
	sbuf_free(&st->body);
	/* Not started: MHD refused the request itself after on_uri(). */
	if (st->started)
		metrics_in_flight(-1);
	free(st);
	*con_cls = NULL;
}

/* Percent-decoding of the path and query (replaces MHD's): a decoded NUL
 * would silently cut a string short ("/v1/gpus/a%00b" finding GPU "a"),
 * so it becomes DEL, which text_ok() refuses with a 400.
 */
size_t http_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *r = s, *w = s;

	(void)cls;
	(void)c;
	while (*r) {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) &&
		    isxdigit((unsigned char)r[2])) {
			char hex[3] = {r[1], r[2], 0};
			char ch = (char)strtol(hex, NULL, 16);
			*w++ = ch ? ch : 0x7f;
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

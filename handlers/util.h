/* util.h - small helpers shared by handlers: ids, timestamps, paging. */
#ifndef GPUSIZER_HANDLERS_UTIL_H
#define GPUSIZER_HANDLERS_UTIL_H

#include "handlers/handler.h"

#define UUID_TEXT 37

/* Writes a random (version 4) UUID, lowercase, to out. */
void uuid_v4(char out[UUID_TEXT]);
/* 1 when s is a canonical 8-4-4-4-12 hex UUID. */
int uuid_valid(const char *s);
/* 1 when s is an RFC 3339 date-time ("2026-11-21T00:00:00Z", offsets and
 * fractions allowed) or a plain date "2026-11-21".
 */
/* A "since" query value: a 400 naming since unless rfc3339_valid, with
 * a hint where a '+' became a space (a query string's '+' is one). */
void query_since_check(struct response *res, const char *since);
int rfc3339_valid(const char *s);
/* Seconds since 1970-01-01T00:00:00Z of a date-time rfc3339_valid accepts
 * (its offset applied; a plain date is its midnight UTC) into *out: 0, or
 * -1 when s is not valid. */
int rfc3339_epoch_s(const char *s, double *out);
/* Reads ?limit= (default 50, 1..500). Returns the value, or -1 after
 * recording a field error.
 */
int query_limit(const struct request *req, struct response *res);

/* The query parameter key as an integer in [lo, hi], written plainly:
 * decimal digits only, no sign, spaces or leading zeros ("+5", " 30" and
 * "05" are not numbers a client meant). Absent: dflt. Returns the value,
 * or -1 with a 400 naming key in res. lo >= 0. */
long query_int(const struct request *req, const char *key, long lo, long hi,
	       long dflt, struct response *res);
/* q x 1000 that an Accept header value gives a media type ("text/csv"), or
 * -1 when no range matches; the most specific matching range decides
 * (RFC 9110 §12.5.1: "text/csv;q=0" refuses the type, a wildcard range
 * takes any). */
int http_accept_q(const char *accept, const char *type);

/* Optimistic concurrency for catalog records (RFC 9110 8.8.3, 13.1.1):
 * a record's entity tag is its updated_at, quoted. record_if_match reads the
 * request's If-Match into *cond (NULL: none; "*"; or the updated_at of each
 * strong tag of the list, comma-separated in out of len bytes), or
 * If-None-Match: * as "!" (create only), and returns 0; -1 with a 412 in
 * res when the list holds no tag this server gives (weak tags, other
 * values), which no record matches, or a 400 for If-None-Match other
 * than * or beside If-Match. */
/* A catalog PUT's answer: the stored row (stolen) with its ETag, the
 * name warnings when any, 201 with the Location /v1/<collection>/<name>
 * when created, else 200. */
void record_answer(struct response *res, json_t *stored, const json_t *warnings,
		   int created, const char *collection, const char *name);
int record_if_match(const struct request *req, char *out, size_t len,
		    const char **cond, struct response *res);
/* A catalog GET's answer: row (stolen) with its ETag, 200; or 304 and no
 * body when the request's If-None-Match lists that tag (weak comparison,
 * RFC 9110 13.1.2) or is *. */
void record_get_answer(const struct request *req, struct response *res,
		       json_t *row);

#endif

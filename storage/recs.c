/* recs.c - recommendation storage with keyset pagination. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/pgconn.h"
#include "storage/recs.h"

enum store_status store_rec_insert(struct db_pool *pool,
				   const struct rec_new *rec,
				   struct store_err *e)
{
	const char *params[7] = {rec->id,     rec->kind,    rec->model,
				 rec->gpu,    rec->request, rec->response,
				 rec->summary};
	PGresult *r = NULL;

	db_exec(pool,
		/* clang-format off */
		"INSERT INTO recommendations (id, kind, model, gpu, request,"
		" response, summary) VALUES ($1::uuid, $2, $3, $4, $5::json,"
		" $6::json, $7::json)",
		/* clang-format on */
		7, params, 0, &r, e);
	PQclear(r);
	return e->status;
}

enum store_status store_rec_get(struct db_pool *pool, const char *id,
				char **response, struct store_err *e)
{
	const char *params[1] = {id};
	PGresult *r = NULL;

	*response = NULL;
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT response::text FROM recommendations"
		    " WHERE id = $1::uuid",
		    /* clang-format on */
		    1, params, 1, &r, e) != STORE_OK)
		return e->status;
	if (PQntuples(r) == 0) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "not found");
	} else {
		*response = strdup(PQgetvalue(r, 0, 0));
		if (!*response) {
			e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "out of memory");
		}
	}
	PQclear(r);
	return e->status;
}

/* The cursor is the hex of "<created_at>|<id>" of the last row shown:
 * opaque to clients, exact for the keyset comparison.
 */
static void cursor_encode(const char *ts, const char *id,
			  char out[REC_CURSOR_MAX])
{
	static const char digits[] = "0123456789abcdef";
	char plain[REC_CURSOR_MAX / 2];
	size_t n = (size_t)snprintf(plain, sizeof(plain), "%s|%s", ts, id);

	if (n >= sizeof(plain))
		n = sizeof(plain) - 1;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[(unsigned char)plain[i] >> 4];
		out[2 * i + 1] = digits[(unsigned char)plain[i] & 15];
	}
	out[2 * n] = '\0';
}

/* 1 when s matches pattern p, where '9' is a digit, 'x' a hex digit and
 * any other character itself. */
static int shaped(const char *s, const char *p)
{
	for (; *p; s++, p++)
		if (*p == '9'	? !isdigit((unsigned char)*s)
		    : *p == 'x' ? !isxdigit((unsigned char)*s)
				: *s != *p)
			return 0;
	return *s == '\0';
}

/* What cursor_encode writes, and nothing else: created_at::text in the
 * pool's UTC session ("2026-11-27 01:09:01.123456+00", 0 to 6 fraction
 * digits) and a UUID. PostgreSQL's own parsing took "now", "epoch" and
 * "infinity" as times (review s17b F7: a cursor the server did not make
 * answered 200, and odd ones logged cast errors in the database). */
static int cursor_fields_ok(const char *ts, const char *id)
{
	static const char *const times[] = {
	    "9999-99-99 99:99:99+00",	     "9999-99-99 99:99:99.9+00",
	    "9999-99-99 99:99:99.99+00",     "9999-99-99 99:99:99.999+00",
	    "9999-99-99 99:99:99.9999+00",   "9999-99-99 99:99:99.99999+00",
	    "9999-99-99 99:99:99.999999+00",
	};
	int ok = 0, mon, day, h, m, sec;

	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		ok |= shaped(ts, times[i]);
	if (!ok || sscanf(ts + 5, "%2d-%2d %2d:%2d:%2d", &mon, &day, &h, &m,
			  &sec) != 5)
		return 0;
	return mon >= 1 && mon <= 12 && day >= 1 && day <= 31 && h <= 23 &&
	       m <= 59 && sec <= 60 &&
	       shaped(id, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
}

static int cursor_decode(const char *c, char *ts, size_t tslen, char *id,
			 size_t idlen)
{
	char plain[REC_CURSOR_MAX / 2];
	size_t n = strlen(c);
	char *bar;

	if (n == 0 || n % 2 || n / 2 >= sizeof(plain))
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (!isxdigit((unsigned char)c[2 * i]) ||
		    !isxdigit((unsigned char)c[2 * i + 1]) ||
		    sscanf(c + 2 * i, "%2x", &v) != 1 || v == 0)
			return -1;
		plain[i] = (char)v;
	}
	plain[n / 2] = '\0';
	bar = strchr(plain, '|');
	if (!bar || (size_t)(bar - plain) >= tslen || strlen(bar + 1) >= idlen)
		return -1;
	*bar = '\0';
	snprintf(ts, tslen, "%s", plain);
	snprintf(id, idlen, "%s", bar + 1);
	return cursor_fields_ok(ts, id) ? 0 : -1;
}

enum store_status store_rec_list(struct db_pool *pool,
				 const struct rec_filter *f, json_t **items,
				 char next[REC_CURSOR_MAX], struct store_err *e)
{
	char ts[96], id[96], limit[16];
	const char *params[7];
	PGresult *r = NULL;
	json_error_t jerr;
	int rows;

	*items = NULL;
	next[0] = '\0';
	if (f->cursor &&
	    cursor_decode(f->cursor, ts, sizeof(ts), id, sizeof(id)) != 0) {
		e->status = STORE_INVALID;
		snprintf(e->message, sizeof(e->message), "malformed cursor");
		return e->status;
	}
	snprintf(limit, sizeof(limit), "%d", f->limit + 1);
	params[0] = f->kind;
	params[1] = f->model;
	params[2] = f->gpu;
	params[3] = f->since;
	params[4] = f->cursor ? ts : NULL;
	params[5] = f->cursor ? id : NULL;
	params[6] = limit;
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT json_build_object('id', id, 'kind', kind, 'model',"
		    " model, 'gpu', gpu, 'created_at',"
		    /* the answer's own form: UTC, whole seconds, Z */
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), 'summary',"
		    " summary, 'request', request,"
		    " 'href', '/v1/recommendations/' || id)::text,"
		    " created_at::text, id::text FROM recommendations"
		    " WHERE ($1::text IS NULL OR kind = $1)"
		    " AND ($2::text IS NULL OR model = $2)"
		    " AND ($3::text IS NULL OR gpu = $3"
		    "      OR (kind = 'compare' AND $3 = "
		    "ANY(string_to_array(gpu, ','))))"
		    " AND ($4::timestamptz IS NULL OR created_at >= $4)"
		    " AND ($5::timestamptz IS NULL"
		    "      OR (created_at, id) < ($5::timestamptz, $6::uuid))"
		    /* qualified: a bare created_at / id names the ::text
		     * output columns above, and ordering by those text
		     * values cannot use the (created_at, id) index: every
		     * page sorted the whole history (0.37 s at 300,000
		     * answers, growing with it) */
		    " ORDER BY recommendations.created_at DESC,"
		    " recommendations.id DESC LIMIT $7::int",
		    /* clang-format on */
		    7, params, 1, &r, e) != STORE_OK) {
		if (e->status == STORE_INVALID && f->cursor)
			snprintf(e->message, sizeof(e->message),
				 "malformed cursor");
		return e->status;
	}
	rows = PQntuples(r);
	*items = json_array();
	for (int i = 0; i < rows && i < f->limit; i++) {
		json_t *o = json_loads(PQgetvalue(r, i, 0), 0, &jerr);
		if (o)
			json_array_append_new(*items, o);
	}
	if (rows > f->limit)
		cursor_encode(PQgetvalue(r, f->limit - 1, 1),
			      PQgetvalue(r, f->limit - 1, 2), next);
	PQclear(r);
	return e->status;
}

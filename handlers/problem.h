/* problem.h - RFC 9457 problem details, the one error shape of the API.
 *
 * Every error is application/problem+json: {type, title, status, detail,
 * instance?, request_id, errors?: [{field, message}], errors_total?}. type is a
 * relative URI "/problems/<slug>" documented in openapi.yaml and docs/API.md.
 */
#ifndef GPUSIZER_HANDLERS_PROBLEM_H
#define GPUSIZER_HANDLERS_PROBLEM_H

#include "handlers/handler.h"
#include "storage/db.h"

/* Replaces the response with a problem. slug names the type. */
void problem(struct response *res, int status, const char *slug,
	     const char *title, const char *detail_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* errors[] lists at most this many field errors; past it, errors_total
 * counts them all (see openapi.yaml, Problem).
 */
#define PROBLEM_MAX_ERRORS 100

/* Appends {field, message} to errors[]; starts a 400 validation problem
 * if the response is not one yet. Past PROBLEM_MAX_ERRORS entries the
 * error is only counted, in errors_total.
 */
void problem_field(struct response *res, const char *field, const char *msg_fmt,
		   ...) __attribute__((format(printf, 3, 4)));

/* Appends inner's field errors to res with prefix before each field
 * name (a nested body validated on its own); those inner counted without
 * listing them are counted in res too.
 */
void problem_merge_fields(struct response *res, const struct response *inner,
			  const char *prefix);

/* Number of field errors recorded so far, listed or only counted. */
int problem_field_count(const struct response *res);

/* Maps a storage failure: not_found 404, conflict 409, invalid 422,
 * unavailable 503 (+Retry-After), error 500 (detail only in the log).
 * what names the resource for the 404 detail.
 */
void problem_store(struct response *res, const struct store_err *e,
		   const char *what);

#endif

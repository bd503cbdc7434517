/* fuzz_common.h - helpers shared by the libFuzzer harnesses of the request
 * parsers (tests/fuzz/run.sh builds and runs them; see its header).
 *
 * A harness turns the fuzzer's bytes into what server/http.c would hand a
 * handler (a NUL-terminated body, decoded query pairs), calls the real
 * parser or handler, renders the response the way http.c does, and
 * checks the contract every answer must keep: a status in 200..599 that
 * is never 500 for client input, and a problem+json body with type,
 * title, status and detail, whose validation errors are listed. A broken
 * contract aborts, so libFuzzer records the input as a crash.
 */
#ifndef GPUSIZER_FUZZ_COMMON_H
#define GPUSIZER_FUZZ_COMMON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/handler.h"

#define FZ_FAIL(...)                                                           \
	do {                                                                   \
		fprintf(stderr, "fuzz contract: " __VA_ARGS__);                \
		fputc('\n', stderr);                                           \
		abort();                                                       \
	} while (0)

/* A NUL-terminated copy of the fuzzer's bytes (http.c guarantees the body
 * is NUL-terminated); caller frees.
 */
static inline char *fz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Renders res as http.c's respond() does and checks the contract:
 * status set and never 500 (bad input is 4xx; a 503 is allowed only when
 * allow_503, i.e. a harness whose storage stub reports unavailable),
 * problems carry type/title/status/detail, validation problems list at
 * least one field error, and success bodies render.
 */
static inline void fz_check_response(const struct response *res, int allow_503)
{
	const json_t *j = res->json;

	if (res->status < 200 || res->status > 599)
		FZ_FAIL("status %d out of range", res->status);
	if (res->status == 500)
		FZ_FAIL("500 for client input (log_detail: %s)",
			res->log_detail);
	if (res->status == 503 && !allow_503)
		FZ_FAIL("503 without a storage failure");
	if (res->is_problem || res->status >= 400) {
		const json_t *errs;
		if (!j)
			FZ_FAIL("%d problem without a JSON body (a json_pack "
				"that failed, e.g. on invalid UTF-8?)",
				res->status);
		if (!json_is_string(json_object_get(j, "type")) ||
		    !json_is_string(json_object_get(j, "title")) ||
		    !json_is_integer(json_object_get(j, "status")) ||
		    !json_is_string(json_object_get(j, "detail")))
			FZ_FAIL("%d problem lacks type/title/status/detail",
				res->status);
		if (json_integer_value(json_object_get(j, "status")) !=
		    res->status)
			FZ_FAIL("problem status %lld != HTTP status %d",
				(long long)json_integer_value(
				    json_object_get(j, "status")),
				res->status);
		errs = json_object_get(j, "errors");
		if (!strcmp(json_string_value(json_object_get(j, "type")),
			    "/problems/validation") &&
		    (!json_is_array(errs) || json_array_size(errs) == 0))
			FZ_FAIL(
			    "validation problem without errors[]: %s",
			    json_string_value(json_object_get(j, "detail")));
	}
	if (j) {
		char *text =
		    json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));
		if (!text)
			FZ_FAIL("response JSON does not render");
		free(text);
	} else if (!res->text && res->status != 204) {
		FZ_FAIL("%d without a body", res->status);
	}
}

#endif

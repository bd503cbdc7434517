/* auth.h - bearer-token authorization of a route.
 *
 * Scopes are exact: "probe" may report benchmarks, "admin" may edit the
 * catalog; neither implies the other. Reads and sizing are open unless the
 * daemon runs with --auth-reads, then any valid token may read.
 */
#ifndef GPUSIZER_HANDLERS_AUTH_H
#define GPUSIZER_HANDLERS_AUTH_H

#include <stddef.h>

#include "handlers/handler.h"

enum scope {
	SCOPE_NONE,  /* health, metrics, the spec: always open */
	SCOPE_READ,  /* reads and sizing: open unless auth_reads */
	SCOPE_PROBE, /* POST /v1/benchmarks */
	SCOPE_ADMIN, /* catalog writes */
};

/* Checks the Authorization header value (may be NULL) against need.
 * Returns 0 when allowed (token_name set to the token's name or ""), else
 * -1 with a 401 (missing/invalid token) or 403 (wrong scope) or 503
 * problem in res.
 */
int auth_check(struct app *app, enum scope need, const char *authorization,
	       char *token_name, size_t name_len, struct response *res);

#endif

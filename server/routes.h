/* routes.h - the route table: method + path pattern -> handler + scope. */
#ifndef GPUSIZER_SERVER_ROUTES_H
#define GPUSIZER_SERVER_ROUTES_H

#include <stddef.h>

#include "handlers/auth.h"
#include "handlers/handler.h"

struct route {
	const char *method;
	const char *pattern; /* "/v1/gpus/{name}": {x} matches one segment */
	handler_fn fn;
	enum scope scope;
	int has_body; /* POST/PUT: the body is read and capped */
};

/* The table and its size (for metrics labels). */
const struct route *routes_table(int *n);

/* Finds the route for method and path. path_buf (len bytes, caller's)
 * receives a copy of path whose segments req->params point into.
 * Returns the route index, -404 when no pattern matches, or -405 when
 * the path exists for other methods (listed in allow).
 */
int routes_match(const char *method, const char *path, char *path_buf,
		 size_t len, struct request *req, char *allow,
		 size_t allow_len);

#endif

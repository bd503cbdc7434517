/* handler.h - what a REST handler sees and produces.
 *
 * server/ parses HTTP into a struct request, calls the route's handler, and
 * renders the struct response (JSON, problem+json or text). Handlers never
 * touch HTTP and never build SQL: they validate, call engine/ and storage/,
 * and fill the response.
 */
#ifndef GPUSIZER_HANDLERS_HANDLER_H
#define GPUSIZER_HANDLERS_HANDLER_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

/* Storage types the app holds by pointer only: declared, not included, so
 * a handler sees storage/ only through the headers it includes itself. */
struct db_pool;
struct migration_set;

#define REQ_MAX_PARAMS 4
#define REQ_MAX_QUERY  16

/* Process-wide state handlers read; owned by server/main.c. */
struct app {
	struct db_pool *db;
	const struct migration_set *migrations;
	const char *openapi_file; /* path of openapi.yaml served as is */
	int auth_reads;		  /* reads and sizing need a token too */
	atomic_int draining;	  /* set on SIGTERM: /readyz says 503 */
	atomic_int ready;	  /* migrations applied: /v1 may serve */
	/* Set when the drain timeout has passed: engine work still running
	 * stops (issue 15), so shutdown ends within --drain-timeout. */
	atomic_int cancel_work;
	long engine_max_steps;	/* work units one search may spend */
	int engine_timeout_ms;	/* wall clock of one request's engine work */
	int engine_concurrency; /* searches run at once; more wait (0: CPUs) */
	/* reports marked synthetic count in fleet figures (tests, demos) */
	int fleet_synthetic;
};

struct kv {
	const char *key;
	const char *value;
};

struct request {
	const char *method;
	const char *path;
	const char *params[REQ_MAX_PARAMS]; /* path {params}, in order */
	int nparams;
	struct kv query[REQ_MAX_QUERY]; /* query string, decoded */
	int nquery;
	const char *accept;	   /* Accept header or NULL */
	const char *if_match;	   /* If-Match header or NULL */
	const char *if_none_match; /* If-None-Match header or NULL */
	const char *body;	   /* request body (NUL-terminated) or NULL */
	size_t body_len;
	const char *request_id; /* for logs and problem bodies */
	const char *token_name; /* authenticated token's name, or NULL */
	int client_fd; /* the connection's socket (peeked, never read), or -1 */
};

/* Filled by a handler. Exactly one of json / text is set, unless status is
 * 204. The response owns json (decref'd) and text (free()d).
 */
struct response {
	int status;
	json_t *json;		  /* body; problem+json when is_problem */
	char *text;		  /* pre-rendered body with content_type */
	const char *content_type; /* static string, for text */
	int is_problem;
	char location[256]; /* Location header when non-empty */
	char allow[64];	    /* Allow header when non-empty */
	/* Content-Disposition header when non-empty (a download's name). */
	char content_disposition[128];
	int retry_after_s;    /* Retry-After when > 0 */
	char etag[96];	      /* ETag header when non-empty (quoted) */
	int www_authenticate; /* add WWW-Authenticate: Bearer (401) */
	char log_detail[256]; /* internal detail for the log, never sent */
};

typedef void (*handler_fn)(struct app *app, const struct request *req,
			   struct response *res);

/* First value of query parameter key, or NULL. */
const char *req_query(const struct request *req, const char *key);

/* Sets a JSON body (stolen) with status. */
void res_json(struct response *res, int status, json_t *body);
/* Sets a text body (copied) with its content type (a static string). */
void res_text(struct response *res, int status, const char *content_type,
	      const char *text, size_t len);
/* Releases what the response owns; the struct can be reused. */
void res_release(struct response *res);

#endif

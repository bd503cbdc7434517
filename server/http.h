/* http.h - the HTTP front: libmicrohttpd 0.9.75 glue, in http.c (the
 * request side) and http_daemon.c (the daemon and its connections), which
 * share server/http_int.h and are the only files that include
 * <microhttpd.h>.
 *
 * Thread per connection (handlers block on PostgreSQL, and a blocked
 * handler in MHD's thread pool stalls its worker's other connections),
 * responses queued on the final access-handler call so keep-alive holds
 * (MHD 0.9.75 src/examples/minimal_example.c: "do never respond on first
 * call"), explicit connection limit, idle timeout and body cap (MHD's
 * defaults are no timeout and FD_SETSIZE-4 connections: libmicrohttpd
 * manual), Transfer-Encoding other than chunked and CL+TE refused with 400
 * (RFC 9112 §6.1, §6.3; 0.9.75 accepts them), MHD_USE_ITC for quiescing
 * (MHD_quiesce_daemon needs it: libmicrohttpd manual). docs/RELIABILITY.md
 * lists the tests of each.
 */
#ifndef GPUSIZER_SERVER_HTTP_H
#define GPUSIZER_SERVER_HTTP_H

#include <stddef.h>

#include "handlers/handler.h"

struct http_config {
	const char *listen;	  /* HOST:PORT; port 0 picks a free one */
	int max_body_bytes;	  /* larger bodies get 413 */
	int connection_limit;	  /* concurrent connections */
	int per_ip_limit;	  /* 0 = none */
	int connection_timeout_s; /* idle connections are closed */
	/* Serve the probe endpoints only (/healthz, /readyz): a listener
	 * of its own for liveness and readiness, whose connection slots no
	 * client of the API can take (review s17b F3). */
	int health_only;
};

struct http_server;

/* Starts serving on cfg->listen with app's handlers. Returns 0, or -1 with
 * err filled. Caller stops with http_stop().
 */
int http_start(const struct http_config *cfg, struct app *app,
	       struct http_server **out, char *err, size_t errlen);
/* The port actually bound. */
int http_port(const struct http_server *s);
/* Stops accepting: new connects are refused at once, /readyz says 503,
 * and responses carry "Connection: close" from now on.
 */
void http_quiesce(struct http_server *s);
/* Connections still open (in flight or idle keep-alive). */
unsigned http_connections(struct http_server *s);
/* Stops the daemon (after draining, or abruptly) and frees s. */
void http_stop(struct http_server *s);

#endif

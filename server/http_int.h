/* http_int.h - what the two halves of the HTTP glue share: http.c (the
 * request side) and http_daemon.c (the daemon, connections, deadlines).
 * With them, the only files that include <microhttpd.h>.
 */
#ifndef GPUSIZER_SERVER_HTTP_INT_H
#define GPUSIZER_SERVER_HTTP_INT_H

#include <limits.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "handlers/handler.h"

/* One open connection, for the request deadline (see reaper()). */
struct conn_track {
	MHD_socket fd;
	atomic_llong since_ms; /* waiting for a complete request since */
	int reaped;
	struct conn_track *prev, *next;
};

/* No deadline while a request is being answered. */
#define NO_DEADLINE LLONG_MAX

/* libmicrohttpd's messages, one line per text and second: the rest of that
 * second are counted and said once ("repeated"), as a flood makes one per
 * connection (review s17b F9: 1,708 lines in 45 s). */
#define LOG_SLOTS     8
#define LOG_WINDOW_MS 1000
#define LOG_SLOT_TEXT 160
struct log_slot {
	char text[LOG_SLOT_TEXT];
	long long since_ms; /* the window's start */
	int repeated;	    /* held back in it */
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct app *app;
	int max_body_bytes;
	int health_only; /* http_config.health_only */
	int port;
	char listen[160]; /* HOST:PORT as configured, in MHD's log lines */
	MHD_socket quiesced_fd;
	long long request_timeout_ms;
	pthread_mutex_t conns_mu; /* guards the list and fd use */
	struct conn_track conns;  /* list head */
	pthread_t reaper;
	pthread_mutex_t log_mu; /* guards log_slots */
	struct log_slot log_slots[LOG_SLOTS];
	atomic_int stopping;
	int reaper_started;
};

/* Milliseconds on the monotonic clock. */
long long http_mono_ms(void);

/* MHD's callbacks for the request side (http.c), registered by
 * http_start(): the target as sent (URI log), the access handler, the
 * completion notice, and percent-decoding.
 */
void *http_on_uri(void *cls, const char *uri, struct MHD_Connection *c);
enum MHD_Result http_on_request(void *cls, struct MHD_Connection *c,
				const char *url, const char *method,
				const char *version, const char *upload,
				size_t *upload_size, void **con_cls);
void http_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		       enum MHD_RequestTerminationCode toe);
size_t http_unescape(void *cls, struct MHD_Connection *c, char *s);

#endif

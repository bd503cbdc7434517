/* http_daemon.c - libmicrohttpd glue, the daemon side: starting MHD with
 * its limits, the connection list and the reaper that gives each request
 * a deadline, quiescing and stopping. The request side (what each request
 * goes through) is in http.c; see http.h for the choices.
 */
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http.h"
#include "server/http_int.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/routes.h"

/* Connection bookkeeping for the request deadline. */
static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct conn_track *t = *ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		    c, MHD_CONNECTION_INFO_CONNECTION_FD);
		t = calloc(1, sizeof(*t));
		if (!t || !ci) {
			free(t);
			return;
		}
		t->fd = ci->connect_fd;
		atomic_store(&t->since_ms, http_mono_ms());
		pthread_mutex_lock(&s->conns_mu);
		t->next = s->conns.next;
		t->prev = &s->conns;
		s->conns.next->prev = t;
		s->conns.next = t;
		pthread_mutex_unlock(&s->conns_mu);
		*ctx = t;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && t) {
		/* Called before MHD closes the socket: once unlinked under
		 * the mutex, the reaper can no longer touch this fd.
		 */
		pthread_mutex_lock(&s->conns_mu);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		pthread_mutex_unlock(&s->conns_mu);
		free(t);
		*ctx = NULL;
	}
}

static void log_repeated(const struct http_server *s, const char *text,
			 int repeated)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", repeated);
	log_event(LOG_WARN, "libmicrohttpd", "detail", text, "listen",
		  s->listen, "repeated", n, NULL);
}

/* Says what a window held back: every slot whose window has passed, or
 * all of them (at stop). */
static void log_flush(struct http_server *s, int all)
{
	long long now = http_mono_ms();

	pthread_mutex_lock(&s->log_mu);
	for (int i = 0; i < LOG_SLOTS; i++) {
		struct log_slot *l = &s->log_slots[i];
		if (l->repeated > 0 &&
		    (all || now - l->since_ms >= LOG_WINDOW_MS)) {
			log_repeated(s, l->text, l->repeated);
			l->repeated = 0;
			l->since_ms = now;
		}
	}
	pthread_mutex_unlock(&s->log_mu);
}

/* cls: the server; its listen address names a bind failure (review s16b
 * F7: MHD's own text said "port 0"). The first line of a text in a window
 * is written, the rest counted (struct log_slot). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	struct log_slot *l = NULL, *oldest = &s->log_slots[0];
	long long now = http_mono_ms();
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	pthread_mutex_lock(&s->log_mu);
	for (int i = 0; i < LOG_SLOTS && !l; i++) {
		struct log_slot *c = &s->log_slots[i];
		if (c->text[0] && !strncmp(c->text, msg, LOG_SLOT_TEXT - 1))
			l = c;
		else if (c->since_ms < oldest->since_ms)
			oldest = c;
	}
	if (l && now - l->since_ms < LOG_WINDOW_MS) {
		l->repeated++;
		pthread_mutex_unlock(&s->log_mu);
		return;
	}
	if (!l) {
		l = oldest;
		if (l->repeated > 0)
			log_repeated(s, l->text, l->repeated);
		snprintf(l->text, sizeof(l->text), "%.*s",
			 (int)sizeof(l->text) - 1, msg);
	} else if (l->repeated > 0) {
		log_repeated(s, l->text, l->repeated);
	}
	l->repeated = 0;
	l->since_ms = now;
	pthread_mutex_unlock(&s->log_mu);
	log_event(LOG_WARN, "libmicrohttpd", "detail", msg, "listen", s->listen,
		  NULL);
}

/* libmicrohttpd 0.9.75's connection timeout is an idle timeout: a client
 * that trickles a header byte every second keeps its slot (and thread)
 * forever (slowloris; tests/api/t_slowloris.sh). The reaper gives every
 * request a deadline: it must arrive whole within the connection timeout
 * of the connection opening or the previous response. Past it, the socket
 * is shut down; MHD then sees end-of-stream and closes the connection.
 */
static void *reaper(void *arg)
{
	struct http_server *s = arg;

	while (!atomic_load(&s->stopping)) {
		long long now = http_mono_ms();
		int reaped = 0;

		pthread_mutex_lock(&s->conns_mu);
		for (struct conn_track *t = s->conns.next; t != &s->conns;
		     t = t->next) {
			long long since = atomic_load(&t->since_ms);
			if (!t->reaped && since != NO_DEADLINE &&
			    now - since > s->request_timeout_ms) {
				shutdown(t->fd, SHUT_RDWR);
				t->reaped = 1;
				reaped++;
			}
		}
		pthread_mutex_unlock(&s->conns_mu);
		log_flush(s, 0);
		if (reaped) {
			char n[16];
			snprintf(n, sizeof(n), "%d", reaped);
			metrics_reaped(reaped);
			log_event(LOG_WARN,
				  "closed connections that did not send a "
				  "whole request in time",
				  "connections", n, NULL);
		}
		usleep(200 * 1000);
	}
	return NULL;
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss,
			socklen_t *sslen, int *ipv6, char *err, size_t errlen)
{
	char host[128];
	const char *colon = strrchr(listen, ':');
	const char *port;
	struct addrinfo hints = {0}, *ai = NULL;
	size_t hl;
	int rc;

	if (!colon) {
		snprintf(err, errlen, "listen: expected HOST:PORT");
		return -1;
	}
	hl = (size_t)(colon - listen);
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "listen: host too long");
		return -1;
	}
	memcpy(host, listen, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	port = colon + 1;
	/* getaddrinfo (glibc) takes "99999" and keeps its low 16 bits: the
	 * daemon would listen on 34463 */
	{
		size_t pl = strspn(port, "0123456789");

		if (pl == 0 || pl > 5 || port[pl] != '\0' ||
		    strtol(port, NULL, 10) > 65535) {
			snprintf(err, errlen,
				 "listen \"%s\": the port must be a number "
				 "in [0, 65535]",
				 listen);
			return -1;
		}
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (rc != 0) {
		snprintf(err, errlen, "listen \"%s\": %s", listen,
			 gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = ai->ai_addrlen;
	*ipv6 = ai->ai_family == AF_INET6;
	freeaddrinfo(ai);
	return 0;
}

int http_start(const struct http_config *cfg, struct app *app,
	       struct http_server **out, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	socklen_t sslen;
	int ipv6 = 0;
	uint16_t port;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			 MHD_USE_ITC | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	int nroutes;
	const struct route *table = routes_table(&nroutes);
	static const char *methods[METRICS_MAX_ROUTES];
	static const char *patterns[METRICS_MAX_ROUTES];

	*out = NULL;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < nroutes && i < METRICS_MAX_ROUTES; i++) {
		methods[i] = table[i].method;
		patterns[i] = table[i].pattern;
	}
	metrics_init(nroutes, methods, patterns);
	if (parse_listen(cfg->listen, &ss, &sslen, &ipv6, err, errlen) != 0) {
		free(s);
		return -1;
	}
	(void)sslen;
	if (ipv6)
		flags |= MHD_USE_IPv6;
	s->app = app;
	s->max_body_bytes = cfg->max_body_bytes;
	s->health_only = cfg->health_only;
	s->request_timeout_ms = (long long)cfg->connection_timeout_s * 1000;
	pthread_mutex_init(&s->conns_mu, NULL);
	pthread_mutex_init(&s->log_mu, NULL);
	s->conns.next = s->conns.prev = &s->conns;
	s->quiesced_fd = MHD_INVALID_SOCKET;
	snprintf(s->listen, sizeof(s->listen), "%s", cfg->listen);
	/* MHD binds to ss; the port argument is what its messages name
	 * ("Failed to bind to port N"), 0 (ephemeral) included. */
	port = ntohs(ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
			  : ((struct sockaddr_in *)&ss)->sin_port);
	s->daemon = MHD_start_daemon(
	    flags, port, NULL, NULL, http_on_request, s,
	    /* The logger first, so MHD reports option errors through it. */
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)cfg->connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)cfg->per_ip_limit, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)cfg->connection_timeout_s,
	    /* twice the headers a request may carry (http.c
	     * REQ_MAX_HEADER_BYTES), so that the answer to the largest
	     * still has room (review s17b F2) */
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)128 * 1024,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_THREAD_STACK_SIZE,
	    (size_t)2 * 1024 * 1024,
	    /* 0, not 1: at 1, 0.9.75 closes on a space in the target
	     * without an answer and answers a missing Host with HTML, its
	     * header block sent twice. on_headers() refuses both itself.
	     */
	    MHD_OPTION_STRICT_FOR_CLIENT, 0, MHD_OPTION_URI_LOG_CALLBACK,
	    http_on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, http_on_completed,
	    NULL, MHD_OPTION_UNESCAPE_CALLBACK, http_unescape, NULL,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
	if (!s->daemon) {
		snprintf(err, errlen,
			 "cannot listen on %s (address in use or not "
			 "permitted?)",
			 cfg->listen);
		log_flush(s, 1);
		pthread_mutex_destroy(&s->conns_mu);
		pthread_mutex_destroy(&s->log_mu);
		free(s);
		return -1;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	if (pthread_create(&s->reaper, NULL, reaper, s) == 0)
		s->reaper_started = 1;
	else
		log_event(LOG_WARN,
			  "no request-deadline thread: slow clients "
			  "are limited by the idle timeout only",
			  NULL);
	*out = s;
	return 0;
}

int http_port(const struct http_server *s)
{
	return s->port;
}

void http_quiesce(struct http_server *s)
{
	atomic_store(&s->app->draining, 1);
	if (s->quiesced_fd != MHD_INVALID_SOCKET)
		return; /* quiesce once: 0.9.75 misreports a second call */
	s->quiesced_fd = MHD_quiesce_daemon(s->daemon);
	/* A quiesced socket still queues connects in the kernel backlog,
	 * where clients would hang: shut it so they are refused at once.
	 */
	if (s->quiesced_fd != MHD_INVALID_SOCKET)
		shutdown(s->quiesced_fd, SHUT_RDWR);
}

unsigned http_connections(struct http_server *s)
{
	const union MHD_DaemonInfo *info =
	    MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return info ? info->num_connections : 0;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	atomic_store(&s->stopping, 1);
	if (s->reaper_started)
		pthread_join(s->reaper, NULL);
	MHD_stop_daemon(s->daemon);
	log_flush(s, 1);
	pthread_mutex_destroy(&s->conns_mu);
	pthread_mutex_destroy(&s->log_mu);
	/* The header: close the quiesced socket only after stopping. */
	if (s->quiesced_fd != MHD_INVALID_SOCKET)
		close(s->quiesced_fd);
	free(s);
}

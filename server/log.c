/* log.c - JSON-lines logging through jansson (correct escaping of paths
 * and messages, whatever bytes a client sent).
 */
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/log.h"

static enum log_level min_level = LOG_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level min)
{
	min_level = min;
}

int log_level_parse(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, level_names[i]) == 0)
			return i;
	return -1;
}

static void timestamp(char out[64])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

static void emit(json_t *o)
{
	char *line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII |
				       JSON_REAL_PRECISION(6));

	if (line) {
		pthread_mutex_lock(&log_mu);
		fputs(line, stderr);
		fputc('\n', stderr);
		fflush(stderr);
		pthread_mutex_unlock(&log_mu);
		free(line);
	}
	json_decref(o);
}

static json_t *base(enum log_level level, const char *msg)
{
	char ts[64];

	timestamp(ts);
	return json_pack("{s:s, s:s, s:s}", "ts", ts, "level",
			 level_names[level], "msg", msg);
}

/* Bytes from the network may be any bytes: percent-escape what is not
 * printable ASCII (invalid UTF-8 would make jansson refuse the whole line)
 * and bound the length.
 */
static json_t *safe_string(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char buf[1024];
	size_t o = 0;

	for (; *s && o < sizeof(buf) - 4; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f) {
			buf[o++] = '%';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o] = '\0';
	return json_string(buf);
}

void log_event(enum log_level level, const char *msg, ...)
{
	va_list ap;
	json_t *o;
	const char *k;

	if (level < min_level)
		return;
	o = base(level, msg);
	va_start(ap, msg);
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);
		json_object_set_new(o, k, v ? safe_string(v) : json_null());
	}
	va_end(ap);
	emit(o);
}

/* Appends s as a JSON string body: printable ASCII as is (with " and \
 * escaped), other bytes percent-escaped as in safe_string(). Bounded.
 */
static size_t put_str(char *out, size_t at, size_t cap, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; s && *s && at + 8 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c >= 0x7f) {
			out[at++] = '%';
			out[at++] = hex[c >> 4];
			out[at++] = hex[c & 15];
		} else {
			if (c == '"' || c == '\\')
				out[at++] = '\\';
			out[at++] = (char)c;
		}
	}
	return at;
}

/* The request line is the hot path of logging (one per request): built
 * with snprintf and one write(2), not through jansson and stdio, which
 * cost a third of the throughput of the lightest endpoints (measured with
 * wrk on /healthz).
 */
void log_request_line(const struct log_request *r)
{
	char line[2048], ts[64];
	size_t at = 0;
	int n;

	if (LOG_INFO < min_level)
		return;
	timestamp(ts);
	n = snprintf(line, sizeof(line),
		     "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"request\","
		     "\"method\":\"",
		     ts, r->status >= 500 ? "error" : "info");
	at = (size_t)n;
	at = put_str(line, at, sizeof(line) - 600, r->method);
	at += (size_t)snprintf(line + at, sizeof(line) - at, "\",\"path\":\"");
	at = put_str(line, at, sizeof(line) - 512, r->path);
	at += (size_t)snprintf(line + at, sizeof(line) - at, "\",\"route\":\"");
	at = put_str(line, at, sizeof(line) - 400, r->route);
	at += (size_t)snprintf(line + at, sizeof(line) - at,
			       "\",\"status\":%d,\"duration_ms\":%.3f,"
			       "\"request_id\":\"",
			       r->status, r->duration_ms);
	at = put_str(line, at, sizeof(line) - 300, r->request_id);
	if (r->token_name && *r->token_name) {
		at += (size_t)snprintf(line + at, sizeof(line) - at,
				       "\",\"token_name\":\"");
		at = put_str(line, at, sizeof(line) - 200, r->token_name);
	}
	if (r->detail && *r->detail) {
		at += (size_t)snprintf(line + at, sizeof(line) - at,
				       "\",\"detail\":\"");
		at = put_str(line, at, sizeof(line) - 4, r->detail);
	}
	line[at++] = '"';
	line[at++] = '}';
	line[at++] = '\n';
	pthread_mutex_lock(&log_mu);
	if (write(STDERR_FILENO, line, at) < 0) {
		/* Nowhere left to report it. */
	}
	pthread_mutex_unlock(&log_mu);
}

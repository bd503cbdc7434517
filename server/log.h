/* log.h - one JSON object per line on stderr.
 *
 * Messages follow the PostgreSQL/git rules: lowercase, no trailing period,
 * what failed then why. Tokens are never passed here.
 */
#ifndef GPUSIZER_SERVER_LOG_H
#define GPUSIZER_SERVER_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Messages below min are dropped before formatting. */
void log_set_level(enum log_level min);
/* Parses "debug|info|warn|error"; -1 when unknown. */
int log_level_parse(const char *s);

/* A free-form event: {"ts","level","msg"} plus optional string pairs
 * (key, value, ..., NULL).
 */
void log_event(enum log_level level, const char *msg, ...)
    __attribute__((sentinel));

struct log_request {
	const char *method;
	const char *path;
	const char *route; /* the matched pattern, or "unmatched" */
	int status;
	double duration_ms;
	const char *request_id;
	const char *token_name; /* the token's name, never its value */
	const char *detail;	/* internal error detail, or NULL */
};
void log_request_line(const struct log_request *r);

#endif

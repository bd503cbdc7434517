/* Delivering reports: libcurl POST with retries and backoff, and the
 * spool around it (plain C). */
#ifndef GPUSIZER_PROBE_POST_H
#define GPUSIZER_PROBE_POST_H

#include <stdio.h>
#include <stddef.h>

struct probe_post_opts {
	const char *server;	 /* base URL; "/v1/benchmarks" is appended */
	const char *token;	 /* bearer token or NULL (never logged) */
	long timeout_ms;	 /* CURLOPT_TIMEOUT_MS per attempt */
	long connect_timeout_ms; /* CURLOPT_CONNECTTIMEOUT_MS */
	int retries;		 /* attempts after the first */
	long backoff_ms;	 /* delay before the first retry */
	long backoff_max_ms;	 /* cap on one delay */
	FILE *log;		 /* progress lines, or NULL */
};

enum probe_post_outcome {
	PROBE_POST_DELIVERED = 0, /* 2xx */
	PROBE_POST_RETRY = 1,	  /* network error, 408, 429, 5xx: keep */
	PROBE_POST_REJECTED = 2,  /* other 4xx: the server refused it */
	PROBE_POST_KEEP = 3,	  /* 1xx/3xx/odd: keep, do not retry now */
	/* 401/403: the node's token is missing, wrong, revoked or lacks the
	 * probe scope; 404/405/421: --server leads to no benchmarks endpoint
	 * (a path, a proxy prefix). The report is fine: keep it spooled,
	 * and fail loudly (exit 7) so that the setup error shows at once. */
	PROBE_POST_UNAUTHORIZED = 4,
};

/* Why the last attempt got no HTTP answer (http_status 0), for the log
 * (review s25c K1: an empty reply was logged "cannot be reached"). */
enum probe_post_noanswer {
	PROBE_NOANSWER_NONE = 0,    /* an HTTP answer, or a setup refusal */
	PROBE_NOANSWER_UNREACHABLE, /* no connection (DNS, refused, timeout) */
	PROBE_NOANSWER_EMPTY,	    /* connected; closed with no answer */
	PROBE_NOANSWER_TIMEOUT,	    /* connected; no answer in timeout_ms */
	PROBE_NOANSWER_BROKEN,	    /* connected; reset, send/receive error */
};

struct probe_post_result {
	enum probe_post_outcome outcome;
	long http_status; /* 0: no HTTP answer */
	enum probe_post_noanswer noanswer;
	int attempts;
	long retry_after_s; /* the last answer's Retry-After; 0: none */
	char message[512];
};

/* The http_status of an attempt that libcurl refused for a reason no
 * retry fixes (review s24g G4): an unsupported or malformed URL, a TLS
 * certificate that does not verify. Classified as the node's setup. */
#define PROBE_STATUS_SETUP (-1L)

/* For a PROBE_POST_UNAUTHORIZED status: what went wrong ("TOKEN REFUSED
 * by the server", or the server URL) and how to fix it, for the log. */
const char *probe_post_setup_what(long http_status);
const char *probe_post_setup_fix(long http_status);

/* Outcome of one HTTP status (0 = transport failure). */
enum probe_post_outcome probe_post_classify(long http_status);

/* Delay before retry number attempt (0-based): base x 2^attempt, capped. */
long probe_backoff_ms(int attempt, long base_ms, long max_ms);

/* "http://h:1/x/" -> "http://h:1/x/v1/benchmarks". 0 or -1 (too long). */
int probe_benchmarks_url(const char *server, char *out, size_t outlen);

/* POSTs body (application/json) with retries on PROBE_POST_RETRY, each
 * after the backoff or the answer's Retry-After, the longer, capped at
 * o->backoff_max_ms.
 * curl_global_init must have been called. Returns the final outcome. */
enum probe_post_outcome probe_post(const struct probe_post_opts *o,
				   const char *body, size_t len,
				   struct probe_post_result *res);

/* Posts one report; on RETRY/KEEP/UNAUTHORIZED writes it to the spool, on
 * REJECTED to
 * spool/rejected/ (and says so on o->log). run_id names the spool file.
 * On DELIVERED a spooled copy of the same report (spool/<run_id>.json, an
 * earlier try) is removed.
 * Returns the outcome; *spool_failed set when the spool write failed. */
enum probe_post_outcome probe_deliver(const struct probe_post_opts *o,
				      const char *spool_dir, const char *run_id,
				      const char *body, size_t len,
				      int *spool_failed);

struct probe_flush_counts {
	int delivered, kept, rejected, unreadable;
	int unauthorized; /* kept because the token was refused */
	int busy; /* another probe held the spool's flush lock: left to it */
	/* the spool directory is a symbolic link, not the effective uid's,
	 * or writable by group or others, or its lock file is unusable:
	 * nothing was read or sent */
	int refused;
};

/* Resends every spooled report, oldest first: 2xx deletes it, a rejecting
 * 4xx moves it to rejected/ (when rejected/ cannot take it, it stays,
 * counted as unreadable), anything else keeps it (and stops the flush
 * after a failure with no HTTP answer, since the rest would fare the same,
 * a 5xx after the report's retries, since the server or a proxy before it
 * is failing (review s24g G7), a 429 or 503, since it asks clients to
 * back off, or a refused token or URL, which refuses the rest too). The
 * report that stops the flush, whatever the reason, goes last in the
 * next flush's order (probe_spool_to_back, review s25c K1); when it cannot
 * be put last, the flush goes on to the next report instead of stopping
 * on it (K2). A spooled file that is not a regular file (links are not
 * followed), is over 8 MiB, or is not JSON the probe_report_check accepts
 * is not sent: moved to rejected/ (review s24g G11). Every log line is
 * shown text (names and messages cleaned, review s25c K6).
 * Returns 0; -1 when the spool could not be listed, or when its directory
 * or its lock (SPOOL/.flush.lock: not a regular file, cannot be opened) is
 * refused (counts->refused, nothing sent). */
int probe_flush_spool(const struct probe_post_opts *o, const char *spool_dir,
		      struct probe_flush_counts *counts);

#endif

#define _POSIX_C_SOURCE 200809L
#include "post.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contract.h"
#include "report_check.h"
#include "spool.h"
#include "util.h"

enum probe_post_outcome probe_post_classify(long s)
{
	if (s >= 200 && s <= 299)
		return PROBE_POST_DELIVERED;
	if (s == 0 || s == 408 || s == 429 || (s >= 500 && s <= 599))
		return PROBE_POST_RETRY;
	/* A missing, revoked or under-scoped token is the node's setup, not
	 * the report's fault: keep it spooled until the token is fixed, and
	 * fail loudly (exit 7).
	 */
	if (s == 401 || s == 403)
		return PROBE_POST_UNAUTHORIZED;
	/* No such endpoint or method there: --server is wrong (a path, a
	 * proxy prefix) or an ingress is mid-deploy. The node's setup too:
	 * the report must not be moved to rejected/ for it. */
	if (s == 404 || s == 405 || s == 421)
		return PROBE_POST_UNAUTHORIZED;
	/* A URL libcurl cannot use or a certificate that does not verify
	 * (PROBE_STATUS_SETUP), or a redirect (the probe follows none, as a
	 * POST must not be replayed elsewhere unasked: http:// to https://,
	 * a moved host): no retry fixes them, and exit 5 would read as
	 * success to systemd and Slurm (review s24g G4). */
	if (s == PROBE_STATUS_SETUP || (s >= 300 && s <= 399))
		return PROBE_POST_UNAUTHORIZED;
	if (s >= 400 && s <= 499)
		return PROBE_POST_REJECTED;
	return PROBE_POST_KEEP;
}

/* What a refused setup status means and how to fix it: the first row
 * whose range holds the status (the last row, every other one). */
static const struct {
	long lo, hi;
	const char *what, *fix;
} setup_refusals[] = {
    {401, 401, "TOKEN REFUSED by the server",
     "fix the token (--token-file, probe scope)"},
    {403, 403, "TOKEN REFUSED by the server",
     "fix the token (--token-file, probe scope)"},
    {PROBE_STATUS_SETUP, PROBE_STATUS_SETUP,
     "SERVER URL WRONG: refused before any answer",
     "fix --server (scheme, host, port) or the server's TLS certificate"},
    {300, 399, "SERVER URL WRONG: it redirects elsewhere",
     "set --server to the URL it redirects to"},
    {0, 0, "SERVER URL WRONG: no benchmarks endpoint there",
     "fix --server (the daemon's base URL, without /v1)"},
};
#define N_SETUP_REFUSALS (sizeof(setup_refusals) / sizeof(setup_refusals[0]))

static size_t setup_refusal(long http_status)
{
	size_t i = 0;

	while (i + 1 < N_SETUP_REFUSALS &&
	       !(http_status >= setup_refusals[i].lo &&
		 http_status <= setup_refusals[i].hi))
		i++;
	return i;
}

const char *probe_post_setup_what(long http_status)
{
	return setup_refusals[setup_refusal(http_status)].what;
}

const char *probe_post_setup_fix(long http_status)
{
	return setup_refusals[setup_refusal(http_status)].fix;
}

long probe_backoff_ms(int attempt, long base_ms, long max_ms)
{
	long d = base_ms;
	int i;

	if (base_ms <= 0)
		return 0;
	for (i = 0; i < attempt && d < max_ms; i++)
		d *= 2;
	return d > max_ms ? max_ms : d;
}

int probe_benchmarks_url(const char *server, char *out, size_t outlen)
{
	size_t n = strlen(server);
	int w;

	while (n > 0 && server[n - 1] == '/')
		n--;
	w = snprintf(out, outlen, "%.*s/v1/benchmarks", (int)n, server);
	return (w < 0 || (size_t)w >= outlen) ? -1 : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

struct sink {
	char buf[1024];
	size_t len;
};

static size_t sink_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb, room = sizeof(s->buf) - 1 - s->len;

	if (n < room)
		room = n;
	memcpy(s->buf + s->len, ptr, room);
	s->len += room;
	s->buf[s->len] = '\0';
	return n;
}

/* Control characters of s shown as '?': one line of the log, whatever a
 * server or a spooled file holds (review s24g G8). */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* One line of the delivery's log on o->log (when set): "probe: ", fmt's
 * text, a newline. Every character shown text refuses (a control
 * character, a line separator, a bidirectional override) is shown as '?',
 * whatever a spool file's name, an error string or a server's detail
 * holds (review s25c K6: a spool file named "a\nprobe: ... delivered"
 * forged a line; review s24g G8). */
static void log_line(const struct probe_post_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void log_line(const struct probe_post_opts *o, const char *fmt, ...)
{
	char line[8192];
	va_list ap;

	if (o->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	probe_shown_text_clean(line);
	fprintf(o->log, "probe: %s\n", line);
}

/* The "detail" (RFC 9457) or the first line of the answer body. */
static void body_summary(const char *body, char *out, size_t outlen)
{
	json_t *j = json_loads(body, 0, NULL);
	const char *d = NULL;

	if (j) {
		d = json_string_value(json_object_get(j, "detail"));
		if (d == NULL)
			d = json_string_value(json_object_get(j, "title"));
	}
	if (d) {
		probe_strlcpy(out, d, outlen);
	} else {
		probe_strlcpy(out, body, outlen);
		out[strcspn(out, "\r\n")] = '\0';
	}
	/* one line of the log, whatever the server sent: control characters
	 * (a newline forging a "probe:" line, terminal escapes) shown as '?'
	 * (review s24g G8) */
	one_line(out);
	json_decref(j);
}

/* Why a transfer that ended with rc got no answer: whether a connection
 * was made (libcurl's connect time) and how it ended. */
static enum probe_post_noanswer noanswer_of(CURL *c, CURLcode rc)
{
	curl_off_t connect_us = 0;

	if (rc == CURLE_GOT_NOTHING)
		return PROBE_NOANSWER_EMPTY;
	if (rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY || rc == CURLE_COULDNT_CONNECT)
		return PROBE_NOANSWER_UNREACHABLE;
	if (curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us) !=
		CURLE_OK ||
	    connect_us <= 0)
		return PROBE_NOANSWER_UNREACHABLE;
	return rc == CURLE_OPERATION_TIMEDOUT ? PROBE_NOANSWER_TIMEOUT
					      : PROBE_NOANSWER_BROKEN;
}

static long one_attempt(const struct probe_post_opts *o, const char *url,
			const char *body, size_t len, char *msg, size_t msglen,
			long *retry_after_s, enum probe_post_noanswer *noanswer)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct sink sink = {.len = 0};
	char auth[4200], errbuf[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	if (c == NULL) {
		snprintf(msg, msglen, "curl_easy_init failed");
		*noanswer = PROBE_NOANSWER_UNREACHABLE;
		return 0;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	if (o->token && *o->token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
			 o->token);
		h = curl_slist_append(h, auth);
		memset(auth, 0, sizeof(auth));
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "gpusizer-probe");
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		snprintf(msg, msglen, "%s",
			 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		status = rc == CURLE_UNSUPPORTED_PROTOCOL ||
				 rc == CURLE_URL_MALFORMAT ||
				 rc == CURLE_PEER_FAILED_VERIFICATION ||
				 rc == CURLE_SSL_CACERT_BADFILE
			     ? PROBE_STATUS_SETUP
			     : 0;
		*noanswer =
		    status == 0 ? noanswer_of(c, rc) : PROBE_NOANSWER_NONE;
	} else {
		char summary[400];
		curl_off_t ra = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		/* delta-seconds or an HTTP date, read by libcurl; 0: none */
		if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) ==
			CURLE_OK &&
		    ra > 0)
			*retry_after_s = ra > 86400 ? 86400 : (long)ra;
		body_summary(sink.buf, summary, sizeof(summary));
		snprintf(msg, msglen, "HTTP %ld%s%s", status,
			 summary[0] ? ": " : "", summary);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

/* url for the log, a password in it (http://user:secret@host/) shown as
 * "***" (review s24g G14: it was printed in every retry line). */
static void url_for_log(const char *url, char *out, size_t outlen)
{
	const char *auth = strstr(url, "://"), *at, *colon;

	probe_strlcpy(out, url, outlen);
	if (!auth)
		return;
	auth += 3;
	at = strchr(auth, '@');
	if (!at || (strchr(auth, '/') && strchr(auth, '/') < at))
		return;
	colon = memchr(auth, ':', (size_t)(at - auth));
	if (colon)
		snprintf(out, outlen, "%.*s***%s", (int)(colon + 1 - url), url,
			 at);
}

enum probe_post_outcome probe_post(const struct probe_post_opts *o,
				   const char *body, size_t len,
				   struct probe_post_result *res)
{
	char url[4200];
	int attempt;

	memset(res, 0, sizeof(*res));
	if (probe_benchmarks_url(o->server, url, sizeof(url))) {
		snprintf(res->message, sizeof(res->message),
			 "server URL too long");
		res->outcome = PROBE_POST_KEEP;
		return res->outcome;
	}
	for (attempt = 0;; attempt++) {
		long retry_after_s = 0;

		res->noanswer = PROBE_NOANSWER_NONE;
		res->http_status = one_attempt(o, url, body, len, res->message,
					       sizeof(res->message),
					       &retry_after_s, &res->noanswer);
		res->retry_after_s = retry_after_s;
		res->attempts = attempt + 1;
		res->outcome = probe_post_classify(res->http_status);
		if (res->outcome != PROBE_POST_RETRY || attempt >= o->retries)
			break;
		long cap = o->backoff_max_ms > 0 ? o->backoff_max_ms : 60000;
		long d = probe_backoff_ms(attempt, o->backoff_ms, cap);
		/* the server's Retry-After, when longer, within the cap */
		if (retry_after_s * 1000 > d)
			d = retry_after_s * 1000 > cap ? cap
						       : retry_after_s * 1000;
		if (o->log) {
			char shown[sizeof(url)];

			url_for_log(url, shown, sizeof(shown));
			log_line(
			    o, "POST %s failed (%s); retry %d/%d in %ld ms",
			    shown, res->message, attempt + 1, o->retries, d);
		}
		sleep_ms(d);
	}
	return res->outcome;
}

/* After a 2xx for run_id: removes SPOOL/<run_id>.json when it holds the
 * same report (an earlier try of this --post that was spooled), so the
 * next run does not send it again (review s16b F5). A different report
 * under the same run_id is left for the flush, whose 409 moves it to
 * rejected/ with the server's word rather than deleting it unseen. A
 * spool directory probe_spool_dir_check refuses is not read.
 * Returns 0 when nothing was there or it was removed, else -1 (logged;
 * the report itself was delivered). */
static int drop_spooled_copy(const struct probe_post_opts *o,
			     const char *spool_dir, const char *run_id,
			     const char *body, size_t len)
{
	char name[128], path[4400], err[512];
	json_t *a = NULL, *b = NULL;
	size_t slen = 0;
	char *spooled = NULL;
	int rc = 0, same;

	if (probe_spool_dir_check(spool_dir, "nothing read from it", err,
				  sizeof(err)) != 0)
		goto out; /* missing: nothing there; refused: not ours */
	snprintf(name, sizeof(name), "%s.json", run_id);
	snprintf(path, sizeof(path), "%s/%s", spool_dir, name);
	spooled = probe_read_file_nofollow(path, &slen);
	if (spooled == NULL) /* none: the usual case */
		goto out;
	same = slen == len && memcmp(spooled, body, len) == 0;
	if (!same) {
		/* the same report written otherwise (pretty vs compact) */
		a = json_loadb(spooled, slen, 0, NULL);
		b = json_loadb(body, len, 0, NULL);
		same = a && b && json_equal(a, b);
	}
	if (!same) {
		log_line(o,
			 "spooled %s differs from the report delivered under "
			 "its run_id; kept for the next flush",
			 name);
		rc = -1;
		goto out;
	}
	if (probe_spool_remove(spool_dir, name, err, sizeof(err))) {
		log_line(o, "%s", err);
		rc = -1;
		goto out;
	}
	log_line(o, "spooled copy %s removed (delivered now)", name);
out:
	json_decref(a);
	json_decref(b);
	free(spooled);
	return rc;
}

enum probe_post_outcome probe_deliver(const struct probe_post_opts *o,
				      const char *spool_dir, const char *run_id,
				      const char *body, size_t len,
				      int *spool_failed)
{
	struct probe_post_result res;
	char err[512], rdir[4200];
	enum probe_post_outcome out = probe_post(o, body, len, &res);

	*spool_failed = 0;
	if (out == PROBE_POST_DELIVERED) {
		log_line(o, "report %s delivered (%s)", run_id, res.message);
		drop_spooled_copy(o, spool_dir, run_id, body, len);
		return out;
	}
	if (out == PROBE_POST_REJECTED) {
		snprintf(rdir, sizeof(rdir), "%s/rejected", spool_dir);
		/* rejected/ of a spool the flush refuses is not written to
		 * either (review s25c K5) */
		if (probe_spool_dir_check(spool_dir, "nothing written to it",
					  err, sizeof(err)) < 0 ||
		    probe_spool_write(rdir, run_id, body, len, err,
				      sizeof(err))) {
			*spool_failed = 1;
			log_line(o,
				 "report %s REJECTED by the server (%s); could "
				 "not keep a copy: %s",
				 run_id, res.message, err);
		} else {
			log_line(o,
				 "report %s REJECTED by the server (%s); kept "
				 "in %s/%s.json",
				 run_id, res.message, rdir, run_id);
		}
		return out;
	}
	if (out == PROBE_POST_UNAUTHORIZED)
		log_line(o,
			 "%s (%s): %s; the report stays in the spool and goes "
			 "with the next run",
			 probe_post_setup_what(res.http_status), res.message,
			 probe_post_setup_fix(res.http_status));
	/* probe_spool_write refuses a spool the flush would refuse (review
	 * s25c K5): neither delivered nor spooled, and said so */
	if (probe_spool_write(spool_dir, run_id, body, len, err, sizeof(err))) {
		*spool_failed = 1;
		log_line(o, "report %s not delivered (%s) and NOT spooled: %s",
			 run_id, res.message, err);
	} else {
		log_line(o,
			 "report %s not delivered (%s); spooled in %s/%s.json",
			 run_id, res.message, spool_dir, run_id);
	}
	return out;
}

/* Takes the spool's flush lock (SPOOL/.flush.lock, an fcntl write lock,
 * freed when the descriptor closes or the process ends): its descriptor;
 * -2 when another probe holds it (review s24g G13: two flushes at once
 * posted every report twice and logged each other's removals as errors);
 * -1 with a message when there is no lock to take (review s25c K7: a
 * directory, a symbolic link or another non-file there, or a lock that
 * cannot be created, let the flush run unlocked and unsaid): the caller
 * refuses the spool. */
static int flush_lock(const char *spool_dir, char *err, size_t errlen)
{
	char path[4400];
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	struct stat st;
	int fd, e;

	snprintf(path, sizeof(path), "%s/.flush.lock", spool_dir);
	fd = open(path,
		  O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
		      O_NOCTTY,
		  0600);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP || e == EISDIR || e == ENXIO)
			snprintf(err, errlen,
				 "spool lock %s is %s, not a regular file: "
				 "nothing sent from the spool; remove it (the "
				 "probe creates it)",
				 path,
				 e == ELOOP    ? "a symbolic link"
				 : e == EISDIR ? "a directory"
					       : "a socket or device");
		else
			snprintf(err, errlen,
				 "cannot open spool lock %s: %s: nothing sent "
				 "from the spool",
				 path, strerror(e));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen,
			 "spool lock %s is not a regular file: nothing sent "
			 "from the spool; remove it (the probe creates it)",
			 path);
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		e = errno;
		close(fd);
		if (e == EACCES || e == EAGAIN)
			return -2;
		snprintf(err, errlen,
			 "cannot lock spool lock %s: %s: nothing sent from "
			 "the spool",
			 path, strerror(e));
		return -1;
	}
	return fd;
}

/* Moves SPOOL/name, which no flush will send (what: "not sent (why)") or
 * the server rejected (what: "REJECTED by the server (answer)"), to
 * rejected/ with a line naming it and what: counted as rejected (exit 6).
 * When it cannot be moved (rejected/ is a file, a link, another's), it
 * stays in the spool, said so, counted as unreadable (exit 5), the same
 * for both (review s25c K4: a false "moved" line, exit 6). */
static void reject_spooled(const struct probe_post_opts *o,
			   const char *spool_dir, const char *name,
			   const char *what, struct probe_flush_counts *counts)
{
	char err[512];

	if (probe_spool_reject(spool_dir, name, err, sizeof(err)) == 0) {
		counts->rejected++;
		log_line(o, "spooled %s %s: moved to %s/rejected/", name, what,
			 spool_dir);
		return;
	}
	counts->unreadable++;
	log_line(o,
		 "spooled %s %s: NOT moved (%s); it stays in the spool (exit "
		 "5)",
		 name, what, err);
}

/* Reads SPOOL/name when the server could take it: a regular file (a
 * symbolic link is not followed) of at most 8 MiB, JSON, that
 * probe_report_check accepts, as --post FILE is checked (review s24g
 * G11). Returns 0 with *body (malloc'd, the caller's) and *len; 1 when the
 * file is gone (another probe's --post delivered it); -1 with why when it
 * is not to be sent. */
static int read_spooled(const char *spool_dir, const char *name, char **body,
			size_t *len, char *why, size_t whylen)
{
	char path[4400], err[512], *text;
	json_error_t je;
	json_t *j = NULL;
	int rc = -1, e;

	*body = NULL;
	snprintf(path, sizeof(path), "%s/%s", spool_dir, name);
	text = probe_read_file_nofollow(path, len);
	if (text == NULL) {
		e = errno;
		if (e == ENOENT) {
			rc = 1;
			goto out;
		}
		snprintf(why, whylen, "%s",
			 e == ELOOP    ? "a symbolic link, not followed"
			 : e == EINVAL ? "not a regular file"
			 : e == EFBIG  ? "larger than 8 MiB"
				       : strerror(e));
		goto out;
	}
	j = json_loadb(text, *len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL) {
		snprintf(why, whylen, "not JSON: line %d: %s", je.line,
			 je.text);
		goto out;
	}
	if (probe_report_check(j, err, sizeof(err)) != 0) {
		snprintf(why, whylen, "not a probe report: %s", err);
		goto out;
	}
	*body = text; /* ownership to the caller */
	text = NULL;
	rc = 0;
out:
	json_decref(j);
	free(text);
	return rc;
}

/* Why the flush stops after a report kept with res (the rest would fare
 * the same), written to why; 0 when it goes on to the next report. A
 * failure with no answer says what happened (review s25c K1: an empty
 * reply or a timeout was "the server cannot be reached"). */
static int flush_stops(const struct probe_post_result *res, char *why,
		       size_t whylen)
{
	static const char *const noanswer[][2] = {
	    [PROBE_NOANSWER_NONE] = {"no answer", "the server gave none"},
	    [PROBE_NOANSWER_UNREACHABLE] = {"no connection",
					    "the server cannot be reached"},
	    [PROBE_NOANSWER_EMPTY] = {"empty reply",
				      "the server closed the connection "
				      "without an answer"},
	    [PROBE_NOANSWER_TIMEOUT] = {"timeout",
					"the server was reached but gave no "
					"answer within --timeout-ms"},
	    [PROBE_NOANSWER_BROKEN] = {"no answer",
				       "the connection failed after the "
				       "server was reached"},
	};
	long s = res->http_status;
	const char *att = res->attempts == 1 ? "attempt" : "attempts";

	if (res->outcome == PROBE_POST_UNAUTHORIZED) {
		snprintf(why, whylen, "%s", probe_post_setup_what(s));
		return 1;
	}
	if (res->outcome != PROBE_POST_RETRY)
		return 0;
	if (s == 0) {
		unsigned k = (unsigned)res->noanswer;

		if (k >= sizeof(noanswer) / sizeof(noanswer[0]))
			k = PROBE_NOANSWER_NONE;
		snprintf(why, whylen, "%s after %d %s: %s", noanswer[k][0],
			 res->attempts, att, noanswer[k][1]);
		return 1;
	}
	if (s == 429 || s == 503) {
		snprintf(why, whylen,
			 "the server asks clients to back off (HTTP %ld)", s);
		return 1;
	}
	/* review s24g G7: a proxy whose backend is down answers 502 or 504
	 * to every report; retrying each one cost 15 s a file, hours for a
	 * spool of a week */
	if (s >= 500 && s <= 599) {
		snprintf(
		    why, whylen,
		    "HTTP %ld after %d %s: the server or a proxy before it "
		    "is failing",
		    s, res->attempts, att);
		return 1;
	}
	return 0; /* 408: this report's upload timed out */
}

int probe_flush_spool(const struct probe_post_opts *o, const char *spool_dir,
		      struct probe_flush_counts *counts)
{
	char **names = NULL, err[4608], why[1024], what[1100];
	size_t n = 0, i;
	int lock = -1, rc = 0;

	memset(counts, 0, sizeof(*counts));
	switch (probe_spool_dir_check(spool_dir, "nothing sent from it", err,
				      sizeof(err))) {
	case 0:
		break;
	case 1: /* no spool yet: nothing to flush */
		goto out;
	default: /* a link, another's, writable by others: sends nothing */
		counts->refused = 1;
		log_line(o, "%s", err);
		rc = -1;
		goto out;
	}
	lock = flush_lock(spool_dir, err, sizeof(err));
	if (lock == -2) {
		counts->busy = 1;
		log_line(o,
			 "another probe is flushing %s; its reports are left "
			 "to it",
			 spool_dir);
		goto out;
	}
	if (lock < 0) { /* review s25c K7: never a flush without the lock */
		counts->refused = 1;
		log_line(o, "%s", err);
		rc = -1;
		goto out;
	}
	if (probe_spool_list(spool_dir, &names, &n, err, sizeof(err))) {
		log_line(o, "%s", err);
		rc = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct probe_post_result res;
		size_t len = 0;
		char *body = NULL; /* owned here, freed at the loop's end */
		int r = read_spooled(spool_dir, names[i], &body, &len, why,
				     sizeof(why)),
		    stops;

		if (r == 1)
			continue;
		if (r != 0) {
			/* no flush will send it, so it goes where a rejected
			 * report goes, named, rather than keep every flush at
			 * exit 5 unsaid (review s24g G12) or be sent as it is
			 * (G11) */
			snprintf(what, sizeof(what), "not sent (%s)", why);
			reject_spooled(o, spool_dir, names[i], what, counts);
			continue;
		}
		switch (probe_post(o, body, len, &res)) {
		case PROBE_POST_DELIVERED:
			if (probe_spool_remove(spool_dir, names[i], err,
					       sizeof(err)))
				log_line(o, "%s", err);
			counts->delivered++;
			log_line(o, "spooled %s delivered (%s)", names[i],
				 res.message);
			break;
		case PROBE_POST_REJECTED:
			snprintf(what, sizeof(what),
				 "REJECTED by the server (%s)", res.message);
			reject_spooled(o, spool_dir, names[i], what, counts);
			break;
		case PROBE_POST_UNAUTHORIZED:
			counts->kept++;
			counts->unauthorized++;
			log_line(o, "spooled %s kept: %s (%s)", names[i],
				 probe_post_setup_what(res.http_status),
				 res.message);
			break;
		default:
			counts->kept++;
			log_line(o, "spooled %s kept (%s)", names[i],
				 res.message);
			break;
		}
		stops = flush_stops(&res, why, sizeof(why));
		if (stops) {
			/* The report that stops the flush goes last in the
			 * next flush's order, whatever stopped it (a 500 of
			 * the server's own, an empty reply, a timeout: review
			 * s25c K1), so that it does not hold up the others
			 * for ever. When it cannot be put last, stopping on it
			 * would stop every later flush on it too (K2): the
			 * flush goes on to the next report instead. */
			int back = probe_spool_to_back(
			    spool_dir, names[i], body, len, err, sizeof(err));
			if (back == 1)
				log_line(o,
					 "spooled %s rewritten to go last "
					 "(its mtime could not be set)",
					 names[i]);
			if (back < 0) {
				log_line(o,
					 "%s: spooled %s cannot be put last, "
					 "so the flush goes on to the next "
					 "report (%s)",
					 err, names[i], why);
				stops = 0;
			}
		}
		free(body);
		if (stops) {
			/* Unreachable, failing, asking clients to back off,
			 * or the token or URL is refused: the rest would fare
			 * the same; keep them for the next run, rather than
			 * retrying each of them against a server that is down
			 * or said to wait. */
			size_t left = n - i - 1;

			counts->kept += (int)left;
			if (left > 0)
				log_line(o,
					 "flush of %s stopped (%s): %zu more "
					 "spooled report%s left for the next "
					 "run",
					 spool_dir, why, left,
					 left == 1 ? "" : "s");
			break;
		}
	}
out:
	probe_spool_list_free(names, n);
	if (lock >= 0)
		close(lock);
	return rc;
}

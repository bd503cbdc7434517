/* Unit tests of gpusizer-probe's delivery: the spool, HTTP posting with
 * retries (against an in-process HTTP server on 127.0.0.1), flushing the
 * spool, and what a refusal keeps. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <time.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "post.h"
#include "report.h"
#include "spool.h"
#include "testlib.h"
#include "util.h"

#include "probe_fixtures.h"

/* ---- spool --------------------------------------------------------- */

static char *tmpdir(void)
{
	static char buf[64];

	strcpy(buf, "/tmp/probe-spool-XXXXXX");
	return mkdtemp(buf);
}

static int count_files(const char *dir)
{
	char **names;
	size_t n;
	char err[256];

	if (probe_spool_list(dir, &names, &n, err, sizeof(err)))
		return -1;
	probe_spool_list_free(names, n);
	return (int)n;
}

/* A report the checker takes (probe_fixtures.h), under run_id id, as
 * compact text (caller frees): the flush sends only such files. */
static char *report_text(const char *id)
{
	struct probe_report r;
	char *text;

	make_report(&r);
	probe_strlcpy(r.run_id, id, sizeof(r.run_id));
	text = probe_report_dumps(&r);
	probe_report_free(&r);
	CHECK(text != NULL);
	return text;
}

/* Spools report_text(id) as DIR/<id>.json, with mtime mtime_s when > 0.
 * 0 or -1. */
static int spool_report(const char *dir, const char *id, time_t mtime_s)
{
	char err[256], path[256], *text = report_text(id);
	struct timespec t[2] = {{mtime_s, 0}, {mtime_s, 0}};
	int rc = -1;

	if (text == NULL)
		return -1;
	if (probe_spool_write(dir, id, text, strlen(text), err, sizeof(err)))
		goto out;
	snprintf(path, sizeof(path), "%s/%s.json", dir, id);
	if (mtime_s > 0 && utimensat(AT_FDCWD, path, t, 0) != 0)
		goto out;
	rc = 0;
out:
	free(text);
	return rc;
}

/* The run ids of the flush tests' spooled reports, oldest first. */
static const char *const ids[3] = {"3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
				   "c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31",
				   "0e6a2b7c-1d3f-4a5b-9c8d-7e6f5a4b3c2d"};

/* Removes DIR and everything under it. */
static void rm_rf(const char *dir)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

static void test_spool(void)
{
	char *base = tmpdir(), dir[128], err[256], path[256];
	const char *id1 = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	const char *id2 = "c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31";
	char **names;
	size_t n, len;
	struct stat st;
	struct timespec old[2] = {{1000, 0}, {1000, 0}};
	char *text;

	CHECK(base != NULL);
	snprintf(dir, sizeof(dir), "%s/a/b", base);
	CHECK(count_files(dir) == 0); /* missing dir = empty */
	CHECK(probe_spool_write(dir, id2, "{\"x\":2}", 7, err, sizeof(err)) ==
	      0);
	CHECK(probe_spool_write(dir, id1, "{\"x\":1}", 7, err, sizeof(err)) ==
	      0);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* id1 older by mtime -> listed first although written second */
	snprintf(path, sizeof(path), "%s/%s.json", dir, id1);
	CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
	CHECK(probe_spool_list(dir, &names, &n, err, sizeof(err)) == 0);
	CHECK(n == 2);
	if (n == 2) {
		CHECK(strncmp(names[0], id1, 36) == 0);
		CHECK(strncmp(names[1], id2, 36) == 0);
	}
	probe_spool_list_free(names, n);
	text = probe_read_file(path, &len);
	CHECK(text && len == 7 && strcmp(text, "{\"x\":1}") == 0);
	free(text);
	/* no temporary left behind; dot files are not listed */
	snprintf(path, sizeof(path), "%s/.hidden.json", dir);
	CHECK(probe_write_atomic(path, "{}", 2, err, sizeof(err)) == 0);
	CHECK(count_files(dir) == 2);
	/* refuse a run_id that is not a UUID (it names the file) */
	CHECK(probe_spool_write(dir, "../../evil", "{}", 2, err, sizeof(err)) ==
	      -1);
	CHECK(probe_spool_remove(dir, "../x.json", err, sizeof(err)) == -1);
	/* reject moves, remove deletes */
	snprintf(path, sizeof(path), "%s.json", id2);
	CHECK(probe_spool_reject(dir, path, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/rejected/%s.json", dir, id2);
	CHECK(stat(path, &st) == 0);
	CHECK(count_files(dir) == 1);
	snprintf(path, sizeof(path), "%s.json", id1);
	CHECK(probe_spool_remove(dir, path, err, sizeof(err)) == 0);
	CHECK(count_files(dir) == 0);
	CHECK(probe_spool_remove(dir, path, err, sizeof(err)) == -1);
	rm_rf(base);
}

/* ---- posting, against a scripted HTTP server ------------------------ */

/* A fake server's answers: an HTTP status, or one of these. */
#define FAKE_CLOSE 0	/* the connection shut without an answer */
#define FAKE_SLEEP (-1) /* no answer for 600 ms, then shut */

struct fake_server {
	int fd, port;
	int statuses[8], nstatus, served;
	char posted[8][40]; /* each request's run_id, in order */
	char last_request[8192];
	char last_auth[256];
	char last_path[128];
	size_t last_body_len;
	pthread_t t;
};

static void *fake_main(void *arg)
{
	struct fake_server *s = arg;

	while (s->served < s->nstatus) {
		char buf[8192];
		size_t got = 0;
		long clen = -1;
		int c = accept(s->fd, NULL, NULL);
		char *hdr_end = NULL;

		if (c < 0)
			break;
		for (;;) {
			ssize_t r =
			    recv(c, buf + got, sizeof(buf) - 1 - got, 0);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			hdr_end = strstr(buf, "\r\n\r\n");
			if (hdr_end && clen < 0) {
				char *cl = strcasestr(buf, "Content-Length:");
				clen = cl ? atol(cl + 15) : 0;
			}
			if (hdr_end &&
			    (long)(got - (size_t)(hdr_end + 4 - buf)) >= clen)
				break;
			if (got >= sizeof(buf) - 1)
				break;
		}
		memcpy(s->last_request, buf, got + 1);
		s->last_body_len =
		    hdr_end ? got - (size_t)(hdr_end + 4 - buf) : 0;
		{
			char *a = strcasestr(buf, "Authorization: ");
			s->last_auth[0] = '\0';
			if (a) {
				size_t n = strcspn(a + 15, "\r\n");
				if (n >= sizeof(s->last_auth))
					n = sizeof(s->last_auth) - 1;
				memcpy(s->last_auth, a + 15, n);
				s->last_auth[n] = '\0';
			}
			sscanf(buf, "%*s %127s", s->last_path);
		}
		{
			char *r =
			    hdr_end ? strstr(hdr_end, "\"run_id\":\"") : NULL;
			if (r)
				sscanf(r + 10, "%36[^\"]",
				       s->posted[s->served]);
		}
		if (s->statuses[s->served] == FAKE_SLEEP)
			usleep(600 * 1000);
		if (s->statuses[s->served] <= 0) {
			close(c);
			s->served++;
			continue;
		}
		{
			char resp[512];
			int st = s->statuses[s->served];
			const char *body =
			    st == 422 ? "{\"type\":\"about:blank\","
					"\"title\":\"Unprocessable\","
					"\"status\":422,\"detail\":"
					"\"results[0].metric: unknown\"}"
				      : "{\"run_id\":\"x\"}";
			/* 429 and 503 ask for a second, as gpusizerd's
			 * 503s ask for two */
			int n = snprintf(
			    resp, sizeof(resp),
			    "HTTP/1.1 %d X\r\nContent-Type: "
			    "application/json\r\nContent-Length: "
			    "%zu\r\n%sConnection: close\r\n\r\n%s",
			    st, strlen(body),
			    st == 429 || st == 503 ? "Retry-After: 1\r\n" : "",
			    body);
			if (send(c, resp, (size_t)n, 0) < 0)
				perror("send");
		}
		close(c);
		s->served++;
	}
	return NULL;
}

static int fake_start(struct fake_server *s, const int *statuses, int n)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int one = 1;

	memset(s, 0, sizeof(*s));
	memcpy(s->statuses, statuses, (size_t)n * sizeof(int));
	s->nstatus = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(s->fd, 8) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0)
		return -1;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->t, NULL, fake_main, s);
}

static void fake_stop(struct fake_server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->t, NULL);
	close(s->fd);
}

static void opts(struct probe_post_opts *o, char *url, size_t urllen, int port)
{
	snprintf(url, urllen, "http://127.0.0.1:%d/", port);
	memset(o, 0, sizeof(*o));
	o->server = url;
	o->token = "tok-123";
	o->timeout_ms = 5000;
	o->connect_timeout_ms = 2000;
	o->retries = 2;
	o->backoff_ms = 1;
	o->backoff_max_ms = 4;
	o->log = NULL;
}

static void test_post_helpers(void)
{
	char url[128];

	CHECK(probe_post_classify(200) == PROBE_POST_DELIVERED);
	CHECK(probe_post_classify(201) == PROBE_POST_DELIVERED);
	CHECK(probe_post_classify(0) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(408) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(429) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(503) == PROBE_POST_RETRY);
	CHECK(probe_post_classify(400) == PROBE_POST_REJECTED);
	CHECK(probe_post_classify(401) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(403) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(422) == PROBE_POST_REJECTED);
	/* a wrong --server (a path, a proxy prefix) is the node's setup:
	 * kept like a refused token, never moved to rejected/ */
	CHECK(probe_post_classify(404) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(405) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(421) == PROBE_POST_UNAUTHORIZED);
	CHECK(strstr(probe_post_setup_what(404), "SERVER URL") != NULL);
	CHECK(strstr(probe_post_setup_what(401), "TOKEN REFUSED") != NULL);
	/* a redirect or a URL / certificate libcurl refuses: the setup,
	 * exit 7, not a retry for ever (review s24g G4) */
	CHECK(probe_post_classify(301) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(308) == PROBE_POST_UNAUTHORIZED);
	CHECK(probe_post_classify(PROBE_STATUS_SETUP) ==
	      PROBE_POST_UNAUTHORIZED);
	CHECK(strstr(probe_post_setup_what(308), "redirects") != NULL);
	CHECK(strstr(probe_post_setup_what(PROBE_STATUS_SETUP), "SERVER URL") !=
	      NULL);
	CHECK(probe_post_classify(100) == PROBE_POST_KEEP);
	CHECK(probe_backoff_ms(0, 1000, 30000) == 1000);
	CHECK(probe_backoff_ms(1, 1000, 30000) == 2000);
	CHECK(probe_backoff_ms(3, 1000, 30000) == 8000);
	CHECK(probe_backoff_ms(10, 1000, 30000) == 30000);
	CHECK(probe_backoff_ms(2, 0, 30000) == 0);
	CHECK(probe_benchmarks_url("http://h:1", url, sizeof(url)) == 0);
	CHECK(strcmp(url, "http://h:1/v1/benchmarks") == 0);
	CHECK(probe_benchmarks_url("http://h:1/api//", url, sizeof(url)) == 0);
	CHECK(strcmp(url, "http://h:1/api/v1/benchmarks") == 0);
	CHECK(probe_benchmarks_url("http://h:1", url, 10) == -1);
}

static void test_post_retry_then_ok(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_post_result res;
	char url[64];
	const int st[] = {503, 201};
	const char *body = "{\"run_id\":\"r\"}";

	CHECK(fake_start(&s, st, 2) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_post(&o, body, strlen(body), &res) == PROBE_POST_DELIVERED);
	fake_stop(&s);
	CHECK(res.attempts == 2 && res.http_status == 201);
	CHECK(strcmp(s.last_auth, "Bearer tok-123") == 0);
	CHECK(strcmp(s.last_path, "/v1/benchmarks") == 0);
	CHECK(strncmp(s.last_request, "POST ", 5) == 0);
	CHECK(strcasestr(s.last_request, "Content-Type: application/json") !=
	      NULL);
	CHECK(s.last_body_len == strlen(body));
	CHECK(strstr(s.last_request, body) != NULL);
}

static void test_deliver_rejected_and_unreachable(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {422};
	const char *id = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	int spool_failed = 1, port;
	struct stat sb;

	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_REJECTED);
	fake_stop(&s);
	CHECK(s.served == 1); /* a 4xx is not retried */
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, id);
	CHECK(stat(path, &sb) == 0);
	CHECK(count_files(base) == 0);

	/* closed port: network error, retried, then spooled */
	port = s.port;
	opts(&o, url, sizeof(url), port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_RETRY);
	CHECK(!spool_failed);
	CHECK(count_files(base) == 1);
	rm_rf(base);
}

/* A --post that failed leaves SPOOL/<run_id>.json; the same report
 * delivered later removes that copy, so the next run does not send it
 * again. A different report under the run_id, or another run's file, is
 * left alone (review s16b F5). */
static void test_deliver_removes_spooled_copy(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	char url[64], path[256], err[256], *base = tmpdir();
	const int st[] = {201, 201, 201};
	const char *id = "9a1e5c3b-7d2f-4a6e-b8c0-2f4d6b8a0c1e";
	const char *other = "1c3e5a7b-9d2f-4b6a-8e0c-3a5c7e9b1d2f";
	const char *body = "{\"run_id\": \"9a1e5c3b\", \"n\": 1}";
	const char *compact = "{\"n\":1,\"run_id\":\"9a1e5c3b\"}";
	int spool_failed = 1;
	struct stat sb;

	CHECK(probe_spool_write(base, id, body, strlen(body), err,
				sizeof(err)) == 0);
	CHECK(probe_spool_write(base, other, "{}", 2, err, sizeof(err)) == 0);
	CHECK(fake_start(&s, st, 3) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, body, strlen(body), &spool_failed) ==
	      PROBE_POST_DELIVERED);
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/%s.json", base, id);
	CHECK(stat(path, &sb) != 0);   /* the copy is gone */
	CHECK(count_files(base) == 1); /* the other run's stays */

	/* the same report, written compactly: a copy too */
	CHECK(probe_spool_write(base, id, body, strlen(body), err,
				sizeof(err)) == 0);
	CHECK(probe_deliver(&o, base, id, compact, strlen(compact),
			    &spool_failed) == PROBE_POST_DELIVERED);
	CHECK(stat(path, &sb) != 0);

	/* another report under the run_id: kept for the flush's 409 */
	CHECK(probe_spool_write(base, id, "{\"n\": 2}", 8, err, sizeof(err)) ==
	      0);
	CHECK(probe_deliver(&o, base, id, body, strlen(body), &spool_failed) ==
	      PROBE_POST_DELIVERED);
	fake_stop(&s);
	CHECK(stat(path, &sb) == 0);
	CHECK(count_files(base) == 2);
	rm_rf(base);
}

/* A refused token (401/403) is the node's setup, not the report's fault:
 * the report stays in the spool (not rejected/), the outcome says so, and
 * a flush stops at the first refusal, keeping the rest (issue 16). */
static void test_token_refused_keeps_report(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {401, 403};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const char *id2 = "7f4e9c1b-5a3d-4b8f-a2e6-1c9d7b5f3e4a";
	int spool_failed = 1;
	struct stat sb;

	char *text = report_text(id);

	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, text, strlen(text), &spool_failed) ==
	      PROBE_POST_UNAUTHORIZED);
	free(text);
	fake_stop(&s);
	CHECK(s.served == 1); /* not retried */
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/%s.json", base, id);
	CHECK(stat(path, &sb) == 0); /* kept in the spool */
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, id);
	CHECK(stat(path, &sb) != 0); /* not rejected */

	CHECK(spool_report(base, id2, 0) == 0);
	CHECK(fake_start(&s, st + 1, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1); /* stops at the first refusal */
	CHECK(fc.unauthorized == 1 && fc.kept == 2 && fc.rejected == 0 &&
	      fc.delivered == 0);
	CHECK(count_files(base) == 2);
	rm_rf(base);
}

/* Retry-After, when longer than the backoff, is waited (within the cap):
 * 503 with Retry-After: 1, then 201, with a 1 ms backoff and a 2 s cap.
 * A lower bound on the wait only; and a flush against a server that says
 * to back off stops after the first report, keeping the rest. */
static void test_retry_after_and_backoff_flush(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_post_result res;
	struct probe_flush_counts fc;
	struct timespec t0, t1;
	char url[64], *base = tmpdir();
	const int st[] = {503, 201};
	const int busy[] = {503, 503, 503, 503, 503, 503, 503, 503};
	const char *rids[3] = {"1b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
			       "24a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31",
			       "3e6a2b7c-1d3f-4a5b-9c8d-7e6f5a4b3c2d"};

	CHECK(fake_start(&s, st, 2) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.backoff_max_ms = 2000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(probe_post(&o, "{}", 2, &res) == PROBE_POST_DELIVERED);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fake_stop(&s);
	CHECK(res.attempts == 2);
	CHECK((double)(t1.tv_sec - t0.tv_sec) +
		  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 >=
	      0.9);

	for (int i = 0; i < 3; i++)
		CHECK(spool_report(base, rids[i], 0) == 0);
	CHECK(fake_start(&s, busy, 8) == 0);
	opts(&o, url, sizeof(url), s.port); /* 2 retries, 4 ms cap */
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 3); /* one report's attempts, then it stops */
	CHECK(fc.kept == 3 && fc.delivered == 0 && fc.rejected == 0);
	CHECK(count_files(base) == 3);
	rm_rf(base);
}

/* Files are read whole only when regular and at most
 * PROBE_MAX_FILE_BYTES: --post /dev/zero must not eat the node's memory. */
static void test_read_file_bounds(void)
{
	char *base = tmpdir(), path[256];
	size_t len = 0;
	FILE *f;

	errno = 0;
	CHECK(probe_read_file("/dev/zero", &len) == NULL && errno == EINVAL);
	CHECK(probe_read_file(base, &len) == NULL && errno == EINVAL);
	snprintf(path, sizeof(path), "%s/big", base);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	if (f) {
		CHECK(fseek(f, (long)PROBE_MAX_FILE_BYTES + 1, SEEK_SET) == 0);
		fputc('x', f);
		fclose(f);
	}
	errno = 0;
	CHECK(probe_read_file(path, &len) == NULL && errno == EFBIG);
	rm_rf(base);
}

static void test_flush_spool(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {201, 400, 500, 500, 500};
	int i;
	struct stat sb;

	for (i = 0; i < 3; i++)
		CHECK(spool_report(base, ids[i], 1000 + i) == 0);
	CHECK(fake_start(&s, st, 5) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.delivered == 1 && fc.rejected == 1 && fc.kept == 1);
	CHECK(s.served == 5); /* 201, 400, 500 x3 (2 retries) */
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[0]);
	CHECK(stat(path, &sb) != 0); /* delivered: deleted */
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, ids[1]);
	CHECK(stat(path, &sb) == 0);
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[2]);
	CHECK(stat(path, &sb) == 0); /* 5xx: kept */
	rm_rf(base);
}

/* Review s24g G13: a flush while another process holds the spool's
 * flush lock posts nothing and says it is busy; once the lock is free,
 * the flush runs. */
static void test_flush_lock(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {201};
	int ready[2], done[2];
	char b;
	pid_t pid;

	CHECK(spool_report(base, "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84", 0) ==
	      0);
	CHECK(pipe(ready) == 0 && pipe(done) == 0);
	pid = fork();
	if (pid == 0) { /* holds the lock until told to go */
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		int fd;

		snprintf(path, sizeof(path), "%s/.flush.lock", base);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		_exit(fd < 0 || fcntl(fd, F_SETLK, &fl) != 0 ||
		      write(ready[1], "x", 1) != 1 ||
		      read(done[0], &b, 1) != 1);
	}
	CHECK(pid > 0 && read(ready[0], &b, 1) == 1);
	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	CHECK(fc.busy == 1 && fc.delivered == 0 && s.served == 0);
	CHECK(write(done[1], "x", 1) == 1);
	CHECK(waitpid(pid, NULL, 0) == pid);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.busy == 0 && fc.delivered == 1 && s.served == 1);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
	rm_rf(base);
}

/* The flush's log, captured (open_memstream): log_open sets o->log. */
struct logcap {
	char *buf;
	size_t len;
	FILE *f;
};

static void log_open(struct logcap *l, struct probe_post_opts *o)
{
	l->buf = NULL;
	l->len = 0;
	l->f = open_memstream(&l->buf, &l->len);
	CHECK(l->f != NULL);
	o->log = l->f;
}

/* 1 when the log so far holds s. */
static int log_has(struct logcap *l, const char *s)
{
	fflush(l->f);
	return l->buf != NULL && strstr(l->buf, s) != NULL;
}

static void log_close(struct logcap *l, struct probe_post_opts *o)
{
	fclose(l->f);
	free(l->buf);
	o->log = NULL;
}

/* Review s24g G7: against a proxy whose backend is down (502), a flush of
 * 3 reports stops after the first one's retries, keeping all 3; the one
 * that failed goes last, so the next flush starts with the next one (a
 * report the server itself fails on does not hold up the rest). */
static void test_flush_stops_on_5xx(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], err[256], path[256], **names = NULL, *base = tmpdir();
	const int down[] = {502, 502, 502, 502, 502, 502, 502, 502};
	const int gw[] = {201, 504, 504, 504, 504, 504, 504, 504};
	size_t n = 0;
	int i;

	for (i = 0; i < 3; i++)
		CHECK(spool_report(base, ids[i], 1000 + i) == 0);
	CHECK(fake_start(&s, down, 8) == 0);
	opts(&o, url, sizeof(url), s.port); /* 2 retries, 4 ms cap */
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 3); /* the first report's 3 attempts, not 9 */
	CHECK(fc.kept == 3 && fc.delivered == 0 && fc.rejected == 0 &&
	      fc.unreadable == 0 && fc.unauthorized == 0);
	CHECK(count_files(base) == 3);
	CHECK(log_has(&lc, "HTTP 502 after 3 attempts"));
	CHECK(log_has(&lc, "2 more spooled reports left for the next run"));
	log_close(&lc, &o);
	/* the one that got the 502 now goes last */
	CHECK(probe_spool_list(base, &names, &n, err, sizeof(err)) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK(strncmp(names[0], ids[1], 36) == 0);
		CHECK(strncmp(names[1], ids[2], 36) == 0);
		CHECK(strncmp(names[2], ids[0], 36) == 0);
	}
	probe_spool_list_free(names, n);

	/* a 504 after one delivery stops as well, with one left */
	CHECK(fake_start(&s, gw, 8) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 4); /* 201, then 504 x3 */
	CHECK(fc.delivered == 1 && fc.kept == 2);
	CHECK(count_files(base) == 2);
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[1]);
	CHECK(access(path, F_OK) != 0); /* the next one was delivered */
	rm_rf(base);
}

/* Review s24g G11: a symbolic link in the spool is neither followed nor
 * sent, even to a report, and is left where it is (not moved); its
 * target is untouched. */
static void test_flush_skips_symlink(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], target[256], *base = tmpdir();
	const int st[] = {201, 201, 201};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const char *other = "7f4e9c1b-5a3d-4b8f-a2e6-1c9d7b5f3e4a";
	char *text = report_text(other), *back;
	struct stat sb;
	size_t len = 0;
	FILE *f;

	/* the link's target: a report outside the spool, and /etc/hostname */
	snprintf(target, sizeof(target), "%s.target", base);
	f = fopen(target, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	CHECK(spool_report(base, id, 2000) == 0);
	snprintf(path, sizeof(path), "%s/%s.json", base, other);
	CHECK(symlink(target, path) == 0);
	snprintf(path, sizeof(path), "%s/link.json", base);
	CHECK(symlink("/etc/hostname", path) == 0);
	CHECK(count_files(base) == 1); /* links are not listed */
	errno = 0;
	CHECK(probe_read_file_nofollow(path, &len) == NULL && errno == ELOOP);

	CHECK(fake_start(&s, st, 3) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1); /* only the regular report */
	CHECK(fc.delivered == 1 && fc.rejected == 0 && fc.kept == 0);
	CHECK(lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)); /* left */
	snprintf(path, sizeof(path), "%s/%s.json", base, other);
	CHECK(lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode));
	snprintf(path, sizeof(path), "%s/rejected", base);
	CHECK(stat(path, &sb) != 0);
	back = probe_read_file(target, &len);
	CHECK(back && strcmp(back, text) == 0);
	free(back);
	free(text);
	unlink(target);
	rm_rf(base);
}

/* Review s24g G11: a spooled file that is not JSON, or that the probe's
 * checker refuses (what --post FILE checks), is not sent: it goes to
 * rejected/ with a line naming it and why (exit 6, as a rejected report). */
static void test_flush_rejects_non_reports(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {201, 201, 201, 201};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const char *files[3][2] = {
	    {"bad.json", "{not json"},
	    {"notreport.json", "{\"run_id\":\"x\",\"token\":\"\\u001b[2J\"}"},
	    {"dup.json", "{\"a\":1,\"a\":2}"},
	};
	struct stat sb;
	int i;

	CHECK(spool_report(base, id, 3000) == 0);
	for (i = 0; i < 3; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", base, files[i][0]);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fputs(files[i][1], f);
			fclose(f);
		}
	}
	CHECK(count_files(base) == 4);
	CHECK(fake_start(&s, st, 4) == 0);
	opts(&o, url, sizeof(url), s.port);
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1); /* the report alone */
	CHECK(fc.delivered == 1 && fc.rejected == 3 && fc.kept == 0 &&
	      fc.unreadable == 0);
	CHECK(count_files(base) == 0);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/rejected/%s", base,
			 files[i][0]);
		CHECK(stat(path, &sb) == 0);
	}
	CHECK(log_has(&lc, "spooled bad.json not sent (not JSON"));
	CHECK(log_has(&lc, "spooled notreport.json not sent (not a probe "
			   "report: "));
	CHECK(log_has(&lc, "spooled dup.json not sent (not JSON"));
	CHECK(!log_has(&lc, "\x1b")); /* the log stays one line a file */
	log_close(&lc, &o);
	rm_rf(base);
}

/* Review s24g G11: a spool directory that is group- or world-writable, a
 * symbolic link, or (as root) another user's is refused: nothing read or
 * sent, the files stay, the line names the directory and the fix. */
static void test_flush_refuses_unsafe_dir(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[320], link[256], *base = tmpdir();
	const int st[] = {201};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const mode_t modes[] = {0777, 0770, 0702, 0720};
	size_t i;

	CHECK(spool_report(base, id, 0) == 0);
	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CHECK(chmod(base, modes[i]) == 0);
		log_open(&lc, &o);
		CHECK(probe_flush_spool(&o, base, &fc) == -1);
		CHECK(fc.refused == 1 && fc.delivered == 0 && fc.kept == 0);
		CHECK(log_has(&lc, base));
		CHECK(log_has(&lc, "chmod 700"));
		log_close(&lc, &o);
	}
	CHECK(chmod(base, 0700) == 0);
	/* a symbolic link to a good spool, with or without a slash */
	snprintf(link, sizeof(link), "%s.link", base);
	CHECK(symlink(base, link) == 0);
	CHECK(probe_flush_spool(&o, link, &fc) == -1 && fc.refused == 1);
	snprintf(path, sizeof(path), "%s/", link);
	CHECK(probe_flush_spool(&o, path, &fc) == -1 && fc.refused == 1);
	unlink(link);
	if (geteuid() == 0) { /* another user's spool */
		CHECK(chown(base, 12345, 12345) == 0);
		log_open(&lc, &o);
		CHECK(probe_flush_spool(&o, base, &fc) == -1 && fc.refused);
		CHECK(log_has(&lc, "chown 0"));
		log_close(&lc, &o);
		CHECK(chown(base, 0, 0) == 0);
	}
	CHECK(s.served == 0); /* nothing sent */
	CHECK(count_files(base) == 1);
	/* a missing spool: nothing to flush, not an error */
	snprintf(path, sizeof(path), "%s/none", base);
	CHECK(probe_flush_spool(&o, path, &fc) == 0 && fc.refused == 0);
	/* fixed: it goes */
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.delivered == 1 && s.served == 1);
	rm_rf(base);
}

/* 1 when base's pending reports, in the flush's order, are ids[order[0]],
 * ids[order[1]], ... (n of them). */
static int spool_order(const char *base, const int *order, size_t n)
{
	char err[256], **names = NULL;
	size_t got = 0, i;
	int same;

	if (probe_spool_list(base, &names, &got, err, sizeof(err)))
		return 0;
	same = got == n;
	for (i = 0; same && i < n; i++)
		same = strncmp(names[i], ids[order[i]], 36) == 0;
	probe_spool_list_free(names, got);
	return same;
}

/* Review s25c K1: a report whose POST gets an empty reply or times out
 * stops the flush, as a 5xx does, and goes last too (it stayed first and
 * stopped every flush); the log says what happened, not "cannot be
 * reached", and "1 attempt". */
static void test_flush_noanswer_goes_last(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], *base = tmpdir();
	const int empty[] = {FAKE_CLOSE}, ok[] = {201, 201, 201};
	const int slow[] = {FAKE_SLEEP};
	const int first_last[] = {1, 2, 0}, again[] = {2, 0, 1};
	int i, port;

	for (i = 0; i < 3; i++)
		CHECK(spool_report(base, ids[i], 1000 + i) == 0);
	CHECK(fake_start(&s, empty, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1 && strcmp(s.posted[0], ids[0]) == 0);
	CHECK(fc.kept == 3 && fc.delivered == 0);
	CHECK(log_has(&lc, "empty reply after 1 attempt: the server closed "
			   "the connection without an answer"));
	CHECK(!log_has(&lc, "cannot be reached"));
	CHECK(!log_has(&lc, "attempts"));
	log_close(&lc, &o);
	CHECK(spool_order(base, first_last, 3));

	/* a timeout after the server took the connection: the same */
	CHECK(fake_start(&s, slow, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	o.timeout_ms = 200;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1 && strcmp(s.posted[0], ids[1]) == 0);
	CHECK(log_has(&lc, "timeout after 1 attempt: the server was reached"));
	log_close(&lc, &o);
	CHECK(spool_order(base, again, 3));

	/* nothing listening: "cannot be reached" is said only then */
	port = s.port;
	opts(&o, url, sizeof(url), port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	CHECK(log_has(&lc, "no connection after 1 attempt: the server cannot "
			   "be reached"));
	log_close(&lc, &o);

	/* the next flush sends the others first, the poison last */
	CHECK(fake_start(&s, ok, 3) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.delivered == 3 && s.served == 3);
	CHECK(strcmp(s.posted[2], ids[2]) == 0); /* the last to fail */
	CHECK(count_files(base) == 0);
	rm_rf(base);
}

/* Review s25c K2: a report whose mtime cannot be set (another uid's file,
 * EPERM: simulated by probe_spool_test_fail, as the tests may run as
 * root) is rewritten as the probe's own file to go last; when it cannot
 * be rewritten either, the flush goes on to the next report rather than
 * stop on it, so the others are delivered. */
static void test_flush_untouchable_report(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[256], *base = tmpdir();
	const int fail[] = {500}, fail_then_ok[] = {500, 201, 201};
	const int first_last[] = {1, 2, 0};
	struct stat before, after;
	int i;

	for (i = 0; i < 3; i++)
		CHECK(spool_report(base, ids[i], 1000 + i) == 0);
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[0]);
	CHECK(chmod(path, 0644) == 0 && stat(path, &before) == 0);
	probe_spool_test_fail = 1; /* the touch fails: rewritten */
	CHECK(fake_start(&s, fail, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1 && fc.kept == 3);
	CHECK(log_has(&lc, "rewritten to go last"));
	CHECK(log_has(&lc, "2 more spooled reports left"));
	log_close(&lc, &o);
	CHECK(spool_order(base, first_last, 3));
	CHECK(stat(path, &after) == 0 && after.st_ino != before.st_ino);
	CHECK((after.st_mode & 0777) == 0600 && after.st_uid == geteuid());

	/* neither: the flush goes on past it, and the others go */
	probe_spool_test_fail = 3;
	CHECK(fake_start(&s, fail_then_ok, 3) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	probe_spool_test_fail = 0;
	CHECK(s.served == 3 && strcmp(s.posted[0], ids[1]) == 0);
	CHECK(fc.delivered == 2 && fc.kept == 1);
	CHECK(log_has(&lc, "cannot be put last, so the flush goes on"));
	CHECK(!log_has(&lc, "stopped"));
	log_close(&lc, &o);
	CHECK(count_files(base) == 1);
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[1]);
	CHECK(access(path, F_OK) == 0);
	rm_rf(base);
}

/* Review s25c K3: spooled mtimes a day ahead (a clock that was ahead):
 * the report that stops the flush still goes last, after the newest. */
static void test_flush_future_mtimes(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], *base = tmpdir();
	const int fail[] = {500};
	const int first_last[] = {1, 2, 0};
	time_t tomorrow = time(NULL) + 86400;
	struct stat st;
	int i;

	CHECK(spool_report(base, ids[0], tomorrow - 60) == 0);
	for (i = 1; i < 3; i++)
		CHECK(spool_report(base, ids[i], tomorrow + i) == 0);
	CHECK(fake_start(&s, fail, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1 && strcmp(s.posted[0], ids[0]) == 0);
	CHECK(spool_order(base, first_last, 3));
	snprintf(path, sizeof(path), "%s/%s.json", base, ids[0]);
	CHECK(stat(path, &st) == 0 && st.st_mtim.tv_sec == tomorrow + 3);
	rm_rf(base);
}

/* Review s25c K4 (and I2): a server-rejected report that cannot be moved
 * (rejected is a file, or a symbolic link to elsewhere) is not said to be
 * moved: it stays, counted with the unreadable ones (exit 5), as a file
 * the checker refuses does. */
static void test_flush_rejected_unmovable(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[256], other[256], *base = tmpdir();
	const int bad[] = {400, 400};
	FILE *f;
	int i, round;

	for (i = 0; i < 2; i++)
		CHECK(spool_report(base, ids[i], 1000 + i) == 0);
	snprintf(path, sizeof(path), "%s/rejected", base);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("x\n", f);
		fclose(f);
	}
	snprintf(other, sizeof(other), "%s.elsewhere", base);
	CHECK(mkdir(other, 0700) == 0);
	for (round = 0; round < 2; round++) {
		if (round == 1) { /* a link to a directory elsewhere */
			CHECK(unlink(path) == 0);
			CHECK(symlink(other, path) == 0);
		}
		CHECK(fake_start(&s, bad, 2) == 0);
		opts(&o, url, sizeof(url), s.port);
		log_open(&lc, &o);
		CHECK(probe_flush_spool(&o, base, &fc) == 0);
		fake_stop(&s);
		CHECK(s.served == 2);
		CHECK(fc.rejected == 0 && fc.unreadable == 2 && fc.kept == 0);
		CHECK(log_has(&lc, "REJECTED by the server (HTTP 400"));
		CHECK(log_has(&lc, "NOT moved"));
		CHECK(!log_has(&lc, "moved to"));
		log_close(&lc, &o);
		CHECK(count_files(base) == 2);
	}
	CHECK(count_files(other) == 0);
	rm_rf(other);
	rm_rf(base);
}

/* Review s25c K5: a report is not spooled into a directory the flush
 * refuses (its files would never be sent): neither delivered nor
 * spooled (the caller's exit 1), with one line naming the directory and
 * the fix; a rejected one is not written to its rejected/ either. */
static void test_deliver_refuses_unsafe_spool(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct logcap lc;
	char url[64], path[256], err[512], *base = tmpdir();
	const int st[] = {500, 400};
	const char *id = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	char *text = report_text(id);
	int spool_failed = 0;
	struct stat sb;

	CHECK(chmod(base, 0777) == 0);
	CHECK(probe_spool_write(base, id, text, strlen(text), err,
				sizeof(err)) == -1);
	CHECK(strstr(err, "chmod 700") != NULL);
	CHECK(fake_start(&s, st, 2) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_deliver(&o, base, id, text, strlen(text), &spool_failed) ==
	      PROBE_POST_RETRY);
	CHECK(spool_failed == 1);
	CHECK(log_has(&lc, "NOT spooled: spool "));
	CHECK(log_has(&lc, "(mode 0777): nothing written to it; fix with "
			   "chmod 700"));
	spool_failed = 0;
	CHECK(probe_deliver(&o, base, id, text, strlen(text), &spool_failed) ==
	      PROBE_POST_REJECTED);
	CHECK(spool_failed == 1);
	CHECK(log_has(&lc, "could not keep a copy"));
	log_close(&lc, &o);
	fake_stop(&s);
	CHECK(count_files(base) == 0);
	snprintf(path, sizeof(path), "%s/rejected", base);
	CHECK(stat(path, &sb) != 0);
	free(text);
	CHECK(chmod(base, 0700) == 0);
	rm_rf(base);
}

/* Review s25c K6: a spool file's name is shown cleaned: a newline in it
 * forges no "probe: ... delivered" line, an escape reaches no terminal. */
static void test_flush_cleans_names(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[512], err[256], *base = tmpdir(), *p;
	const char *name = "a\nprobe: spooled FORGED.json delivered (HTTP "
			   "201)\n\033[31mred\xe2\x80\xaejson.json";
	const char *id = "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84";
	const int fail[] = {500};
	char *text = report_text(id);

	snprintf(path, sizeof(path), "%s/%s", base, name);
	CHECK(probe_write_atomic(path, text, strlen(text), err, sizeof(err)) ==
	      0);
	free(text);
	CHECK(fake_start(&s, fail, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	o.retries = 0;
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1 && fc.kept == 1);
	CHECK(log_has(&lc, "spooled a?probe: spooled FORGED.json delivered "
			   "(HTTP 201)??[31mred?json.json kept (HTTP 500"));
	CHECK(!log_has(&lc, "\033") && !log_has(&lc, "\xe2\x80\xae"));
	/* every line is one of the probe's */
	for (p = lc.buf; p && *p; p = strchr(p, '\n') + 1) {
		CHECK(strncmp(p, "probe: ", 7) == 0);
		CHECK(strchr(p, '\n') != NULL);
		if (!strchr(p, '\n'))
			break;
	}
	log_close(&lc, &o);
	rm_rf(base);
}

/* Review s25c K7: a flush lock that is a directory or a symbolic link is
 * no lock: the spool is refused (nothing sent, the flush's exit 1), with
 * a line saying why; it never runs unlocked. */
static void test_flush_lock_not_a_file(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	struct logcap lc;
	char url[64], path[256], *base = tmpdir();
	const int st[] = {201};

	CHECK(spool_report(base, "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84", 0) ==
	      0);
	snprintf(path, sizeof(path), "%s/.flush.lock", base);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	log_open(&lc, &o);
	CHECK(probe_flush_spool(&o, base, &fc) == -1);
	CHECK(fc.refused == 1 && fc.busy == 0 && fc.delivered == 0);
	CHECK(log_has(&lc, "is a directory, not a regular file: nothing sent"));
	CHECK(rmdir(path) == 0);
	CHECK(symlink("/tmp/probe-no-such-lock", path) == 0);
	CHECK(probe_flush_spool(&o, base, &fc) == -1 && fc.refused == 1);
	CHECK(log_has(&lc, "is a symbolic link, not a regular file"));
	CHECK(access("/tmp/probe-no-such-lock", F_OK) != 0);
	log_close(&lc, &o);
	CHECK(s.served == 0 && count_files(base) == 1);
	/* a regular lock again: it goes */
	CHECK(unlink(path) == 0);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(fc.delivered == 1 && s.served == 1);
	rm_rf(base);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(test_spool);
	RUN(test_post_helpers);
	RUN(test_post_retry_then_ok);
	RUN(test_deliver_rejected_and_unreachable);
	RUN(test_deliver_removes_spooled_copy);
	RUN(test_flush_spool);
	RUN(test_flush_lock);
	RUN(test_token_refused_keeps_report);
	RUN(test_retry_after_and_backoff_flush);
	RUN(test_read_file_bounds);
	RUN(test_flush_stops_on_5xx);
	RUN(test_flush_skips_symlink);
	RUN(test_flush_rejects_non_reports);
	RUN(test_flush_refuses_unsafe_dir);
	RUN(test_flush_noanswer_goes_last);
	RUN(test_flush_untouchable_report);
	RUN(test_flush_future_mtimes);
	RUN(test_flush_rejected_unmovable);
	RUN(test_deliver_refuses_unsafe_spool);
	RUN(test_flush_cleans_names);
	RUN(test_flush_lock_not_a_file);
	curl_global_cleanup();
	return testlib_finish();
}

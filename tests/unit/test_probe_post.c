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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

/* ---- posting, against a scripted HTTP server ------------------------ */

struct fake_server {
	int fd, port;
	int statuses[8], nstatus, served;
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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

/* A refused token (401/403) is the node's setup, not the report's fault:
 * the report stays in the spool (not rejected/), the outcome says so, and
 * a flush stops at the first refusal, keeping the rest (issue 16). */
static void test_token_refused_keeps_report(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], path[256], err[256], *base = tmpdir();
	const int st[] = {401, 403};
	const char *id = "5d2c7a9e-3f1b-4e6d-8a0c-9b7e5f3d1a2c";
	const char *id2 = "7f4e9c1b-5a3d-4b8f-a2e6-1c9d7b5f3e4a";
	int spool_failed = 1;
	struct stat sb;

	CHECK(fake_start(&s, st, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_deliver(&o, base, id, "{}", 2, &spool_failed) ==
	      PROBE_POST_UNAUTHORIZED);
	fake_stop(&s);
	CHECK(s.served == 1); /* not retried */
	CHECK(!spool_failed);
	snprintf(path, sizeof(path), "%s/%s.json", base, id);
	CHECK(stat(path, &sb) == 0); /* kept in the spool */
	snprintf(path, sizeof(path), "%s/rejected/%s.json", base, id);
	CHECK(stat(path, &sb) != 0); /* not rejected */

	CHECK(probe_spool_write(base, id2, "{}", 2, err, sizeof(err)) == 0);
	CHECK(fake_start(&s, st + 1, 1) == 0);
	opts(&o, url, sizeof(url), s.port);
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 1); /* stops at the first refusal */
	CHECK(fc.unauthorized == 1 && fc.kept == 2 && fc.rejected == 0 &&
	      fc.delivered == 0);
	CHECK(count_files(base) == 2);
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
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
	char url[64], err[256], path[256], *base = tmpdir();
	const int st[] = {503, 201};
	const int busy[] = {503, 503, 503, 503, 503, 503, 503, 503};
	const char *ids[3] = {"1b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
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
		CHECK(probe_spool_write(base, ids[i], "{}", 2, err,
					sizeof(err)) == 0);
	CHECK(fake_start(&s, busy, 8) == 0);
	opts(&o, url, sizeof(url), s.port); /* 2 retries, 4 ms cap */
	CHECK(probe_flush_spool(&o, base, &fc) == 0);
	fake_stop(&s);
	CHECK(s.served == 3); /* one report's attempts, then it stops */
	CHECK(fc.kept == 3 && fc.delivered == 0 && fc.rejected == 0);
	CHECK(count_files(base) == 3);
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

static void test_flush_spool(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], err[256], path[256], *base = tmpdir();
	const int st[] = {201, 400, 500, 500, 500};
	const char *ids[3] = {"3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
			      "c4a1e0f2-6b3d-4e8a-9f17-2d5b8c0a7e31",
			      "0e6a2b7c-1d3f-4a5b-9c8d-7e6f5a4b3c2d"};
	struct timespec t[2];
	int i;
	struct stat sb;

	for (i = 0; i < 3; i++) {
		CHECK(probe_spool_write(base, ids[i], "{}", 2, err,
					sizeof(err)) == 0);
		snprintf(path, sizeof(path), "%s/%s.json", base, ids[i]);
		t[0].tv_sec = t[1].tv_sec = 1000 + i;
		t[0].tv_nsec = t[1].tv_nsec = 0;
		CHECK(utimensat(AT_FDCWD, path, t, 0) == 0);
	}
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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
}

/* Review s24g G13: a flush while another process holds the spool's
 * flush lock posts nothing and says it is busy; once the lock is free,
 * the flush runs. */
static void test_flush_lock(void)
{
	struct fake_server s;
	struct probe_post_opts o;
	struct probe_flush_counts fc;
	char url[64], err[256], path[256], *base = tmpdir();
	const int st[] = {201};
	int ready[2], done[2];
	char b;
	pid_t pid;

	CHECK(probe_spool_write(base, "3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84",
				"{}", 2, err, sizeof(err)) == 0);
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
	snprintf(path, sizeof(path), "rm -rf '%s'", base);
	CHECK(system(path) == 0);
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
	curl_global_cleanup();
	return testlib_finish();
}

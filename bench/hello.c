/* hello.c - the ceiling: a minimal libmicrohttpd server with the daemon's
 * threading model (thread per connection) answering a fixed JSON body on
 * the final access-handler call (so keep-alive holds). make bench loads it
 * with the same wrk settings as gpusizerd and prints ratios against it.
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] = "{\"status\":\"ok\"}\n";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	static int marker;
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)cls, (void)url, (void)method, (void)version, (void)upload;
	if (*con_cls == NULL) {
		*con_cls = &marker;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
					    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned port = argc > 1 ? (unsigned)atoi(argv[1]) : 18999;
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
		MHD_USE_POLL | MHD_USE_ITC,
	    (unsigned short)port, NULL, NULL, on_request, NULL,
	    MHD_OPTION_CONNECTION_LIMIT, 512u, MHD_OPTION_CONNECTION_TIMEOUT,
	    15u, MHD_OPTION_END);
	sigset_t s;
	int sig;

	if (!d) {
		fprintf(stderr, "hello: cannot listen on %u\n", port);
		return 1;
	}
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigprocmask(SIG_BLOCK, &s, NULL);
	sigwait(&s, &sig);
	MHD_stop_daemon(d);
	return 0;
}

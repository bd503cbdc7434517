/* metrics.c - request counters, latency histograms, pool gauges. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"
#include "server/metrics.h"
#include "storage/db.h"

/* Upper bounds in seconds; sizing answers in well under a millisecond,
 * database round trips in about one, outages at the 5 s statement timeout.
 */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
				 0.025,	 0.05,	0.1,	0.25,  0.5,
				 1,	 2.5,	5,	10};
#define NBUCKETS (int)(sizeof(buckets) / sizeof(buckets[0]))
#define NSTATUS	 600

static int n_routes;
static const char *const *route_methods;
static const char *const *route_patterns;
static atomic_llong counts[METRICS_MAX_ROUTES + 1][NSTATUS];
static atomic_llong hist[METRICS_MAX_ROUTES + 1][NBUCKETS + 1];
static atomic_llong sum_us[METRICS_MAX_ROUTES + 1];
static atomic_int in_flight;
static atomic_llong reaped;

void metrics_init(int nroutes, const char *const *methods,
		  const char *const *patterns)
{
	n_routes = nroutes < METRICS_MAX_ROUTES ? nroutes : METRICS_MAX_ROUTES;
	route_methods = methods;
	route_patterns = patterns;
}

void metrics_observe(int route, int status, double seconds)
{
	int b = 0;

	if (route < 0 || route > n_routes)
		route = n_routes;
	if (status < 0 || status >= NSTATUS)
		status = 0;
	atomic_fetch_add(&counts[route][status], 1);
	while (b < NBUCKETS && seconds > buckets[b])
		b++;
	atomic_fetch_add(&hist[route][b], 1);
	atomic_fetch_add(&sum_us[route], (long long)(seconds * 1e6));
}

void metrics_in_flight(int delta)
{
	atomic_fetch_add(&in_flight, delta);
}

void metrics_reaped(int n)
{
	atomic_fetch_add(&reaped, n);
}

static void labels(int r, char *out, size_t len)
{
	if (r == n_routes)
		snprintf(out, len, "route=\"unmatched\",method=\"\"");
	else
		snprintf(out, len, "route=\"%s\",method=\"%s\"",
			 route_patterns[r], route_methods[r]);
}

void h_metrics(struct app *app, const struct request *req, struct response *res)
{
	struct sbuf b = {0};
	struct db_stats st;
	char l[160];

	(void)req;
	sbuf_printf(
	    &b, "# HELP gpusizer_http_requests_total HTTP requests answered, "
		"by route and status.\n"
		"# TYPE gpusizer_http_requests_total counter\n");
	for (int r = 0; r <= n_routes; r++) {
		labels(r, l, sizeof(l));
		for (int s = 0; s < NSTATUS; s++) {
			long long c = atomic_load(&counts[r][s]);
			if (c)
				sbuf_printf(&b,
					    "gpusizer_http_requests_total{%s,"
					    "status=\"%d\"} %lld\n",
					    l, s, c);
		}
	}
	sbuf_printf(
	    &b, "# HELP gpusizer_http_request_duration_seconds Time from "
		"the request's first byte to its response, by route.\n"
		"# TYPE gpusizer_http_request_duration_seconds histogram\n");
	for (int r = 0; r <= n_routes; r++) {
		long long cum = 0;
		labels(r, l, sizeof(l));
		for (int k = 0; k <= NBUCKETS; k++)
			cum += atomic_load(&hist[r][k]);
		if (cum == 0)
			continue;
		cum = 0;
		for (int k = 0; k < NBUCKETS; k++) {
			cum += atomic_load(&hist[r][k]);
			sbuf_printf(
			    &b,
			    "gpusizer_http_request_duration_seconds_bucket{%s,"
			    "le=\"%g\"} %lld\n",
			    l, buckets[k], cum);
		}
		cum += atomic_load(&hist[r][NBUCKETS]);
		sbuf_printf(&b,
			    "gpusizer_http_request_duration_seconds_bucket{%s,"
			    "le=\"+Inf\"} %lld\n",
			    l, cum);
		sbuf_printf(
		    &b, "gpusizer_http_request_duration_seconds_sum{%s} %.6f\n",
		    l, (double)atomic_load(&sum_us[r]) / 1e6);
		sbuf_printf(
		    &b,
		    "gpusizer_http_request_duration_seconds_count{%s} %lld\n",
		    l, cum);
	}
	sbuf_printf(
	    &b,
	    "# HELP gpusizer_http_requests_in_flight Requests being served.\n"
	    "# TYPE gpusizer_http_requests_in_flight gauge\n"
	    "gpusizer_http_requests_in_flight %d\n"
	    "# HELP gpusizer_http_connections_reaped_total Connections closed "
	    "for not sending a whole request within the connection "
	    "timeout.\n"
	    "# TYPE gpusizer_http_connections_reaped_total counter\n"
	    "gpusizer_http_connections_reaped_total %lld\n",
	    atomic_load(&in_flight), atomic_load(&reaped));
	db_pool_stats(app->db, &st);
	sbuf_printf(
	    &b,
	    "# HELP gpusizer_db_pool_connections Database pool connections "
	    "by state.\n"
	    "# TYPE gpusizer_db_pool_connections gauge\n"
	    "gpusizer_db_pool_connections{state=\"configured\"} %d\n"
	    "gpusizer_db_pool_connections{state=\"in_use\"} %d\n"
	    "gpusizer_db_pool_connections{state=\"connected\"} %d\n"
	    "# HELP gpusizer_db_pool_waiting Threads waiting for a "
	    "connection.\n"
	    "# TYPE gpusizer_db_pool_waiting gauge\n"
	    "gpusizer_db_pool_waiting %d\n"
	    "# HELP gpusizer_db_acquire_timeouts_total Requests that found no "
	    "free connection in time.\n"
	    "# TYPE gpusizer_db_acquire_timeouts_total counter\n"
	    "gpusizer_db_acquire_timeouts_total %lld\n"
	    "# HELP gpusizer_db_reconnects_total Connections (re)established.\n"
	    "# TYPE gpusizer_db_reconnects_total counter\n"
	    "gpusizer_db_reconnects_total %lld\n"
	    "# HELP gpusizer_db_connection_errors_total Connection attempts "
	    "that failed and connections found lost (the log has libpq's "
	    "message).\n"
	    "# TYPE gpusizer_db_connection_errors_total counter\n"
	    "gpusizer_db_connection_errors_total %lld\n"
	    "# HELP gpusizer_draining 1 while shutting down.\n"
	    "# TYPE gpusizer_draining gauge\n"
	    "gpusizer_draining %d\n",
	    st.size, st.in_use, st.connected, st.waiting, st.acquire_timeouts,
	    st.reconnects, st.connection_errors, atomic_load(&app->draining));
	if (b.oom)
		res->status = 500;
	else
		res_text(res, 200, "text/plain; version=0.0.4; charset=utf-8",
			 b.p, b.len);
	sbuf_free(&b);
}

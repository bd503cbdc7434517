/* metrics.h - Prometheus counters and histograms of the HTTP layer.
 *
 * Lock-free (C11 atomics), fixed-size tables indexed by route and status.
 */
#ifndef GPUSIZER_SERVER_METRICS_H
#define GPUSIZER_SERVER_METRICS_H

#include "handlers/handler.h"

#define METRICS_MAX_ROUTES 40

/* Route i is labelled with methods[i] and patterns[i] (static strings);
 * index nroutes is "unmatched". Call once before serving.
 */
void metrics_init(int nroutes, const char *const *methods,
		  const char *const *patterns);
void metrics_observe(int route, int status, double seconds);
void metrics_in_flight(int delta);
/* Connections closed for not sending a whole request in time. */
void metrics_reaped(int n);

/* GET /metrics in the Prometheus text format 0.0.4. */
void h_metrics(struct app *app, const struct request *req,
	       struct response *res);

#endif

/* routes.c - every endpoint of the API, as data. */
#include <stdio.h>
#include <string.h>

#include "handlers/api.h"
#include "server/metrics.h"
#include "server/routes.h"

static const struct route table[] = {
    {"GET", "/healthz", h_healthz, SCOPE_NONE, 0},
    {"GET", "/readyz", h_readyz, SCOPE_NONE, 0},
    {"GET", "/metrics", h_metrics, SCOPE_NONE, 0},
    {"GET", "/openapi.yaml", h_openapi, SCOPE_NONE, 0},
    {"GET", "/v1/gpus", h_gpus_list, SCOPE_READ, 0},
    {"GET", "/v1/gpus/{name}", h_gpu_get, SCOPE_READ, 0},
    {"PUT", "/v1/gpus/{name}", h_gpu_put, SCOPE_ADMIN, 1},
    {"GET", "/v1/stacks", h_stacks_list, SCOPE_READ, 0},
    {"GET", "/v1/stacks/{name}", h_stack_get, SCOPE_READ, 0},
    {"PUT", "/v1/stacks/{name}", h_stack_put, SCOPE_ADMIN, 1},
    {"GET", "/v1/models", h_models_list, SCOPE_READ, 0},
    {"GET", "/v1/models/{name}", h_model_get, SCOPE_READ, 0},
    {"POST", "/v1/sizing/training", h_sizing_training, SCOPE_READ, 1},
    {"POST", "/v1/sizing/inference", h_sizing_inference, SCOPE_READ, 1},
    {"POST", "/v1/sizing/compare", h_sizing_compare, SCOPE_READ, 1},
    {"GET", "/v1/recommendations", h_recs_list, SCOPE_READ, 0},
    {"GET", "/v1/recommendations/{id}", h_rec_get, SCOPE_READ, 0},
    {"POST", "/v1/benchmarks", h_bench_post, SCOPE_PROBE, 1},
    {"GET", "/v1/benchmarks", h_bench_list, SCOPE_READ, 0},
    {"GET", "/v1/benchmarks/{run_id}", h_bench_get, SCOPE_READ, 0},
    {"GET", "/v1/nodes", h_nodes_list, SCOPE_READ, 0},
    {"GET", "/v1/nodes/{hostname}", h_node_get, SCOPE_READ, 0},
    {"GET", "/v1/fleet", h_fleet, SCOPE_READ, 0},
    {"GET", "/v1/reports/capacity", h_report_capacity, SCOPE_READ, 0},
};

const struct route *routes_table(int *n)
{
	*n = (int)(sizeof(table) / sizeof(table[0]));
	return table;
}

/* Splits path into segments in buf; returns the count or -1. */
static int split(const char *path, char *buf, size_t len, char **seg, int max)
{
	int n = 0;
	char *p;

	if (path[0] != '/' || strlen(path) >= len)
		return -1;
	memcpy(buf, path, strlen(path) + 1);
	p = buf + 1;
	if (*p == '\0')
		return 0;
	while (p) {
		char *slash = strchr(p, '/');
		if (n == max)
			return -1;
		if (slash)
			*slash = '\0';
		if (*p == '\0' && !slash && n > 0)
			break; /* one trailing "/": /v1/gpus/ is /v1/gpus */
		if (*p == '\0')
			return -1; /* empty segment: "//" */
		seg[n++] = p;
		p = slash ? slash + 1 : NULL;
	}
	return n;
}

static int pattern_matches(const char *pattern, char **seg, int nseg,
			   struct request *req)
{
	char pbuf[128], *pseg[8];
	int np = split(pattern, pbuf, sizeof(pbuf), pseg, 8);

	if (np != nseg)
		return 0;
	req->nparams = 0;
	for (int i = 0; i < np; i++) {
		if (pseg[i][0] == '{') {
			if (req->nparams < REQ_MAX_PARAMS)
				req->params[req->nparams++] = seg[i];
		} else if (strcmp(pseg[i], seg[i]) != 0) {
			return 0;
		}
	}
	return 1;
}

int routes_match(const char *method, const char *path, char *path_buf,
		 size_t len, struct request *req, char *allow, size_t allow_len)
{
	char *seg[8];
	int nseg = split(path, path_buf, len, seg, 8);
	int n = (int)(sizeof(table) / sizeof(table[0]));
	int path_found = 0;
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;

	allow[0] = '\0';
	if (nseg < 0)
		return -404;
	for (int i = 0; i < n; i++) {
		if (!pattern_matches(table[i].pattern, seg, nseg, req))
			continue;
		if (strcmp(table[i].method, m) == 0)
			return i;
		path_found = 1;
		if (!strstr(allow, table[i].method)) {
			size_t off = strlen(allow);
			snprintf(allow + off, allow_len - off, "%s%s",
				 off ? ", " : "", table[i].method);
		}
	}
	if (!path_found)
		return -404;
	if (strstr(allow, "GET")) {
		size_t off = strlen(allow);
		snprintf(allow + off, allow_len - off, ", HEAD");
	}
	return -405;
}

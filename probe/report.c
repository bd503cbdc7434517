#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "util.h"

static const char *const known_metrics[] = {
    "gemm_tflops",
    "gemm_sweep_tflops",
    "hbm_copy_gbps",
    "hbm_read_gbps",
    "hbm_write_gbps",
    "hbm_copy_ce_gbps",
    "h2d_pinned_gbps",
    "d2h_pinned_gbps",
    "bidir_pinned_gbps",
    "h2d_pageable_gbps",
    "d2h_pageable_gbps",
    "p2p_unidir_gbps",
    "p2p_bidir_gbps",
    "p2p_latency_us",
    "nccl_allreduce_busbw_gbps",
    "nccl_allreduce_algbw_gbps",
};

int probe_metric_known(const char *metric)
{
	size_t i;

	for (i = 0; i < sizeof(known_metrics) / sizeof(known_metrics[0]); i++)
		if (metric && strcmp(metric, known_metrics[i]) == 0)
			return 1;
	return 0;
}

void probe_result_init(struct probe_result *res)
{
	memset(res, 0, sizeof(*res));
	res->gpu_index = -1;
	res->peer_index = -1;
	res->size_bytes = -1;
	res->nranks = -1;
	res->stats.median = res->stats.max = res->stats.mean = NAN;
	res->stats.p10 = res->stats.p90 = res->stats.cv = NAN;
	res->limit = NAN;
	res->limit_clock_adjusted = NAN;
	res->telemetry.pcie_gen = res->telemetry.pcie_width = -1;
	probe_strlcpy(res->status, "ok", sizeof(res->status));
}

void probe_gpu_init(struct probe_gpu *g, int index)
{
	memset(g, 0, sizeof(*g));
	g->index = index;
	g->pcie_gen_current = g->pcie_gen_max = -1;
	g->pcie_width_current = g->pcie_width_max = -1;
	g->pcie_limit_gbps = NAN;
	g->nvlink_active_links = -1;
	g->nvlink_version = -1;
	g->nvlink_per_link_gbps = NAN;
	g->nvlink_limit_gbps = NAN;
	g->numa_node = -1;
	g->ecc_enabled = -1;
	g->mig_mode = -1;
	g->power_limit_w = NAN;
	g->sm_clock_max_mhz = NAN;
	g->compute_processes = -1;
	g->sm_count = -1;
	g->memory_total_bytes = -1;
}

void probe_report_init(struct probe_report *r)
{
	memset(r, 0, sizeof(*r));
	r->node.cuda_driver_version = -1;
	r->node.cuda_runtime_version = -1;
	r->node.cublaslt_version = -1;
	r->node.nccl_version = -1;
	probe_strlcpy(r->probe_version, PROBE_VERSION,
		      sizeof(r->probe_version));
	probe_strlcpy(r->status, "ok", sizeof(r->status));
	probe_strlcpy(r->mode, "full", sizeof(r->mode));
	probe_strlcpy(r->sizing, "full", sizeof(r->sizing));
}

void probe_report_free(struct probe_report *r)
{
	size_t i;

	for (i = 0; i < r->n_results; i++)
		free(r->results[i].samples);
	free(r->results);
	free(r->gpus);
	r->results = NULL;
	r->gpus = NULL;
	r->n_results = r->cap_results = r->n_gpus = 0;
}

struct probe_result *probe_report_add(struct probe_report *r,
				      struct probe_result *res)
{
	if (r->n_results == r->cap_results) {
		size_t ncap = r->cap_results ? r->cap_results * 2 : 64;
		struct probe_result *n = realloc(r->results, ncap * sizeof(*n));
		if (n == NULL)
			return NULL;
		r->results = n;
		r->cap_results = ncap;
	}
	r->results[r->n_results] = *res;
	res->samples = NULL;
	res->n_samples = 0;
	return &r->results[r->n_results++];
}

int probe_result_set_samples(struct probe_result *res, const double *s,
			     size_t n)
{
	free(res->samples);
	res->samples = NULL;
	res->n_samples = 0;
	if (n == 0)
		return probe_stats_compute(s, 0, &res->stats);
	res->samples = malloc(n * sizeof(*s));
	if (res->samples == NULL)
		return -1;
	memcpy(res->samples, s, n * sizeof(*s));
	res->n_samples = n;
	return probe_stats_compute(s, n, &res->stats);
}

void probe_result_skip(struct probe_result *res, int partial, const char *fmt,
		       ...)
{
	va_list ap;

	probe_strlcpy(res->status, "skipped", sizeof(res->status));
	res->partial = partial;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

void probe_result_fail(struct probe_result *res, const char *fmt, ...)
{
	va_list ap;

	probe_strlcpy(res->status, "failed", sizeof(res->status));
	res->partial = 1;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

void probe_report_finalize_status(struct probe_report *r)
{
	size_t i, ok = 0, bad = 0;

	if (strcmp(r->status, "no_device") == 0)
		return;
	for (i = 0; i < r->n_results; i++) {
		const struct probe_result *x = &r->results[i];
		if (strcmp(x->status, "ok") == 0)
			ok++;
		else if (strcmp(x->status, "failed") == 0 || x->partial)
			bad++;
	}
	if (bad == 0)
		probe_strlcpy(r->status, "ok", sizeof(r->status));
	else if (ok == 0)
		probe_strlcpy(r->status, "failed", sizeof(r->status));
	else
		probe_strlcpy(r->status, "partial", sizeof(r->status));
}

/* --- encoding helpers: NaN / sentinel -> null --- */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jint(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *jstr(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

static json_t *jtri(int v)
{
	return v < 0 ? json_null() : json_boolean(v);
}

/* Rounds to 6 significant digits so reports stay readable and stable. */
static double round6(double v)
{
	char buf[32];

	if (!isfinite(v))
		return v;
	snprintf(buf, sizeof(buf), "%.6g", v);
	return strtod(buf, NULL);
}

static json_t *jnum6(double v)
{
	return jnum(round6(v));
}

static json_t *telemetry_json(const struct probe_telemetry *t)
{
	const char *names[16];
	size_t i, n;
	json_t *o, *arr;

	if (!t->valid)
		return json_null();
	o = json_object();
	json_object_set_new(o, "sm_clock_mhz", jnum6(t->sm_clock_mhz));
	json_object_set_new(o, "mem_clock_mhz", jnum6(t->mem_clock_mhz));
	json_object_set_new(o, "power_w", jnum6(t->power_w));
	json_object_set_new(o, "temperature_c", jnum6(t->temperature_c));
	arr = json_array();
	n = probe_clock_event_reason_names(t->reasons, names, 16);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, json_string(names[i]));
	json_object_set_new(o, "clock_event_reasons", arr);
	{
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%llx", t->reasons);
		json_object_set_new(o, "clock_event_reasons_mask",
				    json_string(hex));
	}
	json_object_set_new(o, "pcie_gen", jint(t->pcie_gen));
	json_object_set_new(o, "pcie_width", jint(t->pcie_width));
	json_object_set_new(o, "samples", json_integer(t->samples));
	return o;
}

static json_t *result_json(const struct probe_result *x)
{
	json_t *o = json_object(), *arr;
	size_t i;
	int ok = strcmp(x->status, "ok") == 0;

	json_object_set_new(o, "gpu_index", jint(x->gpu_index));
	json_object_set_new(o, "gpu_uuid", jstr(x->gpu_uuid));
	json_object_set_new(o, "metric", json_string(x->metric));
	json_object_set_new(o, "dtype", jstr(x->dtype));
	json_object_set_new(o, "method", jstr(x->method));
	json_object_set_new(o, "peer_index", jint(x->peer_index));
	json_object_set_new(o, "peer_uuid", jstr(x->peer_uuid));
	json_object_set_new(o, "size_bytes", jint(x->size_bytes));
	if (x->m > 0) {
		json_t *s = json_object();
		json_object_set_new(s, "m", json_integer(x->m));
		json_object_set_new(s, "n", json_integer(x->n));
		json_object_set_new(s, "k", json_integer(x->k));
		json_object_set_new(o, "shape", s);
	} else {
		json_object_set_new(o, "shape", json_null());
	}
	json_object_set_new(o, "nranks", jint(x->nranks));
	json_object_set_new(o, "concurrent", json_boolean(x->concurrent));
	json_object_set_new(o, "bytes_convention", jstr(x->bytes_convention));
	json_object_set_new(o, "unit", json_string(x->unit));
	json_object_set_new(o, "status", json_string(x->status));
	json_object_set_new(o, "reason", jstr(x->reason));
	json_object_set_new(o, "median", jnum6(ok ? x->stats.median : NAN));
	json_object_set_new(o, "max", jnum6(ok ? x->stats.max : NAN));
	json_object_set_new(o, "mean", jnum6(ok ? x->stats.mean : NAN));
	json_object_set_new(o, "p10", jnum6(ok ? x->stats.p10 : NAN));
	json_object_set_new(o, "p90", jnum6(ok ? x->stats.p90 : NAN));
	json_object_set_new(o, "cv", jnum6(ok ? x->stats.cv : NAN));
	json_object_set_new(o, "n", json_integer(ok ? x->stats.n : 0));
	json_object_set_new(o, "limit", jnum6(x->limit));
	json_object_set_new(o, "limit_basis",
			    isfinite(x->limit) ? jstr(x->limit_basis)
					       : json_null());
	json_object_set_new(o, "limit_source",
			    isfinite(x->limit) ? jstr(x->limit_source)
					       : json_null());
	json_object_set_new(
	    o, "efficiency",
	    jnum6(ok ? probe_efficiency(x->stats.median, x->limit) : NAN));
	json_object_set_new(o, "limit_clock_adjusted",
			    jnum6(x->limit_clock_adjusted));
	json_object_set_new(o, "efficiency_clock_adjusted",
			    jnum6(ok ? probe_efficiency(x->stats.median,
							x->limit_clock_adjusted)
				     : NAN));
	json_object_set_new(o, "telemetry", telemetry_json(&x->telemetry));
	json_object_set_new(o, "note", jstr(x->note));
	arr = json_array();
	for (i = 0; ok && i < x->n_samples; i++)
		json_array_append_new(arr, json_real(round6(x->samples[i])));
	json_object_set_new(o, "samples", arr);
	return o;
}

static json_t *gpu_json(const struct probe_gpu *g)
{
	json_t *o = json_object(), *p, *l;

	json_object_set_new(o, "index", json_integer(g->index));
	json_object_set_new(o, "uuid", jstr(g->uuid));
	json_object_set_new(o, "name", jstr(g->name));
	json_object_set_new(o, "pci_bus_id", jstr(g->pci_bus_id));
	json_object_set_new(o, "pci_device_id", jstr(g->pci_device_id));
	json_object_set_new(o, "compute_capability",
			    jstr(g->compute_capability));
	json_object_set_new(o, "sm_count", jint(g->sm_count));
	json_object_set_new(o, "memory_total_bytes",
			    jint(g->memory_total_bytes));
	p = json_object();
	json_object_set_new(p, "gen_current", jint(g->pcie_gen_current));
	json_object_set_new(p, "gen_max", jint(g->pcie_gen_max));
	json_object_set_new(p, "width_current", jint(g->pcie_width_current));
	json_object_set_new(p, "width_max", jint(g->pcie_width_max));
	json_object_set_new(p, "limit_gbps", jnum6(g->pcie_limit_gbps));
	json_object_set_new(o, "pcie", p);
	l = json_object();
	json_object_set_new(l, "active_links", jint(g->nvlink_active_links));
	json_object_set_new(l, "version", jint(g->nvlink_version));
	json_object_set_new(l, "per_link_gbps", jnum6(g->nvlink_per_link_gbps));
	json_object_set_new(l, "limit_gbps", jnum6(g->nvlink_limit_gbps));
	json_object_set_new(o, "nvlink", l);
	json_object_set_new(o, "numa_node", jint(g->numa_node));
	json_object_set_new(o, "ecc_enabled", jtri(g->ecc_enabled));
	json_object_set_new(o, "mig_mode", jtri(g->mig_mode));
	json_object_set_new(o, "power_limit_w", jnum6(g->power_limit_w));
	json_object_set_new(o, "sm_clock_max_mhz", jnum6(g->sm_clock_max_mhz));
	json_object_set_new(o, "compute_processes", jint(g->compute_processes));
	return o;
}

json_t *probe_report_to_json(const struct probe_report *r)
{
	json_t *o = json_object(), *node = json_object(), *arr;
	size_t i;

	if (o == NULL || node == NULL) {
		json_decref(o);
		json_decref(node);
		return NULL;
	}
	json_object_set_new(o, "schema_version",
			    json_integer(PROBE_SCHEMA_VERSION));
	json_object_set_new(o, "run_id", json_string(r->run_id));
	json_object_set_new(o, "status", json_string(r->status));
	json_object_set_new(o, "mode", json_string(r->mode));
	json_object_set_new(o, "sizing", json_string(r->sizing));
	if (r->only[0]) {
		char buf[sizeof(r->only)], *save = NULL, *tok;
		arr = json_array();
		probe_strlcpy(buf, r->only, sizeof(buf));
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			json_array_append_new(arr, json_string(tok));
		json_object_set_new(o, "only", arr);
	} else {
		json_object_set_new(o, "only", json_null());
	}
	json_object_set_new(o, "started_at", json_string(r->started_at));
	json_object_set_new(o, "finished_at", json_string(r->finished_at));
	json_object_set_new(o, "probe_version", json_string(r->probe_version));
	json_object_set_new(o, "synthetic", json_boolean(r->synthetic));
	if (r->error_code[0] || r->error_message[0]) {
		json_t *e = json_object();
		json_object_set_new(e, "code", jstr(r->error_code));
		json_object_set_new(e, "message", jstr(r->error_message));
		json_object_set_new(o, "error", e);
	} else {
		json_object_set_new(o, "error", json_null());
	}
	json_object_set_new(node, "hostname", json_string(r->node.hostname));
	json_object_set_new(node, "cpu_model", jstr(r->node.cpu_model));
	json_object_set_new(node, "driver_version",
			    jstr(r->node.driver_version));
	json_object_set_new(node, "cuda_driver_version",
			    jint(r->node.cuda_driver_version));
	json_object_set_new(node, "cuda_runtime_version",
			    jint(r->node.cuda_runtime_version));
	json_object_set_new(node, "cublaslt_version",
			    jint(r->node.cublaslt_version));
	json_object_set_new(node, "nvml_available",
			    json_boolean(r->node.nvml_available));
	json_object_set_new(node, "nccl_version", jint(r->node.nccl_version));
	json_object_set_new(node, "gpu_count", json_integer(r->node.gpu_count));
	json_object_set_new(o, "node", node);
	arr = json_array();
	for (i = 0; i < r->n_gpus; i++)
		json_array_append_new(arr, gpu_json(&r->gpus[i]));
	json_object_set_new(o, "gpus", arr);
	arr = json_array();
	for (i = 0; i < r->n_results; i++)
		json_array_append_new(arr, result_json(&r->results[i]));
	json_object_set_new(o, "results", arr);
	return o;
}

char *probe_report_dumps(const struct probe_report *r)
{
	json_t *o = probe_report_to_json(r);
	char *s;

	if (o == NULL)
		return NULL;
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
	json_decref(o);
	return s;
}

/* --- checking --- */

static int one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

static int is_rfc3339(const char *s)
{
	/* YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm) */
	size_t n = strlen(s), i;
	const char *pat = "dddd-dd-ddTdd:dd:dd";

	if (n < 20)
		return 0;
	for (i = 0; pat[i]; i++) {
		if (pat[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9')
				  : s[i] != pat[i])
			return 0;
	}
	s += 19;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (strcmp(s, "Z") == 0)
		return 1;
	return (s[0] == '+' || s[0] == '-') && strlen(s) == 6 && s[3] == ':';
}

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		return -1;                                                     \
	} while (0)

static int nullable_number(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return v == NULL || json_is_null(v) || json_is_number(v);
}

int probe_report_check(const json_t *root, char *err, size_t errlen)
{
	static const char *const statuses[] = {"ok", "partial", "no_device",
					       "failed", NULL};
	static const char *const modes[] = {"quick", "full", "custom", NULL};
	static const char *const rstatuses[] = {"ok", "skipped", "failed",
						NULL};
	static const char *const units[] = {"TFLOP/s", "TOP/s", "GB/s", "us",
					    NULL};
	static const char *const stat_keys[] = {"median", "max",	"mean",
						"p10",	  "p90",	"cv",
						"limit",  "efficiency", NULL};
	const json_t *v, *node, *gpus, *results, *x;
	size_t i;

	if (!json_is_object(root))
		FAIL("report: not a JSON object");
	v = json_object_get(root, "schema_version");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		FAIL("schema_version: must be the integer 1");
	v = json_object_get(root, "run_id");
	if (!json_is_string(v) || !probe_uuid_is_v4(json_string_value(v)))
		FAIL("run_id: must be a version-4 UUID string");
	v = json_object_get(root, "status");
	if (!json_is_string(v) || !one_of(json_string_value(v), statuses))
		FAIL("status: must be one of ok, partial, no_device, failed");
	v = json_object_get(root, "mode");
	if (!json_is_string(v) || !one_of(json_string_value(v), modes))
		FAIL("mode: must be one of quick, full, custom");
	v = json_object_get(root, "started_at");
	if (!json_is_string(v) || !is_rfc3339(json_string_value(v)))
		FAIL("started_at: must be an RFC 3339 time");
	v = json_object_get(root, "finished_at");
	if (!json_is_string(v) || !is_rfc3339(json_string_value(v)))
		FAIL("finished_at: must be an RFC 3339 time");
	v = json_object_get(root, "probe_version");
	if (!json_is_string(v) || json_string_length(v) == 0)
		FAIL("probe_version: must be a non-empty string");
	node = json_object_get(root, "node");
	if (!json_is_object(node))
		FAIL("node: must be an object");
	v = json_object_get(node, "hostname");
	if (!json_is_string(v) || json_string_length(v) == 0)
		FAIL("node.hostname: must be a non-empty string");
	v = json_object_get(node, "gpu_count");
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		FAIL("node.gpu_count: must be an integer >= 0");
	gpus = json_object_get(root, "gpus");
	if (!json_is_array(gpus))
		FAIL("gpus: must be an array");
	json_array_foreach(gpus, i, x)
	{
		v = json_object_get(x, "index");
		if (!json_is_object(x) || !json_is_integer(v) ||
		    json_integer_value(v) < 0)
			FAIL("gpus[%zu].index: must be an integer >= 0", i);
		v = json_object_get(x, "uuid");
		if (!json_is_string(v))
			FAIL("gpus[%zu].uuid: must be a string", i);
	}
	results = json_object_get(root, "results");
	if (!json_is_array(results))
		FAIL("results: must be an array");
	json_array_foreach(results, i, x)
	{
		const char *const *k;
		if (!json_is_object(x))
			FAIL("results[%zu]: must be an object", i);
		v = json_object_get(x, "metric");
		if (!json_is_string(v) ||
		    !probe_metric_known(json_string_value(v)))
			FAIL("results[%zu].metric: unknown metric", i);
		v = json_object_get(x, "unit");
		if (!json_is_string(v) || !one_of(json_string_value(v), units))
			FAIL("results[%zu].unit: must be one of TFLOP/s, "
			     "TOP/s, GB/s, us",
			     i);
		v = json_object_get(x, "status");
		if (!json_is_string(v) ||
		    !one_of(json_string_value(v), rstatuses))
			FAIL("results[%zu].status: must be one of ok, "
			     "skipped, failed",
			     i);
		if (strcmp(json_string_value(v), "ok") != 0) {
			v = json_object_get(x, "reason");
			if (!json_is_string(v) || json_string_length(v) == 0)
				FAIL("results[%zu].reason: required when "
				     "status is not ok",
				     i);
		} else if (!json_is_number(json_object_get(x, "median"))) {
			FAIL("results[%zu].median: required when status is "
			     "ok",
			     i);
		}
		v = json_object_get(x, "gpu_index");
		if (v && !json_is_null(v) &&
		    !(json_is_integer(v) && json_integer_value(v) >= 0))
			FAIL("results[%zu].gpu_index: must be null or an "
			     "integer >= 0",
			     i);
		for (k = stat_keys; *k; k++)
			if (!nullable_number(x, *k))
				FAIL("results[%zu].%s: must be a number or "
				     "null",
				     i, *k);
		v = json_object_get(x, "n");
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			FAIL("results[%zu].n: must be an integer >= 0", i);
	}
	return 0;
}

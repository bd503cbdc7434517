#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "util.h"

/* contract.h's list, shared with the service (handlers/benchmarks.c). */
static const char *const known_metrics[] = {PROBE_METRICS(PROBE_METRIC_STRING)};

const char *const *probe_metric_names(size_t *n)
{
	*n = sizeof(known_metrics) / sizeof(known_metrics[0]);
	return known_metrics;
}

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
	res->status = PROBE_RESULT_OK;
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
	r->status = PROBE_RUN_OK;
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
	free(r->node.gpu_uuids);
	r->results = NULL;
	r->gpus = NULL;
	r->node.gpu_uuids = NULL;
	r->node.n_gpu_uuids = 0;
	r->node.gpu_uuids_known = 0;
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

static double round6(double v);

/* A figure the server takes once rounded the way the encoder writes it:
 * 0, or finite and 1e-9 to 1e15 in magnitude. */
static int reportable(double v)
{
	v = round6(v);
	return v == 0 || (isfinite(v) && fabs(v) >= PROBE_NUMBER_MIN &&
			  fabs(v) <= PROBE_NUMBER_MAX);
}

int probe_result_set_samples(struct probe_result *res, const double *s,
			     size_t n)
{
	free(res->samples);
	res->samples = NULL;
	res->n_samples = 0;
	if (n == 0 || n > PROBE_N_MAX)
		return probe_stats_compute(s, 0, &res->stats);
	res->samples = malloc(n * sizeof(*s));
	if (res->samples == NULL)
		return -1;
	memcpy(res->samples, s, n * sizeof(*s));
	res->n_samples = n;
	if (probe_stats_compute(s, n, &res->stats) != 0)
		return -1;
	return reportable(res->stats.median) ? 0 : -1;
}

void probe_result_skip(struct probe_result *res, int partial, const char *fmt,
		       ...)
{
	va_list ap;

	res->status = PROBE_RESULT_SKIPPED;
	res->partial = partial;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

void probe_result_fail(struct probe_result *res, const char *fmt, ...)
{
	va_list ap;

	res->status = PROBE_RESULT_FAILED;
	res->partial = 1;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

void probe_report_finalize_status(struct probe_report *r)
{
	size_t i, ok = 0, bad = 0;

	if (r->status == PROBE_RUN_NO_DEVICE)
		return;
	for (i = 0; i < r->n_results; i++) {
		const struct probe_result *x = &r->results[i];
		if (x->status == PROBE_RESULT_OK)
			ok++;
		else if (x->status == PROBE_RESULT_FAILED || x->partial)
			bad++;
	}
	if (bad == 0)
		r->status = PROBE_RUN_OK;
	else if (ok == 0)
		r->status = PROBE_RUN_FAILED;
	else
		r->status = PROBE_RUN_PARTIAL;
}

/* --- encoding helpers: NaN / sentinel -> null --- */

static json_t *jint(long long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* Invalid UTF-8 (a driver's string, say) is written as null. */
static json_t *jstr(const char *s)
{
	json_t *v = NULL;
	char *shown;

	/* every string of a report is shown text (probe_shown_text_clean):
	 * a library's message with a line break must not lose the report */
	if (s && *s && (shown = strdup(s)) != NULL) {
		probe_shown_text_clean(shown);
		v = json_string(shown);
		free(shown);
	}
	return v ? v : json_null();
}

/* A count or index the server bounds: outside [0, max] is null. */
static json_t *jint_max(long long v, long long max)
{
	return v >= 0 && v <= max ? json_integer(v) : json_null();
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

/* Every real is written rounded, and null when the server would refuse
 * it (not finite, or not 0 or 1e-9 to 1e15 in magnitude). */
static json_t *jnum6(double v)
{
	return reportable(v) ? json_real(round6(v)) : json_null();
}

void probe_hostname_sanitize(const char *in, char *out, size_t outlen)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
				 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	size_t i, max = outlen - 1;

	if (outlen == 0)
		return;
	if (max > PROBE_HOSTNAME_MAX)
		max = PROBE_HOSTNAME_MAX;
	for (i = 0; in && in[i] && i < max; i++)
		out[i] = strchr(ok, in[i]) ? in[i] : '-';
	out[i] = '\0';
	if (i == 0)
		probe_strlcpy(out, "unknown", outlen);
}

/* At most max bytes of s, never ending inside a UTF-8 sequence. */
static json_t *jstr_cut(const char *s, size_t max)
{
	char buf[1024];
	size_t n = strlen(s);

	if (n > max && max < sizeof(buf)) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		memcpy(buf, s, n);
		buf[n] = '\0';
		return jstr(buf);
	}
	return jstr(s);
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

/* uuids: the GPUs written to gpus[] (a result may only name those). */
static json_t *result_json(const struct probe_result *x, const json_t *uuids)
{
	json_t *o = json_object(), *arr;
	size_t i;
	int ok = x->status == PROBE_RESULT_OK;
	const char *status = probe_result_status_name(x->status);
	const char *reason = x->reason;

	/* A figure the server cannot take is no measurement to report. */
	if (ok && (!reportable(x->stats.median) || x->stats.n < 0 ||
		   x->stats.n > PROBE_N_MAX)) {
		ok = 0;
		status = "failed";
		reason = "median or sample count outside the range the server "
			 "accepts (0 or 1e-9 <= |x| <= 1e15, n <= "
			 "1000000)";
	}
	/* a CUDA ordinal the server takes (review s17c F10: [0, 256]) */
	json_object_set_new(o, "gpu_index",
			    jint_max(x->gpu_index, PROBE_MAX_GPUS));
	json_object_set_new(o, "gpu_uuid",
			    json_object_get(uuids, x->gpu_uuid)
				? json_string(x->gpu_uuid)
				: json_null());
	json_object_set_new(o, "metric", json_string(x->metric));
	json_object_set_new(o, "dtype", jstr(x->dtype));
	json_object_set_new(o, "method", jstr(x->method));
	json_object_set_new(o, "peer_index",
			    jint_max(x->peer_index, PROBE_MAX_GPUS));
	json_object_set_new(o, "peer_uuid", jstr(x->peer_uuid));
	json_object_set_new(o, "size_bytes",
			    jint_max(x->size_bytes, PROBE_SIZE_BYTES_MAX));
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
	json_object_set_new(o, "status", json_string(status));
	json_object_set_new(o, "reason", jstr(reason));
	json_object_set_new(o, "median", jnum6(ok ? x->stats.median : NAN));
	json_object_set_new(o, "max", jnum6(ok ? x->stats.max : NAN));
	json_object_set_new(o, "mean", jnum6(ok ? x->stats.mean : NAN));
	json_object_set_new(o, "p10", jnum6(ok ? x->stats.p10 : NAN));
	json_object_set_new(o, "p90", jnum6(ok ? x->stats.p90 : NAN));
	json_object_set_new(o, "cv", jnum6(ok ? x->stats.cv : NAN));
	json_object_set_new(o, "n", json_integer(ok ? x->stats.n : 0));
	json_object_set_new(o, "limit", jnum6(x->limit));
	json_object_set_new(o, "limit_basis",
			    reportable(x->limit) ? jstr(x->limit_basis)
						 : json_null());
	json_object_set_new(o, "limit_source",
			    reportable(x->limit) ? jstr(x->limit_source)
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
	/* numbers >= 0, as the server takes them (review s17c F10): a
	 * sample that is not (a timing gone wrong) is left out */
	for (i = 0; ok && i < x->n_samples; i++)
		if (probe_typed_elem_ok(round6(x->samples[i])))
			json_array_append_new(arr,
					      json_real(round6(x->samples[i])));
	json_object_set_new(o, "samples", arr);
	return o;
}

static json_t *gpu_json(const struct probe_gpu *g)
{
	json_t *o = json_object(), *p, *l;

	json_object_set_new(o, "index", json_integer(g->index));
	json_object_set_new(o, "uuid", jstr(g->uuid));
	json_object_set_new(o, "name", jstr_cut(g->name, PROBE_GPU_NAME_MAX));
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

/* 1 when uuid can be listed: 1..96 bytes of valid UTF-8, shown text as
 * it is (results name it verbatim), not in uuids (seen before). */
static int uuid_listable(const char *uuid, const json_t *uuids)
{
	size_t n = strlen(uuid);
	json_t *t;

	if (n == 0 || n > PROBE_GPU_UUID_MAX || !probe_shown_text_ok(uuid) ||
	    json_object_get(uuids, uuid))
		return 0;
	t = json_string(uuid);
	json_decref(t);
	return t != NULL;
}

/* 1 when g can be listed: a listable UUID, an index in [0, 256]. */
static int gpu_listable(const struct probe_gpu *g, const json_t *uuids)
{
	return g->index >= 0 && g->index <= PROBE_MAX_GPUS &&
	       uuid_listable(g->uuid, uuids);
}

/* node.gpu_uuids, or null unless the list is one the checker takes: at
 * least 1 and at most PROBE_MAX_GPUS UUIDs uuid_listable takes (1..96 bytes of
 * shown text, none twice), holding every UUID written to gpus[] (uuids).
 * probe_gpu_uuids_decide made it so; this keeps a hand-filled report from
 * telling the server that GPUs left the node. */
static json_t *gpu_uuids_json(const struct probe_node *node,
			      const json_t *uuids)
{
	json_t *arr = NULL, *seen = NULL; /* owned */
	const char *key;
	json_t *v;
	size_t i;
	int ok = 0;

	/* never empty: that would remove every GPU of the node (review
	 * s25a F7) */
	if (!node->gpu_uuids_known || node->n_gpu_uuids == 0 ||
	    node->n_gpu_uuids > PROBE_MAX_GPUS || node->gpu_uuids == NULL)
		goto out;
	arr = json_array();
	seen = json_object();
	if (arr == NULL || seen == NULL)
		goto out;
	for (i = 0; i < node->n_gpu_uuids; i++) {
		const char *u = node->gpu_uuids[i];

		if (memchr(u, '\0', sizeof(node->gpu_uuids[i])) == NULL ||
		    !uuid_listable(u, seen))
			goto out;
		json_object_set_new(seen, u, json_true());
		json_array_append_new(arr, json_string(u));
	}
	json_object_foreach((json_t *)uuids, key, v)
	{
		if (!json_object_get(seen, key))
			goto out;
	}
	ok = 1;
out:
	json_decref(seen);
	if (!ok) {
		json_decref(arr);
		arr = json_null();
	}
	return arr;
}

json_t *probe_report_to_json(const struct probe_report *r)
{
	json_t *o = json_object(), *node = json_object(), *arr;
	json_t *uuids = json_object();
	char host[PROBE_HOSTNAME_MAX + 1];
	size_t i;

	if (o == NULL || node == NULL || uuids == NULL) {
		json_decref(o);
		json_decref(node);
		json_decref(uuids);
		return NULL;
	}
	json_object_set_new(o, "schema_version",
			    json_integer(PROBE_SCHEMA_VERSION));
	json_object_set_new(o, "run_id", json_string(r->run_id));
	json_object_set_new(o, "status",
			    json_string(probe_run_status_name(r->status)));
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
	probe_hostname_sanitize(r->node.hostname, host, sizeof(host));
	json_object_set_new(node, "hostname", json_string(host));
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
	for (i = 0; i < r->n_gpus && json_array_size(arr) < PROBE_MAX_GPUS;
	     i++) {
		if (!gpu_listable(&r->gpus[i], uuids))
			continue;
		json_object_set_new(uuids, r->gpus[i].uuid, json_true());
		json_array_append_new(arr, gpu_json(&r->gpus[i]));
	}
	json_object_set_new(o, "gpus", arr);
	/* after gpus[]: the list must hold every UUID written there */
	json_object_set_new(node, "gpu_uuids", gpu_uuids_json(&r->node, uuids));
	arr = json_array();
	for (i = 0; i < r->n_results && i < PROBE_MAX_RESULTS; i++)
		json_array_append_new(arr, result_json(&r->results[i], uuids));
	json_object_set_new(o, "results", arr);
	json_decref(uuids);
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

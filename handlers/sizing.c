/* sizing.c - shared plumbing of the sizing endpoints. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "engine/formulas.h"
#include "handlers/calib.h"
#include "handlers/names.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/util.h"
#include "storage/catalog.h"
#include "storage/recs.h"

const char *const calib_mode_names[] = {"auto", "datasheet", "measured", NULL};

json_t *sizing_real(double x, int digits)
{
	/* jansson has no NaN or Infinity (json_real answers NULL, and the
	 * member would silently go missing): null, which sizing_persist
	 * refuses as a 500 naming the member. Beyond 1e+-290 a number is
	 * written unrounded (issue 15: a subnormal price made 10^p inf). */
	if (!isfinite(x))
		return json_null();
	return json_real(x == 0 ? 0 : fx_round_sig(x, digits)); /* -0 too */
}

/* Catalog GPU -> engine hardware description. */
static void gpu_to_hw(const struct store_gpu *g, struct hw_spec *hw)
{
	const char *link = g->intra_node_link;

	memset(hw, 0, sizeof(*hw));
	/* names are at most 64 bytes (migrations/0001); hw_spec keeps 63 */
	snprintf(hw->name, sizeof(hw->name), "%.*s", (int)sizeof(hw->name) - 1,
		 g->name);
	hw->memory_gib = g->memory_gib;
	hw->peak_tflops[ENG_FP64] = g->fp64_tflops;
	hw->peak_tflops[ENG_FP32] = g->fp32_tflops;
	hw->peak_tflops[ENG_TF32] = g->tf32_tflops;
	hw->peak_tflops[ENG_FP16] = g->fp16_tflops;
	hw->peak_tflops[ENG_BF16] = g->bf16_tflops;
	hw->peak_tflops[ENG_FP8] = g->fp8_tflops;
	hw->peak_tflops[ENG_INT8] = g->int8_tops;
	hw->memory_bandwidth_gbps = g->memory_bandwidth_gbps;
	hw->intra_node_link = !link[0]			? HW_LINK_NONE
			      : !strcmp(link, "nvlink") ? HW_LINK_NVLINK
			      : !strcmp(link, "infinity_fabric") ? HW_LINK_XGMI
								 : HW_LINK_PCIE;
	hw->intra_node_gbps = g->intra_node_gbps;
	hw->max_gpus_per_node = g->max_gpus_per_node;
	hw->inter_node_gbps = g->inter_node_gbps;
	hw->price_per_gpu_hour = g->price_per_gpu_hour;
	/* A price stored before the floor (1e-310) is no price: compare
	 * asks for one rather than rank a GPU that looks free (issue 15).
	 */
	if (!(hw->price_per_gpu_hour >= SIZING_MIN_PRICE))
		hw->price_per_gpu_hour = 0;
	hw->gemm_peak_fraction = g->gemm_peak_fraction;
	if (!g->efficiency_basis[0] ||
	    hw_eff_basis_parse(g->efficiency_basis, &hw->efficiency_basis) != 0)
		hw->efficiency_basis = HW_EFF_DATASHEET_ONLY;
	hw->host_link_gbps = hw_pcie_gbps(g->pcie_gen, g->pcie_width);
	hw->board_power_w = g->power_w;
	if (sscanf(g->compute_capability, "%d.%d", &hw->cc_major,
		   &hw->cc_minor) != 2)
		hw->cc_major = hw->cc_minor = 0;
}

/* The 400 for a GPU name the catalog lacks, with its closest names. */
static void gpu_unknown(struct response *res, const char *field,
			const char *name, char (*suggest)[80], int n)
{
	problem_field(res, field,
		      "unknown GPU \"%.64s\"; GET /v1/gpus lists the catalog",
		      name);
	names_suggest(res, suggest, n);
}

bool sizing_gpu_known(struct app *app, const char *name, const char *field,
		      struct response *res)
{
	struct store_gpu row;
	struct store_err e;
	char canon[80], suggest[3][80];
	int n = 0;

	if (store_gpu_get_spec(app->db, name, &row, &e) == STORE_OK ||
	    e.status != STORE_NOT_FOUND ||
	    names_resolve(app, NAMES_GPU, name, canon, sizeof(canon), suggest,
			  3, &n) == 0)
		return true;
	gpu_unknown(res, field, name, suggest, n);
	return false;
}

enum store_status sizing_catalog_hw(struct app *app, const char *name,
				    struct hw_spec *hw, struct store_err *e)
{
	struct store_gpu row;

	if (store_gpu_get_spec(app->db, name, &row, e) != STORE_OK)
		return e->status;
	gpu_to_hw(&row, hw);
	return STORE_OK;
}

int sizing_load_gpu(struct app *app, const char *name, const char *field,
		    enum calib_mode mode, const char *calib_field,
		    struct hw_spec *hw, struct calib_info *ci,
		    struct store_gpu *row, struct response *res)
{
	struct store_err e;

	if (store_gpu_get_spec(app->db, name, row, &e) != STORE_OK) {
		char canon[80], suggest[3][80];
		int n = 0;

		if (e.status == STORE_NOT_FOUND &&
		    names_resolve(app, NAMES_GPU, name, canon, sizeof(canon),
				  suggest, 3, &n) == 0)
			store_gpu_get_spec(app->db, canon, row, &e);
		if (e.status == STORE_NOT_FOUND) {
			int shared = names_prefix_entries(app, NAMES_GPU, name);
			/* a short name several entries start with (one added
			 * later, whose PUT warned) is not "unknown" */
			if (shared > 1) {
				problem_field(
				    res, field,
				    "\"%.64s\" starts %d catalog GPU names; "
				    "give the full name",
				    name, shared);
				names_suggest(res, suggest, n);
			} else {
				gpu_unknown(res, field, name, suggest, n);
			}
		}
		if (e.status != STORE_OK) {
			if (e.status != STORE_NOT_FOUND)
				problem_store(res, &e, "gpu");
			return -1;
		}
	}
	gpu_to_hw(row, hw);
	/* the catalog's own name: probe results are filed under it, not
	 * under the alias the request may have used ("h100") */
	return calib_apply(app, row->name, mode, hw, ci, field, calib_field,
			   res) != 0
		   ? -1
		   : 0;
}

int sizing_power_limit(struct hw_spec *hw, const char *gpu, double limit_w,
		       double slope, const char *field, struct response *res)
{
	double board = hw->board_power_w;
	double lo = hw_power_cap_min_fraction() * board;

	hw->power_cap_slope = slope;
	if (!(limit_w > 0))
		return 0;
	if (!(board > 0)) {
		problem_field(res, field,
			      "GPU \"%s\" has no board power (power_w) in the "
			      "catalog to scale from; PUT /v1/gpus/%s with one",
			      gpu, gpu);
		return -1;
	}
	if (limit_w > board || limit_w < lo) {
		problem_field(res, field,
			      "must lie between %g and %g W for \"%s\" "
			      "(%g %% to 100 %% of its %g W board power: the "
			      "measured range of the power-cap slope)",
			      lo, board, gpu, 100 * hw_power_cap_min_fraction(),
			      board);
		return -1;
	}
	hw->power_limit_w = limit_w;
	return 0;
}

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The status of an answer whose client left first (nginx's convention);
 * it is logged and counted, never sent to anyone. */
#define HTTP_CLIENT_CLOSED 499

/* Whether the peer has closed the connection: a peek that reads end of
 * file or a reset. Bytes waiting (a pipelined request) mean it is still
 * there; nothing is consumed. Other errors (not a socket: a request built
 * by a test) say nothing about a client. */
static bool client_gone(int fd)
{
	char c;
	ssize_t n;

	if (fd < 0)
		return false;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0)
		return true;
	return n < 0 && (errno == ECONNRESET || errno == ENOTCONN ||
			 errno == EPIPE || errno == ETIMEDOUT);
}

static bool budget_stop(void *arg)
{
	struct sizing_budget *b = arg;

	if (atomic_load(&b->app->cancel_work))
		b->why = "shutdown";
	else if (mono_ms() > b->deadline_ms)
		b->why = "deadline";
	else if (client_gone(b->client_fd))
		b->why = "client_gone";
	return b->why != NULL;
}

static void budget_problem(struct response *res, const struct sizing_budget *b);

/* The admission gate: searches running, and a condition variable on the
 * monotonic clock (deadlines are CLOCK_MONOTONIC). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv;
static pthread_once_t gate_once = PTHREAD_ONCE_INIT;
static int gate_running;

static void gate_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&gate_cv, &a);
	pthread_condattr_destroy(&a);
}

int sizing_admit(struct sizing_budget *b, struct response *res)
{
	int slots =
	    b->app->engine_concurrency > 0 ? b->app->engine_concurrency : 1;

	pthread_once(&gate_once, gate_init);
	pthread_mutex_lock(&gate_mu);
	while (gate_running >= slots && !budget_stop(b)) {
		/* wake at least every 100 ms to see a client leave */
		long long until = mono_ms() + 100;
		struct timespec ts;

		if (until > b->deadline_ms)
			until = b->deadline_ms;
		ts.tv_sec = (time_t)(until / 1000);
		ts.tv_nsec = (long)(until % 1000) * 1000000L;
		pthread_cond_timedwait(&gate_cv, &gate_mu, &ts);
	}
	if (gate_running >= slots) {
		pthread_mutex_unlock(&gate_mu);
		budget_problem(res, b);
		return -1;
	}
	gate_running++;
	b->admitted = true;
	pthread_mutex_unlock(&gate_mu);
	return 0;
}

void sizing_budget_end(struct sizing_budget *b)
{
	if (!b->admitted)
		return;
	pthread_mutex_lock(&gate_mu);
	gate_running--;
	b->admitted = false;
	pthread_cond_signal(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

void sizing_budget_init(struct sizing_budget *b, struct app *app,
			const struct request *req)
{
	memset(b, 0, sizeof(*b));
	b->app = app;
	b->client_fd = req->client_fd;
	b->deadline_ms =
	    mono_ms() +
	    (app->engine_timeout_ms > 0 ? app->engine_timeout_ms : 10000);
	b->eng.max_units = app->engine_max_steps > 0 ? app->engine_max_steps
						     : ENG_BUDGET_DEFAULT_UNITS;
	b->eng.stop = budget_stop;
	b->eng.arg = b;
}

/* Work the budget's stop ended: the client will not read an answer when it
 * has gone (the log says why); otherwise the server is draining or
 * saturated, and the same request is worth retrying later. */
static void budget_problem(struct response *res, const struct sizing_budget *b)
{
	const char *why = b && b->why ? b->why : "stopped";

	/* No one reads it: nginx's 499 "client closed request", so that the
	 * request log (info) and gpusizer_http_requests_total keep it out of
	 * the server errors the 5xx alert watches (review s23a F2: a client's
	 * short timeout had counted as a 503 and could page). */
	if (!strcmp(why, "client_gone")) {
		problem(res, HTTP_CLIENT_CLOSED, "client-closed-request",
			"Client closed request",
			"the client closed the connection before the answer");
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "engine work stopped: client_gone");
		return;
	}
	problem(res, 503, "unavailable", "Service unavailable", "%s",
		!strcmp(why, "shutdown")
		    ? "the server is shutting down; retry on another "
		      "instance"
		    : "the server is too busy to finish this sizing within "
		      "its engine time limit; retry later");
	res->retry_after_s = 2;
	snprintf(res->log_detail, sizeof(res->log_detail),
		 "engine work stopped: %s", why);
}

void sizing_engine_problem(struct response *res, const struct eng_error *err,
			   const struct sizing_budget *b)
{
	const char *field = err->field[0] ? err->field : "request";

	if (err->code == ENG_EINVAL) {
		problem_field(res, field, "%s", err->message);
		return;
	}
	if (err->code == ENG_ECANCELLED) {
		budget_problem(res, b);
		return;
	}
	if (err->code == ENG_EBUDGET)
		problem(res, 422, "search-too-large",
			"The layout search is too large", "%s: %s", field,
			err->message);
	else if (err->code == ENG_EUNSUPPORTED)
		problem(res, 422, "unsupported", "Not supported by this GPU",
			"%s: %s", field, err->message);
	else
		problem(res, 422, "infeasible", "No plan satisfies the request",
			"%s: %s", field, err->message);
	json_object_set_new(
	    res->json, "errors",
	    json_pack("[{s:s, s:s}]", "field", field, "message", err->message));
}

static json_t *rate_json(const struct hw_rate *r, const char *unit,
			 const struct calib_info *ci)
{
	json_t *o =
	    json_pack("{s:o, s:s, s:o}", "value", sizing_real(r->value, 4),
		      "unit", unit, "datasheet", sizing_real(r->datasheet, 5));
	if (r->measured) {
		json_object_set_new(o, "source", json_string("measured"));
		json_object_set_new(o, "samples", json_integer(r->samples));
		json_object_set_new(o, "window_days",
				    json_integer(ci ? ci->window_days : 0));
		/* A measured GEMM rate derives from a probe median: a
		 * best-shape one keeps the in-step share the datasheet path
		 * assumes, a sustained one has its plan's shapes taken out
		 * (engine/hw.h): say which, and each factor. */
		if (r->measured_metric) {
			json_object_set_new(o, "measured_metric",
					    json_string(r->measured_metric));
			json_object_set_new(o, "measured_median",
					    sizing_real(r->measured_median, 4));
			json_object_set_new(o, "in_step_retention",
					    sizing_real(r->retention, 3));
			if (r->plan_shape_factor > 0.0)
				json_object_set_new(
				    o, "plan_shape_factor",
				    sizing_real(r->plan_shape_factor, 4));
		}
		/* the median (after its shape factor) came out above the
		 * datasheet figure, and the value is held there (engine/hw.c
		 * cap_at_datasheet; review s17c F3, F9) */
		if (r->capped)
			json_object_set_new(o, "capped_at_datasheet",
					    json_true());
	} else {
		json_object_set_new(o, "source",
				    json_string(r->datasheet_given
						    ? "request×efficiency"
						    : "datasheet×efficiency"));
		json_object_set_new(o, "efficiency",
				    sizing_real(r->efficiency, 3));
		json_object_set_new(
		    o, "efficiency_source",
		    json_string(r->efficiency_given ? "request" : "default"));
	}
	return o;
}

json_t *sizing_power_limit_json(const struct hw_power_cap *p)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:b}", "limit_w",
			 sizing_real(p->limit_w, 6), "board_power_w",
			 sizing_real(p->board_power_w, 6), "slope",
			 sizing_real(p->slope, 4), "ratio",
			 sizing_real(p->ratio, 4), "applied", p->applied);
}

void sizing_calib_warnings(json_t *warnings, const struct calib_info *ci)
{
	char list[512] = "";
	size_t used = 0;

	if (ci->n_ignored <= 0)
		return;
	for (int i = 0; i < ci->n_ignored && i < CALIB_MAX_IGNORED; i++) {
		const struct calib_ignored *g = &ci->ignored[i];
		int w = snprintf(list + used, sizeof(list) - used,
				 "%s%s %.4g (%.2fx) in %d run%s", i ? ", " : "",
				 g->metric, g->median, g->median / g->datasheet,
				 g->runs, g->runs == 1 ? "" : "s");

		if (w < 0 || (size_t)w >= sizeof(list) - used)
			break;
		used += (size_t)w;
	}
	json_array_append_new(
	    warnings,
	    json_sprintf("probe runs measuring above %.2gx or below %.2gx this "
			 "GPU type's datasheet figure (the all-reduce: above "
			 "%.2gx its link's one-way rate), which no working GPU "
			 "of the type measures, were not used (a probe report "
			 "filed under the wrong GPU type, a faulty probe or a "
			 "wrong unit? GET /v1/fleet shows each type's "
			 "calibration): %s",
			 CALIB_PLAUSIBLE_MAX_RATIO, CALIB_PLAUSIBLE_MIN_RATIO,
			 CALIB_BUSBW_MAX_RATIO, list));
}

json_t *sizing_basis_json(const struct hw_basis *b, const struct calib_info *ci)
{
	static const struct {
		const char *key, *unit;
		size_t offset;
	} rates[] = {
	    {"gemm_tflops", "TFLOP/s", offsetof(struct hw_basis, gemm_tflops)},
	    {"hbm_gbps", "GB/s", offsetof(struct hw_basis, hbm_gbps)},
	    {"intra_node_gbps", "GB/s",
	     offsetof(struct hw_basis, intra_node_gbps)},
	    {"inter_node_gbps", "GB/s",
	     offsetof(struct hw_basis, inter_node_gbps)},
	};
	json_t *o = json_object();

	/* Rates a sizing did not use (inference has no inter-node traffic)
	 * are left out rather than shown as zeros.
	 */
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		const struct hw_rate *r =
		    (const struct hw_rate *)((const char *)b + rates[i].offset);
		if (r->value > 0 || r->datasheet > 0)
			json_object_set_new(o, rates[i].key,
					    rate_json(r, rates[i].unit, ci));
	}
	/* the GEMM's efficiency is the catalog's (efficiency_basis below),
	 * no request's */
	json_object_del(json_object_get(o, "gemm_tflops"), "efficiency_source");
	/* What the GEMM efficiency rests on (the catalog entry's basis),
	 * unless the fleet's own probes measured it. */
	if (!b->gemm_tflops.measured)
		json_object_set_new(
		    json_object_get(o, "gemm_tflops"), "efficiency_basis",
		    json_string(hw_eff_basis_name(b->gemm_efficiency_basis)));
	/* A power limit the request asked for: what it did to the tensor-
	 * core rates (hw_power_cap_ratio), or that measured rates, which ran
	 * under their nodes' own limits, kept it from applying. */
	if (b->power_cap.limit_w > 0)
		json_object_set_new(json_object_get(o, "gemm_tflops"),
				    "power_limit",
				    sizing_power_limit_json(&b->power_cap));
	json_object_set_new(o, "calibration",
			    json_string(calib_mode_names[ci->mode]));
	json_object_set_new(o, "probe_runs", json_integer(ci->runs));
	if (ci->n_ignored > 0) {
		json_t *a = json_array();

		for (int i = 0; i < ci->n_ignored && i < CALIB_MAX_IGNORED; i++)
			json_array_append_new(
			    a,
			    json_pack("{s:s, s:o, s:o, s:i}", "metric",
				      ci->ignored[i].metric, "median",
				      sizing_real(ci->ignored[i].median, 5),
				      "datasheet",
				      sizing_real(ci->ignored[i].datasheet, 5),
				      "runs", ci->ignored[i].runs));
		json_object_set_new(o, "ignored_measurements", a);
	}
	/* nodes left out as degraded (review s17c F2): the rate is the
	 * other nodes' */
	if (ci->n_degraded > 0) {
		json_t *a = json_array();

		for (int i = 0; i < ci->n_degraded && i < CALIB_MAX_IGNORED;
		     i++)
			json_array_append_new(
			    a, json_pack("{s:s, s:o, s:i}", "metric",
					 ci->degraded[i].metric, "median",
					 sizing_real(ci->degraded[i].median, 5),
					 "nodes", ci->degraded[i].nodes));
		json_object_set_new(o, "degraded_nodes_left_out", a);
	}
	/* plausible figures set aside, and why (review s19c F1, F2) */
	if (ci->n_set_aside > 0) {
		json_t *a = json_array();

		for (int i = 0; i < ci->n_set_aside && i < CALIB_MAX_IGNORED;
		     i++)
			json_array_append_new(
			    a,
			    json_pack("{s:s, s:o, s:i, s:s}", "metric",
				      ci->set_aside[i].metric, "median",
				      sizing_real(ci->set_aside[i].median, 5),
				      "nodes", ci->set_aside[i].nodes, "reason",
				      ci->set_aside[i].reason));
		json_object_set_new(o, "set_aside_measurements", a);
	}
	return o;
}

/* Members an answer may hold as null, each "not applicable" in the
 * contract (openapi.yaml): the load of a capacity-only inference
 * (assumptions.load_value), a serving engine's unset limits, and a basis
 * without plans.
 */
static const char *const nullable_members[] = {
    "load_value", "max_num_seqs", "max_num_batched_tokens", "serving", NULL};

/* Top-level members every answer of a kind has (openapi.yaml). */
static const struct {
	const char *kind;
	const char *const members[12];
} answer_members[] = {
    {"training",
     {"model", "gpu", "global_batch_size", "flops", "min_gpus",
      "min_gpus_no_offload", "layouts_evaluated", "plans", "checks", "basis",
      "assumptions", NULL}},
    {"inference",
     {"model", "gpu", "memory", "plans", "warnings", "basis", "assumptions",
      NULL}},
    {"compare",
     {"job", "model", "verdict", "rows", "time_basis", "cost_basis", NULL}},
};

static int nullable(const char *key)
{
	for (int i = 0; nullable_members[i]; i++)
		if (!strcmp(key, nullable_members[i]))
			return 1;
	return 0;
}

/* Finds a member of j that is null without being nullable: a number that
 * was not finite (sizing_real). Writes its path ("plans[0].time_s.step")
 * to path[at..] and returns 1; 0 when j is whole.
 */
static int null_member(const json_t *j, char *path, size_t len, size_t at)
{
	const char *key;
	json_t *x;
	size_t i;

	if (at >= len)
		return 0;
	if (json_is_object(j)) {
		json_object_foreach((json_t *)j, key, x)
		{
			size_t n =
			    at + (size_t)snprintf(path + at, len - at, "%s%s",
						  at ? "." : "", key);
			if ((json_is_null(x) && !nullable(key)) ||
			    null_member(x, path, len, n < len ? n : len - 1))
				return 1;
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, x)
		{
			size_t n = at + (size_t)snprintf(path + at, len - at,
							 "[%zu]", i);
			if (json_is_null(x) ||
			    null_member(x, path, len, n < len ? n : len - 1))
				return 1;
		}
	}
	path[at] = '\0';
	return 0;
}

/* 0 when answer (of kind "training", "inference" or "compare") and its
 * summary were built whole: both non-NULL, the kind's top-level members
 * present, and no null where a number belongs (sizing_real of a value
 * that was not finite). Otherwise a 500 problem in res whose log detail
 * names the member, and -1.
 */
static int sizing_answer_check(const char *kind, const json_t *answer,
			       const json_t *summary, struct response *res)
{
	char path[200] = "";
	const char *missing = NULL;

	for (size_t k = 0;
	     answer && k < sizeof(answer_members) / sizeof(answer_members[0]);
	     k++)
		if (!strcmp(kind, answer_members[k].kind))
			for (int i = 0;
			     !missing && answer_members[k].members[i]; i++)
				if (!json_object_get(
					answer, answer_members[k].members[i]))
					missing = answer_members[k].members[i];
	if (!answer || !summary)
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "%s answer: the %s did not build (a member was not a "
			 "number jansson can hold, or out of memory)",
			 kind, answer ? "summary" : "answer");
	else if (missing)
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "%s answer: member %s is missing", kind, missing);
	else if (null_member(answer, path, sizeof(path), 0))
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "%s answer: member %s is not a finite number", kind,
			 path);
	else if (null_member(summary, path, sizeof(path), 0))
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "%s summary: member %s is not a finite number", kind,
			 path);
	else
		return 0;
	problem(res, 500, "internal", "Internal error",
		"the answer could not be built; nothing was stored, and the "
		"log has the details under this request id");
	return -1;
}

/* A deep copy of j without null members (null counts as not given) and
 * with whole reals as integers (below). */
static json_t *without_nulls(const json_t *j)
{
	const char *key;
	json_t *x, *out;
	size_t i;

	if (json_is_object(j)) {
		out = json_object();
		json_object_foreach((json_t *)j, key, x)
		{
			if (!json_is_null(x))
				json_object_set_new(out, key, without_nulls(x));
		}
		return out;
	}
	if (json_is_array(j)) {
		out = json_array();
		json_array_foreach(j, i, x)
		{
			json_array_append_new(out, without_nulls(x));
		}
		return out;
	}
	/* an integer written as a whole real (2048.0, 1e3) is echoed and
	 * stored as the integer, as API.md says: a typed client reading
	 * history (Go's int) fails on 2048.0 (review s17b F5); within 2^53,
	 * where a double holds every integer */
	if (json_is_real(j) && fabs(json_real_value(j)) <= 9007199254740992.0 &&
	    json_real_value(j) == floor(json_real_value(j)))
		return json_integer((json_int_t)json_real_value(j));
	return json_deep_copy(j);
}

json_t *sizing_request_json(const json_t *body, const char *model_name,
			    const char *gpu_name)
{
	json_t *r = without_nulls(body);

	if (json_is_string(json_object_get(r, "model")) && model_name)
		json_object_set_new(r, "model", json_string(model_name));
	if (json_is_string(json_object_get(r, "gpu")) && gpu_name)
		json_object_set_new(r, "gpu", json_string(gpu_name));
	return r;
}

void sizing_default(json_t *request, const char *key, json_t *value)
{
	if (json_object_get(request, key))
		json_decref(value);
	else
		json_object_set_new(request, key, value);
}

void sizing_persist(struct app *app, const struct request *req,
		    const char *kind, const char *model, const char *gpu,
		    json_t *request, json_t *response, json_t *summary,
		    struct response *res)
{
	char id[UUID_TEXT], ts[40];
	time_t now = time(NULL);
	struct tm tm;
	struct store_err e;
	char *text = NULL, *sum = NULL, *rq = NULL;
	json_t *full = NULL;

	/* An answer with a member missing or not finite is a 500 naming
	 * it in the log, never a 201 (nor a stored recommendation) without
	 * it (issue 15).
	 */
	(void)req;
	if (sizing_answer_check(kind, response, summary, res) != 0 ||
	    !request) {
		if (!request) {
			problem(res, 500, "internal", "Internal error",
				"cannot render the answer");
			snprintf(res->log_detail, sizeof(res->log_detail),
				 "%s answer: the request did not build", kind);
		}
		json_decref(request);
		json_decref(response);
		json_decref(summary);
		return;
	}
	uuid_v4(id);
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* id, kind and created_at first: what a reader looks for. */
	/* The request is stored as canonical text (sorted keys, compact):
	 * the same job asked twice is the same text, which the capacity
	 * report counts once (issue 16). The answer repeats it after id,
	 * kind and created_at. */
	rq = json_dumps(request, JSON_COMPACT | JSON_SORT_KEYS |
				     JSON_REAL_PRECISION(17));
	full = json_pack("{s:s, s:s, s:s, s:O}", "id", id, "kind", kind,
			 "created_at", ts, "request", request);
	json_object_update(full, response);
	json_decref(request);
	json_decref(response);
	text = json_dumps(full, JSON_COMPACT | JSON_REAL_PRECISION(12));
	sum = json_dumps(summary, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(full);
	json_decref(summary);
	if (!text || !sum || !rq) {
		problem(res, 500, "internal", "Internal error",
			"cannot render the answer");
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "%s answer: json_dumps failed (out of memory)", kind);
		goto out;
	}
	struct rec_new rec = {
	    .id = id,
	    .kind = kind,
	    .model = model,
	    .gpu = gpu,
	    .request = rq,
	    .response = text,
	    .summary = sum,
	};
	if (store_rec_insert(app->db, &rec, &e) != STORE_OK) {
		problem_store(res, &e, "recommendation");
		goto out;
	}
	res_text(res, 201, "application/json", text, strlen(text));
	snprintf(res->location, sizeof(res->location), "/v1/recommendations/%s",
		 id);
out:
	free(text);
	free(sum);
	free(rq);
}

void *sizing_alloc(size_t size, struct response *res)
{
	void *p = calloc(1, size);

	if (!p)
		problem(res, 503, "unavailable", "Service unavailable",
			"out of memory");
	return p;
}

int sizing_int_list(struct jv *v, const json_t *o, const char *key, long min,
		    long max, int *out, int cap)
{
	const json_t *arr = json_object_get(o, key), *x;
	size_t i;
	int n = 0;

	if (!arr || json_is_null(arr))
		return 0;
	if (json_is_integer(arr)) {
		/* A single value pins it: "tp": 8 means [8]. */
		long long one = json_integer_value(arr);
		if (one < min || one > max) {
			jv_error(v, key, "must be in [%ld, %ld]", min, max);
			return -1;
		}
		out[0] = (int)one;
		return 1;
	}
	if (!json_is_array(arr) || json_array_size(arr) == 0 ||
	    json_array_size(arr) > (size_t)cap) {
		jv_error(v, key,
			 "must be an integer in [%ld, %ld] (a pin) or a list "
			 "of 1 to %d of them (the allowed values)",
			 min, max, cap);
		return -1;
	}
	json_array_foreach(arr, i, x)
	{
		long long val;
		if (!json_is_integer(x) ||
		    (val = json_integer_value(x)) < min || val > max) {
			jv_error(v, key,
				 "values must be integers in [%ld, %ld]", min,
				 max);
			return -1;
		}
		n = sizing_set_add(out, n, (int)val);
	}
	return n;
}

int sizing_set_add(int *v, int n, int x)
{
	for (int k = 0; k < n; k++)
		if (v[k] == x)
			return n;
	v[n] = x;
	return n + 1;
}

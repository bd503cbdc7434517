/* sizing.h - what the three sizing endpoints share: the GPU catalog row
 * turned into engine hardware (with fleet calibration), engine errors as
 * problems, the basis block, and persisting an answer as a recommendation.
 */
#ifndef GPUSIZER_HANDLERS_SIZING_H
#define GPUSIZER_HANDLERS_SIZING_H

#include <jansson.h>

#include "engine/budget.h"
#include "engine/errors.h"
#include "engine/hw.h"
#include "handlers/handler.h"
#include "handlers/jsonv.h"
#include "storage/catalog.h"

/* Prices per GPU-hour a request, a compare or the catalog takes, in
 * dollars. The floor is a millionth of a dollar, five orders of magnitude
 * under the cheapest cloud GPU (~$0.1/h), and far above where the cost
 * arithmetic (price x GPUs x hours, then ratios between GPU types) leaves
 * the normal doubles: 5e-324 made a GPU "cheapest" at "infx the cost"
 * (issue 15). 0 in a request means "the catalog's price".
 */
#define SIZING_MIN_PRICE 1e-6
#define SIZING_MAX_PRICE 1e4

/* Where hardware numbers come from (request "calibration"). */
enum calib_mode {
	CALIB_AUTO,	 /* measured fleet medians where they exist */
	CALIB_DATASHEET, /* datasheet x default efficiency only */
	CALIB_MEASURED,	 /* measured or 422 */
};
extern const char *const calib_mode_names[];

/* What calibration found for one GPU type (for the basis block). */
/* Probe runs calibration left out as no measurement of the GPU type
 * (outside the plausible band of its datasheet figure, handlers/calib.h),
 * per metric. */
#define CALIB_MAX_IGNORED 8
struct calib_ignored {
	char metric[40];	  /* "gemm_tflops.bf16", "hbm_gbps", ... */
	double median, datasheet; /* the median of the runs left out */
	int runs;
};
/* Nodes calibration left out as degraded (DEGRADED_THRESHOLD under the
 * median of the type's nodes), per metric. */
struct calib_degraded {
	char metric[40];
	double median; /* of the nodes left out */
	int nodes;
};

/* Plausible measurements calibration set aside (review s19c F1, F2): a
 * sustained GEMM figure fewer nodes back than the best-shape one of its
 * dtype, or the half of an even split of the nodes farther from what the
 * type is expected to measure; per metric, their median, nodes and why. */
struct calib_set_aside {
	char metric[40];
	double median;
	int nodes;
	char reason[200];
};

struct calib_info {
	enum calib_mode mode;
	int runs;	 /* probe runs contributing */
	int window_days; /* how far back medians look */
	int used;	 /* 1: at least one fleet median was taken */
	int n_ignored;	 /* metrics with implausible runs, ignored[] the
			    first ones */
	struct calib_ignored ignored[CALIB_MAX_IGNORED];
	int n_degraded; /* metrics with degraded nodes left out */
	struct calib_degraded degraded[CALIB_MAX_IGNORED];
	int n_set_aside; /* metrics set aside, set_aside[] the first ones */
	struct calib_set_aside set_aside[CALIB_MAX_IGNORED];
};

/* Loads catalog GPU name into *hw (field error under field when unknown,
 * with the closest names), then applies fleet medians per mode. A name in
 * another case or an alias finds its entry (handlers/names.h): the entry's
 * own name is row->name (typed catalog figures: struct store_gpu).
 * Returns 0 or -1 with res filled.
 */
/* Whether name (or an alias of it) is in the GPU catalog; true when the
 * catalog cannot be read, leaving the answer to sizing_load_gpu. When it
 * is not, a 400 naming field with the closest catalog names, as
 * sizing_load_gpu's (review s24f F3: beside another bad field the GPU
 * had no suggestions). */
bool sizing_gpu_known(struct app *app, const char *name, const char *field,
		      struct response *res);
/* The catalog GPU named name (its own name or an alias) as engine hardware
 * at its datasheet figures, nothing measured applied. Returns STORE_OK,
 * or STORE_NOT_FOUND / an error with e set. */
enum store_status sizing_catalog_hw(struct app *app, const char *name,
				    struct hw_spec *hw, struct store_err *e);
int sizing_load_gpu(struct app *app, const char *name, const char *field,
		    enum calib_mode mode, const char *calib_field,
		    struct hw_spec *hw, struct calib_info *ci,
		    struct store_gpu *row, struct response *res);
/* Puts a power limit of limit_w W (0: none) and the slope (0: the
 * default) on the loaded GPU *hw named gpu: a field error under field when
 * the GPU has no board power or the limit lies outside
 * [hw_power_cap_min_fraction(), 1] x it (engine/hw.h). Returns 0 or -1. */
int sizing_power_limit(struct hw_spec *hw, const char *gpu, double limit_w,
		       double slope, const char *field, struct response *res);
/* {limit_w, board_power_w, slope, ratio, applied}: a basis's power limit
 * (openapi PowerLimitBasis); caller owns it. */
json_t *sizing_power_limit_json(const struct hw_power_cap *p);

/* One request's bound on engine work (issue 15): the server's step limit
 * per search, and a stop that ends work whose client has hung up, that
 * outlived the drain timeout, or that ran past --engine-timeout-ms (the
 * server is saturated). Lives on the handler's stack; pass &b->eng as the
 * engine request's budget. */
struct sizing_budget {
	struct eng_budget eng;
	struct app *app;
	int client_fd;
	long long deadline_ms; /* CLOCK_MONOTONIC */
	const char *why;       /* why stop() fired, for the answer and log */
	bool admitted;	       /* holds a slot of sizing_admit() */
};
void sizing_budget_init(struct sizing_budget *b, struct app *app,
			const struct request *req);

/* Admission of one search (training, compare): at most
 * app->engine_concurrency run at once, so that under overload the ones
 * running finish at full speed instead of every request sharing the CPUs
 * until all of them pass the deadline (hostile review, 2026-11-26: 64
 * concurrent compares, 64 x 503 after 10 s). Waits for a slot until b's
 * deadline (the wait counts against it), the client leaving or shutdown;
 * then a 503 with Retry-After in res and -1. 0: admitted, and
 * sizing_budget_end() must follow. */
int sizing_admit(struct sizing_budget *b, struct response *res);
/* Gives back b's slot, if it holds one (any number of calls). */
void sizing_budget_end(struct sizing_budget *b);

/* Engine failure -> 400 (invalid), 422 (infeasible/unsupported, or a
 * search past the step limit) or 503 with Retry-After (work stopped by b's
 * stop; b may be NULL) problem naming err->field.
 */
void sizing_engine_problem(struct response *res, const struct eng_error *err,
			   const struct sizing_budget *b);

/* Appends to warnings one line naming the fleet medians calibration
 * ignored as implausible (ci->ignored), if any. */
void sizing_calib_warnings(json_t *warnings, const struct calib_info *ci);
/* The basis block: each hardware number, its value and where it came
 * from (datasheet x efficiency, or measured with sample counts). Caller
 * owns the result.
 */
json_t *sizing_basis_json(const struct hw_basis *b,
			  const struct calib_info *ci);

/* Stores response as a recommendation and answers 201 with Location and
 * the exact stored text. The answer starts with "id", "kind",
 * "created_at" and "request" (the normalised request, stored as canonical
 * text), then response's members. request, response and summary (for list
 * views) are stolen. An answer that fails sizing_answer_check is a 500 and
 * nothing is stored.
 */
void sizing_persist(struct app *app, const struct request *req,
		    const char *kind, const char *model, const char *gpu,
		    json_t *request, json_t *response, json_t *summary,
		    struct response *res);

/* The normalised request an answer and its recommendation keep (issue
 * 16): body without nulls, with the catalog's own model and GPU names
 * (NULL leaves them); handlers add the defaults they applied with
 * sizing_default. Caller owns the result. */
json_t *sizing_request_json(const json_t *body, const char *model_name,
			    const char *gpu_name);
/* Sets request.key to value (stolen) unless the request gave it. */
void sizing_default(json_t *request, const char *key, json_t *value);

/* Parses an allowed-values list: strategies.<key> as [int, ...] within
 * [min, max], repeats dropped (sizing_set_add). Returns count (0 when
 * absent) or -1 after a field error.
 */
int sizing_int_list(struct jv *v, const json_t *o, const char *key, long min,
		    long max, int *out, int cap);

/* Adds x to the n values of set v unless there: the new count. Allowed
 * values are a set; a repeat ranked each plan twice and made [2, 2] no
 * pin (review s21e). */
int sizing_set_add(int *v, int n, int x);

/* size zeroed bytes for an engine result, or NULL after a 503 in res. */
void *sizing_alloc(size_t size, struct response *res);

/* A number rounded to digits significant digits (keeps JSON readable);
 * JSON null when x is not finite. Caller owns the result. */
json_t *sizing_real(double x, int digits);

#endif

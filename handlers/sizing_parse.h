/* sizing_parse.h - request parsing and answer rendering of the training and
 * inference sizing bodies, shared by their endpoints and by compare (which
 * sizes one job body on several GPU types).
 */
#ifndef GPUSIZER_HANDLERS_SIZING_PARSE_H
#define GPUSIZER_HANDLERS_SIZING_PARSE_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/inference.h"
#include "engine/training.h"
#include "handlers/handler.h"
#include "handlers/sizing.h"

/* What a sizing request names besides its job: the model, the GPU and
 * where hardware numbers come from; once sizing_job_gpu loaded the GPU,
 * what calibration found and the catalog entry (whose own name gpu_name
 * then is, when the request used an alias: handlers/names.h).
 */
/* The least efficiency a request may give a bandwidth: below it the link
 * is broken, not slow (the probe's plausibility floor is 0.1 of the
 * datasheet, calib.h). */
#define SIZING_EFFICIENCY_MIN 0.05

struct sizing_job {
	const char *model_name; /* the preset's name, or "custom" */
	const char *gpu_name;	/* NULL in a compare's job */
	enum calib_mode calib;
	struct calib_info ci;
	struct store_gpu gpu_row;
	/* "power_limit_w" / "power_cap_slope" (0: not given), set on the
	 * loaded GPU by sizing_job_gpu */
	double power_limit_w, power_cap_slope;
	/* "hbm_efficiency", "intra_node_efficiency", "inter_node_efficiency"
	 * (0: the defaults), set on each loaded GPU (sizing_job_hw) */
	double hbm_efficiency, intra_efficiency, inter_efficiency;
	/* "lora_rank" given with method full: said in the answer's warnings */
	bool lora_rank_unused;
	/* "stack" named a profile (a name, or an object with "name"); and
	 * an object that overrides values of the default profile */
	bool stack_named, stack_overrides_default;
	/* A problem that is not a field error (the catalog's 503) met while
	 * resolving the model or the stack, kept until the other fields are
	 * checked: their 400 comes first, since a client's mistake is never
	 * answered 5xx. Owned until sizing_parse_end. */
	struct response deferred;
	bool has_deferred;
};

/* The parts every job body parses alike. sizing_parse_model: job reset,
 * keys outside known refused, "model" resolved into *m; field errors
 * accumulate in res, and a problem that is not one (the catalog's 503) is
 * deferred (sizing_defer). sizing_parse_end: "calibration" and, with
 * gpu_required, "gpu" (without, "gpu" is refused: compare names its GPUs
 * at the top level); -1 when res holds any field error, else -1 with the
 * deferred problem when there is one, else 0.
 */
void sizing_parse_model(struct app *app, struct jv *v, const json_t *b,
			const char *const *known, struct model_arch *m,
			struct sizing_job *job);
int sizing_parse_end(struct app *app, struct jv *v, const json_t *b,
		     bool gpu_required, struct sizing_job *job);
/* When res holds a problem that is not a field error, moves it into
 * job->deferred (the first one is kept) and clears res, so that the other
 * fields' errors collect there; sizing_parse_end answers the 400 if any,
 * else the deferred problem. */
void sizing_defer(struct response *res, struct sizing_job *job);
/* A precision field: one of the engine's dtype names (engine/hw.h) among
 * allowed (ended by ENG_DTYPE_COUNT), listed in that order when refused.
 * *out is set when the field is given and unchanged when absent. Returns
 * 0, or -1 after a field error. */
int sizing_dtype(struct jv *v, const json_t *b, const char *key,
		 const enum eng_dtype *allowed, enum eng_dtype *out);
/* Loads job->gpu_name (field "gpu") into *hw with job->calib, with the
 * job's power limit (refused outside [0.5, 1] x the entry's board power,
 * or when the entry has none); then gpu_name is the catalog entry's own.
 * Returns 0 or -1 with res filled. */
/* Sets the job's own efficiencies (hbm_efficiency ...) on a loaded GPU. */
void sizing_job_hw(const struct sizing_job *job, struct hw_spec *hw,
		   struct calib_info *ci);
int sizing_job_gpu(struct app *app, struct sizing_job *job, struct hw_spec *hw,
		   struct response *res);

/* Parses a training body into *rq (GPU not loaded) and *job. With
 * gpu_required the body must name "gpu"; without, it must not. Field
 * errors accumulate in res. Returns 0 or -1.
 */
int training_parse(struct app *app, const json_t *b, bool gpu_required,
		   struct trn_request *rq, struct sizing_job *job,
		   struct response *res);
/* The normalised request (sizing_request_json) with the defaults the
 * parse applied; caller owns it (both kinds). */
json_t *training_request_json(const json_t *body, const struct trn_request *rq,
			      const struct sizing_job *job);
json_t *inference_request_json(const json_t *body, const struct inf_request *rq,
			       const struct sizing_job *job);
/* The answer's body for an engine result; caller owns it (both kinds). */
json_t *training_result_json(const struct trn_request *rq,
			     const struct trn_result *r,
			     const struct sizing_job *job);

int inference_parse(struct app *app, const json_t *b, bool gpu_required,
		    struct inf_request *rq, struct sizing_job *job,
		    struct response *res);
/* Rules that need the loaded GPU (tp within a node). */
int inference_check_gpu(const struct inf_request *rq, const char *field,
			struct response *res);
json_t *inference_result_json(const struct inf_request *rq,
			      const struct inf_result *r,
			      const struct sizing_job *job);
/* What both answers show alike: the model (its name and parameter
 * counts) and the engine's warnings as a list of strings. Caller owns
 * each result, as of the next. */
json_t *sizing_model_json(const char *name, const struct model_params *p);
json_t *sizing_warnings_json(const char (*w)[ENG_WARNING_LEN], int n);
/* The serving profile a plan used, as the answer's basis shows it. */
json_t *inference_serving_json(const struct inf_serving *sv);

#endif

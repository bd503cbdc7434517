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

/* Parses a training body into *rq (GPU not loaded). With gpu_required the
 * body must name "gpu" (set in *gpu_name); without, it must not. Field
 * errors accumulate in res. Returns 0 or -1.
 */
int training_parse(struct app *app, const json_t *b, bool gpu_required,
		   struct trn_request *rq, const char **model_name,
		   const char **gpu_name, enum calib_mode *calib,
		   struct response *res);
/* The normalised request (sizing_request_json) with the defaults the
 * parse applied; caller owns it. */
json_t *training_request_json(const json_t *body, const struct trn_request *rq,
			      const char *model_name, const char *gpu_name,
			      enum calib_mode calib);
json_t *inference_request_json(const json_t *body, const struct inf_request *rq,
			       const char *model_name, const char *gpu_name,
			       enum calib_mode calib);
json_t *training_result_json(const struct trn_request *rq,
			     const struct trn_result *r, const char *model_name,
			     const char *gpu_name, const struct calib_info *ci);

int inference_parse(struct app *app, const json_t *b, bool gpu_required,
		    struct inf_request *rq, const char **model_name,
		    const char **gpu_name, enum calib_mode *calib,
		    struct response *res);
/* Rules that need the loaded GPU (tp within a node). */
int inference_check_gpu(const struct inf_request *rq, const char *field,
			struct response *res);
json_t *inference_result_json(const struct inf_request *rq,
			      const struct inf_result *r,
			      const char *model_name, const char *gpu_name,
			      const struct calib_info *ci);
/* The serving profile a plan used, as the answer's basis shows it. */
json_t *inference_serving_json(const struct inf_serving *sv);

#endif

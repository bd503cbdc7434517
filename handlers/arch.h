/* arch.h - model architecture objects <-> engine/model.h.
 *
 * One parser for both a request's inline "model" object and a preset's
 * stored arch (the same JSON shape), so presets obey the request rules.
 */
#ifndef GPUSIZER_HANDLERS_ARCH_H
#define GPUSIZER_HANDLERS_ARCH_H

#include <jansson.h>

#include "engine/model.h"
#include "handlers/handler.h"
#include "storage/db.h"

/* Fills *m from an architecture object; field errors are recorded in res
 * under prefix (e.g. "model."). Returns 0 or -1.
 */
int arch_parse(const json_t *o, const char *prefix, struct model_arch *m,
	       struct response *res);

/* Resolves a request's "model" member: a preset name (looked up in the
 * database) or an inline object. Sets *name to the preset name or
 * "custom" (static or borrowed from the request). Returns 0, or -1 with
 * the response filled (400 field error, 404-as-422 unknown preset, 503).
 * *arch_json receives the architecture object used (caller decrefs).
 */
int arch_resolve(struct app *app, const json_t *model, struct model_arch *m,
		 const char **name, json_t **arch_json, struct response *res);

/* {"total": ..., "active": ..., ...} parameter counts for a model, as
 * exact integers (GET /v1/models and the sizing answers' model.params
 * give the same numbers). Caller owns the result.
 */
json_t *arch_params_json(const struct model_arch *m);

/* A parameter count as JSON: an integer when it is whole, else a real.
 * Caller owns the result. */
json_t *arch_count_json(double count);

#endif

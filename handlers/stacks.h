/* stacks.h - software-stack profiles (issue 13): the catalog endpoints
 * GET /v1/stacks[/{name}] and PUT /v1/stacks/{name} (api.h), and the
 * "stack" member of a training request.
 */
#ifndef GPUSIZER_HANDLERS_STACKS_H
#define GPUSIZER_HANDLERS_STACKS_H

#include <jansson.h>

#include "engine/stack.h"
#include "handlers/handler.h"

/* The request's "stack" (value; NULL or absent: the profile named
 * default_name, engine/stack.h STACK_DEFAULT_NAME or, for QLoRA,
 * STACK_QLORA_DEFAULT_NAME) into *out: a catalog name (forgiving, names.h)
 * or an object {"name": ..., field: override, ...}. Errors name "stack" /
 * "stack.<field>" in res. 0 or -1. */
int stack_resolve(struct app *app, const json_t *value,
		  const char *default_name, struct eng_stack *out,
		  struct response *res);

/* The profile as an answer's basis shows it: its name and every value the
 * engine applied on GPU g at head dimension head_dim, sequence length
 * seq_len and precision p (attention efficiencies after the kernel class
 * and head dimension, their sequence-length factor, the clock derate as
 * applied to this GPU, FP8 cast bytes when p is fp8). Caller owns the
 * result. */
json_t *stack_basis_json(const struct eng_stack *s, const struct hw_spec *g,
			 double head_dim, double seq_len, enum eng_dtype p);

#endif

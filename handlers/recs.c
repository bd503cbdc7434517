/* recs.c - GET /v1/recommendations[/{id}]: the sizing history. */
#include <stdlib.h>
#include <string.h>

#include "handlers/api.h"
#include "handlers/names.h"
#include "handlers/problem.h"
#include "handlers/util.h"
#include "storage/recs.h"

static const char *const kinds[] = {"training", "inference", "compare", NULL};

void h_recs_list(struct app *app, const struct request *req,
		 struct response *res)
{
	struct rec_filter f = {0};
	char model[80], gpu[80];
	struct store_err e;
	char next[REC_CURSOR_MAX];
	json_t *items, *body;
	int ok_kind = 0;

	f.kind = req_query(req, "kind");
	f.model = req_query(req, "model");
	f.gpu = req_query(req, "gpu");
	f.since = req_query(req, "since");
	f.cursor = req_query(req, "cursor");
	f.limit = query_limit(req, res);
	for (int i = 0; f.kind && kinds[i]; i++)
		ok_kind |= strcmp(f.kind, kinds[i]) == 0;
	if (f.kind && !ok_kind)
		problem_field(res, "kind",
			      "must be one of: training, inference, compare");
	if (f.since && !rfc3339_valid(f.since))
		problem_field(res, "since",
			      "must be an RFC 3339 date-time such as "
			      "2026-11-21T00:00:00Z");
	if (f.model && strlen(f.model) > 64)
		problem_field(res, "model", "must be at most 64 characters");
	if (f.gpu && strlen(f.gpu) > 64)
		problem_field(res, "gpu", "must be at most 64 characters");
	if (problem_field_count(res) > 0)
		return;
	{
		/* Filters forgive names like the sizing requests do: ?gpu=h100
		 * finds what was stored under h100-sxm5-80gb. A name that
		 * finds nothing filters as given (an empty page). */
		char suggest[1][80];
		int n;
		if (f.model &&
		    names_resolve(app, NAMES_MODEL, f.model, model,
				  sizeof(model), suggest, 0, &n) == 0)
			f.model = model;
		if (f.gpu && names_resolve(app, NAMES_GPU, f.gpu, gpu,
					   sizeof(gpu), suggest, 0, &n) == 0)
			f.gpu = gpu;
	}
	if (store_rec_list(app->db, &f, &items, next, &e) != STORE_OK) {
		if (e.status == STORE_INVALID)
			problem_field(res, f.cursor ? "cursor" : "since", "%s",
				      e.message);
		else
			problem_store(res, &e, "recommendations");
		return;
	}
	body = json_pack("{s:o}", "items", items);
	json_object_set_new(body, "next_cursor",
			    next[0] ? json_string(next) : json_null());
	res_json(res, 200, body);
}

void h_rec_get(struct app *app, const struct request *req, struct response *res)
{
	struct store_err e;
	char *text = NULL;

	if (!uuid_valid(req->params[0])) {
		problem(res, 404, "not-found", "Not found",
			"no recommendation with that id (ids are UUIDs)");
		return;
	}
	if (store_rec_get(app->db, req->params[0], &text, &e) != STORE_OK) {
		problem_store(res, &e, "no recommendation with that id");
		return;
	}
	/* Byte for byte what the sizing request answered. */
	res_text(res, 200, "application/json", text, strlen(text));
	free(text);
}

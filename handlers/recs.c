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
	char model[80], gpu[80], model_suggest[3][80], gpu_suggest[3][80];
	int n_model = 0, n_gpu = 0;
	bool model_unknown = false, gpu_unknown = false;
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
	if (f.since)
		query_since_check(res, f.since);
	if (f.model && (strlen(f.model) > 64 || !f.model[0]))
		problem_field(res, "model", "must be 1 to 64 characters");
	if (f.gpu && (strlen(f.gpu) > 64 || !f.gpu[0]))
		problem_field(res, "gpu", "must be 1 to 64 characters");
	if (problem_field_count(res) > 0)
		return;
	/* Filters forgive names like the sizing requests do: ?gpu=h100
	 * finds what was stored under h100-sxm5-80gb. A name that finds no
	 * catalog entry filters as given, since the history may hold names
	 * the catalog no longer does; when that leaves nothing, the answer
	 * is the sizing endpoints' 400 with the closest names (review s15:
	 * ?gpu=a100-sxm4, two entries, was an empty page). */
	if (f.model &&
	    names_resolve(app, NAMES_MODEL, f.model, model, sizeof(model),
			  model_suggest, 3, &n_model) == 0)
		f.model = model;
	else if (f.model)
		model_unknown = true;
	if (f.gpu && names_resolve(app, NAMES_GPU, f.gpu, gpu, sizeof(gpu),
				   gpu_suggest, 3, &n_gpu) == 0)
		f.gpu = gpu;
	else if (f.gpu)
		gpu_unknown = true;
	if (store_rec_list(app->db, &f, &items, next, &e) != STORE_OK) {
		if (e.status == STORE_INVALID)
			problem_field(res, f.cursor ? "cursor" : "since", "%s",
				      e.message);
		else
			problem_store(res, &e, "recommendations");
		return;
	}
	if (json_array_size(items) == 0 && !f.cursor &&
	    (model_unknown || gpu_unknown)) {
		const struct {
			bool unknown;
			const char *key, *what, *asked;
			char (*suggest)[80];
			int n;
		} named[] = {
		    {model_unknown, "model", "model", f.model, model_suggest,
		     n_model},
		    {gpu_unknown, "gpu", "GPU", f.gpu, gpu_suggest, n_gpu},
		};
		for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
			if (!named[i].unknown)
				continue;
			problem_field(res, named[i].key,
				      "no catalog %s and no stored answer is "
				      "named \"%s\"",
				      named[i].what, named[i].asked);
			names_suggest(res, named[i].suggest, named[i].n);
		}
		json_decref(items);
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

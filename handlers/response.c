/* response.c - request/response helpers shared by every handler. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/handler.h"

const char *req_query(const struct request *req, const char *key)
{
	for (int i = 0; i < req->nquery; i++)
		if (strcmp(req->query[i].key, key) == 0)
			return req->query[i].value;
	return NULL;
}

void res_release(struct response *res)
{
	json_decref(res->json);
	free(res->text);
	res->json = NULL;
	res->text = NULL;
	res->content_type = NULL;
	res->is_problem = 0;
}

void res_json(struct response *res, int status, json_t *body)
{
	res_release(res);
	res->status = status;
	res->json = body;
}

void res_text(struct response *res, int status, const char *content_type,
	      const char *text, size_t len)
{
	res_release(res);
	res->status = status;
	res->content_type = content_type;
	res->text = malloc(len + 1);
	if (!res->text) {
		res->status = 500;
		snprintf(res->log_detail, sizeof(res->log_detail),
			 "out of memory");
		return;
	}
	memcpy(res->text, text, len);
	res->text[len] = '\0';
}

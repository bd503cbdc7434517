/* api.h - the REST endpoint handlers, one per route (see openapi.yaml).
 * Each follows handler_fn: validate, call engine/ or storage/, fill res.
 */
#ifndef GPUSIZER_HANDLERS_API_H
#define GPUSIZER_HANDLERS_API_H

#include "handlers/handler.h"

/* health.c */
void h_healthz(struct app *app, const struct request *req,
	       struct response *res);
void h_readyz(struct app *app, const struct request *req, struct response *res);
void h_openapi(struct app *app, const struct request *req,
	       struct response *res);

/* catalog.c */
void h_gpus_list(struct app *app, const struct request *req,
		 struct response *res);
void h_gpu_get(struct app *app, const struct request *req,
	       struct response *res);
void h_gpu_put(struct app *app, const struct request *req,
	       struct response *res);
void h_models_list(struct app *app, const struct request *req,
		   struct response *res);
void h_model_get(struct app *app, const struct request *req,
		 struct response *res);

/* stacks.c */
void h_stacks_list(struct app *app, const struct request *req,
		   struct response *res);
void h_stack_get(struct app *app, const struct request *req,
		 struct response *res);
void h_stack_put(struct app *app, const struct request *req,
		 struct response *res);

/* recs.c */
void h_recs_list(struct app *app, const struct request *req,
		 struct response *res);
void h_rec_get(struct app *app, const struct request *req,
	       struct response *res);

/* sizing_training.c, sizing_inference.c, sizing_compare.c */
void h_sizing_training(struct app *app, const struct request *req,
		       struct response *res);
void h_sizing_inference(struct app *app, const struct request *req,
			struct response *res);
void h_sizing_compare(struct app *app, const struct request *req,
		      struct response *res);

/* benchmarks.c */
void h_bench_post(struct app *app, const struct request *req,
		  struct response *res);
void h_bench_list(struct app *app, const struct request *req,
		  struct response *res);
void h_bench_get(struct app *app, const struct request *req,
		 struct response *res);
void h_nodes_list(struct app *app, const struct request *req,
		  struct response *res);
void h_node_get(struct app *app, const struct request *req,
		struct response *res);
void h_fleet(struct app *app, const struct request *req, struct response *res);

/* report.c */
void h_report_capacity(struct app *app, const struct request *req,
		       struct response *res);

#endif

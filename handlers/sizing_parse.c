/* sizing_parse.c - what the training and inference bodies parse alike (the
 * model, precisions, the calibration, the GPU), the GPU load their
 * endpoints share, and the parts of their answers that read alike; the
 * kind-specific fields are sizing_training.c and sizing_inference.c.
 */
#include <stddef.h>
#include <string.h>

#include "handlers/arch.h"
#include "handlers/calib.h"
#include "handlers/problem.h"
#include "handlers/sizing.h"
#include "handlers/sizing_parse.h"

void sizing_parse_model(struct app *app, struct jv *v, const json_t *b,
			const char *const *known, struct model_arch *m,
			struct sizing_job *job)
{
	json_t *arch = NULL;
	int rc;

	job->model_name = "custom";
	job->gpu_name = NULL;
	job->calib = CALIB_AUTO;
	job->power_limit_w = job->power_cap_slope = 0;
	job->hbm_efficiency = job->intra_efficiency = job->inter_efficiency = 0;
	job->lora_rank_unused = false;
	job->has_deferred = false;
	jv_reject_unknown(v, b, known);
	rc = arch_resolve(app, json_object_get(b, "model"), m, &job->model_name,
			  &arch, v->res);
	json_decref(arch);
	/* Field errors accumulate; anything else (503) waits for them. */
	if (rc != 0)
		sizing_defer(v->res, job);
}

void sizing_defer(struct response *res, struct sizing_job *job)
{
	if (!res->is_problem || json_object_get(res->json, "errors"))
		return;
	if (!job->has_deferred) {
		job->deferred = *res;
		job->has_deferred = true;
	} else {
		res_release(res);
	}
	memset(res, 0, sizeof(*res));
}

int sizing_parse_end(struct app *app, struct jv *v, const json_t *b,
		     bool gpu_required, struct sizing_job *job)
{
	int e = 0;

	if (jv_enum(v, b, "calibration", false, calib_mode_names, &e) == 0)
		job->calib = (enum calib_mode)e;
	/* at most 1: throughput falls no faster than the power share under a
	 * cap (DVFS lowers clocks and voltage; review s17c F4: 2 made a rate
	 * of 0) */
	jv_num(v, b, "power_cap_slope", false, 0.01, HW_POWER_CAP_SLOPE_MAX,
	       &job->power_cap_slope);
	/* the defaults' overrides (review s17a F8: basis showed 0.85, 0.8
	 * and 0.75 that no request could change); 1 says a stated or
	 * measured bandwidth is already achieved */
	jv_num(v, b, "hbm_efficiency", false, SIZING_EFFICIENCY_MIN, 1,
	       &job->hbm_efficiency);
	jv_num(v, b, "intra_node_efficiency", false, SIZING_EFFICIENCY_MIN, 1,
	       &job->intra_efficiency);
	jv_num(v, b, "inter_node_efficiency", false, SIZING_EFFICIENCY_MIN, 1,
	       &job->inter_efficiency);
	if (gpu_required) {
		jv_str(v, b, "gpu", true, 64, &job->gpu_name);
		jv_num(v, b, "power_limit_w", false, 1, 1e5,
		       &job->power_limit_w);
	} else {
		if (jv_present(b, "gpu"))
			jv_error(v, "gpu",
				 "compare sizes the job on the GPU types "
				 "listed in the top-level \"gpus\"");
		/* A limit in watts is one GPU type's (700 W is the whole
		 * board of one part and a cap of another). */
		if (jv_present(b, "power_limit_w"))
			jv_error(v, "power_limit_w",
				 "a power limit is one GPU type's: compare "
				 "takes them per GPU in the top-level "
				 "\"power_limits\"");
		/* likewise a price, which compare would otherwise leave
		 * unused without a word (review s18c F4) */
		if (jv_present(b, "price_per_gpu_hour"))
			jv_error(v, "price_per_gpu_hour",
				 "a price is one GPU type's: compare takes "
				 "them per GPU in the top-level \"prices\"");
	}
	/* every bad field at once: an unknown GPU beside the others (review
	 * s14: it came only once they were fixed) */
	if (gpu_required && job->gpu_name && problem_field_count(v->res) > 0)
		sizing_gpu_known(app, job->gpu_name, "gpu", v->res);
	if (problem_field_count(v->res) > 0) {
		if (job->has_deferred)
			res_release(&job->deferred);
		job->has_deferred = false;
		return -1;
	}
	if (job->has_deferred) {
		res_release(v->res);
		*v->res = job->deferred;
		job->has_deferred = false;
		return -1;
	}
	return 0;
}

json_t *sizing_model_json(const char *name, const struct model_params *p)
{
	return json_pack("{s:s, s:{s:o, s:o}}", "name", name, "params", "total",
			 arch_count_json(p->total), "active",
			 arch_count_json(p->active));
}

json_t *sizing_warnings_json(const char (*w)[ENG_WARNING_LEN], int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(w[i]));
	return a;
}

int sizing_dtype(struct jv *v, const json_t *b, const char *key,
		 const enum eng_dtype *allowed, enum eng_dtype *out)
{
	const char *names[ENG_DTYPE_COUNT + 1];
	int n = 0, e = -1;

	while (n < ENG_DTYPE_COUNT && allowed[n] != ENG_DTYPE_COUNT) {
		names[n] = eng_dtype_name(allowed[n]);
		n++;
	}
	names[n] = NULL;
	if (jv_enum(v, b, key, false, names, &e) != 0)
		return -1;
	if (e >= 0)
		*out = allowed[e];
	return 0;
}

void sizing_job_hw(const struct sizing_job *job, struct hw_spec *hw,
		   struct calib_info *ci)
{
	hw->hbm_efficiency = job->hbm_efficiency;
	hw->intra_efficiency = job->intra_efficiency;
	hw->inter_efficiency = job->inter_efficiency;
	/* a rate the request states is not calibrated: what calibration
	 * left out of it is not this answer's (review s18d F8) */
	if (job->hbm_efficiency > 0.0)
		calib_forget(ci, "hbm_gbps");
	if (job->intra_efficiency > 0.0)
		calib_forget(ci, "intra_node_gbps");
}

int sizing_job_gpu(struct app *app, struct sizing_job *job, struct hw_spec *hw,
		   struct response *res)
{
	if (sizing_load_gpu(app, job->gpu_name, "gpu", job->calib,
			    "calibration", hw, &job->ci, &job->gpu_row,
			    res) != 0)
		return -1;
	job->gpu_name = job->gpu_row.name;
	sizing_job_hw(job, hw, &job->ci);
	return sizing_power_limit(hw, job->gpu_name, job->power_limit_w,
				  job->power_cap_slope, "power_limit_w", res);
}

/* Unit tests of the node's GPU inventory (node.gpu_uuids): what
 * probe_gpu_uuids_decide makes of NVML's enumeration and the measured
 * GPUs (no NVML, no GPU: the enumeration is written by hand), and how the
 * encoder writes the list. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
#include "probe_fixtures.h"
#include "report.h"
#include "report_check.h"
#include "testlib.h"

#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_UNKNOWN	 999

/* A GPU UUID of the form NVML and CUDA write, numbered i. */
static void uuid_of(unsigned i, char *out, size_t len)
{
	snprintf(out, len, "GPU-4d774db7-82ff-3577-39d7-efc51bad%04x", i);
}

/* An enumeration in which NVML read n GPUs. Caller frees. */
static struct probe_nvml_enum *enum_of(unsigned n)
{
	struct probe_nvml_enum *e = calloc(1, sizeof(*e));
	unsigned i;

	CHECK(e != NULL);
	if (e == NULL)
		exit(1);
	e->count = n;
	for (i = 0; i < n && i < PROBE_MAX_GPUS; i++)
		uuid_of(i, e->gpu[i].uuid, sizeof(e->gpu[i].uuid));
	return e;
}

struct verdict {
	int rc;
	size_t n;
	char why[512];
	char (*list)[PROBE_GPU_UUID_MAX + 1]; /* owned */
};

static void decide(const struct probe_nvml_enum *e, const char *const *measured,
		   size_t n_measured, struct verdict *v)
{
	v->list = calloc(PROBE_MAX_GPUS, sizeof(*v->list));
	CHECK(v->list != NULL);
	if (v->list == NULL)
		exit(1);
	v->rc = probe_gpu_uuids_decide(e, measured, n_measured, v->list, &v->n,
				       v->why, sizeof(v->why));
}

/* null, with why containing want */
static int refused_with(struct verdict *v, const char *want, int line)
{
	int ok = v->rc == -1 && v->n == 0 && strstr(v->why, want) != NULL;

	if (!ok)
		printf("# line %d: want null with \"%s\", got rc %d n %zu "
		       "\"%s\"\n",
		       line, want, v->rc, v->n, v->why);
	free(v->list);
	v->list = NULL;
	return ok;
}
#define NULL_WITH(v, want) CHECK(refused_with(&(v), (want), __LINE__))

static void test_all_read(void)
{
	struct probe_nvml_enum *e = enum_of(8);
	char u2[64], u5[64];
	const char *measured[2] = {u2, u5};
	struct verdict v;
	unsigned i;

	/* --devices 2,5: the list still names all eight, in NVML order */
	uuid_of(2, u2, sizeof(u2));
	uuid_of(5, u5, sizeof(u5));
	decide(e, measured, 2, &v);
	CHECK(v.rc == 0);
	CHECK(v.n == 8);
	CHECK(v.why[0] == '\0');
	for (i = 0; i < v.n; i++) {
		char want[64];
		uuid_of(i, want, sizeof(want));
		CHECK(strcmp(v.list[i], want) == 0);
	}
	free(v.list);
	/* a measured GPU whose UUID CUDA could not read is not held to it */
	measured[1] = "";
	decide(e, measured, 2, &v);
	CHECK(v.rc == 0 && v.n == 8);
	free(v.list);
	/* the most a report lists */
	free(e);
	e = enum_of(PROBE_MAX_GPUS);
	decide(e, NULL, 0, &v);
	CHECK(v.rc == 0 && v.n == PROBE_MAX_GPUS);
	free(v.list);
	free(e);
}

static void test_read_failures(void)
{
	struct probe_nvml_enum *e = enum_of(4);
	struct verdict v;

	/* one handle not read: null, naming the index, never a partial list */
	e->gpu[3].handle_rc = NVML_ERROR_NO_PERMISSION;
	strcpy(e->gpu[3].error, "Insufficient Permissions");
	e->gpu[3].uuid[0] = '\0';
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML could not read GPU 3's handle (Insufficient "
		     "Permissions)");
	/* one UUID not read */
	e->gpu[3].handle_rc = 0;
	e->gpu[3].uuid_rc = NVML_ERROR_NO_PERMISSION;
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML could not read GPU 3's UUID (Insufficient "
		     "Permissions)");
	/* a UUID read but empty */
	e->gpu[3].uuid_rc = 0;
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML gave GPU 3 no usable UUID");
	/* one that is not shown text */
	strcpy(e->gpu[3].uuid, "GPU-\x07");
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "GPU 3 no usable UUID");
	uuid_of(3, e->gpu[3].uuid, sizeof(e->gpu[3].uuid));
	decide(e, NULL, 0, &v);
	CHECK(v.rc == 0 && v.n == 4);
	free(v.list);
	/* the count not read */
	e->count_rc = NVML_ERROR_UNKNOWN;
	strcpy(e->count_error, "Unknown Error");
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML could not count the node's GPUs (Unknown Error)");
	free(e);
}

static void test_count_over_limit(void)
{
	struct probe_nvml_enum *e = enum_of(PROBE_MAX_GPUS);
	struct verdict v;

	e->count = PROBE_MAX_GPUS + 1;
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML counts 257 GPUs, more than the 256");
	free(e);
}

static void test_duplicate(void)
{
	struct probe_nvml_enum *e = enum_of(4);
	struct verdict v;

	strcpy(e->gpu[2].uuid, e->gpu[0].uuid);
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML gives GPUs 0 and 2 the same UUID GPU-");
	free(e);
}

static void test_measured_missing(void)
{
	struct probe_nvml_enum *e = enum_of(2);
	char u1[64];
	const char *measured[2] = {u1,
				   "MIG-8d3b6a2c-aaaa-bbbb-cccc-000000000000"};
	struct verdict v;

	/* MIG: CUDA's device is not one of NVML's GPUs */
	uuid_of(1, u1, sizeof(u1));
	decide(e, measured, 2, &v);
	NULL_WITH(v, "measured GPU MIG-8d3b6a2c-aaaa-bbbb-cccc-000000000000 "
		     "is not among NVML's 2");
	/* CUDA and NVML disagree */
	measured[1] = "GPU-00000000-0000-0000-0000-000000000000";
	decide(e, measured, 2, &v);
	NULL_WITH(v, "CUDA and NVML disagree");
	decide(e, measured, 1, &v);
	CHECK(v.rc == 0 && v.n == 2);
	free(v.list);
	free(e);
}

static void test_nvml_not_loaded(void)
{
	struct probe_nvml_enum *e = enum_of(0);
	struct verdict v;

	/* probe_nvml_enumerate without NVML says so */
	CHECK(probe_nvml_enumerate(NULL, e) == -1);
	CHECK(strcmp(e->unavailable, "NVML not loaded") == 0);
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML not loaded");
	/* what the inventory writes there (--no-nvml, a failed load) */
	snprintf(e->unavailable, sizeof(e->unavailable), "--no-nvml given");
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "--no-nvml given");
	free(e);
}

static void test_zero_gpus(void)
{
	struct probe_nvml_enum *e = enum_of(0);
	const char *measured[1] = {""};
	struct verdict v;

	/* an empty inventory would remove every GPU of the node: null,
	 * measured or not (review s25a F7) */
	decide(e, NULL, 0, &v);
	NULL_WITH(v, "NVML counts no GPU (this run measured 0)");
	/* a GPU measured (even one without a UUID) while NVML counts none */
	decide(e, measured, 1, &v);
	NULL_WITH(v, "NVML counts no GPU (this run measured 1)");
	free(e);
}

/* The encoder writes the list (after gpu_count), null when not known or
 * when it would not pass the checker. */
static void test_encoder(void)
{
	struct probe_report r;
	json_t *j, *list;
	char err[512];
	size_t i;

	make_report(&r);
	j = probe_report_to_json(&r);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "gpu_uuids")));
	json_decref(j);

	/* the two measured GPUs and a third the run did not measure */
	r.node.gpu_uuids = calloc(3, sizeof(*r.node.gpu_uuids));
	CHECK(r.node.gpu_uuids != NULL);
	if (r.node.gpu_uuids == NULL)
		return;
	for (i = 0; i < 2; i++)
		strcpy(r.node.gpu_uuids[i], r.gpus[i].uuid);
	strcpy(r.node.gpu_uuids[2], "GPU-4d774db7-82ff-3577-39d7-efc51bad255e");
	r.node.n_gpu_uuids = 3;
	r.node.gpu_uuids_known = 1;
	j = probe_report_to_json(&r);
	list = json_object_get(json_object_get(j, "node"), "gpu_uuids");
	CHECK(json_array_size(list) == 3);
	CHECK(strcmp(json_string_value(json_array_get(list, 2)),
		     "GPU-4d774db7-82ff-3577-39d7-efc51bad255e") == 0);
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	json_decref(j);

	/* a list without a GPU of gpus[]: null, not a list the server would
	 * read as that GPU gone */
	strcpy(r.node.gpu_uuids[1], "GPU-other");
	j = probe_report_to_json(&r);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "gpu_uuids")));
	CHECK(probe_report_check(j, err, sizeof(err)) == 0);
	json_decref(j);
	/* a repeated UUID: null */
	strcpy(r.node.gpu_uuids[1], r.gpus[1].uuid);
	strcpy(r.node.gpu_uuids[2], r.gpus[0].uuid);
	j = probe_report_to_json(&r);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "gpu_uuids")));
	json_decref(j);
	/* known and empty: null, with GPUs listed or without (an empty list
	 * would remove every GPU of the node, review s25a F7) */
	r.node.n_gpu_uuids = 0;
	j = probe_report_to_json(&r);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "gpu_uuids")));
	json_decref(j);
	r.gpus[0].uuid[0] = r.gpus[1].uuid[0] = '\0';
	j = probe_report_to_json(&r);
	CHECK(json_is_null(
	    json_object_get(json_object_get(j, "node"), "gpu_uuids")));
	json_decref(j);
	probe_report_free(&r);
	CHECK(r.node.gpu_uuids == NULL && !r.node.gpu_uuids_known);
}

int main(void)
{
	RUN(test_all_read);
	RUN(test_read_failures);
	RUN(test_count_over_limit);
	RUN(test_duplicate);
	RUN(test_measured_missing);
	RUN(test_nvml_not_loaded);
	RUN(test_zero_gpus);
	RUN(test_encoder);
	return testlib_finish();
}

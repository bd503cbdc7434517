/* test_problem.c - the problem builder's field errors: errors[] lists at
 * most PROBLEM_MAX_ERRORS, errors_total counts them all once the list is
 * full (and only then), problem_field_count() gives the true count, and a
 * nested body's errors merged under a prefix keep their count.
 */
#include <jansson.h>

#include "handlers/problem.h"
#include "tests/unit/testlib.h"

static size_t listed(const struct response *res)
{
	return json_array_size(json_object_get(res->json, "errors"));
}

static json_int_t total(const struct response *res)
{
	const json_t *t = json_object_get(res->json, "errors_total");

	return json_is_integer(t) ? json_integer_value(t) : -1;
}

static void test_short_list_has_no_total(void)
{
	struct response res = {0};

	for (int i = 0; i < PROBLEM_MAX_ERRORS; i++)
		problem_field(&res, "f", "bad %d", i);
	CHECK(res.status == 400);
	CHECK(listed(&res) == PROBLEM_MAX_ERRORS);
	CHECK(total(&res) == -1);
	CHECK(problem_field_count(&res) == PROBLEM_MAX_ERRORS);
	res_release(&res);
}

static void test_long_list_is_cut_and_counted(void)
{
	struct response res = {0};
	const json_t *last;

	for (int i = 0; i < 80000; i++)
		problem_field(&res, "k", "is not a known field (%d)", i);
	CHECK(listed(&res) == PROBLEM_MAX_ERRORS);
	CHECK(total(&res) == 80000);
	CHECK(problem_field_count(&res) == 80000);
	/* The first ones are kept, in order. */
	last = json_array_get(json_object_get(res.json, "errors"),
			      PROBLEM_MAX_ERRORS - 1);
	CHECK(strcmp(json_string_value(json_object_get(last, "message")),
		     "is not a known field (99)") == 0);
	res_release(&res);
}

static void test_merge_keeps_the_count(void)
{
	struct response inner = {0}, res = {0};

	for (int i = 0; i < 150; i++)
		problem_field(&inner, "k", "bad");
	problem_field(&res, "gpus", "is required");
	problem_merge_fields(&res, &inner, "training.");
	CHECK(listed(&res) == PROBLEM_MAX_ERRORS);
	CHECK(total(&res) == 151);
	CHECK(problem_field_count(&res) == 151);
	CHECK(strcmp(json_string_value(json_object_get(
			 json_array_get(json_object_get(res.json, "errors"), 1),
			 "field")),
		     "training.k") == 0);
	res_release(&inner);
	res_release(&res);
}

static void test_new_problem_resets_the_count(void)
{
	struct response res = {0};

	for (int i = 0; i < 200; i++)
		problem_field(&res, "k", "bad");
	problem(&res, 503, "unavailable", "Service unavailable", "later");
	CHECK(problem_field_count(&res) == 0);
	problem_field(&res, "k", "bad");
	CHECK(problem_field_count(&res) == 1);
	CHECK(total(&res) == -1);
	res_release(&res);
}

int main(void)
{
	RUN(test_short_list_has_no_total);
	RUN(test_long_list_is_cut_and_counted);
	RUN(test_merge_keeps_the_count);
	RUN(test_new_problem_resets_the_count);
	return testlib_finish();
}

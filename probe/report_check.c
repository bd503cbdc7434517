#define _POSIX_C_SOURCE 200809L
#include "report_check.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contract.h"
#include "report.h"
#include "util.h"

/* --- checking ---
 *
 * Every rule of the server's validate() (handlers/benchmarks.c, with
 * jv_int/jv_num/jv_str of handlers/jsonv.c and rfc3339_valid of
 * handlers/util.c) is applied here with the same bounds; on top, the
 * probe's own contract is stricter in places (docs/PROBE.md "Checking a
 * report"). A report this accepts is one the server accepts.
 */

static int one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

static int digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!(s[i] >= '0' && s[i] <= '9'))
			return 0;
	return 1;
}

static int num2(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

int probe_time_valid(const char *s)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	size_t n = s ? strlen(s) : 0;
	int y, mo, d, leap;
	const char *p;

	/* YYYY-MM-DD, a day that exists, year >= 1 */
	if (n < 10 || n > PROBE_TIME_MAX || !digits(s, 4) || s[4] != '-' ||
	    !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
		return 0;
	y = atoi(s);
	mo = num2(s + 5);
	d = num2(s + 8);
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    (mo == 2 && d == 29 && !leap))
		return 0;
	/* (T|t)hh:mm:ss[.frac]: the server also takes ' ' and a bare date;
	 * a report's times are date-times (RFC 3339 section 5.6). */
	p = s + 10;
	if ((*p != 'T' && *p != 't') || !digits(p + 1, 2) || p[3] != ':' ||
	    !digits(p + 4, 2) || p[6] != ':' || !digits(p + 7, 2))
		return 0;
	if (num2(p + 1) > 23 || num2(p + 4) > 59 || num2(p + 7) > 60)
		return 0;
	p += 9;
	if (*p == '.') {
		p++;
		if (!digits(p, 1))
			return 0;
		while (digits(p, 1))
			p++;
	}
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return 1;
	/* at most 15:59 either way, as the server (a PostgreSQL timestamptz)
	 * takes it: +16:00 was answered 400 (review s16b F4) */
	return (*p == '+' || *p == '-') && digits(p + 1, 2) && p[3] == ':' &&
	       digits(p + 4, 2) && p[6] == '\0' &&
	       num2(p + 1) <= PROBE_UTC_OFFSET_MAX_H && num2(p + 4) <= 59;
}

int probe_time_epoch_s(const char *s, double *out)
{
	const char *p;
	double secs;

	if (!probe_time_valid(s))
		return -1;
	secs = 86400.0 *
	       (double)probe_days_from_civil(atoi(s), num2(s + 5), num2(s + 8));
	p = s + 11;
	secs += 3600.0 * num2(p) + 60.0 * num2(p + 3) + num2(p + 6);
	p += 8;
	if (*p == '.') {
		secs += strtod(p, NULL);
		p++;
		while (digits(p, 1))
			p++;
	}
	if (*p == '+' || *p == '-')
		secs -= (*p == '+' ? 1 : -1) *
			(3600.0 * num2(p + 1) + 60.0 * num2(p + 4));
	*out = secs;
	return 0;
}

/* Absent or JSON null: the server reads both as "left out". */
static int absent(const json_t *v)
{
	return v == NULL || json_is_null(v);
}

/* A whole number in [min, max] as the server's jv_int reads one: an
 * integer, or a real without a fraction below 9e15 in magnitude. */
static int int_in(const json_t *v, long long min, long long max)
{
	long long x;

	if (json_is_integer(v)) {
		x = json_integer_value(v);
	} else if (json_is_real(v) &&
		   json_real_value(v) == floor(json_real_value(v)) &&
		   fabs(json_real_value(v)) < 9.0e15) {
		x = (long long)json_real_value(v);
	} else {
		return 0;
	}
	return x >= min && x <= max;
}

/* 0, or a number PROBE_NUMBER_MIN to max (jvt_num0): no statistic of a
 * rate, a bandwidth or a latency is negative. */
static int num_in(const json_t *v, double max)
{
	double x;

	if (!json_is_number(v))
		return 0;
	x = json_number_value(v);
	return x == 0 || (isfinite(x) && x >= PROBE_NUMBER_MIN && x <= max);
}

/* A string of 1..max bytes without NUL (jv_str). */
static int str_in(const json_t *v, size_t max)
{
	size_t n;

	if (!json_is_string(v))
		return 0;
	n = json_string_length(v);
	return n >= 1 && n <= max && strlen(json_string_value(v)) == n;
}

static int host_name_ok(const json_t *v)
{
	const char *s;

	if (!str_in(v, PROBE_HOSTNAME_MAX))
		return 0;
	s = json_string_value(v);
	/* starting and ending with a letter or digit, as the server takes
	 * it: "." and ".." are path segments, "node1." another node */
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789.-_") == strlen(s) &&
	       isalnum((unsigned char)s[0]) &&
	       isalnum((unsigned char)s[strlen(s) - 1]);
}

/* Nesting of objects and arrays, the way the server counts brackets: the
 * top-level object is level 1, deeper than PROBE_JSON_MAX_DEPTH refused. */
static int depth_ok(const json_t *v, int level)
{
	void *it;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return 1;
	if (++level > PROBE_JSON_MAX_DEPTH)
		return 0;
	for (i = 0; i < json_array_size(v); i++)
		if (!depth_ok(json_array_get(v, i), level))
			return 0;
	for (it = json_object_iter((json_t *)v); it;
	     it = json_object_iter_next((json_t *)v, it))
		if (!depth_ok(json_object_iter_value(it), level))
			return 0;
	return 1;
}

/* The first number of v's subtree beyond PROBE_REPORT_NUMBER_MAX in
 * magnitude, or 0 when there is none: the server refuses a report holding
 * one anywhere (check_magnitudes). */
static int big_number(const json_t *v, double *x)
{
	void *it;
	size_t i;

	if (json_is_number(v)) {
		*x = json_number_value(v);
		return fabs(*x) > PROBE_REPORT_NUMBER_MAX;
	}
	for (i = 0; i < json_array_size(v); i++)
		if (big_number(json_array_get(v, i), x))
			return 1;
	for (it = json_object_iter((json_t *)v); it;
	     it = json_object_iter_next((json_t *)v, it))
		if (big_number(json_object_iter_value(it), x))
			return 1;
	return 0;
}

/* A field the server shows as text (node.cpu_model, driver versions): it
 * reads a string's value, and any other JSON value as its source text.
 * An object's or array's text may hold line breaks between its members,
 * which jansson does not keep, so they are refused here (the probe
 * writes a string, a number or null); shown_walk checks the characters. */
static int shown_ok(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

/* A number the server's jv_num takes in [0, max]: 0, or at least 1e-300
 * (JV_NUM_TINY of handlers/jsonv.h). */
static int info_num_ok(const json_t *v, double max)
{
	double x;

	if (!json_is_number(v))
		return 0;
	x = json_number_value(v);
	return isfinite(x) && x >= 0 && x <= max && (x == 0 || x >= 1e-300);
}

/* 1 when v is an array of at most max (0: any count) elements, each a
 * number probe_typed_elem_ok takes (numbers) or a string. */
static int array_of(const json_t *v, int numbers, long long max)
{
	const json_t *e;
	size_t i;

	if (!json_is_array(v) ||
	    (max > 0 && (long long)json_array_size(v) > max))
		return 0;
	json_array_foreach(v, i, e)
	{
		if (numbers ? !json_is_number(e) ||
				  !probe_typed_elem_ok(json_number_value(e))
			    : !json_is_string(e))
			return 0;
	}
	return 1;
}

/* 1 when v is of ty's kind (probe/contract.h), as the server's typed_ok
 * (handlers/benchmarks.c) reads it. */
static int typed_ok(const json_t *v, const struct probe_typed *ty)
{
	switch (ty->kind) {
	case PROBE_KIND_INT:
		/* unbounded: any whole number >= 0, 1e16 too (the rule on
		 * any number refuses it, naming the top-level member) */
		if (ty->max == 0 && json_is_real(v))
			return json_real_value(v) >= 0 &&
			       json_real_value(v) == floor(json_real_value(v));
		return int_in(v, 0, ty->max > 0 ? ty->max : INT64_MAX);
	case PROBE_KIND_NUM:
		return json_is_number(v) &&
		       probe_typed_num_ok(json_number_value(v));
	case PROBE_KIND_STR:
		return json_is_string(v);
	case PROBE_KIND_BOOL:
		return json_is_boolean(v);
	case PROBE_KIND_OBJ:
		return json_is_object(v);
	case PROBE_KIND_NUMS:
		return array_of(v, 1, ty->max);
	case PROBE_KIND_STRS:
		return array_of(v, 0, ty->max);
	}
	return 0;
}

/* The members of x that tab types (n entries), each null, absent or of
 * its kind; the first that is not is refused, named under where
 * ("results[2]."), as the server's check_typed names it (review s17c
 * F10). */
static int check_typed(const json_t *x, const char *where,
		       const struct probe_typed *tab, size_t n, char *err,
		       size_t errlen)
{
	char rule[80];

	for (size_t i = 0; i < n; i++) {
		const json_t *o = x, *v;

		if (tab[i].obj[0]) {
			o = json_object_get(x, tab[i].obj);
			if (!json_is_object(o))
				continue; /* its own entry says so */
		}
		v = json_object_get(o, tab[i].key);
		if (absent(v) || typed_ok(v, &tab[i]))
			continue;
		snprintf(err, errlen, "%s%s%s%s: %s", where, tab[i].obj,
			 tab[i].obj[0] ? "." : "", tab[i].key,
			 probe_typed_rule(&tab[i], rule, sizeof(rule)));
		return -1;
	}
	return 0;
}

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		return -1;                                                     \
	} while (0)

static int check_time(const json_t *root, const char *key, char *err,
		      size_t errlen)
{
	const json_t *v = json_object_get(root, key);

	if (!str_in(v, PROBE_TIME_MAX) ||
	    !probe_time_valid(json_string_value(v)))
		FAIL("%s: must be an RFC 3339 date-time of at most %d "
		     "characters on a day that exists, with an offset within "
		     "+-%02d:59, e.g. 2025-11-21T00:00:00.000Z",
		     key, PROBE_TIME_MAX, PROBE_UTC_OFFSET_MAX_H);
	return 0;
}

/* finished_at not before started_at, and neither more than a day after
 * the clock, as the server takes them. The server reads its own clock;
 * this reads the node's, which wrote the report: a node whose clock is
 * wrong still gets the server's 400 (the only one this cannot foresee),
 * but a report dated ahead of its own node is refused here. */
static int check_time_order(const json_t *root, char *err, size_t errlen)
{
	static const char *const keys[] = {"started_at", "finished_at"};
	double at[2], now = (double)time(NULL);
	int k;

	for (k = 0; k < 2; k++)
		if (probe_time_epoch_s(
			json_string_value(json_object_get(root, keys[k])),
			&at[k]))
			FAIL("%s: must be an RFC 3339 date-time", keys[k]);
	if (at[1] < at[0])
		FAIL("finished_at: is before started_at");
	for (k = 0; k < 2; k++) {
		if (at[k] > now + PROBE_AHEAD_S)
			FAIL("%s: is more than a day after this node's clock: "
			     "fix the clock and date the report again",
			     keys[k]);
		/* as the server: a clock reset to 1970 (review s19c F4) */
		if (at[k] < PROBE_EARLIEST_S)
			FAIL("%s: is before 2000: the node's clock was reset; "
			     "fix it and date the report again",
			     keys[k]);
	}
	return 0;
}

/* The GPU fields the server types (its check_gpu_info): members of pcie
 * and nvlink, numa_node, ecc_enabled, mig_mode; each null or absent, or
 * of its type. */
static int check_gpu_info(const json_t *x, size_t i, char *err, size_t errlen)
{
	/* max > 0: an integer in [0, max]; 0: a number in [0, 1e15] */
	static const struct probe_gpu_member members[] = PROBE_GPU_MEMBERS;
	static const char *const flags[] = PROBE_GPU_FLAGS;
	const json_t *o, *v;
	size_t k;

	for (k = 0; k < sizeof(members) / sizeof(members[0]); k++) {
		o = json_object_get(x, members[k].obj);
		if (absent(o))
			continue;
		if (!json_is_object(o))
			FAIL("gpus[%zu].%s: must be an object or null", i,
			     members[k].obj);
		v = json_object_get(o, members[k].key);
		if (absent(v))
			continue;
		if (members[k].max > 0 && !int_in(v, 0, members[k].max))
			FAIL("gpus[%zu].%s.%s: must be null or an integer in "
			     "[0, %lld]",
			     i, members[k].obj, members[k].key, members[k].max);
		if (members[k].max == 0 &&
		    !info_num_ok(v, PROBE_REPORT_NUMBER_MAX))
			FAIL("gpus[%zu].%s.%s: must be null or a number in "
			     "[0, 1e15]",
			     i, members[k].obj, members[k].key);
	}
	v = json_object_get(x, "numa_node");
	if (!absent(v) && !int_in(v, -1, 4096))
		FAIL("gpus[%zu].numa_node: must be null or an integer in "
		     "[-1, 4096]",
		     i);
	for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		v = json_object_get(x, flags[k]);
		if (!absent(v) && !json_is_boolean(v))
			FAIL("gpus[%zu].%s: must be true, false or null", i,
			     flags[k]);
	}
	return 0;
}

/* gpus[]: objects with index 0..256 listed once, name null or 1..128
 * bytes that may be shown, a uuid of 1..96 bytes listed once (collected
 * into uuids), typed PCIe / NVLink / NUMA / flag fields. */
static int check_gpus(const json_t *gpus, json_t *uuids, char *err,
		      size_t errlen)
{
	char seen[PROBE_MAX_GPUS + 1] = {0};
	const json_t *x, *v;
	json_int_t idx;
	size_t i;

	if (!json_is_array(gpus) || json_array_size(gpus) > PROBE_MAX_GPUS)
		FAIL("gpus: must be an array of at most %d GPUs",
		     PROBE_MAX_GPUS);
	json_array_foreach(gpus, i, x)
	{
		if (!json_is_object(x))
			FAIL("gpus[%zu]: must be an object", i);
		if (!int_in(json_object_get(x, "index"), 0, PROBE_MAX_GPUS))
			FAIL("gpus[%zu].index: must be an integer in [0, %d]",
			     i, PROBE_MAX_GPUS);
		v = json_object_get(x, "index");
		idx = json_is_integer(v) ? json_integer_value(v)
					 : (json_int_t)json_real_value(v);
		if (seen[idx]++)
			FAIL("gpus[%zu].index: appears twice in gpus[]", i);
		if (check_gpu_info(x, i, err, errlen))
			return -1;
		{
			static const struct probe_typed typed[] =
			    PROBE_GPU_TYPED;
			char where[32];

			snprintf(where, sizeof(where), "gpus[%zu].", i);
			if (check_typed(x, where, typed,
					sizeof(typed) / sizeof(typed[0]), err,
					errlen))
				return -1;
		}
		v = json_object_get(x, "name");
		if (!absent(v) && !str_in(v, PROBE_GPU_NAME_MAX))
			FAIL("gpus[%zu].name: must be null or a string of 1 to "
			     "%d bytes without NUL",
			     i, PROBE_GPU_NAME_MAX);
		/* a catalog type for a GPU the server's catalog does not
		 * map; the server holds it to the name (review s17c F5),
		 * which needs its catalog: here only its type */
		v = json_object_get(x, "gpu_type");
		if (!absent(v) && !str_in(v, PROBE_GPU_NAME_MAX))
			FAIL(
			    "gpus[%zu].gpu_type: must be null or a string of 1 "
			    "to %d bytes without NUL",
			    i, PROBE_GPU_NAME_MAX);
		v = json_object_get(x, "uuid");
		if (!str_in(v, PROBE_GPU_UUID_MAX))
			FAIL(
			    "gpus[%zu].uuid: must be a string of 1 to %d bytes "
			    "without NUL",
			    i, PROBE_GPU_UUID_MAX);
		if (json_object_get(uuids, json_string_value(v)))
			FAIL("gpus[%zu].uuid: appears twice in gpus[]", i);
		/* with its index and place, for the results' gpu_index */
		json_object_set_new(uuids, json_string_value(v),
				    json_pack("[II]", idx, (json_int_t)i));
	}
	return 0;
}

/* node.gpu_uuids (probe/contract.h): null or absent, or 1 to
 * PROBE_MAX_GPUS UUIDs of 1..PROBE_GPU_UUID_MAX bytes without NUL, none
 * twice, holding every uuid of gpus[] (checked before this); null where
 * NVML was not asked (review s25a F7: an empty list from a no_device
 * report removed every GPU of its node). */
static int check_gpu_uuids(const json_t *root, const json_t *node,
			   const json_t *gpus, char *err, size_t errlen)
{
	const json_t *list = json_object_get(node, "gpu_uuids"), *x;
	const char *st = json_string_value(json_object_get(root, "status"));
	json_t *seen = NULL; /* owned: the UUIDs listed so far */
	const char *u;
	size_t i, j;
	int rc = -1;

	if (absent(list))
		return 0;
	if (!json_is_array(list) || json_array_size(list) == 0 ||
	    json_array_size(list) > PROBE_MAX_GPUS)
		FAIL(PROBE_GPU_UUIDS_ERR_TYPE);
	json_array_foreach(list, i, x)
	{
		if (!str_in(x, PROBE_GPU_UUID_MAX))
			FAIL(PROBE_GPU_UUIDS_ERR_ENTRY, i);
	}
	if (json_is_false(json_object_get(node, "nvml_available")) ||
	    (st && !strcmp(st, "no_device")))
		FAIL(PROBE_GPU_UUIDS_ERR_NO_NVML);
	seen = json_object();
	if (seen == NULL) {
		snprintf(err, errlen, "report: out of memory");
		goto out;
	}
	json_array_foreach(list, i, x)
	{
		u = json_string_value(x);
		if (json_object_get(seen, u)) {
			snprintf(err, errlen, PROBE_GPU_UUIDS_ERR_TWICE, u);
			goto out;
		}
		json_object_set_new(seen, u, json_true());
	}
	json_array_foreach(gpus, j, x)
	{
		u = json_string_value(json_object_get(x, "uuid"));
		if (u == NULL || !json_object_get(seen, u)) {
			snprintf(err, errlen, PROBE_GPU_UUIDS_ERR_MISSING, j);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

/* A statistic of result x, NaN when absent or null. */
static double stat_of(const json_t *x, const char *key)
{
	const json_t *v = json_object_get(x, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int check_result(const json_t *x, size_t i, const json_t *uuids,
			char *err, size_t errlen)
{
	static const char *const rstatuses[] = {"ok", "skipped", "failed",
						NULL};
	static const char *const units[] = {"TFLOP/s", "TOP/s", "GB/s", "us",
					    NULL};
	static const char *const dtypes[] = {PROBE_DTYPES(PROBE_METRIC_STRING)
						 NULL};
	static const char *const stat_keys[] = {"median", "max",	"mean",
						"p10",	  "p90",	"cv",
						"limit",  "efficiency", NULL};
	const char *const *k;
	const json_t *v;

	if (!json_is_object(x))
		FAIL("results[%zu]: must be an object", i);
	v = json_object_get(x, "metric");
	if (!json_is_string(v) || !probe_metric_known(json_string_value(v)))
		FAIL("results[%zu].metric: unknown metric", i);
	v = json_object_get(x, "unit");
	if (!str_in(v, PROBE_UNIT_MAX) || !one_of(json_string_value(v), units))
		FAIL("results[%zu].unit: must be one of TFLOP/s, TOP/s, GB/s, "
		     "us",
		     i);
	v = json_object_get(x, "status");
	if (!json_is_string(v) || !one_of(json_string_value(v), rstatuses))
		FAIL("results[%zu].status: must be one of ok, skipped, failed",
		     i);
	if (strcmp(json_string_value(v), "ok") != 0) {
		v = json_object_get(x, "reason");
		if (!json_is_string(v) || json_string_length(v) == 0)
			FAIL("results[%zu].reason: required when status is "
			     "not ok",
			     i);
	} else if (!json_is_number(json_object_get(x, "median"))) {
		FAIL("results[%zu].median: required when status is ok", i);
	}
	v = json_object_get(x, "dtype");
	if (!absent(v) && (!str_in(v, PROBE_DTYPE_MAX) ||
			   !one_of(json_string_value(v), dtypes)))
		FAIL("results[%zu].dtype: must be null or one of bf16, fp16, "
		     "fp8_e4m3, tf32, fp32, fp64, int8",
		     i);
	v = json_object_get(x, "method");
	if (!absent(v) && !str_in(v, PROBE_METHOD_MAX))
		FAIL("results[%zu].method: must be null or a string of 1 to %d "
		     "bytes without NUL",
		     i, PROBE_METHOD_MAX);
	v = json_object_get(x, "gpu_uuid");
	if (!absent(v) && (!json_is_string(v) ||
			   !json_object_get(uuids, json_string_value(v))))
		FAIL("results[%zu].gpu_uuid: must be null or the uuid of a GPU "
		     "in gpus[]",
		     i);
	/* the result names its GPU twice; the two agree, as the server
	 * holds it (review s24c F3) */
	if (!absent(v)) {
		const json_t *g = json_object_get(uuids, json_string_value(v)),
			     *gi = json_object_get(x, "gpu_index");
		json_int_t idx = json_integer_value(json_array_get(g, 0));

		/* whole numbers only: another is its own rule's (s25a F8) */
		if (json_is_number(gi) &&
		    json_number_value(gi) == floor(json_number_value(gi)) &&
		    json_number_value(gi) != (double)idx)
			FAIL(
			    "results[%zu].gpu_index: is %.0f, but gpu_uuid is "
			    "gpus[%lld]'s, whose index is %lld",
			    i, json_number_value(gi),
			    (long long)json_integer_value(json_array_get(g, 1)),
			    (long long)idx);
	}
	for (k = stat_keys; *k; k++) {
		v = json_object_get(x, *k);
		if (!absent(v) && !num_in(v, PROBE_NUMBER_MAX))
			FAIL("results[%zu].%s: must be null, 0 or a number in "
			     "[1e-09, 1e15]",
			     i, *k);
	}
	if (!int_in(json_object_get(x, "n"), 0, PROBE_N_MAX))
		FAIL("results[%zu].n: must be an integer in [0, %d]", i,
		     PROBE_N_MAX);
	/* an ok result measured at least one sample; the server refuses
	 * n 0 there (review s16b F4) */
	v = json_object_get(x, "n");
	if (!strcmp(json_string_value(json_object_get(x, "status")), "ok") &&
	    (json_is_integer(v) ? json_integer_value(v) == 0
				: json_real_value(v) == 0))
		FAIL("results[%zu].n: is 0: an ok result has at least one "
		     "sample",
		     i);
	/* an ok result's median above 0 (probe/contract.h, as the server:
	 * review s23c F1) */
	if (!strcmp(json_string_value(json_object_get(x, "status")), "ok")) {
		char why[160];
		const char *bad =
		    probe_stats_problem(stat_of(x, "median"), why, sizeof(why));

		if (bad)
			FAIL("results[%zu].%s: %s", i, bad, why);
	}
	/* a GEMM rate is of a dtype: the server stores no GEMM without one,
	 * and no dtype on a metric that has none; each metric has one unit
	 * (probe/contract.h, as the server: review s19c F6, F8) */
	{
		const char *metric =
		    json_string_value(json_object_get(x, "metric"));
		const char *dtype =
		    json_string_value(json_object_get(x, "dtype"));
		const char *unit = probe_metric_unit(metric, dtype);

		if (probe_metric_dtype_rule(metric) == PROBE_DTYPE_REQUIRED &&
		    !dtype)
			FAIL("results[%zu].dtype: is required for a GEMM "
			     "metric",
			     i);
		if (probe_metric_dtype_rule(metric) == PROBE_DTYPE_NONE &&
		    dtype)
			FAIL("results[%zu].dtype: must be null or absent for "
			     "%s",
			     i, metric);
		if (unit &&
		    strcmp(json_string_value(json_object_get(x, "unit")), unit))
			FAIL("results[%zu].unit: must be \"%s\" for %s", i,
			     unit, metric);
	}
	v = json_object_get(x, "peer_index");
	if (!absent(v) && !int_in(v, 0, PROBE_MAX_GPUS))
		FAIL("results[%zu].peer_index: must be null or an integer in "
		     "[0, %d]",
		     i, PROBE_MAX_GPUS);
	v = json_object_get(x, "size_bytes");
	if (!absent(v) && !int_in(v, 0, PROBE_SIZE_BYTES_MAX))
		FAIL("results[%zu].size_bytes: must be null or an integer in "
		     "[0, 2^50]",
		     i);
	{
		static const struct probe_typed typed[] = PROBE_RESULT_TYPED;
		char where[32];

		snprintf(where, sizeof(where), "results[%zu].", i);
		return check_typed(x, where, typed,
				   sizeof(typed) / sizeof(typed[0]), err,
				   errlen);
	}
}

/* The first string of v, member names included, that probe_shown_text_ok
 * refuses: 1 with its path in path ("results[3].note"; a refused member
 * name is named by its parent, *key_bad set), 0 when none. Every string of
 * a report is shown somewhere (node page, benchmark history, capacity
 * report); the server walks it alike (handlers/benchmarks.c check_shown,
 * review s16c F4). */
static int shown_walk(const json_t *v, char *path, size_t len, size_t cap,
		      int *key_bad)
{
	const char *key;
	json_t *m;
	size_t i;

	if (json_is_string(v))
		return !probe_shown_text_ok(json_string_value(v));
	json_array_foreach(v, i, m)
	{
		snprintf(path + len, cap - len, "[%zu]", i);
		if (shown_walk(m, path, strlen(path), cap, key_bad))
			return 1;
	}
	json_object_foreach((json_t *)v, key, m)
	{
		path[len] = '\0';
		if (!probe_shown_text_ok(key)) {
			*key_bad = 1;
			return 1;
		}
		snprintf(path + len, cap - len, "%s%.64s", len ? "." : "", key);
		if (shown_walk(m, path, strlen(path), cap, key_bad))
			return 1;
	}
	path[len] = '\0';
	return 0;
}

static int check_report(const json_t *root, json_t *uuids, char *err,
			size_t errlen)
{
	static const char *const statuses[] = {"ok", "partial", "no_device",
					       "failed", NULL};
	static const char *const modes[] = {"quick", "full", "custom", NULL};
	static const char *const shown[] = {"cpu_model", "driver_version",
					    "cuda_driver_version", NULL};
	const json_t *v, *node, *results, *x;
	const char *const *k, *key;
	double big;
	size_t i;

	if (!json_is_object(root))
		FAIL("report: not a JSON object");
	if (!depth_ok(root, 0))
		FAIL("report: nests deeper than %d levels",
		     PROBE_JSON_MAX_DEPTH);
	{
		char path[256] = "";
		int key_bad = 0;
		if (shown_walk(root, path, 0, sizeof(path), &key_bad))
			FAIL("%s: %s control character, line separator or "
			     "bidirectional character",
			     *path ? path : "report",
			     key_bad ? "has a member name with a"
				     : "must hold no");
	}
	if (!int_in(json_object_get(root, "schema_version"), 1, 1))
		FAIL("schema_version: must be the integer 1");
	v = json_object_get(root, "run_id");
	if (!str_in(v, PROBE_UUID_LEN) ||
	    !probe_uuid_is_v4(json_string_value(v)))
		FAIL("run_id: must be a version-4 UUID string");
	v = json_object_get(root, "status");
	if (!json_is_string(v) || !one_of(json_string_value(v), statuses))
		FAIL("status: must be one of ok, partial, no_device, failed");
	v = json_object_get(root, "mode");
	if (!str_in(v, PROBE_MODE_MAX) || !one_of(json_string_value(v), modes))
		FAIL("mode: must be one of quick, full, custom");
	if (check_time(root, "started_at", err, errlen) ||
	    check_time(root, "finished_at", err, errlen) ||
	    check_time_order(root, err, errlen))
		return -1;
	v = json_object_get(root, "probe_version");
	if (!json_is_string(v) || json_string_length(v) == 0)
		FAIL("probe_version: must be a non-empty string");
	node = json_object_get(root, "node");
	if (!json_is_object(node))
		FAIL("node: must be an object");
	if (!host_name_ok(json_object_get(node, "hostname")))
		FAIL("node.hostname: must be a host name of 1 to %d "
		     "characters [A-Za-z0-9._-], starting and ending with a "
		     "letter or digit",
		     PROBE_HOSTNAME_MAX);
	for (k = shown; *k; k++)
		if (!shown_ok(json_object_get(node, *k)))
			FAIL("node.%s: must be a string, a number or null", *k);
	if (!int_in(json_object_get(node, "gpu_count"), 0, PROBE_MAX_GPUS))
		FAIL("node.gpu_count: must be an integer in [0, %d]",
		     PROBE_MAX_GPUS);
	{
		static const struct probe_typed top[] = PROBE_TOP_TYPED;
		static const struct probe_typed typed[] = PROBE_NODE_TYPED;

		if (check_typed(root, "", top, sizeof(top) / sizeof(top[0]),
				err, errlen) ||
		    check_typed(node, "node.", typed,
				sizeof(typed) / sizeof(typed[0]), err, errlen))
			return -1;
	}
	if (check_gpus(json_object_get(root, "gpus"), uuids, err, errlen) ||
	    check_gpu_uuids(root, node, json_object_get(root, "gpus"), err,
			    errlen))
		return -1;
	results = json_object_get(root, "results");
	if (!json_is_array(results) ||
	    json_array_size(results) > PROBE_MAX_RESULTS)
		FAIL("results: must be an array of at most %d results",
		     PROBE_MAX_RESULTS);
	json_array_foreach(results, i, x)
	{
		if (check_result(x, i, uuids, err, errlen))
			return -1;
	}
	/* the run's status agrees with what it carries, as the server
	 * holds it (review s19c F3) */
	{
		const char *st =
		    json_string_value(json_object_get(root, "status"));
		size_t ok_results = 0,
		       n_gpus = json_array_size(json_object_get(root, "gpus"));

		json_array_foreach(results, i, x)
		{
			const json_t *rs = json_object_get(x, "status");
			ok_results +=
			    absent(rs) || !strcmp(json_string_value(rs), "ok");
		}
		if (!strcmp(st, "failed") && ok_results)
			FAIL("status: is failed (nothing measured), but %zu "
			     "result(s) are ok: a run that measured some is "
			     "partial",
			     ok_results);
		if (!strcmp(st, "no_device") &&
		    (n_gpus || json_array_size(results)))
			FAIL("status: is no_device (no usable GPU), but the "
			     "report lists %zu GPU(s) and %zu result(s)",
			     n_gpus, json_array_size(results));
	}
	/* last, so that a statistic out of range is named by its own rule
	 * first: this catches the rest (memory_total_bytes, telemetry) */
	json_object_foreach((json_t *)root, key, v)
	{
		if (big_number(v, &big))
			FAIL("%s: holds a number beyond 1e15 (%g): no probe "
			     "figure is that large",
			     key, big);
	}
	/* gpu_count counts the GPUs measured: gpus[] never lists more (the
	 * server's rule too, review s24c F3); last, as a case that lists a
	 * bad GPU is named by that GPU's rule first */
	v = json_object_get(node, "gpu_count");
	if (json_is_number(v) &&
	    json_number_value(v) <
		(double)json_array_size(json_object_get(root, "gpus")))
		FAIL("node.gpu_count: is %.0f, but gpus[] lists %zu GPUs: it "
		     "counts the GPUs the run measured",
		     json_number_value(v),
		     json_array_size(json_object_get(root, "gpus")));
	return 0;
}

int probe_report_check(const json_t *root, char *err, size_t errlen)
{
	json_t *uuids = json_object();
	int rc;

	if (uuids == NULL) {
		snprintf(err, errlen, "report: out of memory");
		return -1;
	}
	rc = check_report(root, uuids, err, errlen);
	json_decref(uuids);
	return rc;
}

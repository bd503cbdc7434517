/* benchmarks.c - POST/GET /v1/benchmarks, GET /v1/nodes, GET /v1/fleet
 * (issue 5). The report format is docs/PROBE.md "Report format".
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handlers/api.h"
#include "handlers/calib.h"
#include "handlers/jsonv.h"
#include "handlers/names.h"
#include "lib/jtape.h"
#include "handlers/problem.h"
#include "handlers/util.h"
#include "probe/contract.h"
#include "storage/bench.h"

#define FLEET_WINDOW_DAYS 30

static const char *const run_statuses[] = {"ok", "partial", "no_device",
					   "failed", NULL};
static const char *const result_statuses[] = {"ok", "skipped", "failed", NULL};
/* Metrics the service understands; others are refused so a typo in a
 * probe cannot silently create an unqueryable series.
 */
static const char *const metrics[] = {PROBE_METRICS(PROBE_METRIC_STRING) NULL};
static const char *const dtypes[] = {PROBE_DTYPES(PROBE_METRIC_STRING) NULL};

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROBE_HOSTNAME_MAX)
		return 0;
	/* starting and ending with a letter or digit (RFC 1123 labels): "."
	 * and ".." would be path segments of /v1/nodes/{hostname} that
	 * clients normalise away, and "node1." would be another node than
	 * "node1" (review s15, s15b) */
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789.-_") == n &&
	       isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

/* A report's GPU uuids, sorted for lookups from its results, each with
 * its gpus[] entry's index (-1: none given) and place in gpus[]. */
struct uuid_ent {
	const char *s; /* first: cmp_str compares entries by it */
	long long index;
	size_t at;
};
struct uuid_set {
	struct uuid_ent v[PROBE_MAX_GPUS];
	int n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The entry of uuid s, or NULL. */
static const struct uuid_ent *uuid_find(const struct uuid_set *u, const char *s)
{
	return bsearch(&s, u->v, (size_t)u->n, sizeof(u->v[0]), cmp_str);
}

/* A result's numeric fields: statistics (0, or BENCH_STAT_MIN to
 * BENCH_STAT_MAX in magnitude: storage/bench.h) or whole numbers in [0,
 * max] (1e3 and 1000.0 are 1000), or null.
 */
struct num_field {
	const char *key;
	long long max; /* 0: a finite number (double); else a whole number
			  <= max (long long) */
	size_t off;    /* of the double or long long in struct bench_result */
};

#define NUM(key)                                                               \
	{                                                                      \
#key, 0, offsetof(struct bench_result, key)                    \
	}
#define INT(key, max)                                                          \
	{                                                                      \
#key, max, offsetof(struct bench_result, key)                  \
	}
/* In the order the probe writes them (docs/PROBE.md): jtape_get resumes
 * where its last lookup stopped, so lookups in that order are cheap.
 */
static const struct num_field sweep_fields[] = {
    INT(peer_index, PROBE_MAX_GPUS),
    INT(size_bytes, PROBE_SIZE_BYTES_MAX),
};
static const struct num_field stat_fields[] = {
    NUM(median),     NUM(max), NUM(mean),	    NUM(p10),
    NUM(p90),	     NUM(cv),  INT(n, PROBE_N_MAX), NUM(limit),
    NUM(efficiency),
};
#undef NUM
#undef INT

/* Fills the fields of out named in f: -1 or NAN when absent, null or
 * invalid (the error is reported).
 */
static void take_nums(struct jv *v, const struct jtape *t, uint32_t x,
		      const struct num_field *f, size_t n_fields,
		      struct bench_result *out)
{
	char *dst;
	long long n;
	double d;

	for (size_t i = 0; i < n_fields; i++) {
		dst = (char *)out + f[i].off;
		/* The getters write their output only on success. */
		if (f[i].max) {
			n = -1;
			jvt_int(v, t, x, f[i].key, false, 0, f[i].max, &n);
			memcpy(dst, &n, sizeof(n));
		} else {
			d = NAN;
			/* no statistic of a rate, bandwidth or latency is
			 * negative (review s15: -500 TFLOP/s was stored as
			 * ok) */
			jvt_num0(v, t, x, f[i].key, false, 0, BENCH_STAT_MAX,
				 BENCH_STAT_MIN, &d);
			memcpy(dst, &d, sizeof(d));
		}
	}
}

/* 1 when number token m is a whole number in [0, max], read as jvt_int
 * reads one (1e3 and 1000.0 are 1000), as the probe's checker does; max 0:
 * any whole number >= 0, 1e16 too (the rule on any number refuses it,
 * naming the top-level member). */
static int whole_in(const struct jtape *t, uint32_t m, long long max)
{
	long long x;
	double d;

	if (t->tok[m].type != JT_NUMBER || jtape_num(t, m, &d) != 0)
		return 0;
	if (max == 0)
		return d >= 0 && d == floor(d);
	if (t->tok[m].integer)
		x = strtoll(t->src + t->tok[m].start, NULL, 10);
	else if (d == floor(d) && fabs(d) < 9.0e15)
		x = (long long)d;
	else
		return 0;
	return x >= 0 && x <= max;
}

/* 1 when every element of array token m is a number elem_ok takes (or,
 * numbers 0, a string), at most max of them (0: any count). */
static int array_of(const struct jtape *t, uint32_t m, bool numbers,
		    long long max)
{
	double d;

	if (t->tok[m].type != JT_ARRAY ||
	    (max > 0 && (long long)t->tok[m].count > max))
		return 0;
	for (uint32_t e = m + 1; e < t->tok[m].next; e = t->tok[e].next)
		if (numbers ? t->tok[e].type != JT_NUMBER ||
				  jtape_num(t, e, &d) != 0 ||
				  !probe_typed_elem_ok(d)
			    : t->tok[e].type != JT_STRING)
			return 0;
	return 1;
}

/* 1 when token m is of ty's kind (probe/contract.h). */
static int typed_ok(const struct jtape *t, uint32_t m,
		    const struct probe_typed *ty)
{
	const struct jt_tok *k = &t->tok[m];
	double d;

	switch (ty->kind) {
	case PROBE_KIND_INT:
		return whole_in(t, m, ty->max);
	case PROBE_KIND_NUM:
		return k->type == JT_NUMBER && jtape_num(t, m, &d) == 0 &&
		       probe_typed_num_ok(d);
	case PROBE_KIND_STR:
		return k->type == JT_STRING;
	case PROBE_KIND_BOOL:
		return k->type == JT_TRUE || k->type == JT_FALSE;
	case PROBE_KIND_OBJ:
		return k->type == JT_OBJECT;
	case PROBE_KIND_NUMS:
		return array_of(t, m, true, ty->max);
	case PROBE_KIND_STRS:
		return array_of(t, m, false, ty->max);
	}
	return 0;
}

/* The members of object x that tab types (n entries; docs/PROBE.md
 * "Report format"), each null, absent or of its kind, else an error naming
 * it under v's prefix ("results[2].telemetry.samples"). Review s17c F10:
 * PROBE.md and openapi typed them, and neither side checked them. */
static void check_typed(struct jv *v, const struct jtape *t, uint32_t x,
			const struct probe_typed *tab, size_t n)
{
	char rule[80], key[80];

	for (size_t i = 0; i < n; i++) {
		uint32_t o = x, m;

		if (tab[i].obj[0]) {
			o = jtape_get(t, x, tab[i].obj);
			if (!o || t->tok[o].type != JT_OBJECT)
				continue; /* its own entry says so */
		}
		m = jtape_get(t, o, tab[i].key);
		if (!m || t->tok[m].type == JT_NULL || typed_ok(t, m, &tab[i]))
			continue;
		snprintf(key, sizeof(key), "%s%s%s", tab[i].obj,
			 tab[i].obj[0] ? "." : "", tab[i].key);
		jv_error(v, key, "%s",
			 probe_typed_rule(&tab[i], rule, sizeof(rule)));
	}
}

/* Validates one results[] entry x and fills *out (strings and numbers as
 * storage takes them; docs/PROBE.md "Report format"). reasons: room for
 * the entry's clock event reasons. Keys are looked up in the probe's
 * order (see sweep_fields).
 */
static void check_result(struct jv *v, const struct jtape *t, uint32_t x,
			 const struct uuid_set *uuids, struct jv_arena *a,
			 struct bench_result *out, const char **reasons)
{
	const char *s;
	int e;
	uint32_t u, tel, rs;

	memset(out, 0, sizeof(*out));
	if (t->tok[x].type != JT_OBJECT) {
		jv_error(v, "", "must be an object");
		return;
	}
	u = jtape_get(t, x, "gpu_uuid");
	if (u && t->tok[u].type != JT_NULL) {
		const struct uuid_ent *g = NULL;
		uint32_t gi = jtape_get(t, x, "gpu_index");
		double idx;

		if (t->tok[u].type != JT_STRING || !(s = jvt_text(t, u, a)) ||
		    !(g = uuid_find(uuids, s)))
			jv_error(v, "gpu_uuid",
				 "must be the uuid of a GPU in gpus[]");
		else
			out->gpu_uuid = s;
		/* the result names its GPU twice; the two agree (review
		 * s24c F3: the server keys by UUID, a reader by index) */
		if (g && g->index >= 0 && gi && t->tok[gi].type == JT_NUMBER &&
		    jtape_num(t, gi, &idx) == 0 && idx == floor(idx) &&
		    idx != (double)g->index)
			jv_error(v, "gpu_index",
				 "is %.0f, but gpu_uuid is gpus[%zu]'s, whose "
				 "index is %lld",
				 idx, g->at, g->index);
	}
	if (jvt_enum(v, t, x, "metric", true, metrics, &e) == 0)
		out->metric = metrics[e];
	if (jvt_present(t, x, "dtype") &&
	    jvt_enum(v, t, x, "dtype", false, dtypes, &e) == 0)
		out->dtype = dtypes[e];
	if (jvt_present(t, x, "method") &&
	    jvt_str(v, t, x, "method", false, PROBE_METHOD_MAX, a, &s) == 0)
		out->method = s;
	take_nums(v, t, x, sweep_fields,
		  sizeof(sweep_fields) / sizeof(sweep_fields[0]), out);
	if (jvt_str(v, t, x, "unit", true, PROBE_UNIT_MAX, a, &s) == 0)
		out->unit = s;
	if (jvt_enum(v, t, x, "status", false, result_statuses, &e) == 0 &&
	    jvt_present(t, x, "status"))
		out->status = result_statuses[e];
	take_nums(v, t, x, stat_fields,
		  sizeof(stat_fields) / sizeof(stat_fields[0]), out);
	/* an ok result measured something; the probe marks one that did not
	 * skipped or failed (review s15: a null median stored as ok left its
	 * GPU "healthy") */
	if (!out->status || !strcmp(out->status, "ok")) {
		if (!jvt_present(t, x, "median"))
			jv_error(v, "median",
				 "is required when status is ok (a result that "
				 "measured nothing is skipped or failed)");
		if (out->n == 0)
			jv_error(v, "n",
				 "is 0: an ok result has at least one "
				 "sample");
		/* above 0 (review s23c F1: a 0 median pulled the fleet's
		 * down and hid degraded GPUs) */
		{
			char why[160];
			const char *bad =
			    probe_stats_problem(out->median, why, sizeof(why));

			if (bad)
				jv_error(v, bad, "%s", why);
		}
	}
	{
		static const struct probe_typed typed[] = PROBE_RESULT_TYPED;
		check_typed(v, t, x, typed, sizeof(typed) / sizeof(typed[0]));
	}
	/* a GEMM rate is of a dtype (review s15b: null was stored, a
	 * series no dtype filter finds) */
	if (out->metric &&
	    probe_metric_dtype_rule(out->metric) == PROBE_DTYPE_REQUIRED &&
	    !out->dtype)
		jv_error(v, "dtype", "is required for a GEMM metric");
	/* ... and only GEMMs and NCCL collectives have one (review s19c F8:
	 * a dtype on an HBM result made a calibration group of its own) */
	if (out->metric && out->dtype &&
	    probe_metric_dtype_rule(out->metric) == PROBE_DTYPE_NONE)
		jv_error(v, "dtype",
			 "must be null or absent for %s (only GEMM and NCCL "
			 "results are of a dtype)",
			 out->metric);
	/* each metric has one unit (review s19c F6: "MB/s" was stored and
	 * relabelled its type's median) */
	if (out->metric && out->unit &&
	    probe_metric_unit(out->metric, out->dtype) &&
	    strcmp(out->unit, probe_metric_unit(out->metric, out->dtype)))
		jv_error(v, "unit", "must be \"%s\" for %s%s%s, got \"%s\"",
			 probe_metric_unit(out->metric, out->dtype),
			 out->metric, out->dtype ? " " : "",
			 out->dtype ? out->dtype : "", out->unit);
	/* Clock event reasons while measured: the fleet view flags thermal
	 * and hardware slowdowns from them.
	 */
	tel = jtape_get(t, x, "telemetry");
	rs = tel && t->tok[tel].type == JT_OBJECT
		 ? jtape_get(t, tel, "clock_event_reasons")
		 : 0;
	if (rs && t->tok[rs].type == JT_ARRAY) {
		out->clock_event_reasons = reasons;
		for (uint32_t i = rs + 1; i < t->tok[rs].next;
		     i = t->tok[i].next)
			reasons[out->n_clock_event_reasons++] =
			    jvt_text(t, i, a);
	}
}

/* Numbers a stored report may hold: PostgreSQL keeps JSON numbers as
 * numeric and prints 1e20 back as 21 digits, which no JSON integer reader
 * takes (jansson: "too big integer"), so one such value in a GPU's or the
 * node's fields would break every later read of the node. No probe figure
 * comes near (memory_total_bytes of a 141 GB part is 1.5e11). */
#define REPORT_NUMBER_MAX PROBE_REPORT_NUMBER_MAX

/* 1 when number token i may exceed REPORT_NUMBER_MAX: it has an exponent
 * or more than 15 digits before its point. Most of a report's numbers are
 * short decimals, and this spares them strtod. */
static int maybe_big(const struct jtape *t, uint32_t i)
{
	const char *p = t->src + t->tok[i].start;
	uint32_t n = t->tok[i].len, digits = 0;

	for (uint32_t j = 0; j < n; j++) {
		if (p[j] == 'e' || p[j] == 'E')
			return 1;
		if (p[j] == '.')
			break;
		digits += p[j] != '-';
	}
	return digits > 15;
}

/* The first number of member k's subtree beyond REPORT_NUMBER_MAX, as
 * an error naming the member. */
static void check_magnitudes(struct jv *v, const struct jtape *t,
			     struct jv_arena *a)
{
	for (uint32_t k = 1; k < t->tok[0].next; k = t->tok[k + 1].next) {
		for (uint32_t i = k + 1; i < t->tok[k + 1].next; i++) {
			const char *key;
			double d;

			if (t->tok[i].type != JT_NUMBER || !maybe_big(t, i) ||
			    jtape_num(t, i, &d) != 0 ||
			    fabs(d) <= REPORT_NUMBER_MAX)
				continue;
			key = jvt_text(t, k, a);
			jv_error(v, key ? key : "report",
				 "holds a number beyond %g (%g): no probe "
				 "figure is that large",
				 REPORT_NUMBER_MAX, d);
			break;
		}
	}
}

/* 1 when string token i holds a character probe_shown_text_ok refuses.
 * Unescaped ASCII (most of a report) is shown as it is: the parser has
 * already refused raw control characters. */
static int shown_refused(const struct jtape *t, uint32_t i)
{
	const struct jt_tok *k = &t->tok[i];
	const unsigned char *p = (const unsigned char *)t->src + k->start;
	char *buf;
	int bad;

	if (!k->escaped) {
		uint32_t j = 0;
		while (j < k->len && p[j] < 0x7f)
			j++;
		if (j == k->len)
			return 0;
	}
	if (!(buf = malloc((size_t)k->len + 1)))
		return 1;
	bad = jtape_str(t, i, buf, (size_t)k->len + 1) < 0 ||
	      !probe_shown_text_ok(buf);
	free(buf);
	return bad;
}

/* Every string of a report, member names included, is text that a page
 * shows: the node page (GPU uuids, PCI ids), benchmark history (method,
 * note, reason), the capacity report. The first that probe_shown_text_ok
 * refuses is an error naming its path, "results[3].note" (review s15b:
 * names; s16c F4: every other field). 1 once one is found. */
static int check_shown(struct jv *v, const struct jtape *t, uint32_t i,
		       char *path, size_t len, size_t cap)
{
	const struct jt_tok *k = &t->tok[i];
	size_t n;

	if (k->type == JT_STRING && shown_refused(t, i)) {
		jv_error(v, len ? path : "report",
			 "must hold no control character, line separator or "
			 "bidirectional character");
		return 1;
	}
	if (k->type == JT_ARRAY) {
		n = 0;
		for (uint32_t e = i + 1; e < k->next; e = t->tok[e].next, n++) {
			snprintf(path + len, cap - len, "[%zu]", n);
			if (check_shown(v, t, e, path, strlen(path), cap))
				return 1;
		}
	}
	if (k->type == JT_OBJECT) {
		for (uint32_t m = i + 1; m < k->next; m = t->tok[m + 1].next) {
			/* a name is shown only as its path: a refused one is
			 * named by its parent */
			const struct jt_tok *key = &t->tok[m];
			if (shown_refused(t, m)) {
				path[len] = '\0';
				jv_error(v, len ? path : "report",
					 "has a member name with a control "
					 "character, line separator or "
					 "bidirectional character");
				return 1;
			}
			snprintf(path + len, cap - len, "%s%.*s",
				 len ? "." : "",
				 (int)(key->len < 64 ? key->len : 64),
				 t->src + key->start);
			if (check_shown(v, t, m + 1, path, strlen(path), cap))
				return 1;
		}
	}
	path[len] = '\0';
	return 0;
}

/* The GPU fields the node page shows and the fleet view compares (PCIe
 * generation and width against their maximum): typed here, so that one
 * report cannot break those reads for everyone (a string where the fleet
 * casts an integer). Each may be null or left out. */
static void check_gpu_info(struct jv *gv, const struct jtape *t, uint32_t x)
{
	/* members of the "pcie" and "nvlink" objects: an integer in
	 * [0, max], or (max 0) a number >= 0 */
	static const struct probe_gpu_member members[] = PROBE_GPU_MEMBERS;
	static const char *const flags[] = PROBE_GPU_FLAGS;
	long long li;
	double d;

	for (size_t k = 0; k < sizeof(members) / sizeof(members[0]); k++) {
		uint32_t o = jtape_get(t, x, members[k].obj);
		struct jv ov = {.res = gv->res};

		if (!o || t->tok[o].type == JT_NULL)
			continue;
		if (t->tok[o].type != JT_OBJECT) {
			/* once per object: at its first member */
			if (k == 0 ||
			    strcmp(members[k - 1].obj, members[k].obj) != 0)
				jv_error(gv, members[k].obj,
					 "must be an object or null");
			continue;
		}
		snprintf(ov.prefix, sizeof(ov.prefix), "%.40s%.8s.", gv->prefix,
			 members[k].obj);
		if (members[k].max > 0)
			jvt_int(&ov, t, o, members[k].key, false, 0,
				members[k].max, &li);
		else
			jvt_num(&ov, t, o, members[k].key, false, 0,
				REPORT_NUMBER_MAX, &d);
	}
	jvt_int(gv, t, x, "numa_node", false, -1, 4096, &li);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		uint32_t f = jtape_get(t, x, flags[i]);

		if (f && t->tok[f].type != JT_NULL &&
		    t->tok[f].type != JT_TRUE && t->tok[f].type != JT_FALSE)
			jv_error(gv, flags[i], "must be true, false or null");
	}
}

/* One part of a result's key (result_key) from token i, normalised: a
 * string as decoded (its raw text where it does not decode into 128
 * bytes; at most 96 bytes either way, the longest identifier the
 * contract allows), a number by its value (1024 and 1.024e3 alike), a
 * shape as its m, n, k whatever their order; "" when absent or null.
 * Read from the tape itself, not the arena: a full arena must not make
 * two results' keys equal. */
static size_t key_part(const struct jtape *t, uint32_t i, char *out, size_t len)
{
	static const char *const dims[] = {"m", "n", "k"};
	const struct jt_tok *k;
	char buf[128];
	size_t used = 0;
	int w;

	if (!i || !len)
		return 0;
	k = &t->tok[i];
	if (k->type == JT_OBJECT) {
		for (size_t d = 0; d < 3 && used < len; d++)
			used += key_part(t, jtape_get(t, i, dims[d]),
					 out + used, len - used);
		return used < len ? used : len;
	}
	if (k->type == JT_NUMBER) {
		size_t n = k->len < sizeof(buf) - 1 ? k->len : sizeof(buf) - 1;

		memcpy(buf, t->src + k->start, n);
		buf[n] = '\0';
		w = snprintf(out, len, "%.17g,", strtod(buf, NULL));
	} else if (k->type == JT_STRING) {
		if (jtape_str(t, i, buf, sizeof(buf)) >= 0)
			w = snprintf(out, len, "%.96s,", buf);
		else
			w = snprintf(out, len, "%.*s,",
				     (int)(k->len < 96 ? k->len : 96),
				     t->src + k->start);
	} else {
		return 0;
	}
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len;
}

/* What names a measurement in a result: two results of one report with
 * the same key measured the same thing (review s24c F2: a second bf16
 * GEMM of GPU 0 was stored and averaged into a figure nobody measured).
 * The GPU by its UUID (by index only without one), the peer by index (by
 * UUID only without one), then what was measured: metric, dtype, method,
 * size, shape and ranks (the probe's sustained GEMMs differ by shape, its
 * NCCL latencies by ranks). Values are normalised (key_part, review s24e
 * F1) and bounded, so the key fits its buffer (F2). */
#define RESULT_KEY_MAX 1024
static void result_key(const struct jtape *t, uint32_t x, char *out)
{
	static const char *const fields[] = {"metric",	   "dtype", "method",
					     "size_bytes", "shape", "nranks"};
	size_t used = 0;
	uint32_t gpu = jtape_get(t, x, "gpu_uuid"),
		 peer = jtape_get(t, x, "peer_index");

	if (!gpu || t->tok[gpu].type == JT_NULL)
		gpu = jtape_get(t, x, "gpu_index");
	if (!peer || t->tok[peer].type == JT_NULL)
		peer = jtape_get(t, x, "peer_uuid");
	used += key_part(t, gpu, out + used, RESULT_KEY_MAX - used);
	used += key_part(t, peer, out + used, RESULT_KEY_MAX - used);
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		out[used < RESULT_KEY_MAX ? used++ : RESULT_KEY_MAX - 1] = '|';
		used += key_part(t, jtape_get(t, x, fields[k]), out + used,
				 RESULT_KEY_MAX - used);
	}
	out[used < RESULT_KEY_MAX ? used : RESULT_KEY_MAX - 1] = '\0';
}

struct result_hash {
	unsigned long long h;
	uint32_t tok; /* the result's token */
	uint32_t i;   /* its index in results[] */
};

static int cmp_result_hash(const void *a, const void *b)
{
	const struct result_hash *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* A 400 naming each result that repeats an earlier one's measurement
 * (result_key), with the earliest it repeats. Sorted by a 64-bit hash of
 * the key and then by index; a result is compared by key with each
 * earlier one of its run of equal hashes (one, but for a collision):
 * O(n log n) for 20,000 results. -1 only when out of memory (a 503 in
 * res). */
static int check_repeats(struct jv *v, const struct jtape *t, uint32_t results)
{
	size_t n = t->tok[results].count, i = 0;
	struct result_hash *hs = calloc(n ? n : 1, sizeof(*hs));
	char ka[RESULT_KEY_MAX], kb[RESULT_KEY_MAX];
	uint32_t x;

	if (!hs) {
		problem(v->res, 503, "unavailable", "Service unavailable",
			"out of memory reading the report");
		return -1;
	}
	for (x = results + 1; x < t->tok[results].next && i < n;
	     x = t->tok[x].next, i++) {
		unsigned long long h = 14695981039346656037ULL;

		result_key(t, x, ka);
		for (const char *c = ka; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		hs[i] = (struct result_hash){h, x, (uint32_t)i};
	}
	qsort(hs, i, sizeof(*hs), cmp_result_hash);
	for (size_t k = 1; k < i && problem_field_count(v->res) < 20; k++) {
		size_t first = k - 1;

		if (hs[k].h != hs[first].h)
			continue;
		/* the run of equal hashes is in index order: the first equal
		 * key in it is the earliest repeat */
		while (first > 0 && hs[first - 1].h == hs[k].h)
			first--;
		result_key(t, hs[k].tok, kb);
		for (size_t f = first; f < k; f++) {
			result_key(t, hs[f].tok, ka);
			if (!strcmp(ka, kb)) {
				jv_error(v, "results",
					 "results[%u] repeats results[%u]: the "
					 "same GPU, metric, dtype, method, "
					 "peer, size, shape and ranks; one "
					 "result a measurement",
					 hs[k].i, hs[f].i);
				break;
			}
		}
	}
	free(hs);
	return 0;
}

/* node.gpu_count and node.gpu_uuids against gpus[] (uuids: its UUIDs,
 * sorted). gpu_count counts the GPUs measured, so gpus[] never lists more
 * (review s24c F3). gpu_uuids is the node's whole inventory, measured or
 * not (docs/PROBE.md): a list of distinct UUIDs that includes every
 * gpus[].uuid; taken into rep->gpu_uuids_json, from which storage marks
 * the node's GPUs it no longer lists removed (review s24c F1). */
static void check_node_gpus(struct jv *v, const struct jtape *t, uint32_t node,
			    uint32_t gpus, const struct uuid_set *uuids,
			    struct jv_arena *a, struct bench_report *rep)
{
	struct jv nv = {.res = v->res, .prefix = "node."};
	uint32_t cnt = jtape_get(t, node, "gpu_count"),
		 inv = jtape_get(t, node, "gpu_uuids"), x;
	long n_gpus = gpus && t->tok[gpus].type == JT_ARRAY
			  ? (long)t->tok[gpus].count
			  : 0;
	const char *seen[PROBE_MAX_GPUS];
	bool listed[PROBE_MAX_GPUS] = {false};
	double c;
	int n = 0;

	/* a whole number in range: another is its own rule's (review s25a
	 * F8: 1.5 was also "is 2, but gpus[] lists 2") */
	if (cnt && t->tok[cnt].type == JT_NUMBER &&
	    jtape_num(t, cnt, &c) == 0 && c == floor(c) && c >= 0 &&
	    c < (double)n_gpus)
		jv_error(&nv, "gpu_count",
			 "is %.0f, but gpus[] lists %ld GPUs: it counts the "
			 "GPUs the run measured",
			 c, n_gpus);
	if (!inv || t->tok[inv].type == JT_NULL)
		return;
	/* never empty: that would remove every GPU of the node (review
	 * s25a F7) */
	if (t->tok[inv].type != JT_ARRAY || t->tok[inv].count == 0 ||
	    t->tok[inv].count > PROBE_MAX_GPUS) {
		jv_error(&nv, "gpu_uuids",
			 "must be null or a list of 1 to %d GPU UUIDs "
			 "(strings)",
			 PROBE_MAX_GPUS);
		return;
	}
	for (x = inv + 1; x < t->tok[inv].next; x = t->tok[x].next) {
		const char *s =
		    t->tok[x].type == JT_STRING ? jvt_text(t, x, a) : NULL;
		const struct uuid_ent *g;

		if (!s || !*s || strlen(s) > PROBE_GPU_UUID_MAX) {
			char f[32];

			snprintf(f, sizeof(f), "gpu_uuids[%d]", n);
			jv_error(&nv, f,
				 "must be a GPU UUID, a string of 1 to %d "
				 "bytes",
				 PROBE_GPU_UUID_MAX);
			return;
		}
		for (int k = 0; k < n; k++)
			if (!strcmp(seen[k], s)) {
				jv_error(&nv, "gpu_uuids",
					 "%.96s appears twice", s);
				return;
			}
		seen[n++] = s;
		if ((g = uuid_find(uuids, s)) != NULL)
			listed[g - uuids->v] = true;
	}
	{
		/* NVML's list: none where NVML was not asked (s25a F7) */
		uint32_t nvml = jtape_get(t, node, "nvml_available");

		if ((nvml && t->tok[nvml].type == JT_FALSE) ||
		    (rep->status && !strcmp(rep->status, "no_device"))) {
			jv_error(&nv, "gpu_uuids",
				 "is NVML's list of the node's GPUs: null "
				 "when nvml_available is false or the status "
				 "is no_device");
			return;
		}
	}
	for (int k = 0; k < uuids->n; k++)
		if (!listed[k]) {
			jv_error(&nv, "gpu_uuids",
				 "must list every gpus[].uuid (gpus[%zu].uuid "
				 "is missing)",
				 uuids->v[k].at);
			return;
		}
	/* storage reads the list from node_json (not copied again: the
	 * arena holds the body's text about twice, review s25a F6) */
	rep->has_gpu_uuids = rep->node_json != NULL;
}

/* Validates the report and takes it apart into *rep; the first errors
 * are listed (capped, a broken probe can produce thousands). On success
 * rep->results is malloc'd (caller frees it and *reasons).
 */
static int validate(const struct jtape *t, struct jv_arena *a,
		    struct bench_report *rep, const char ***reasons,
		    struct response *res)
{
	static const struct probe_typed gpu_typed[] = PROBE_GPU_TYPED;
	struct jv v = {.res = res};
	struct uuid_set uuids = {.n = 0};
	bool idx_seen[PROBE_MAX_GPUS + 1] = {false};
	uint32_t node, gpus, results, x;
	struct bench_result *rows = NULL;
	long long ver = 0;
	const char *s;
	size_t i;
	int e;

	memset(rep, 0, sizeof(*rep));
	*reasons = NULL;
	rep->text = t->src;
	jvt_int(&v, t, 0, "schema_version", true, 1, 1, &ver);
	if (jvt_str(&v, t, 0, "run_id", true, 36, a, &rep->run_id) == 0) {
		if (!uuid_valid(rep->run_id))
			jv_error(&v, "run_id", "must be a UUID");
		else /* RFC 4122 §3: any case in, lower case out; a replay
		      * in the other case is the same run (review s15) */
			for (char *c = (char *)rep->run_id; *c; c++)
				*c = (char)tolower((unsigned char)*c);
	}
	if (jvt_enum(&v, t, 0, "status", true, run_statuses, &e) == 0)
		rep->status = run_statuses[e];
	jvt_str(&v, t, 0, "mode", false, PROBE_MODE_MAX, a, &rep->mode);
	{
		/* fixtures and demos: kept, but out of fleet figures */
		uint32_t syn = jtape_get(t, 0, "synthetic");
		rep->synthetic = syn && t->tok[syn].type == JT_TRUE;
	}
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "finished_at" : "started_at";
		const char **at = k ? &rep->finished_at : &rep->started_at;
		if (jvt_str(&v, t, 0, key, false, PROBE_TIME_MAX, a, at) == 0 &&
		    *at && !rfc3339_valid(*at)) {
			jv_error(&v, key, "must be an RFC 3339 date-time");
			*at = NULL;
		}
	}
	{
		double t0, t1, at;

		if (rep->started_at && rep->finished_at &&
		    rfc3339_epoch_s(rep->started_at, &t0) == 0 &&
		    rfc3339_epoch_s(rep->finished_at, &t1) == 0 && t1 < t0)
			jv_error(&v, "finished_at", "is before started_at");
		/* A run dated past tomorrow would stay its GPUs' latest until
		 * that date, hiding every later run from the fleet's health
		 * (review s15: one dated 9999 did so for good): the node's
		 * clock is wrong, and the probe says so instead of storing. */
		for (int k = 0; k < 2; k++) {
			const char *d = k ? rep->finished_at : rep->started_at;
			if (d && rfc3339_epoch_s(d, &at) == 0 &&
			    at > (double)time(NULL) + PROBE_AHEAD_S)
				jv_error(&v, k ? "finished_at" : "started_at",
					 "%.40s is more than a day after the "
					 "server's clock: fix the node's clock "
					 "and send the report again",
					 d);
			else if (d && rfc3339_epoch_s(d, &at) == 0 &&
				 at < PROBE_EARLIEST_S)
				jv_error(&v, k ? "finished_at" : "started_at",
					 "%.40s is before 2000: the node's "
					 "clock was reset; fix it and send the "
					 "report again",
					 d);
		}
	}
	check_magnitudes(&v, t, a);
	{
		char path[256] = "";
		check_shown(&v, t, 0, path, 0, sizeof(path));
	}
	{
		static const struct probe_typed top[] = PROBE_TOP_TYPED;
		check_typed(&v, t, 0, top, sizeof(top) / sizeof(top[0]));
	}
	node = jtape_get(t, 0, "node");
	if (!node || t->tok[node].type != JT_OBJECT) {
		jv_error(&v, "node", "is required: an object with hostname");
	} else {
		struct jv nv = {.res = res, .prefix = "node."};
		if (jvt_str(&nv, t, node, "hostname", true, PROBE_HOSTNAME_MAX,
			    a, &s) == 0) {
			if (!name_ok(s))
				jv_error(
				    &nv, "hostname",
				    "must be a host name of [A-Za-z0-9._-] "
				    "that starts and ends with a letter or "
				    "digit");
			rep->hostname = s;
		}
		rep->node_json = jvt_text(t, node, a);
		rep->cpu_model =
		    jvt_text(t, jtape_get(t, node, "cpu_model"), a);
		rep->driver_version =
		    jvt_text(t, jtape_get(t, node, "driver_version"), a);
		rep->cuda_driver_version =
		    jvt_text(t, jtape_get(t, node, "cuda_driver_version"), a);
		{
			/* shown as text: an object's or array's source text is
			 * not a name (the probe's checker refuses it too,
			 * review s16c F4); check_shown covers the characters */
			static const char *const shown[] = {
			    "cpu_model", "driver_version",
			    "cuda_driver_version"};
			for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]);
			     k++) {
				uint32_t at = jtape_get(t, node, shown[k]);
				if (at && (t->tok[at].type == JT_OBJECT ||
					   t->tok[at].type == JT_ARRAY))
					jv_error(&nv, shown[k],
						 "must be a string, a number "
						 "or null");
			}
		}
		{
			static const struct probe_typed typed[] =
			    PROBE_NODE_TYPED;
			long long n;
			/* what the node page shows beside its GPUs */
			jvt_int(&nv, t, node, "gpu_count", false, 0,
				PROBE_MAX_GPUS, &n);
			check_typed(&nv, t, node, typed,
				    sizeof(typed) / sizeof(typed[0]));
		}
	}
	gpus = jtape_get(t, 0, "gpus");
	if (gpus && t->tok[gpus].type != JT_NULL &&
	    (t->tok[gpus].type != JT_ARRAY ||
	     t->tok[gpus].count > PROBE_MAX_GPUS)) {
		jv_error(&v, "gpus", "must be a list of at most %d GPUs",
			 PROBE_MAX_GPUS);
	} else if (gpus && t->tok[gpus].type == JT_ARRAY) {
		rep->gpus_json = jvt_text(t, gpus, a);
		for (i = 0, x = gpus + 1; x < t->tok[gpus].next;
		     i++, x = t->tok[x].next) {
			struct jv gv = {.res = res};
			long long idx = -1;
			snprintf(gv.prefix, sizeof(gv.prefix), "gpus[%zu].", i);
			if (t->tok[x].type != JT_OBJECT) {
				jv_error(&v, "gpus", "entries must be objects");
				break;
			}
			if (jvt_int(&gv, t, x, "index", true, 0, PROBE_MAX_GPUS,
				    &idx) == 0) {
				if (idx_seen[idx])
					jv_error(&gv, "index",
						 "appears twice in gpus[]");
				idx_seen[idx] = true;
			}
			check_gpu_info(&gv, t, x);
			check_typed(&gv, t, x, gpu_typed,
				    sizeof(gpu_typed) / sizeof(gpu_typed[0]));
			/* a catalog type for a GPU whose NVML name the catalog
			 * does not map; h_bench_post holds it to the name
			 * (review s17c F5) */
			if (jvt_present(t, x, "gpu_type") &&
			    jvt_str(&gv, t, x, "gpu_type", false,
				    PROBE_GPU_NAME_MAX, a, &s) == 0)
				rep->gpu_type_given = true;
			/* NVML may fail to name a GPU: null is allowed. */
			if (jvt_present(t, x, "name"))
				jvt_str(&gv, t, x, "name", false,
					PROBE_GPU_NAME_MAX, a, &s);
			if (jvt_str(&gv, t, x, "uuid", true, PROBE_GPU_UUID_MAX,
				    a, &s) == 0) {
				int dup = 0;
				for (int k = 0; k < uuids.n && !dup; k++)
					dup = !strcmp(uuids.v[k].s, s);
				if (dup)
					jv_error(&gv, "uuid",
						 "appears twice in gpus[]");
				else
					uuids.v[uuids.n++] = (struct uuid_ent){
					    .s = s, .index = idx, .at = i};
			}
		}
	}
	qsort(uuids.v, (size_t)uuids.n, sizeof(uuids.v[0]), cmp_str);
	if (node && t->tok[node].type == JT_OBJECT)
		check_node_gpus(&v, t, node, gpus, &uuids, a, rep);
	results = jtape_get(t, 0, "results");
	if (results && t->tok[results].type != JT_NULL &&
	    (t->tok[results].type != JT_ARRAY ||
	     t->tok[results].count > PROBE_MAX_RESULTS)) {
		jv_error(&v, "results", "must be a list of at most %d results",
			 PROBE_MAX_RESULTS);
	} else if (results && t->tok[results].type == JT_ARRAY) {
		size_t n = t->tok[results].count;
		rows = calloc(n ? n : 1, sizeof(*rows));
		*reasons = calloc(t->n_tok, sizeof(**reasons));
		if (!rows || !*reasons) {
			free(rows);
			problem(res, 503, "unavailable", "Service unavailable",
				"out of memory reading the report");
			return -1;
		}
		rep->results = rows;
		for (i = 0, x = results + 1; x < t->tok[results].next;
		     i++, x = t->tok[x].next) {
			struct jv rv = {.res = res};
			snprintf(rv.prefix, sizeof(rv.prefix), "results[%zu].",
				 i);
			check_result(&rv, t, x, &uuids, a, &rows[i],
				     *reasons + x);
			if (problem_field_count(res) >= 20)
				break;
		}
		rep->n_results = (int)i;
		if (!problem_field_count(res) && check_repeats(&v, t, results))
			return -1;
	}
	/* the run's status agrees with what it carries (review s19c F3: a
	 * failed run's ok results calibrated sizing and counted as healthy
	 * GPUs in the fleet view, while the capacity report counted the run
	 * as nothing); the probe writes partial for a run with some */
	if (rep->status && !problem_field_count(res)) {
		int ok_results = 0;
		long n_gpus = gpus && t->tok[gpus].type == JT_ARRAY
				  ? (long)t->tok[gpus].count
				  : 0;

		for (int k = 0; k < rep->n_results; k++)
			ok_results += !rep->results[k].status ||
				      !strcmp(rep->results[k].status, "ok");
		if (!strcmp(rep->status, "failed") && ok_results)
			jv_error(&v, "status",
				 "is failed (nothing measured), but %d "
				 "result(s) are ok: a run that measured some "
				 "is partial",
				 ok_results);
		else if (!strcmp(rep->status, "no_device") &&
			 (n_gpus || rep->n_results))
			jv_error(&v, "status",
				 "is no_device (no usable GPU), but the report "
				 "lists %ld GPU(s) and %d result(s)",
				 n_gpus, rep->n_results);
	}
	return problem_field_count(res) ? -1 : 0;
}

/* A gpus[i].gpu_type names the catalog type of another part than its
 * NVML name maps to: 400 naming it, 0 when none does (review s17c F5:
 * storage had taken the gpu_type, and one H100 labelled b200-sxm-180gb made
 * every B200 answer "measured" at H100 rates). A gpu_type is for a GPU
 * whose name the catalog does not map (a new part); where the name maps,
 * the name decides, and a report that says otherwise is refused rather
 * than stored under either type. Returns 0, or -1 with res set. */
static int check_gpu_types(struct app *app, const struct bench_report *rep,
			   struct response *res)
{
	struct bench_type_conflict c;
	struct store_err e;
	char field[40];

	if (!rep->gpu_type_given)
		return 0;
	switch (store_bench_type_conflict(app->db, rep->gpus_json, &c, &e)) {
	case STORE_NOT_FOUND:
		return 0;
	case STORE_OK:
		snprintf(field, sizeof(field), "gpus[%d].gpu_type", c.index);
		problem_field(res, field,
			      "is \"%s\", but the GPU's name \"%s\" is "
			      "%s's: the name decides a GPU the catalog maps; "
			      "leave gpu_type out or correct it",
			      c.claimed, c.name, c.named);
		return -1;
	default:
		problem_store(res, &e, "GPU types");
		return -1;
	}
}

void h_bench_post(struct app *app, const struct request *req,
		  struct response *res)
{
	struct bench_ingest in;
	struct bench_report rep = {0};
	struct store_err e;
	struct jtape t;
	struct jv_arena a;
	const char **reasons = NULL;

	if (jv_parse_tape(req, res, &t, &a) != 0)
		goto out;
	if (validate(&t, &a, &rep, &reasons, res) != 0 ||
	    check_gpu_types(app, &rep, res) != 0)
		goto out;
	if (store_bench_ingest(app->db, &rep, &in, &e) != STORE_OK) {
		problem_store(res, &e, "benchmark run");
		goto out;
	}
	if (!in.created && !in.same_report) {
		problem(res, 409, "conflict", "Conflict",
			"run_id %s was already stored with a different "
			"report; a new run needs a new run_id",
			rep.run_id);
		goto out;
	}
	/* A replay answers exactly as the first post did: the probe may
	 * have lost our first answer and must not see an error for it.
	 */
	res_json(res, 201,
		 json_pack("{s:s, s:s, s:s, s:i, s:i, s:s, s:s}", "run_id",
			   rep.run_id, "hostname", in.hostname, "status",
			   in.status, "gpus", in.gpus, "results", in.results,
			   "received_at", in.received_at, "href", ""));
	{
		char href[96];
		snprintf(href, sizeof(href), "/v1/benchmarks/%s", rep.run_id);
		json_object_set_new(res->json, "href", json_string(href));
		snprintf(res->location, sizeof(res->location), "%s", href);
	}
out:
	free((void *)rep.results);
	free(reasons);
	jv_tape_free(&t, &a);
}

void h_bench_get(struct app *app, const struct request *req,
		 struct response *res)
{
	struct store_err e;
	json_t *run;

	if (!uuid_valid(req->params[0])) {
		problem(res, 404, "not-found", "Not found",
			"no benchmark run with that id (run ids are UUIDs)");
		return;
	}
	if (store_bench_get(app->db, req->params[0], &run, &e) != STORE_OK) {
		problem_store(res, &e, "no benchmark run with that id");
		return;
	}
	res_json(res, 200, run);
}

/* GET /v1/benchmarks opens at most this many compact runs (migrations/
 * 0020: each a zstd frame to decompress and a report to take apart, ~1-2
 * ms) for one page. A filter that lets runs through but few of their
 * results (a metric and a dtype each present, never together) would
 * otherwise open every run kept for one page: past this the page ends
 * early, with a next_cursor where it stopped.
 */
#define LIST_RUNS_PER_PAGE  64
#define LIST_RUNS_PER_FETCH 8

struct list_walk {
	const struct bench_filter *f;
	long long before_id; /* the cursor: ids below it */
	size_t want;	     /* results to collect: the page and one more */
	json_t *items;	     /* collected, id descending */
};

/* A statistic as the rows gave it: PostgreSQL prints a whole float8 below
 * 1e15 without a point, which reads back as an integer (migrations/0020:
 * a compact run's results read as its rows did). */
static json_t *stat_json(double x)
{
	if (isnan(x))
		return json_null();
	if (x == floor(x) && fabs(x) < 1e15)
		return json_integer((json_int_t)x);
	return json_real(x);
}

static json_t *count_json(long long n)
{
	return n < 0 ? json_null() : json_integer(n);
}

static json_t *str_json(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int filter_eq(const char *want, const char *have)
{
	return !want || (have && !strcmp(want, have));
}

/* One compact run: its results, newest (highest id) first, as rows. The
 * report is taken apart by the validation that stored it, so each field
 * is what its row would have held. */
static int walk_run(void *ctx, const struct bench_stored_run *run)
{
	struct list_walk *w = ctx;
	struct request rq = {.body = run->report, .body_len = run->report_len};
	struct response scratch = {0};
	struct bench_report rep = {0};
	const char **reasons = NULL;
	struct jtape t;
	struct jv_arena a;

	/* Stored reports passed this validation; should a later release
	 * refuse one, its results are still listed as far as they parse. */
	if (jv_parse_tape(&rq, &scratch, &t, &a) == 0)
		(void)validate(&t, &a, &rep, &reasons, &scratch);
	for (int i = rep.n_results - 1;
	     i >= 0 && json_array_size(w->items) < w->want; i--) {
		const struct bench_result *x = &rep.results[i];
		long long id = run->first_result_id + i;
		const char *type =
		    x->gpu_uuid ? json_string_value(
				      json_object_get(run->types, x->gpu_uuid))
				: run->node_type;

		if (id >= w->before_id || !filter_eq(w->f->metric, x->metric) ||
		    !filter_eq(w->f->dtype, x->dtype) ||
		    !filter_eq(w->f->gpu_type, type))
			continue;
		json_array_append_new(
		    w->items,
		    json_pack(
			"{s:I, s:s, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, "
			"s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
			"s:o, s:O}",
			"id", (json_int_t)id, "run_id", run->run_id, "hostname",
			run->hostname, "gpu_uuid", str_json(x->gpu_uuid),
			"gpu_type", str_json(type), "metric", x->metric,
			"dtype", str_json(x->dtype), "method",
			str_json(x->method), "peer_index",
			count_json(x->peer_index), "size_bytes",
			count_json(x->size_bytes), "unit", str_json(x->unit),
			"status", x->status ? x->status : "ok", "median",
			stat_json(x->median), "max", stat_json(x->max), "mean",
			stat_json(x->mean), "p10", stat_json(x->p10), "p90",
			stat_json(x->p90), "cv", stat_json(x->cv), "n",
			count_json(x->n), "limit", stat_json(x->limit),
			"efficiency", stat_json(x->efficiency), "measured_at",
			run->measured_at));
	}
	free((void *)rep.results);
	free(reasons);
	jv_tape_free(&t, &a);
	json_decref(scratch.json);
	free(scratch.text);
	return json_array_size(w->items) >= w->want;
}

static long long item_id(json_t *items, size_t i)
{
	return (long long)json_integer_value(
	    json_object_get(json_array_get(items, i), "id"));
}

/* Results newest first: compact runs' (opened here) and rows' (runs stored
 * before 0020), merged by id. *next: where the next page starts, 0 for
 * none. *page: new reference. */
static enum store_status list_page(struct app *app,
				   const struct bench_filter *f,
				   long long before_id, json_t **page,
				   long long *next, struct store_err *e)
{
	struct list_walk w = {.f = f,
			      .before_id = before_id,
			      .want = (size_t)f->limit + 1,
			      .items = json_array()};
	json_t *rows = NULL;
	long long last = before_id, floor_id = 0;
	int opened = 0, got = 0;
	size_t ri = 0, wi = 0;

	*page = json_array();
	*next = 0;
	do {
		if (store_bench_runs_each(app->db, f, last, LIST_RUNS_PER_FETCH,
					  walk_run, &w, &last, &got,
					  e) != STORE_OK)
			goto out;
		opened += got;
	} while (got == LIST_RUNS_PER_FETCH &&
		 json_array_size(w.items) < w.want &&
		 opened < LIST_RUNS_PER_PAGE);
	/* Stopped before the compact runs ran out or the page filled: nothing
	 * under the last run opened is known yet, rows included. */
	if (got == LIST_RUNS_PER_FETCH && json_array_size(w.items) < w.want)
		floor_id = last;
	if (store_bench_list(app->db, f, before_id, f->limit + 1, &rows, e) !=
	    STORE_OK)
		goto out;
	while (json_array_size(*page) < w.want) {
		long long a =
		    wi < json_array_size(w.items) ? item_id(w.items, wi) : -1;
		long long b =
		    ri < json_array_size(rows) ? item_id(rows, ri) : -1;
		if (b < floor_id)
			b = -1;
		if (a < 0 && b < 0)
			break;
		json_array_append(*page, a > b ? json_array_get(w.items, wi++)
					       : json_array_get(rows, ri++));
	}
	if (json_array_size(*page) > (size_t)f->limit) {
		json_array_remove(*page, (size_t)f->limit);
		*next = item_id(*page, (size_t)f->limit - 1);
	} else if (floor_id) {
		*next = floor_id;
	}
out:
	json_decref(w.items);
	json_decref(rows);
	return e->status;
}

void h_bench_list(struct app *app, const struct request *req,
		  struct response *res)
{
	struct bench_filter f = {0};
	struct store_err e;
	long long next = 0, before = LLONG_MAX;
	json_t *items, *body;
	static const char *const text_keys[] = {"node", "gpu_type", "metric",
						"dtype", NULL};
	char gpu[80];
	int n_gpu = 0;

	f.hostname = req_query(req, "node");
	f.gpu_type = req_query(req, "gpu_type");
	f.metric = req_query(req, "metric");
	f.dtype = req_query(req, "dtype");
	f.since = req_query(req, "since");
	f.run_id = req_query(req, "run_id");
	f.cursor = req_query(req, "cursor");
	f.limit = query_limit(req, res);
	for (int i = 0; text_keys[i]; i++) {
		const char *q = req_query(req, text_keys[i]);
		int times = 0;

		for (int k = 0; k < req->nquery; k++)
			times += !strcmp(req->query[k].key, text_keys[i]);
		/* one value a filter: a second went unseen (review s16c
		 * F13) */
		if (times > 1)
			problem_field(res, text_keys[i],
				      "given %d times; a filter takes one "
				      "value",
				      times);
		else if (q && (strlen(q) == 0 || strlen(q) > 253))
			problem_field(res, text_keys[i],
				      "must be 1 to 253 characters");
	}
	if (f.since)
		query_since_check(res, f.since);
	if (f.run_id && !uuid_valid(f.run_id))
		problem_field(res, "run_id", "must be a UUID");
	/* metric and dtype are closed lists, the ones ingestion accepts: a
	 * typo is a 400, not an empty history (review s16b F8) */
	{
		const struct {
			const char *key, *asked;
			const char *const *known;
		} closed[] = {{"metric", f.metric, metrics},
			      {"dtype", f.dtype, dtypes}};
		for (size_t k = 0; k < sizeof(closed) / sizeof(closed[0]);
		     k++) {
			bool found = false;
			char list[512];
			size_t used = 0;

			/* an empty value has its 400 above */
			if (!closed[k].asked || !closed[k].asked[0])
				continue;
			list[0] = '\0';
			for (int i = 0; closed[k].known[i]; i++) {
				found |= !strcmp(closed[k].asked,
						 closed[k].known[i]);
				if (used < sizeof(list))
					used += (size_t)snprintf(
					    list + used, sizeof(list) - used,
					    "%s%s", i ? ", " : "",
					    closed[k].known[i]);
			}
			if (!found)
				problem_field(res, closed[k].key,
					      "must be one of: %s", list);
		}
	}
	if (f.cursor && (strlen(f.cursor) == 0 || strlen(f.cursor) > 18 ||
			 strspn(f.cursor, "0123456789") != strlen(f.cursor)))
		problem_field(res, "cursor",
			      "malformed cursor; pass next_cursor back as is");
	if (problem_field_count(res) > 0)
		return;
	/* gpu_type forgives names as the sizing requests do: ?gpu_type=h100
	 * finds what was stored under h100-sxm5-80gb; a name the catalog
	 * does not know filters as given (the probe may report one) */
	if (f.gpu_type && names_resolve(app, NAMES_GPU, f.gpu_type, gpu,
					sizeof(gpu), NULL, 0, &n_gpu) == 0)
		f.gpu_type = gpu;
	if (f.cursor)
		before = strtoll(f.cursor, NULL, 10);
	if (list_page(app, &f, before, &items, &next, &e) != STORE_OK) {
		json_decref(items);
		/* the cursor is digits checked above, so a value PostgreSQL
		 * refuses is `since`: a 400 naming it, as the recommendations
		 * list answers (review s24d F3: this was a 422) */
		if (e.status == STORE_INVALID)
			problem_field(res, "since", "%s", e.message);
		else
			problem_store(res, &e, "benchmarks");
		return;
	}
	body = json_pack("{s:o}", "items", items);
	if (next) {
		char cur[24];
		snprintf(cur, sizeof(cur), "%lld", next);
		json_object_set_new(body, "next_cursor", json_string(cur));
	} else {
		json_object_set_new(body, "next_cursor", json_null());
	}
	res_json(res, 200, body);
}

void h_nodes_list(struct app *app, const struct request *req,
		  struct response *res)
{
	struct store_err e;
	json_t *out;

	(void)req;
	if (store_nodes_list(app->db, &out, &e) != STORE_OK) {
		problem_store(res, &e, "nodes");
		return;
	}
	res_json(res, 200, out);
}

void h_node_get(struct app *app, const struct request *req,
		struct response *res)
{
	struct store_err e;
	json_t *out;

	if (store_node_get(app->db, req->params[0], &out, &e) != STORE_OK) {
		problem_store(res, &e,
			      "no node by that hostname has "
			      "reported");
		return;
	}
	res_json(res, 200, out);
}

/* Marks each GEMM and HBM fleet metric whose median is outside the
 * plausible band of its datasheet figure (calib.h) "implausible": no
 * working part of the type measures it (a report filed under the wrong
 * type, or a broken probe), and calibration leaves such medians out. Not the
 * links': a bidirectional figure is compared with a one-way datasheet rate,
 * and NVLink SHARP bus bandwidth exceeds the link's. */
static void flag_implausible(json_t *fleet)
{
	size_t i, j;
	json_t *item, *m;

	json_array_foreach(json_object_get(fleet, "items"), i, item)
	{
		json_array_foreach(json_object_get(item, "metrics"), j, m)
		{
			const json_t *ds = json_object_get(m, "datasheet");
			const json_t *med = json_object_get(m, "fleet_median");
			const char *name =
			    json_string_value(json_object_get(m, "metric"));

			if (name &&
			    (!strcmp(name, "gemm_tflops") ||
			     !strncmp(name, "hbm_", 4)) &&
			    json_is_number(ds) && json_is_number(med) &&
			    calib_implausible(json_number_value(med),
					      json_number_value(ds)))
				json_object_set_new(m, "implausible",
						    json_true());
		}
	}
}

void h_fleet(struct app *app, const struct request *req, struct response *res)
{
	struct store_err e;
	json_t *out;
	long days = query_int(req, "window_days", 1, FLEET_MAX_WINDOW_DAYS,
			      FLEET_WINDOW_DAYS, res);

	if (days < 0)
		return;
	if (store_fleet(app->db, (int)days, DEGRADED_THRESHOLD,
			app->fleet_synthetic, &out, &e) != STORE_OK) {
		problem_store(res, &e, "fleet");
		return;
	}
	flag_implausible(out);
	if (calib_fleet_annotate(app, out, &e) != 0) {
		json_decref(out);
		problem_store(res, &e, "fleet calibration");
		return;
	}
	res_json(res, 200, out);
}

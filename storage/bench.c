/* bench.c - probe runs in SQL. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "lib/sbuf.h"
#include "lib/ttl_cache.h"
#include "storage/bench.h"
#include "storage/calib_mirror.h"
#include "storage/fleet_mirror.h"
#include "storage/mirror.h"
#include "storage/pgconn.h"

/* Ids of a run's results: [first_result_id, first_result_id + block), a
 * block per run (migrations/0007_result_blocks.sql, same number there).
 * Spelled as a literal for SQL too, so every SQL text stays a constant the
 * parameterisation check (tests/api/t_access.sh) can read.
 */
#define RESULT_BLOCK	  "32768"
#define RESULT_BLOCK_ROWS 32768

/* Same order as the engine's dtypes (engine/hw.h). */
static const char *const dtype_names[FLEET_DTYPES] = {
    "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"};

/* Fleet medians change when probes report (hours apart), while every
 * sizing request asks for them: each GPU type's medians are kept
 * 30 s (--calibration-cache-s), so a new probe run calibrates sizing
 * within that time; a read is a round trip and a pass over the type's
 * runs of the window (storage/calib_mirror.c).
 */
TTL_CACHE(medians_cache, 64, 30000);

void store_set_calibration_cache_s(int seconds)
{
	medians_cache.ttl_ms = (long long)seconds * 1000;
}

static int by_node(const void *a, const void *b)
{
	const struct fleet_run_value *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* The median of the n values at a (reordered), and their count, into
 * *median and *count; nothing when n is 0. */
static void median_into(double *a, size_t n, double *median, int *count)
{
	if (n == 0)
		return;
	*median = mirror_median(a, n);
	*count = (int)n;
}

/* The median of the node values under floor_v (low) or not, gathered
 * into scratch (room for n). */
static double part_median(const double *node_v, size_t n, double floor_v,
			  bool low, double *scratch)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if ((node_v[i] < floor_v) == low)
			scratch[k++] = node_v[i];
	return k ? mirror_median(scratch, k) : 0.0;
}

int fleet_calib_value(struct fleet_run_value *v, size_t n,
		      struct fleet_band band, double degraded_threshold,
		      struct fleet_value *out)
{
	/* node values [0, nodes) with their runs, then the left-out values */
	double *node_v = malloc((n ? n : 1) * sizeof(*node_v));
	double *left = malloc((n ? n : 1) * sizeof(*left));
	int *node_runs = malloc((n ? n : 1) * sizeof(*node_runs));
	size_t nodes = 0, kept = 0, nleft = 0, i = 0, j;
	double floor_v, m;
	int runs = 0;
	bool low_stays = false;

	memset(out, 0, sizeof(*out));
	if (!node_v || !left || !node_runs) {
		free(node_v);
		free(left);
		free(node_runs);
		return -1;
	}
	/* 1. runs outside the band */
	for (j = 0; j < n; j++) {
		if (band.hi > 0.0 && !(v[j].v >= band.lo && v[j].v <= band.hi))
			left[nleft++] = v[j].v;
		else
			v[i++] = v[j];
	}
	median_into(left, nleft, &out->implausible_median, &out->implausible);
	n = i;
	/* 2. one value per node: the median of its runs */
	if (n > 1) /* qsort of no array (v NULL, n 0) is undefined */
		qsort(v, n, sizeof(*v), by_node);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && v[j].node == v[i].node; j++)
			left[j - i] = v[j].v;
		node_v[nodes] = mirror_median(left, j - i);
		node_runs[nodes++] = (int)(j - i);
	}
	if (nodes == 0)
		goto out;
	/* 3. nodes the fleet's degraded rule would flag, against the
	 * median of all nodes (left: a copy, reordered by the median) */
	memcpy(left, node_v, nodes * sizeof(*left));
	m = mirror_median(left, nodes);
	floor_v = (1.0 - degraded_threshold) * m;
	nleft = 0;
	for (i = 0; i < nodes; i++)
		nleft += node_v[i] < floor_v;
	/* ... half of them: an even split, which the expected figure
	 * decides: the half whose median is farther from it goes */
	if (nleft > 0 && 2 * nleft >= nodes && band.expect > 0.0) {
		double lo_m = part_median(node_v, nodes, floor_v, true, left);
		double hi_m = part_median(node_v, nodes, floor_v, false, left);

		if (fabs(log(lo_m / band.expect)) <
		    fabs(log(hi_m / band.expect))) {
			out->disputed_median = hi_m;
			out->disputed = (int)(nodes - nleft);
			low_stays = true;
		}
	}
	/* 4. the median of the nodes kept (never empty: the largest node
	 * value is at least the median, and a split keeps a half) */
	nleft = 0;
	for (i = 0; i < nodes; i++) {
		if ((node_v[i] < floor_v) != low_stays) {
			if (!low_stays)
				left[nleft++] = node_v[i];
			continue;
		}
		runs += node_runs[i];
		node_v[kept++] = node_v[i];
	}
	median_into(left, nleft, &out->degraded_median, &out->degraded);
	out->value = mirror_median(node_v, kept);
	out->nodes = (int)kept;
	out->samples = runs;
out:
	free(node_v);
	free(left);
	free(node_runs);
	return 0;
}

/* What calibration reduces: the metric, where its figures (and bands)
 * are, and whether per dtype, or else the one dtype it takes ("" for
 * none): the rollup groups every metric by dtype, and each group of a
 * metric not per dtype overwrote the one field (review s19c F8: one
 * node's HBM result with a dtype replaced 59 nodes'; an all-reduce in
 * bf16 beside the probe's fp32, 19 nodes'). */
static const struct {
	const char *metric;
	size_t value_off, band_off;
	bool by_dtype;
	const char *only_dtype;
} calib_metrics[] = {
    {"gemm_tflops", offsetof(struct fleet_medians, gemm_tflops),
     offsetof(struct fleet_bands, gemm_tflops), true, NULL},
    {"gemm_sustained_tflops",
     offsetof(struct fleet_medians, gemm_sustained_tflops),
     offsetof(struct fleet_bands, gemm_sustained_tflops), true, NULL},
    {"hbm_read_gbps", offsetof(struct fleet_medians, hbm_gbps),
     offsetof(struct fleet_bands, hbm_gbps), false, ""},
    {"nccl_allreduce_busbw_gbps",
     offsetof(struct fleet_medians, allreduce_busbw_gbps),
     offsetof(struct fleet_bands, allreduce_busbw_gbps), false, "fp32"},
    {"p2p_unidir_gbps", offsetof(struct fleet_medians, p2p_gbps),
     offsetof(struct fleet_bands, p2p_gbps), false, ""},
};

struct medians_ctx {
	const struct fleet_bands *bands;
	struct fleet_medians *out;
	int oom;
};

/* One (metric, dtype)'s run values of calibration into its field. */
static void medians_put(void *ctx, const char *metric, const char *dtype,
			struct fleet_run_value *v, size_t n)
{
	struct medians_ctx *c = ctx;

	for (size_t k = 0; k < sizeof(calib_metrics) / sizeof(calib_metrics[0]);
	     k++) {
		int t = 0;
		struct fleet_value *to;
		const struct fleet_band *band;

		if (strcmp(metric, calib_metrics[k].metric) != 0)
			continue;
		if (calib_metrics[k].by_dtype)
			while (t < FLEET_DTYPES &&
			       strcmp(dtype, dtype_names[t]))
				t++;
		else if (strcmp(dtype, calib_metrics[k].only_dtype))
			return;
		if (t == FLEET_DTYPES)
			return;
		to = (struct fleet_value *)((char *)c->out +
					    calib_metrics[k].value_off) +
		     t;
		band = (const struct fleet_band *)((const char *)c->bands +
						   calib_metrics[k].band_off) +
		       t;
		if (fleet_calib_value(v, n, *band, c->bands->degraded_threshold,
				      to) != 0)
			c->oom = 1;
		/* The median of bounded values is bounded; checked anyway,
		 * as the engine divides by it. */
		if (!(to->value >= BENCH_STAT_MIN &&
		      to->value <= BENCH_STAT_MAX))
			to->samples = to->nodes = 0;
		return;
	}
}

/* 64-bit FNV-1a of the bands: the cache key holds them, as a catalog edit
 * moves them. */
static unsigned long long bands_hash(const struct fleet_bands *b)
{
	const unsigned char *p = (const unsigned char *)b;
	unsigned long long h = 14695981039346656037ULL;

	for (size_t i = 0; i < sizeof(*b); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

enum store_status
store_fleet_medians(struct db_pool *pool, const char *gpu_type, int window_days,
		    bool with_synthetic, const struct fleet_bands *bands,
		    struct fleet_medians *out, struct store_err *e)
{
	char key[TTL_KEY_MAX];
	long long runs = 0;
	struct medians_ctx ctx;

	/* read before the figures: a run stored meanwhile clears the cache,
	 * and these figures (without it) are then not kept (review s19a
	 * F2) */
	unsigned long gen = ttl_cache_generation(&medians_cache);

	memset(out, 0, sizeof(*out));
	ctx = (struct medians_ctx){bands, out, 0};
	store_err_clear(e);
	snprintf(key, sizeof(key), "%d/%d/%016llx/%s", window_days,
		 with_synthetic, bands_hash(bands), gpu_type);
	{
		size_t len = 0;
		struct fleet_medians *hit =
		    ttl_cache_get(&medians_cache, key, &len);
		if (hit && len == sizeof(*out)) {
			*out = *hit;
			free(hit);
			return STORE_OK;
		}
		free(hit);
	}
	/* One value per run (the run's median over its GPUs, sweeps at
	 * their largest size: the asymptotic rate), reduced when the run
	 * was stored (rollup_type_runs, migrations/0014_fleet_rollups.sql),
	 * then fleet_calib_value over the runs, from the daemon's copy of
	 * those rows (storage/calib_mirror.c, 0018; the node of each run,
	 * 0037): a node with 8 GPUs counts once per run, and a node with
	 * several runs once. Only values in [BENCH_STAT_MIN, BENCH_STAT_MAX]
	 * are read: a row stored before that bound (1e-310), or written
	 * around the API (NaN or Infinity), is skipped rather than made
	 * every plan infinitely slow (issue 15).
	 */
	if (calib_mirror_type_medians(
		pool, gpu_type, window_days, with_synthetic, BENCH_STAT_MIN,
		BENCH_STAT_MAX, medians_put, &ctx, &runs, e) != STORE_OK)
		return e->status;
	if (ctx.oom) {
		memset(out, 0, sizeof(*out));
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
		return e->status;
	}
	out->runs = (int)runs;
	ttl_cache_put(&medians_cache, gen, key, out, sizeof(*out));
	return STORE_OK;
}

/* gpus[] entries whose gpu_type is a catalog type and whose NVML name maps
 * to another: the ingest statement's "types" would take the gpu_type. */
static const char type_conflict_sql[] =
    "SELECT (x.ord - 1)::text, c.name, m.gpu, x.g->>'name'"
    " FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x (g, ord)"
    " JOIN gpus c ON c.name = x.g->>'gpu_type'"
    " JOIN gpu_name_map m ON m.nvml_name = x.g->>'name'"
    " WHERE m.gpu <> c.name ORDER BY x.ord LIMIT 1";

enum store_status store_bench_type_conflict(struct db_pool *pool,
					    const char *gpus_json,
					    struct bench_type_conflict *out,
					    struct store_err *e)
{
	const char *params[1] = {gpus_json ? gpus_json : "[]"};
	PGresult *r = NULL;

	memset(out, 0, sizeof(*out));
	store_err_clear(e);
	if (db_exec(pool, type_conflict_sql, 1, params, 1, &r, e) != STORE_OK)
		return e->status;
	if (PQntuples(r) == 0) {
		PQclear(r);
		e->status = STORE_NOT_FOUND;
		return e->status;
	}
	out->index = atoi(PQgetvalue(r, 0, 0));
	snprintf(out->claimed, sizeof(out->claimed), "%s", PQgetvalue(r, 0, 1));
	snprintf(out->named, sizeof(out->named), "%s", PQgetvalue(r, 0, 2));
	snprintf(out->name, sizeof(out->name), "%s", PQgetvalue(r, 0, 3));
	PQclear(r);
	return STORE_OK;
}

/* Big-endian words of PostgreSQL's binary formats. */
static void put_be32(struct sbuf *b, uint32_t v)
{
	unsigned char w[4] = {(unsigned char)(v >> 24),
			      (unsigned char)(v >> 16), (unsigned char)(v >> 8),
			      (unsigned char)v};

	sbuf_putn(b, (const char *)w, 4);
}

static void put_be64(struct sbuf *b, uint64_t v)
{
	put_be32(b, (uint32_t)(v >> 32));
	put_be32(b, (uint32_t)v);
}

/* Element types of the binary arrays (PostgreSQL's fixed OIDs for int4,
 * int8 and float8, src/include/catalog/pg_type.dat).
 */
enum col_kind {
	COL_TEXT,
	COL_REASONS, /* text[] per row: a literal inside the literal */
	COL_INT4 = 23,
	COL_INT8 = 20,
	COL_FLOAT8 = 701
};

/* The result columns, in the order of the SQL below: text columns as
 * array literals, numbers as binary arrays (array_send's format), which
 * spares PostgreSQL parsing ~2,600 numbers per 8-GPU report and keeps
 * every double exactly as the daemon parsed it.
 */
static const struct res_col {
	enum col_kind kind;
	size_t off; /* in struct bench_result */
} res_cols[] = {
    {COL_TEXT, offsetof(struct bench_result, gpu_uuid)},
    {COL_TEXT, offsetof(struct bench_result, metric)},
    {COL_TEXT, offsetof(struct bench_result, dtype)},
    {COL_TEXT, offsetof(struct bench_result, method)},
    {COL_INT4, offsetof(struct bench_result, peer_index)},
    {COL_INT8, offsetof(struct bench_result, size_bytes)},
    {COL_TEXT, offsetof(struct bench_result, unit)},
    {COL_TEXT, offsetof(struct bench_result, status)},
    {COL_FLOAT8, offsetof(struct bench_result, median)},
    {COL_FLOAT8, offsetof(struct bench_result, max)},
    {COL_FLOAT8, offsetof(struct bench_result, mean)},
    {COL_FLOAT8, offsetof(struct bench_result, p10)},
    {COL_FLOAT8, offsetof(struct bench_result, p90)},
    {COL_FLOAT8, offsetof(struct bench_result, cv)},
    {COL_INT4, offsetof(struct bench_result, n)},
    {COL_FLOAT8, offsetof(struct bench_result, limit)},
    {COL_FLOAT8, offsetof(struct bench_result, efficiency)},
    {COL_REASONS, offsetof(struct bench_result, clock_event_reasons)},
};
#define RC_COUNT ((int)(sizeof(res_cols) / sizeof(res_cols[0])))

/* 1 for columns sent as array literals (text), 0 for binary arrays. */
static int col_is_literal(const struct res_col *c)
{
	return c->kind == COL_TEXT || c->kind == COL_REASONS;
}

/* Starts column c's array for n rows: "{" for a literal, else the binary
 * header (one dimension of n from 1, or no dimension when n is 0).
 */
static void col_begin(struct sbuf *b, const struct res_col *c, int n)
{
	if (col_is_literal(c)) {
		sbuf_putn(b, "{", 1);
		return;
	}
	put_be32(b, n > 0);   /* dimensions */
	put_be32(b, 0);	      /* flags: the has-null bit is informative */
	put_be32(b, c->kind); /* element type */
	if (n > 0) {
		put_be32(b, (uint32_t)n);
		put_be32(b, 1); /* lower bound */
	}
}

/* Appends row x's value of column c (tmp: room for the reasons literal). */
static void col_put(struct sbuf *b, const struct res_col *c,
		    const struct bench_result *x, struct sbuf *tmp)
{
	const char *p = (const char *)x + c->off;
	long long i;
	double d;
	uint64_t bits;

	switch (c->kind) {
	case COL_TEXT:
		db_array_elem(b, *(const char *const *)p);
		return;
	case COL_REASONS:
		if (!x->clock_event_reasons) {
			db_array_elem(b, NULL);
			return;
		}
		tmp->len = 0;
		sbuf_putn(tmp, "{", 1);
		for (int k = 0; k < x->n_clock_event_reasons; k++)
			db_array_elem(tmp, x->clock_event_reasons[k]);
		sbuf_putn(tmp, "}", 1);
		db_array_elem(b, tmp->oom ? NULL : tmp->p);
		return;
	case COL_INT4:
	case COL_INT8:
		memcpy(&i, p, sizeof(i));
		if (i < 0) { /* absent */
			put_be32(b, UINT32_MAX);
		} else if (c->kind == COL_INT4) {
			put_be32(b, 4);
			put_be32(b, (uint32_t)i);
		} else {
			put_be32(b, 8);
			put_be64(b, (uint64_t)i);
		}
		return;
	case COL_FLOAT8:
		memcpy(&d, p, sizeof(d));
		if (isnan(d)) { /* absent */
			put_be32(b, UINT32_MAX);
			return;
		}
		memcpy(&bits, &d, sizeof(bits));
		put_be32(b, 8);
		put_be64(b, bits);
		return;
	}
}

/* The zstd level a report is stored at (migrations/0020). Measured on
 * the 8-GPU H100 fixture report (243 KB as compact JSON, 290 results;
 * `zstd -b`, libzstd 1.5.4, this project's 2-core machine, 2026-11-25):
 * level 3 keeps 22.0 KB in 0.25 ms, 9 keeps 17.6 KB in 1.9 ms, 12 17.4 KB
 * in 6.3 ms, 15 16.1 KB in 23 ms, 19 15.8 KB in 83 ms; decompressing
 * takes ~0.05 ms at any level. 9 is where the bytes stop paying for the
 * time (a report whose every number differs, as real runs do, keeps 19.0
 * KB at 9).
 */
#define REPORT_ZSTD_LEVEL 9
/* A stored report never decompresses to more than this: a report is a
 * request body, at most --max-body-bytes, whose own ceiling is 64 MiB
 * (server/config.c); a larger frame header is refused, not allocated. */
#define REPORT_MAX_BYTES (64u << 20)

/* Compresses report text into *z (malloc'd, caller frees). */
static enum store_status report_pack(const char *text, size_t len, void **z,
				     size_t *z_len, struct store_err *e)
{
	size_t cap = ZSTD_compressBound(len), n;

	if (!(*z = malloc(cap ? cap : 1))) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "out of memory compressing the report");
		return e->status;
	}
	n = ZSTD_compress(*z, cap, text, len, REPORT_ZSTD_LEVEL);
	if (ZSTD_isError(n)) {
		free(*z);
		*z = NULL;
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "compressing the report: %s", ZSTD_getErrorName(n));
		return e->status;
	}
	*z_len = n;
	return STORE_OK;
}

/* The report text of a compact run from its report_zstd column as
 * PostgreSQL prints bytea (hex): *text NUL-terminated, malloc'd. */
static enum store_status report_unpack(const char *hex, char **text,
				       size_t *len, struct store_err *e)
{
	size_t z_len = 0, n = 0;
	unsigned char *z = PQunescapeBytea((const unsigned char *)hex, &z_len);
	unsigned long long full;

	*text = NULL;
	if (!z)
		goto fail;
	full = ZSTD_getFrameContentSize(z, z_len);
	if (full == ZSTD_CONTENTSIZE_ERROR ||
	    full == ZSTD_CONTENTSIZE_UNKNOWN || full > REPORT_MAX_BYTES ||
	    !(*text = malloc((size_t)full + 1)))
		goto fail;
	n = ZSTD_decompress(*text, (size_t)full, z, z_len);
	if (ZSTD_isError(n) || n != full)
		goto fail;
	(*text)[n] = '\0';
	*len = n;
	PQfreemem(z);
	return STORE_OK;
fail:
	if (z)
		PQfreemem(z);
	free(*text);
	*text = NULL;
	e->status = STORE_ERROR;
	snprintf(e->message, sizeof(e->message),
		 "a stored report could not be decompressed");
	return e->status;
}

/* One statement, so one transaction: the run, its node, GPUs and results
 * are stored together or not at all. The run id goes first into
 * benchmark_run_ids (ON CONFLICT DO NOTHING: run_id is unique there, as the
 * partitioned runs table cannot enforce, migrations/0013_time_partitions.sql)
 * and every CTE after reads its output, so a replayed run_id stores
 * nothing. The statement's result rows are reduced into the rollups by a
 * trigger (migrations/0014_fleet_rollups.sql). The results arrive as one
 * array per column: the daemon has parsed the report already, and this
 * keeps PostgreSQL from converting 250 KB of JSON per report (figures in
 * docs/BENCHMARKS.md). A result's id is its run's first_result_id plus its
 * place in the report (migrations/0007_result_blocks.sql). The GPUs are
 * upserted in uuid order, whatever the report's order: their rows stay
 * locked until the statement commits, and two reports of the same GPUs
 * locking them in different orders waited on each other (a deadlock, or
 * lock_timeout: 503; tests/api/t_ingest_order.sh). Prepared once
 * per connection: parsing and planning it each time cost PostgreSQL ~10 %
 * of a report's time.
 */
/* A row (alias A) takes this report's facts: the report is real and no
 * older than the real report that wrote them (EXCLUDED.reported_at is
 * NULL for a synthetic one), or no real report has written them. */
#define NEWER(A)                                                               \
	"coalesce(EXCLUDED.reported_at >= " A ".reported_at, " A               \
	".reported_at IS NULL)"
/* Column C of row A: this report's value when it is NEWER, else kept. */
#define TAKE(A, C)                                                             \
	" " C " = CASE WHEN " NEWER(A) " THEN EXCLUDED." C " ELSE " A "." C    \
				       " END"

static struct db_stmt ingest_stmt = {
    .sql =
	/* clang-format off */
	"WITH gj AS (SELECT coalesce($8::jsonb, '[]') AS gs),"
	" types AS ("
	"  SELECT g->>'uuid' AS uuid, coalesce(c.name, m.gpu) AS t"
	"  FROM gj, jsonb_array_elements(gj.gs) g"
	"  LEFT JOIN gpus c ON c.name = g->>'gpu_type'"
	"  LEFT JOIN gpu_name_map m ON m.nvml_name = g->>'name'),"
	" node_type AS (SELECT CASE WHEN count(DISTINCT t) = 1"
	"  AND count(*) = count(t) THEN max(t) END AS t FROM types),"
	" rid AS ("
	"  INSERT INTO benchmark_run_ids (run_id) VALUES ($2::uuid)"
	"  ON CONFLICT (run_id) DO NOTHING RETURNING run_id, received_at),"
	" run AS ("
	"  INSERT INTO benchmark_runs (run_id, hostname, status, mode,"
	"   started_at, finished_at, report_zstd, synthetic, received_at,"
	"   result_count, gpu_uuids, gpu_types, node_type, metrics, dtypes)"
	"  SELECT rid.run_id, $3, $4, $5, $6::timestamptz, $7::timestamptz,"
	"   $1::bytea, $31::boolean, rid.received_at,"
	"   coalesce(cardinality($14::text[]), 0),"
	"   (SELECT coalesce(array_agg(uuid ORDER BY uuid), '{}') FROM types),"
	"   (SELECT coalesce(array_agg(t ORDER BY uuid), '{}') FROM types),"
	"   (SELECT t FROM node_type),"
	"   ARRAY(SELECT DISTINCT m FROM unnest($14::text[]) m ORDER BY 1),"
	"   ARRAY(SELECT DISTINCT d FROM unnest($15::text[]) d"
	"    WHERE d IS NOT NULL ORDER BY 1) FROM rid"
	"  RETURNING run_id, hostname, received_at, first_result_id),"
	/* The report's time: its started_at, never later than now (a node
	 * clock a day ahead must not outrank the next day's reports, review
	 * s25a F3). A real report's facts replace a node's or GPU's only when
	 * it is no older than what they hold (a spooled report sent late
	 * neither moves a GPU back nor shows its node as it was, s25a F5,
	 * F9); a synthetic one only where no real report has been. The
	 * node's inventory ($32: node.gpu_uuids in $9 is one; never a
	 * synthetic report's, s25a F4) is kept when it is the newest;
	 * store_bench_reconcile() applies it (migrations/0043). */
	" at AS (SELECT CASE WHEN NOT $31::boolean THEN"
	"  least(coalesce($6::timestamptz, now()), now()) END AS real_t),"
	" node AS ("
	"  INSERT INTO nodes AS n (hostname, cpu_model, driver_version,"
	"   cuda_version, inventory, last_seen, last_run_id, reported_at,"
	"   inventory_at, inventory_uuids)"
	"  SELECT run.hostname, $10, $11, $12,"
	"   jsonb_build_object('node', $9::jsonb, 'gpus', $8::jsonb),"
	"   now(), run.run_id, at.real_t,"
	"   CASE WHEN $32::boolean THEN at.real_t END,"
	"   CASE WHEN $32::boolean AND at.real_t IS NOT NULL THEN ARRAY("
	"    SELECT jsonb_array_elements_text($9::jsonb -> 'gpu_uuids')) END"
	"  FROM run, at"
	"  ON CONFLICT (hostname) DO UPDATE SET"
	TAKE("n", "cpu_model") "," TAKE("n", "driver_version") ","
	TAKE("n", "cuda_version") "," TAKE("n", "inventory") ","
	TAKE("n", "last_run_id") ","
	"   reported_at = greatest(n.reported_at, EXCLUDED.reported_at),"
	"   last_seen = now(),"
	"   inventory_uuids = CASE WHEN EXCLUDED.inventory_at >="
	"    coalesce(n.inventory_at, '-infinity') THEN"
	"    EXCLUDED.inventory_uuids ELSE n.inventory_uuids END,"
	"   inventory_at = greatest(n.inventory_at, EXCLUDED.inventory_at)"
	"  RETURNING 1),"
	" gpu AS ("
	"  INSERT INTO node_gpus AS ng (uuid, hostname, gpu_index, name,"
	"   gpu_type, pci_bus_id, info, last_seen, reported_at)"
	"  SELECT g->>'uuid', run.hostname, (g->>'index')::numeric::int,"
	"   coalesce(g->>'name', 'unknown'), types.t, g->>'pci_bus_id', g,"
	"   now(), at.real_t"
	"  FROM gj, run, at, jsonb_array_elements(gj.gs) g"
	"  JOIN types ON types.uuid = g->>'uuid'"
	"  ORDER BY g->>'uuid'"
	"  ON CONFLICT (uuid) DO UPDATE SET"
	TAKE("ng", "hostname") "," TAKE("ng", "gpu_index") ","
	TAKE("ng", "name") "," TAKE("ng", "gpu_type") ","
	TAKE("ng", "pci_bus_id") "," TAKE("ng", "info") ","
	/* a GPU that moved node is present there until that node's own
	 * inventory says otherwise (gpusizer_reconcile_node, which passes
	 * over a node without one; review s25d V1: a GPU removed from its
	 * old node was counted on neither) */
	"   removed_at = CASE WHEN " NEWER("ng") " AND EXCLUDED.hostname"
	"    IS DISTINCT FROM ng.hostname THEN NULL ELSE ng.removed_at END,"
	"   reported_at = greatest(ng.reported_at, EXCLUDED.reported_at),"
	"   last_seen = now()"
	"  RETURNING 1),"
	/* the results are not stored as rows (migrations/0020): the run's
	 * rollups are made from them here, as result rows would have been
	 * (gpusizer_rollup, 0014) */
	" res AS ("
	"  SELECT gpusizer_rollup(array_agg(ROW(run.first_result_id + x.ord"
	"   - 1, run.run_id, run.hostname, x.gpu_uuid,"
	"   CASE WHEN x.gpu_uuid IS NULL THEN (SELECT t FROM node_type)"
	"    ELSE (SELECT t FROM types WHERE uuid = x.gpu_uuid) END,"
	"   x.metric, x.dtype, x.method, x.peer_index, x.size_bytes, x.unit,"
	"   coalesce(x.status, 'ok'), x.median, x.max, x.mean, x.p10, x.p90,"
	"   x.cv, x.n, x.lim, x.eff, coalesce($7::timestamptz,"
	"   run.received_at), x.reasons::text[])::benchmark_results),"
	"   $31::boolean), count(*) AS n"
	"  FROM run, unnest($13::text[], $14::text[], $15::text[],"
	"   $16::text[], $17::int[], $18::bigint[], $19::text[], $20::text[],"
	"   $21::float8[], $22::float8[], $23::float8[], $24::float8[],"
	"   $25::float8[], $26::float8[], $27::int[], $28::float8[],"
	"   $29::float8[], $30::text[]) WITH ORDINALITY AS x (gpu_uuid,"
	"   metric, dtype, method, peer_index, size_bytes, unit, status,"
	"   median, max, mean, p10, p90, cv, n, lim, eff, reasons, ord)"
	"  GROUP BY run.run_id)"
	" SELECT (SELECT count(*) FROM run),"
	"  (SELECT count(*) FROM gpu), (SELECT coalesce(sum(n), 0) FROM res),"
	"  (SELECT count(*) FROM node),"
	"  (SELECT to_char(received_at AT TIME ZONE 'UTC',"
	"   'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM run)"};
/* clang-format on */

#define INGEST_FIXED 12 /* parameters before the result arrays */
/* After them: the report's "synthetic" ($31 in ingest_sql: 12 + the 18
 * result columns + 1; a static check below keeps the two in step). */
#define INGEST_SYNTHETIC (INGEST_FIXED + RC_COUNT)
#define INGEST_INVENTORY (INGEST_SYNTHETIC + 1) /* $32: node.gpu_uuids */
#define INGEST_PARAMS	 (INGEST_INVENTORY + 1)
_Static_assert(INGEST_PARAMS == 32, "ingest_sql names the last parameter $32");

/* A node's GPUs as its newest inventory says (migrations/0043, 0044:
 * gpusizer_reconcile_node): each GPU it leaves out is removed, unless a
 * real report measured that GPU after it; each it lists is present. After
 * the report's own statement, one reconciliation of a host at a time, each
 * reading after the one before it committed: reports that race end as if
 * sent one after the other (review s25a F1, F2; s25b G1). Idempotent: a
 * replay runs it again, so a report whose reconciliation failed (a 503,
 * which the probe retries) is reconciled by its retry. */
static struct db_stmt reconcile_stmt = {
    .sql = "SELECT gpusizer_reconcile_node($1)",
};

static enum store_status ingest_once(struct db_pool *pool,
				     const struct bench_report *rep,
				     struct bench_ingest *out,
				     struct store_err *e);

enum store_status store_bench_ingest(struct db_pool *pool,
				     const struct bench_report *rep,
				     struct bench_ingest *out,
				     struct store_err *e)
{
	const char *params[1] = {rep->hostname};
	PGresult *r = NULL;

	if (ingest_once(pool, rep, out, e) != STORE_OK)
		return e->status;
	if (db_exec_stmt(pool, &reconcile_stmt, 1, params, NULL, NULL, 1, &r,
			 e) != STORE_OK)
		return e->status;
	PQclear(r);
	return STORE_OK;
}

static enum store_status ingest_once(struct db_pool *pool,
				     const struct bench_report *rep,
				     struct bench_ingest *out,
				     struct store_err *e)
{
	const char *params[INGEST_PARAMS] = {
	    rep->text,	      rep->run_id,	   rep->hostname,
	    rep->status,      rep->mode,	   rep->started_at,
	    rep->finished_at, rep->gpus_json,	   rep->node_json,
	    rep->cpu_model,   rep->driver_version, rep->cuda_driver_version};
	const char *p1[2] = {rep->run_id, rep->text};
	int lengths[INGEST_PARAMS] = {0};
	int formats[INGEST_PARAMS] = {0};
	struct sbuf cols[RC_COUNT] = {0}, tmp = {0};
	PGresult *r = NULL;
	void *z = NULL;
	size_t z_len = 0;
	char *stored = NULL;
	size_t stored_len = 0;
	int oom = 0;

	memset(out, 0, sizeof(*out));
	store_err_clear(e);
	if (rep->n_results > RESULT_BLOCK_ROWS) {
		e->status = STORE_INVALID;
		snprintf(e->message, sizeof(e->message),
			 "a report holds at most %d results",
			 RESULT_BLOCK_ROWS);
		goto out;
	}
	for (int c = 0; c < RC_COUNT; c++)
		col_begin(&cols[c], &res_cols[c], rep->n_results);
	for (int i = 0; i < rep->n_results; i++)
		for (int c = 0; c < RC_COUNT; c++)
			col_put(&cols[c], &res_cols[c], &rep->results[i], &tmp);
	for (int c = 0; c < RC_COUNT; c++) {
		if (col_is_literal(&res_cols[c]))
			sbuf_putn(&cols[c], "}", 1);
		else
			formats[INGEST_FIXED + c] = 1;
		oom |= cols[c].oom | tmp.oom;
		params[INGEST_FIXED + c] = cols[c].p;
		lengths[INGEST_FIXED + c] = (int)cols[c].len;
	}
	if (oom) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "out of memory building the report's rows");
		goto out;
	}
	params[INGEST_SYNTHETIC] = rep->synthetic ? "true" : "false";
	params[INGEST_INVENTORY] = rep->has_gpu_uuids ? "true" : NULL;
	if (report_pack(rep->text, strlen(rep->text), &z, &z_len, e) !=
	    STORE_OK)
		goto out;
	params[0] = z;
	lengths[0] = (int)z_len;
	formats[0] = 1;
	/* Retried once on a connection found lost (idempotent): a replay of
	 * the run_id stores nothing and is answered as the same report, so
	 * a statement the server did commit before the connection went is
	 * still one run; a pooled connection the server had closed while
	 * the daemon was idle (a database restart, idle_session_timeout)
	 * made the first reports after it 503s (review s19a F3). */
	if (db_exec_stmt(pool, &ingest_stmt, INGEST_PARAMS, params, lengths,
			 formats, 1, &r, e) != STORE_OK)
		goto out;
	out->created = atoi(PQgetvalue(r, 0, 0)) == 1;
	if (out->created) {
		/* New measurements: calibrate from them at once here. */
		ttl_cache_clear(&medians_cache);
		out->same_report = 1;
		out->gpus = atoi(PQgetvalue(r, 0, 1));
		out->results = atoi(PQgetvalue(r, 0, 2));
		snprintf(out->hostname, sizeof(out->hostname), "%s",
			 rep->hostname);
		snprintf(out->status, sizeof(out->status), "%s", rep->status);
		snprintf(out->received_at, sizeof(out->received_at), "%s",
			 PQgetvalue(r, 0, 4));
		goto out;
	}
	PQclear(r);
	r = NULL;
	/* A replay: describe the stored run as the first post did. It is the
	 * same report when the stored one equals it as JSON (key order,
	 * whitespace and 5 vs 5.0 do not matter: jsonb equality), so a report
	 * re-serialised on its way (a proxy, the spool) is a replay.
	 */
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT hostname, status, to_char(received_at AT TIME ZONE"
		    " 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
		    " report::jsonb - 'run_id' = $2::jsonb - 'run_id',"
		    " coalesce(result_count, (SELECT count(*)"
		    "  FROM benchmark_results b WHERE b.id >= r.first_result_id"
		    "  AND b.id < r.first_result_id + " RESULT_BLOCK ")),"
		    " coalesce(cardinality(gpu_uuids), json_array_length("
		    "  coalesce(report::json->'gpus', '[]'))), report_zstd"
		    " FROM benchmark_runs r WHERE run_id = $1::uuid",
		    /* clang-format on */
		    2, p1, 1, &r, e) != STORE_OK)
		goto out;
	if (PQntuples(r) != 1) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "run vanished after ingestion");
		goto out;
	}
	snprintf(out->hostname, sizeof(out->hostname), "%s",
		 PQgetvalue(r, 0, 0));
	snprintf(out->status, sizeof(out->status), "%s", PQgetvalue(r, 0, 1));
	snprintf(out->received_at, sizeof(out->received_at), "%s",
		 PQgetvalue(r, 0, 2));
	out->same_report = PQgetvalue(r, 0, 3)[0] == 't';
	out->results = atoi(PQgetvalue(r, 0, 4));
	out->gpus = atoi(PQgetvalue(r, 0, 5));
	if (!PQgetisnull(r, 0, 6)) {
		/* a compact run (0020): compare its report as jsonb too, so
		 * the two kinds of run answer a replay alike */
		const char *p2[2];
		if (report_unpack(PQgetvalue(r, 0, 6), &stored, &stored_len,
				  e) != STORE_OK)
			goto out;
		PQclear(r);
		r = NULL;
		p2[0] = stored;
		p2[1] = rep->text;
		if (db_exec(
			pool,
			"SELECT $1::jsonb - 'run_id' = $2::jsonb - 'run_id'", 2,
			p2, 1, &r, e) != STORE_OK)
			goto out;
		out->same_report = PQgetvalue(r, 0, 0)[0] == 't';
	}
out:
	PQclear(r);
	free(z);
	free(stored);
	for (int c = 0; c < RC_COUNT; c++)
		sbuf_free(&cols[c]);
	sbuf_free(&tmp);
	return e->status;
}

enum store_status store_bench_get(struct db_pool *pool, const char *run_id,
				  json_t **out, struct store_err *e)
{
	const char *params[1] = {run_id};
	PGresult *r = NULL;
	char *text = NULL;
	size_t len = 0;
	json_t *report;
	json_error_t jerr;

	*out = NULL;
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT json_build_object('run_id', run_id, 'hostname',"
		    " hostname, 'status', status, 'mode', mode, 'started_at',"
		    " started_at, 'finished_at', finished_at, 'received_at',"
		    " received_at, 'report', report::json), report_zstd"
		    " FROM benchmark_runs WHERE run_id = $1::uuid",
		    /* clang-format on */
		    1, params, 1, &r, e) != STORE_OK)
		return e->status;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 1) &&
	    report_unpack(PQgetvalue(r, 0, 1), &text, &len, e) != STORE_OK) {
		PQclear(r);
		return e->status;
	}
	if (db_one_json(r, out, e) != STORE_OK || !text)
		goto out;
	/* a compact run (0020): the report as posted, from its zstd frame */
	if (!(report = json_loadb(text, len, 0, &jerr))) {
		json_decref(*out);
		*out = NULL;
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "a stored report is not JSON: %s", jerr.text);
		goto out;
	}
	json_object_set_new(*out, "report", report);
out:
	free(text);
	return e->status;
}

/* The 8 parameters both listing statements take, in their order: the
 * filters, ids below before_id, at most max rows. */
struct list_params {
	char limit[16], before[24];
	const char *p[8];
};

static void list_params(struct list_params *lp, const struct bench_filter *f,
			long long before_id, int max)
{
	snprintf(lp->limit, sizeof(lp->limit), "%d", max);
	snprintf(lp->before, sizeof(lp->before), "%lld", before_id);
	lp->p[0] = f->hostname;
	lp->p[1] = f->gpu_type;
	lp->p[2] = f->metric;
	lp->p[3] = f->dtype;
	lp->p[4] = f->since;
	lp->p[5] = lp->before;
	lp->p[6] = lp->limit;
	lp->p[7] = f->run_id;
}

enum store_status store_bench_list(struct db_pool *pool,
				   const struct bench_filter *f,
				   long long before_id, int rows_max,
				   json_t **items, struct store_err *e)
{
	struct list_params lp = {.p = {NULL}};
	PGresult *r = NULL;
	json_error_t jerr;
	int rows;

	*items = NULL;
	list_params(&lp, f, before_id, rows_max);
	/* Keyset pagination on the id: newest first, stable. */
	if (db_exec(
		pool,
		/* clang-format off */
		"SELECT json_build_object('id', id, 'run_id', run_id,"
		" 'hostname', hostname, 'gpu_uuid', gpu_uuid, 'gpu_type',"
		" gpu_type, 'metric', metric, 'dtype', dtype, 'method', method,"
		" 'peer_index', peer_index, 'size_bytes', size_bytes, 'unit',"
		" unit, 'status', status, 'median', median, 'max', max,"
		" 'mean', mean, 'p10', p10, 'p90', p90, 'cv', cv, 'n', n,"
		" 'limit', limit_value, 'efficiency', efficiency,"
		" 'measured_at', measured_at)::text"
		" FROM benchmark_results,"
		" (SELECT (SELECT first_result_id FROM benchmark_runs"
		"  WHERE run_id = $8::uuid) AS lo) r"
		" WHERE ($1::text IS NULL OR hostname = $1)"
		" AND ($2::text IS NULL OR gpu_type = $2)"
		" AND ($3::text IS NULL OR metric = $3)"
		" AND ($4::text IS NULL OR dtype = $4)"
		" AND ($5::timestamptz IS NULL OR measured_at >= $5)"
		" AND id < $6::bigint"
		" AND ($8::uuid IS NULL OR (id >= r.lo AND id < r.lo "
		"+ " RESULT_BLOCK "))"
		" ORDER BY id DESC LIMIT $7::int",
		/* clang-format on */
		8, lp.p, 1, &r, e) != STORE_OK)
		return e->status;
	rows = PQntuples(r);
	*items = json_array();
	for (int i = 0; i < rows; i++) {
		json_t *o = json_loads(PQgetvalue(r, i, 0), 0, &jerr);
		if (o)
			json_array_append_new(*items, o);
	}
	PQclear(r);
	return STORE_OK;
}

enum store_status store_bench_runs_each(struct db_pool *pool,
					const struct bench_filter *f,
					long long before_id, int runs_max,
					bench_run_fn fn, void *ctx,
					long long *last_id, int *runs,
					struct store_err *e)
{
	struct list_params lp = {.p = {NULL}};
	PGresult *r = NULL;
	json_error_t jerr;
	struct bench_stored_run run;
	char *text = NULL;
	int rows, stop = 0;

	*runs = 0;
	list_params(&lp, f, before_id, runs_max);
	/* The run-level filters: a run whose results cannot match is never
	 * opened (its metrics, dtypes and GPU types are beside it, 0020). */
	if (db_exec(pool,
		    /* clang-format off */
		"SELECT run_id, hostname, first_result_id,"
		" to_json(coalesce(finished_at, received_at))::text,"
		" (SELECT coalesce(json_object_agg(u, t), '{}')"
		"  FROM unnest(gpu_uuids, gpu_types) x (u, t))::text,"
		" node_type, report_zstd"
		" FROM benchmark_runs"
		" WHERE report_zstd IS NOT NULL"
		" AND ($1::text IS NULL OR hostname = $1)"
		" AND ($2::text IS NULL OR node_type = $2"
		"  OR $2 = ANY (gpu_types))"
		" AND ($3::text IS NULL OR $3 = ANY (metrics))"
		" AND ($4::text IS NULL OR $4 = ANY (dtypes))"
		" AND ($5::timestamptz IS NULL"
		"  OR coalesce(finished_at, received_at) >= $5)"
		" AND first_result_id < $6::bigint"
		" AND ($8::uuid IS NULL OR run_id = $8::uuid)"
		" ORDER BY first_result_id DESC LIMIT $7::int",
		    /* clang-format on */
		    8, lp.p, 1, &r, e) != STORE_OK)
		return e->status;
	rows = PQntuples(r);
	for (int i = 0; i < rows && !stop; i++) {
		memset(&run, 0, sizeof(run));
		run.run_id = PQgetvalue(r, i, 0);
		run.hostname = PQgetvalue(r, i, 1);
		run.first_result_id = strtoll(PQgetvalue(r, i, 2), NULL, 10);
		run.measured_at =
		    json_loads(PQgetvalue(r, i, 3), JSON_DECODE_ANY, &jerr);
		run.types = json_loads(PQgetvalue(r, i, 4), 0, &jerr);
		run.node_type =
		    PQgetisnull(r, i, 5) ? NULL : PQgetvalue(r, i, 5);
		if (report_unpack(PQgetvalue(r, i, 6), &text, &run.report_len,
				  e) != STORE_OK ||
		    !run.measured_at || !run.types) {
			json_decref(run.measured_at);
			json_decref(run.types);
			e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "run %s could not be read back", run.run_id);
			break;
		}
		run.report = text;
		stop = fn(ctx, &run);
		*last_id = run.first_result_id;
		++*runs;
		json_decref(run.measured_at);
		json_decref(run.types);
		free(text);
		text = NULL;
	}
	PQclear(r);
	return e->status;
}

enum store_status store_nodes_list(struct db_pool *pool, json_t **out,
				   struct store_err *e)
{
	PGresult *r = NULL;

	*out = NULL;
	if (db_exec(
		pool,
		/* clang-format off */
		/* the GPUs counted and their types listed in one pass over
		 * node_gpus, not two index probes per node */
		"WITH g AS (SELECT hostname, count(*) AS gpus,"
		"  json_agg(DISTINCT coalesce(gpu_type, name)) AS types"
		"  FROM node_gpus WHERE removed_at IS NULL GROUP BY hostname)"
		" SELECT json_build_object('items', coalesce(json_agg("
		" json_build_object('hostname', n.hostname, 'cpu_model',"
		" n.cpu_model, 'driver_version', n.driver_version,"
		" 'cuda_version', n.cuda_version, 'first_seen', n.first_seen,"
		" 'last_seen', n.last_seen, 'last_run_id', n.last_run_id,"
		" 'gpus', coalesce(g.gpus, 0),"
		" 'gpu_types', coalesce(g.types, '[]'),"
		" 'href', '/v1/nodes/' || n.hostname)"
		" ORDER BY n.hostname), '[]'))"
		" FROM nodes n LEFT JOIN g USING (hostname)",
		/* clang-format on */
		0, NULL, 1, &r, e) != STORE_OK)
		return e->status;
	return db_one_json(r, out, e);
}

enum store_status store_node_get(struct db_pool *pool, const char *hostname,
				 json_t **out, struct store_err *e)
{
	const char *params[1] = {hostname};
	PGresult *r = NULL;

	*out = NULL;
	if (db_exec(
		pool,
		/* clang-format off */
		"SELECT json_build_object('hostname', n.hostname,"
		" 'cpu_model', n.cpu_model, 'driver_version',"
		" n.driver_version, 'cuda_version', n.cuda_version,"
		" 'first_seen', n.first_seen, 'last_seen', n.last_seen,"
		" 'last_run_id', n.last_run_id, 'node', n.inventory->'node',"
		" 'gpus', (SELECT coalesce(json_agg(json_build_object("
		"  'uuid', g.uuid, 'index', g.gpu_index, 'name', g.name,"
		"  'gpu_type', g.gpu_type, 'pci_bus_id', g.pci_bus_id,"
		"  'pcie', g.info->'pcie', 'nvlink', g.info->'nvlink',"
		"  'numa_node', g.info->'numa_node', 'ecc_enabled',"
		"  g.info->'ecc_enabled', 'mig_mode', g.info->'mig_mode',"
		"  'last_seen', g.last_seen) ORDER BY g.gpu_index), '[]')"
		"  FROM node_gpus g WHERE g.hostname = n.hostname"
		"  AND g.removed_at IS NULL),"
		/* GPUs a newer inventory of the node no longer lists
		 * (migrations/0043): an RMA's trail */
		" 'removed_gpus', (SELECT coalesce(json_agg(json_build_object("
		"  'uuid', g.uuid, 'index', g.gpu_index, 'name', g.name,"
		"  'gpu_type', g.gpu_type, 'last_seen', g.last_seen,"
		"  'removed_at', g.removed_at) ORDER BY g.removed_at DESC,"
		"  g.uuid), '[]') FROM node_gpus g WHERE g.hostname ="
		"  n.hostname AND g.removed_at IS NOT NULL),"
		" 'runs', (SELECT coalesce(json_agg(json_build_object("
		"  'run_id', b.run_id, 'status', b.status, 'mode', b.mode,"
		"  'received_at', b.received_at, 'href', '/v1/benchmarks/'"
		"  || b.run_id) ORDER BY b.received_at DESC), '[]') FROM"
		"  (SELECT * FROM benchmark_runs WHERE hostname = n.hostname"
		"   ORDER BY received_at DESC LIMIT 20) b))"
		" FROM nodes n WHERE n.hostname = $1",
		/* clang-format on */
		1, params, 1, &r, e) != STORE_OK)
		return e->status;
	return db_one_json(r, out, e);
}

enum store_status store_fleet(struct db_pool *pool, int window_days,
			      double threshold, bool with_synthetic,
			      json_t **out, struct store_err *e)
{
	/* Each GPU's latest run in the window: its latest run overall when
	 * that one is in the window (the window has no upper bound), kept
	 * per GPU in rollup_gpu_latest as runs are stored
	 * (migrations/0016_gpu_latest.sql), and read from the daemon's copy
	 * of that table (storage/fleet_mirror.c, 0017). The values are
	 * rollup_gpu_runs', each run's per GPU, metric and dtype as reduced
	 * when the run was stored (migrations/0014_fleet_rollups.sql):
	 * sweeps at their largest size (the asymptotic rate), the median over
	 * the GPU's results (e.g. over P2P peers), only ok results whose
	 * median is 0 or within [BENCH_STAT_MIN, BENCH_STAT_MAX] (stored
	 * before that bound, or NaN and Infinity written around the API,
	 * would show as "NaN" or drag the type's median to nothing: issue
	 * 15), limits likewise. The type's figure is the median over its
	 * GPUs. A GPU is degraded when it is more than threshold under its
	 * type's median (over, for latencies), when its PCIe link trained
	 * below its maximum, or when hardware or thermal slowdowns fired
	 * while it was measured. The capacity report applies the same rules
	 * week by week (storage/report.c): keep them in step.
	 */
	return fleet_mirror_fleet(pool, window_days, threshold, with_synthetic,
				  out, e);
}

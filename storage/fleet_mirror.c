/* fleet_mirror.c - GET /v1/fleet from an in-memory copy of node_gpus and
 * rollup_gpu_latest (see fleet_mirror.h, migrations/0017_fleet_mirror.sql);
 * calibration (0018) and the capacity report's weekly table (0021) from
 * copies kept the same way, at the end of this file.
 *
 * Why: the answer is, per GPU type, the median of each metric over the
 * latest value of every GPU seen in the window, and every GPU measured
 * more than a threshold under it. Reduced in SQL on each read (unnest,
 * sort, percentile_cont) that cost ~40 us a GPU, 0.7 s at 16,000 GPUs
 * (docs/BENCHMARKS.md). Here a read fetches only the rows written since
 * the previous read, takes medians by selection (linear time) and hands
 * the few figures that make the answer to one small statement that
 * formats them as the SQL before did.
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"
#include "storage/bench.h"
#include "storage/fleet_mirror.h"
#include "storage/pgconn.h"

/* A member of a GPU's stored "pcie" object as SQL numeric, or NULL when it
 * is not a JSON number: reports are checked at ingest (handlers/
 * benchmarks.c), but a row stored before that must not break every fleet
 * read with a cast error. */
#define PCIE_NUM(k)                                                            \
	"(CASE WHEN jsonb_typeof(g.info->'pcie'->'" k "') = 'number'"          \
	" THEN (g.info->'pcie'->>'" k "')::numeric END)"

/* ---- interned strings ------------------------------------------------ */

/* Strings by id (0, 1, ...), each stored once: GPU uuids, type names,
 * hostnames, metric names, dtypes, units. Open addressing on FNV-1a.
 */
struct strtab {
	char **s;     /* s[id], owned */
	int n, cap;   /* ids in use, room in s */
	int *slot;    /* id + 1, 0 = empty */
	size_t nslot; /* power of two, at least 2n */
};

/* Room for index need in the array *p of elements of size bytes, whose
 * capacity *cap doubles from first; new room is zeroed. -1: out of
 * memory (the array is left as it was). */
static int grow(void *p, int *cap, size_t size, int need, int first)
{
	void **arr = p;
	int nc = *cap ? *cap : first;
	char *a;

	if (need < *cap)
		return 0;
	while (nc <= need)
		nc *= 2;
	if (!(a = realloc(*arr, (size_t)nc * size)))
		return -1;
	memset(a + (size_t)*cap * size, 0, (size_t)(nc - *cap) * size);
	*arr = a;
	*cap = nc;
	return 0;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void strtab_free(struct strtab *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int strtab_grow(struct strtab *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 64;
	int *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -1;
	for (int i = 0; i < t->n; i++) {
		size_t j = fnv1a(t->s[i]) & (nslot - 1);
		while (slot[j])
			j = (j + 1) & (nslot - 1);
		slot[j] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

/* The slot where s is, or the empty one where it would go. */
static size_t strtab_slot(const struct strtab *t, const char *s)
{
	size_t j = fnv1a(s) & (t->nslot - 1);

	while (t->slot[j] && strcmp(t->s[t->slot[j] - 1], s))
		j = (j + 1) & (t->nslot - 1);
	return j;
}

/* The id of s, or -1 when it is not there. */
static int strtab_find(const struct strtab *t, const char *s)
{
	return t->nslot ? t->slot[strtab_slot(t, s)] - 1 : -1;
}

/* The id of s, added when absent. -1: out of memory. */
static int strtab_id(struct strtab *t, const char *s)
{
	size_t j;

	if ((size_t)(t->n + 1) * 2 > t->nslot && strtab_grow(t))
		return -1;
	j = strtab_slot(t, s);
	if (t->slot[j])
		return t->slot[j] - 1;
	if (grow(&t->s, &t->cap, sizeof(*t->s), t->n, 64) ||
	    !(t->s[t->n] = strdup(s)))
		return -1;
	t->slot[j] = t->n + 1;
	return t->n++;
}

/* Metric and dtype pairs by id, their names in a strtab of names. */
struct mkeytab {
	struct strtab pairs; /* "metric\x1fdtype" */
	struct mkey {
		int metric, dtype; /* names ids */
	} * by_id;
	int cap;
};

static void mkeytab_free(struct mkeytab *t)
{
	strtab_free(&t->pairs);
	free(t->by_id);
	memset(t, 0, sizeof(*t));
}

/* The id of a metric and dtype pair, its names interned in names. -1: out
 * of memory. */
static int mkeytab_id(struct mkeytab *t, struct strtab *names,
		      const char *metric, const char *dtype)
{
	char key[512];
	int id;

	snprintf(key, sizeof(key), "%s\x1f%s", metric, dtype);
	if ((id = strtab_id(&t->pairs, key)) < 0)
		return -1;
	if (grow(&t->by_id, &t->cap, sizeof(*t->by_id), id, 64))
		return -1;
	if (id == t->pairs.n - 1) {
		int mi = strtab_id(names, metric);
		int di = strtab_id(names, dtype);
		if (mi < 0 || di < 0)
			return -1;
		t->by_id[id] = (struct mkey){mi, di};
	}
	return id;
}

/* ---- bringing a copy up to date -------------------------------------- */

/* Where a copy stands against the database. */
struct copy_pos {
	unsigned long long pool_serial; /* 0: nothing loaded */
	long long epoch;		/* fleet_mirror_epoch seen */
	char xmin[32];			/* fetch change_xid >= this next time */
};

static void copy_pos_clear(struct copy_pos *p)
{
	p->pool_serial = 0;
	p->epoch = 0;
	snprintf(p->xmin, sizeof(p->xmin), "0");
}

/* What one copy does in copy_sync(). */
struct copy_ops {
	const char *what; /* in messages: "fleet copy" */
	void (*clear)(void *m);
	/* Runs the statement fetching the rows written since the copy's
	 * pos.xmin (all of them when load), with the 'S' row. */
	enum store_status (*fetch)(void *m, struct db_pool *pool, bool load,
				   PGresult **out, struct store_err *e);
	/* One row other than the 'S' row; -1: malformed or out of memory. */
	int (*row)(void *m, PGresult *r, int i);
	/* After the rows, with the database's clock; -1: out of memory, 1:
	 * the rows cannot be applied (load the copy again). */
	int (*done)(void *m, int64_t now_us);
};

/* Applies one fetch: the 'S' row (snapshot xmin, epoch, clock) and the
 * rows. *reload: the epoch moved (rows were deleted), nothing applied. */
static int copy_apply(struct copy_pos *pos, void *m, const struct copy_ops *ops,
		      PGresult *r, int64_t *now_us, bool *reload)
{
	int n = PQntuples(r), s = -1, rc;

	*reload = false;
	for (int i = 0; i < n && s < 0; i++)
		if (PQgetvalue(r, i, 0)[0] == 'S')
			s = i;
	if (s < 0)
		return -1;
	*now_us = strtoll(PQgetvalue(r, s, 3), NULL, 10);
	if (pos->pool_serial &&
	    strtoll(PQgetvalue(r, s, 2), NULL, 10) != pos->epoch) {
		*reload = true;
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (i != s && ops->row(m, r, i))
			return -1;
	pos->epoch = strtoll(PQgetvalue(r, s, 2), NULL, 10);
	snprintf(pos->xmin, sizeof(pos->xmin), "%s", PQgetvalue(r, s, 1));
	if ((rc = ops->done ? ops->done(m, *now_us) : 0) > 0) {
		*reload = true;
		return 0;
	}
	return rc;
}

/* Brings copy m up to date with the database of pool: the rows written
 * since its last fetch, or all of them when it is empty, holds another
 * pool's rows, or rows were deleted (migrations/0017_fleet_mirror.sql).
 * Any failure empties it, so the next read loads it whole. */
static enum store_status copy_sync(struct db_pool *pool, struct copy_pos *pos,
				   void *m, const struct copy_ops *ops,
				   int64_t *now_us, struct store_err *e)
{
	unsigned long long serial = db_pool_serial(pool);

	if (pos->pool_serial != serial)
		ops->clear(m);
	for (int attempt = 0; attempt < 2; attempt++) {
		PGresult *r = NULL;
		bool reload = false;
		int rc;

		if (ops->fetch(m, pool, !pos->pool_serial, &r, e) != STORE_OK) {
			ops->clear(m);
			return e->status;
		}
		rc = copy_apply(pos, m, ops, r, now_us, &reload);
		PQclear(r);
		if (rc) {
			ops->clear(m);
			e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "%s: a stored row could not be read",
				 ops->what);
			return e->status;
		}
		if (!reload) {
			pos->pool_serial = serial;
			return STORE_OK;
		}
		ops->clear(m);
	}
	e->status = STORE_UNAVAILABLE;
	snprintf(e->message, sizeof(e->message),
		 "%s: rows deleted while loading; try again", ops->what);
	return e->status;
}

/* ---- the copy -------------------------------------------------------- */

/* One rollup_gpu_latest row: per metric and dtype (mkey) the GPU's value
 * and limit (NAN: NULL) and unit. */
struct latest {
	bool present;
	int64_t measured_us;
	int n;
	void *block;	  /* owns v, lim, mkey and unit (n each) */
	double *v, *lim;  /* lim NAN: NULL */
	int *mkey, *unit; /* unit: names id */
	char *slowdowns;  /* the flag's text, or NULL */
};

/* One node_gpus row (known) and its two latest rows, [0] of real runs
 * only, [1] of any run (with_synthetic). */
struct gpu {
	bool known;
	int host, k; /* strtab ids */
	int gpu_index;
	bool in_catalog;
	int64_t last_seen_us;
	char *pcie; /* the flag's text, or NULL */
	struct latest latest[2];
};

struct mirror {
	pthread_mutex_t mu;
	struct copy_pos pos;
	struct strtab uuids, names;
	struct mkeytab mkeys;
	struct gpu *gpus; /* by uuids id */
	int gpus_cap;
};

static struct mirror the_mirror = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void latest_clear(struct latest *l)
{
	free(l->block);
	free(l->slowdowns);
	memset(l, 0, sizeof(*l));
}

static void mirror_clear(void *mv)
{
	struct mirror *m = mv;

	for (int i = 0; i < m->uuids.n; i++) {
		free(m->gpus[i].pcie);
		latest_clear(&m->gpus[i].latest[0]);
		latest_clear(&m->gpus[i].latest[1]);
	}
	free(m->gpus);
	strtab_free(&m->uuids);
	strtab_free(&m->names);
	mkeytab_free(&m->mkeys);
	m->gpus = NULL;
	m->gpus_cap = 0;
	copy_pos_clear(&m->pos);
}

/* The GPU of uuid, added (unknown, no rows) when absent. */
static struct gpu *mirror_gpu(struct mirror *m, const char *uuid)
{
	int id = strtab_id(&m->uuids, uuid);

	if (id < 0 || grow(&m->gpus, &m->gpus_cap, sizeof(*m->gpus), id, 256))
		return NULL;
	return &m->gpus[id];
}

/* Splits a one-dimensional PostgreSQL array literal (array output syntax:
 * {a,"b c",NULL}) in place into at most max elements, NULL for SQL NULL.
 * Returns the count, or -1 when s is not such a literal or has more.
 */
static int pg_array_split(char *s, char **el, int max)
{
	int n = 0;
	char *r = s, *w;

	if (*r++ != '{')
		return -1;
	if (*r == '}')
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		if (*r == '"') {
			el[n] = w = ++r;
			while (*r && *r != '"') {
				if (*r == '\\' && r[1])
					r++;
				*w++ = *r++;
			}
			if (*r != '"')
				return -1;
			r++;
			*w = '\0';
		} else {
			size_t len = strcspn(r, ",}");
			el[n] = r;
			r += len;
			if (len == 4 && !strncmp(el[n], "NULL", 4))
				el[n] = NULL;
		}
		n++;
		if (*r == '}') {
			*r = '\0';
			return r[1] ? -1 : n;
		}
		if (*r != ',')
			return -1;
		*r++ = '\0';
	}
}

/* The array literals in columns first .. first + ncols - 1 of row i, split
 * into their elements: cols[c] (copies, the caller frees each) and el
 * (the caller frees it) with the elements of column c at el[c * *stride].
 * Every array must have the same length, which is returned; -1 on a
 * malformed row or out of memory. Room is one more element than the
 * longest literal has characters, so a row of any size fits. */
static int split_cols(PGresult *r, int i, int first, int ncols, char **cols,
		      char ***el, size_t *stride)
{
	size_t st = 0;
	int n = -1;

	*el = NULL;
	for (int c = 0; c < ncols; c++) {
		if (!(cols[c] = strdup(PQgetvalue(r, i, first + c))))
			return -1;
		if (strlen(cols[c]) + 1 > st)
			st = strlen(cols[c]) + 1;
	}
	if (st > (size_t)INT_MAX / (size_t)ncols ||
	    !(*el = malloc((size_t)ncols * st * sizeof(**el))))
		return -1;
	for (int c = 0; c < ncols; c++) {
		int k = pg_array_split(cols[c], *el + (size_t)c * st, (int)st);
		if (k < 0 || (n >= 0 && k != n))
			return -1;
		n = k;
	}
	*stride = st;
	return n;
}

static int parse_double(const char *s, double *out)
{
	char *end;

	if (!s) {
		*out = NAN;
		return 0;
	}
	*out = strtod(s, &end);
	return *end || end == s ? -1 : 0;
}

/* Fills l from one 'L' row of the sync statement; -1 on a malformed row or
 * out of memory. */
static int latest_set(struct mirror *m, struct latest *l, PGresult *r, int i)
{
	char *cols[5] = {NULL};
	char **el = NULL;
	size_t st = 0;
	int n, rc = -1;

	latest_clear(l);
	if ((n = split_cols(r, i, 4, 5, cols, &el, &st)) < 0)
		goto out;
	l->block = malloc((size_t)(n ? n : 1) *
			  (2 * sizeof(double) + 2 * sizeof(int)));
	if (!l->block)
		goto out;
	l->v = l->block;
	l->lim = l->v + n;
	l->mkey = (int *)(void *)(l->lim + n);
	l->unit = l->mkey + n;
	/* A value outside 0 and [BENCH_STAT_MIN, BENCH_STAT_MAX] (NaN,
	 * Infinity) is left out, a limit there is none: the rollups never
	 * make one, so only a write around the API stores it, and the reads
	 * skip such values wherever they are stored (storage/bench.h). */
	l->n = 0;
	for (int j = 0; j < n; j++) {
		const char *metric = el[j], *dtype = el[st + j];
		const char *unit = el[2 * st + j];
		int k = l->n;
		if (!metric || !dtype || !unit)
			goto out;
		if (parse_double(el[3 * st + j], &l->v[k]) ||
		    parse_double(el[4 * st + j], &l->lim[k]))
			goto out;
		if (!(l->v[k] == 0 ||
		      (l->v[k] >= BENCH_STAT_MIN && l->v[k] <= BENCH_STAT_MAX)))
			continue;
		if (!(l->lim[k] >= BENCH_STAT_MIN &&
		      l->lim[k] <= BENCH_STAT_MAX))
			l->lim[k] = NAN;
		if ((l->mkey[k] =
			 mkeytab_id(&m->mkeys, &m->names, metric, dtype)) < 0 ||
		    (l->unit[k] = strtab_id(&m->names, unit)) < 0)
			goto out;
		l->n++;
	}
	if (!PQgetisnull(r, i, 9) &&
	    !(l->slowdowns = strdup(PQgetvalue(r, i, 9))))
		goto out;
	l->measured_us = strtoll(PQgetvalue(r, i, 3), NULL, 10);
	l->present = true;
	rc = 0;
out:
	for (int c = 0; c < 5; c++)
		free(cols[c]);
	free(el);
	return rc;
}

/* Rows written since the copy's snapshot ($1: that snapshot's xmin), in
 * one statement, so in one snapshot, whose xmin ('S') is where the next
 * read starts. The flags' texts are made here, as the fleet statement
 * made them (storage/bench.c before 0017): a PCIe link below its maximum,
 * hardware or thermal clock slowdowns while measured.
 */
static const char sync_sql[] =
    /* clang-format off */
    "SELECT 'S', pg_snapshot_xmin(pg_current_snapshot())::text,"
    " (SELECT epoch FROM fleet_mirror_epoch)::text,"
    " (extract(epoch FROM now()) * 1000000)::bigint::text,"
    " NULL, NULL, NULL, NULL, NULL, NULL"
    " UNION ALL"
    " SELECT 'G', g.uuid, g.hostname, g.gpu_index::text,"
    "  coalesce(g.gpu_type, 'nvml:' || g.name),"
    "  (g.gpu_type IS NOT NULL)::text,"
    "  (extract(epoch FROM g.last_seen) * 1000000)::bigint::text,"
    "  CASE WHEN " PCIE_NUM("gen_current") " < " PCIE_NUM("gen_max")
    "   OR " PCIE_NUM("width_current") " < " PCIE_NUM("width_max")
    "  THEN format('PCIe link trained at Gen%s x%s, below its maximum"
    " Gen%s x%s', g.info->'pcie'->>'gen_current',"
    "   g.info->'pcie'->>'width_current', g.info->'pcie'->>'gen_max',"
    "   g.info->'pcie'->>'width_max') END, NULL, NULL"
    " FROM node_gpus g WHERE g.change_xid >= $1::xid8"
    " UNION ALL"
    " SELECT 'L', l.gpu_uuid, l.with_synthetic::text,"
    "  (extract(epoch FROM l.measured_at) * 1000000)::bigint::text,"
    "  l.metrics::text, l.dtypes::text, l.units::text, l.v::text,"
    "  l.lim::text, CASE WHEN cardinality(l.slowdowns) > 0 THEN"
    "  'clock slowdowns while measured: '"
    "  || array_to_string(l.slowdowns, ', ') END"
    " FROM rollup_gpu_latest l WHERE l.change_xid >= $1::xid8";
/* clang-format on */

static int gpu_set(struct mirror *m, PGresult *r, int i)
{
	struct gpu *g = mirror_gpu(m, PQgetvalue(r, i, 1));

	if (!g)
		return -1;
	free(g->pcie);
	g->pcie = NULL;
	g->known = true;
	if ((g->host = strtab_id(&m->names, PQgetvalue(r, i, 2))) < 0 ||
	    (g->k = strtab_id(&m->names, PQgetvalue(r, i, 4))) < 0)
		return -1;
	g->gpu_index = atoi(PQgetvalue(r, i, 3));
	g->in_catalog = !strcmp(PQgetvalue(r, i, 5), "true");
	g->last_seen_us = strtoll(PQgetvalue(r, i, 6), NULL, 10);
	if (!PQgetisnull(r, i, 7) && !(g->pcie = strdup(PQgetvalue(r, i, 7))))
		return -1;
	return 0;
}

static int mirror_row(void *mv, PGresult *r, int i)
{
	struct mirror *m = mv;
	const char *kind = PQgetvalue(r, i, 0);

	if (kind[0] == 'G')
		return gpu_set(m, r, i);
	if (kind[0] == 'L') {
		struct gpu *g = mirror_gpu(m, PQgetvalue(r, i, 1));
		bool ws = !strcmp(PQgetvalue(r, i, 2), "true");
		return !g || latest_set(m, &g->latest[ws], r, i) ? -1 : 0;
	}
	return 0;
}

static enum store_status mirror_fetch(void *mv, struct db_pool *pool, bool load,
				      PGresult **out, struct store_err *e)
{
	struct mirror *m = mv;
	const char *params[1] = {m->pos.xmin};

	(void)load; /* a whole load starts from xmin 0 */
	return db_exec(pool, sync_sql, 1, params, 1, out, e);
}

static const struct copy_ops mirror_ops = {
    .what = "fleet copy",
    .clear = mirror_clear,
    .fetch = mirror_fetch,
    .row = mirror_row,
};

/* ---- the reduction --------------------------------------------------- */

static void swap_d(double *a, size_t i, size_t j)
{
	double t = a[i];

	a[i] = a[j];
	a[j] = t;
}

/* The k-th smallest of a[0..n) (0-based, no NaN), a reordered so that
 * every element after k is at least a[k]: quickselect with a three-way
 * partition (duplicates are common: equal limits), median-of-three
 * pivot. Linear time on average. */
static double select_kth(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* k is in [lo, hi) */

	while (hi - lo > 1) {
		double p = a[lo], q = a[lo + (hi - lo) / 2], r = a[hi - 1];
		double x = p < q ? (q < r ? q : (p < r ? r : p))
				 : (p < r ? p : (q < r ? r : q));
		size_t lt = lo, i = lo, gt = hi;
		/* [lo, lt) < x, [lt, i) == x, [gt, hi) > x */
		while (i < gt) {
			if (a[i] < x)
				swap_d(a, lt++, i++);
			else if (a[i] > x)
				swap_d(a, i, --gt);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return x;
	}
	return a[k];
}

/* percentile_cont(0.5) as PostgreSQL computes it over n > 0 values
 * (orderedsetaggs.c: the values at floor and ceil of 0.5 (n - 1),
 * interpolated lo + 0.5 (hi - lo)); a is reordered. */
static double median_cont(double *a, size_t n)
{
	size_t k = (n - 1) / 2;
	double lo = select_kth(a, n, k), hi = lo;

	if (n % 2 == 0) {
		hi = a[k + 1];
		for (size_t i = k + 2; i < n; i++)
			if (a[i] < hi)
				hi = a[i];
		return lo + 0.5 * (hi - lo);
	}
	return lo;
}

/* The answer's JSON from the reduced figures, formatted and ordered as the
 * fleet statement did before 0017 (the same expressions on the same
 * values: medians and values pass as %.17g, which float8 reads back
 * exactly). $1 window_days, $2 threshold; types ($3-$6), per type metric
 * ($7-$13), metric flags ($14-$19), other flags ($20-$21), degraded GPUs
 * ($22-$25).
 */
static const char shape_sql[] =
    /* clang-format off */
    "WITH types AS (SELECT * FROM unnest($3::text[], $4::boolean[],"
    "  $5::bigint[], $6::bigint[]) AS t (k, in_catalog, gpus, nodes)),"
    " per_type AS (SELECT * FROM unnest($7::text[], $8::text[], $9::text[],"
    "  $10::text[], $11::float8[], $12::float8[], $13::bigint[])"
    "  AS m (k, metric, dtype, unit, med, lim, n)),"
    " flags AS ("
    "  SELECT f.u AS gpu_uuid, format('%s%s %s %s is %s%% %s the fleet "
    "median %s', f.metric, CASE WHEN f.dtype <> '' THEN ' ' ||"
    "   f.dtype ELSE '' END, round(f.v::numeric, 2), f.unit,"
    "   round(abs(1 - f.v / f.med)::numeric * 100),"
    "   CASE WHEN f.v < f.med THEN 'under' ELSE 'over' END,"
    "   round(f.med::numeric, 2)) AS why"
    "  FROM unnest($14::text[], $15::text[], $16::text[], $17::text[],"
    "   $18::float8[], $19::float8[]) AS f (u, metric, dtype, unit, v, med)"
    "  UNION ALL"
    "  SELECT * FROM unnest($20::text[], $21::text[])),"
    " dg AS (SELECT * FROM unnest($22::text[], $23::text[], $24::int[],"
    "  $25::text[]) AS g (uuid, hostname, gpu_index, k))"
    " SELECT json_build_object('window_days', $1::int,"
    " 'degraded_threshold', $2::float8, 'items', coalesce(json_agg("
    "  json_build_object('gpu_type', t.k, 'in_catalog', t.in_catalog,"
    "  'gpus', t.gpus, 'nodes', t.nodes,"
    "  'metrics', (SELECT coalesce(json_agg(json_build_object("
    "   'metric', m.metric, 'dtype', nullif(m.dtype, ''), 'unit',"
    "   m.unit, 'fleet_median', round(m.med::numeric, 3), 'limit',"
    "   m.lim, 'efficiency', round((m.med / nullif(m.lim, 0))::numeric,"
    "   4), 'datasheet', CASE WHEN m.metric = 'gemm_tflops' THEN"
    "   CASE m.dtype WHEN 'fp64' THEN c.fp64_tflops WHEN 'fp32' THEN"
    "   c.fp32_tflops WHEN 'tf32' THEN c.tf32_tflops WHEN 'fp16'"
    "   THEN c.fp16_tflops WHEN 'bf16' THEN c.bf16_tflops WHEN"
    "   'fp8_e4m3' THEN c.fp8_tflops WHEN 'fp8' THEN c.fp8_tflops"
    "   WHEN 'int8' THEN c.int8_tops END WHEN m.metric LIKE 'hbm_%'"
    "   THEN c.memory_bandwidth_gbps WHEN m.metric LIKE 'p2p_%gbps'"
    "   THEN c.intra_node_gbps END, 'gpus', m.n)"
    "   ORDER BY m.metric, m.dtype), '[]')"
    "   FROM per_type m LEFT JOIN gpus c ON c.name = m.k"
    "   WHERE m.k = t.k),"
    "  'degraded', (SELECT coalesce(json_agg(json_build_object("
    "   'uuid', g.uuid, 'hostname', g.hostname, 'index', g.gpu_index,"
    "   'reasons', (SELECT json_agg(f.why ORDER BY f.why) FROM flags f"
    "    WHERE f.gpu_uuid = g.uuid)) ORDER BY g.hostname,"
    "   g.gpu_index), '[]') FROM dg g WHERE g.k = t.k))"
    "  ORDER BY t.k), '[]')) FROM types t";
/* clang-format on */

enum {
	P_DAYS,
	P_THR,
	P_T_K,
	P_T_CAT,
	P_T_GPUS,
	P_T_NODES,
	P_M_K,
	P_M_METRIC,
	P_M_DTYPE,
	P_M_UNIT,
	P_M_MED,
	P_M_LIM,
	P_M_N,
	P_F_UUID,
	P_F_METRIC,
	P_F_DTYPE,
	P_F_UNIT,
	P_F_V,
	P_F_MED,
	P_O_UUID,
	P_O_WHY,
	P_D_UUID,
	P_D_HOST,
	P_D_INDEX,
	P_D_K,
	P_COUNT
};

/* Array literals under construction, one per array parameter. */
struct shape {
	struct sbuf a[P_COUNT];
};

static void put_text(struct shape *s, int p, const char *v)
{
	if (!s->a[p].len)
		sbuf_put(&s->a[p], "{");
	db_array_elem(&s->a[p], v);
}

static void put_num(struct shape *s, int p, double v)
{
	char num[40];

	if (isnan(v)) {
		put_text(s, p, NULL);
		return;
	}
	snprintf(num, sizeof(num), "%.17g", v);
	put_text(s, p, num);
}

static void put_int(struct shape *s, int p, long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", v);
	put_text(s, p, num);
}

/* One value of a GPU in the window: group (type x metric key), GPU, and
 * where in its latest row. */
struct elem {
	int gpu, j;
};

struct type_acc {
	int k; /* names id */
	long long gpus;
	bool in_catalog;
};

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Reduces the copy for one read into s (see shape_sql). */
static int mirror_reduce(struct mirror *m, int64_t now_us, int window_days,
			 double thr, bool ws, struct shape *s)
{
	int64_t t0 = now_us - (int64_t)window_days * 86400 * 1000000;
	int ng = m->uuids.n, nmk = m->mkeys.pairs.n, nt = 0, rc = -1;
	int *tix = malloc((size_t)(m->names.n ? m->names.n : 1) * sizeof(int));
	int *gtype = malloc((size_t)(ng ? ng : 1) * sizeof(int));
	struct type_acc *types = NULL;
	long long *hosts = NULL; /* type << 32 | host, per GPU in window */
	size_t nhosts = 0, ngroups = 0, nel = 0;
	size_t *start = NULL;
	struct elem *el = NULL;
	double *tmp = NULL, *med = NULL;
	bool *flagged = NULL;

	if (!tix || !gtype)
		goto out;
	for (int i = 0; i < m->names.n; i++)
		tix[i] = -1;
	types = calloc((size_t)(ng ? ng : 1), sizeof(*types));
	hosts = malloc((size_t)(ng ? ng : 1) * sizeof(*hosts));
	flagged = calloc((size_t)(ng ? ng : 1), sizeof(*flagged));
	if (!types || !hosts || !flagged)
		goto out;
	/* the GPUs seen in the window, their types, and their values */
	for (int i = 0; i < ng; i++) {
		struct gpu *g = &m->gpus[i];
		struct latest *l = &g->latest[ws];
		gtype[i] = -1;
		if (!g->known || g->last_seen_us < t0)
			continue;
		if (tix[g->k] < 0) {
			types[nt].k = g->k;
			tix[g->k] = nt++;
		}
		gtype[i] = tix[g->k];
		types[gtype[i]].gpus++;
		types[gtype[i]].in_catalog |= g->in_catalog;
		hosts[nhosts++] = (long long)gtype[i] << 32 | g->host;
		if (l->present && l->measured_us >= t0)
			nel += (size_t)l->n;
	}
	ngroups = (size_t)nt * (size_t)(nmk ? nmk : 1);
	start = calloc(ngroups + 1, sizeof(*start));
	el = malloc((nel ? nel : 1) * sizeof(*el));
	tmp = malloc((nel ? nel : 1) * sizeof(*tmp));
	med = malloc((ngroups ? ngroups : 1) * sizeof(*med));
	if (!start || !el || !tmp || !med)
		goto out;
	/* counting sort of the values by group */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ng; i++) {
			struct latest *l = &m->gpus[i].latest[ws];
			if (gtype[i] < 0 || !l->present || l->measured_us < t0)
				continue;
			for (int j = 0; j < l->n; j++) {
				size_t gi = (size_t)gtype[i] * (size_t)nmk +
					    (size_t)l->mkey[j];
				if (pass == 0)
					start[gi + 1]++;
				else
					el[start[gi]++] =
					    (struct elem){.gpu = i, .j = j};
			}
		}
		if (pass == 0)
			for (size_t gi = 0; gi < ngroups; gi++)
				start[gi + 1] += start[gi];
		else /* start[gi] now holds group gi's end: shift back */
			for (size_t gi = ngroups; gi > 0; gi--)
				start[gi] = start[gi - 1];
	}
	start[0] = 0;
	/* per group: the median of the values and of the limits */
	for (size_t gi = 0; gi < ngroups; gi++) {
		size_t b = start[gi], n = start[gi + 1] - b, nl = 0;
		int unit = -1;
		double lim;
		if (!n)
			continue;
		for (size_t x = 0; x < n; x++) {
			struct latest *l = &m->gpus[el[b + x].gpu].latest[ws];
			int u = l->unit[el[b + x].j];
			tmp[x] = l->v[el[b + x].j];
			if (unit < 0 ||
			    strcmp(m->names.s[u], m->names.s[unit]) > 0)
				unit = u;
		}
		med[gi] = median_cont(tmp, n);
		for (size_t x = 0; x < n; x++) {
			struct latest *l = &m->gpus[el[b + x].gpu].latest[ws];
			if (!isnan(l->lim[el[b + x].j]))
				tmp[nl++] = l->lim[el[b + x].j];
		}
		lim = nl ? median_cont(tmp, nl) : NAN;
		put_text(s, P_M_K, m->names.s[types[gi / (size_t)nmk].k]);
		put_text(s, P_M_METRIC,
			 m->names.s[m->mkeys.by_id[gi % (size_t)nmk].metric]);
		put_text(s, P_M_DTYPE,
			 m->names.s[m->mkeys.by_id[gi % (size_t)nmk].dtype]);
		put_text(s, P_M_UNIT, m->names.s[unit]);
		put_num(s, P_M_MED, med[gi]);
		put_num(s, P_M_LIM, lim);
		put_int(s, P_M_N, (long long)n);
	}
	/* a GPU more than thr under its type's median (over, for latencies):
	 * only where two or more GPUs make the median */
	for (size_t gi = 0; gi < ngroups; gi++) {
		size_t b = start[gi], n = start[gi + 1] - b;
		const struct mkey *mk;
		const char *metric;
		bool latency;
		if (n < 2 || !(med[gi] > 0))
			continue;
		mk = &m->mkeys.by_id[gi % (size_t)nmk];
		metric = m->names.s[mk->metric];
		latency = strstr(metric, "latency") != NULL;
		for (size_t x = 0; x < n; x++) {
			struct gpu *g = &m->gpus[el[b + x].gpu];
			struct latest *l = &g->latest[ws];
			double v = l->v[el[b + x].j];
			if (latency ? !(v > (1 + thr) * med[gi])
				    : !(v < (1 - thr) * med[gi]))
				continue;
			flagged[el[b + x].gpu] = true;
			put_text(s, P_F_UUID, m->uuids.s[el[b + x].gpu]);
			put_text(s, P_F_METRIC, metric);
			put_text(s, P_F_DTYPE, m->names.s[mk->dtype]);
			put_text(s, P_F_UNIT, m->names.s[l->unit[el[b + x].j]]);
			put_num(s, P_F_V, v);
			put_num(s, P_F_MED, med[gi]);
		}
	}
	/* the other flags, the degraded GPUs, the types */
	for (int i = 0; i < ng; i++) {
		struct gpu *g = &m->gpus[i];
		struct latest *l = &g->latest[ws];
		bool slow = l->present && l->measured_us >= t0 && l->slowdowns;
		if (gtype[i] < 0)
			continue;
		if (g->pcie) {
			put_text(s, P_O_UUID, m->uuids.s[i]);
			put_text(s, P_O_WHY, g->pcie);
		}
		if (slow) {
			put_text(s, P_O_UUID, m->uuids.s[i]);
			put_text(s, P_O_WHY, l->slowdowns);
		}
		if (!(flagged[i] || g->pcie || slow))
			continue;
		put_text(s, P_D_UUID, m->uuids.s[i]);
		put_text(s, P_D_HOST, m->names.s[g->host]);
		put_int(s, P_D_INDEX, g->gpu_index);
		put_text(s, P_D_K, m->names.s[g->k]);
	}
	qsort(hosts, nhosts, sizeof(*hosts), cmp_ll);
	for (int t = 0; t < nt; t++) {
		long long nodes = 0;
		for (size_t x = 0; x < nhosts; x++)
			if (hosts[x] >> 32 == t &&
			    (x == 0 || hosts[x] != hosts[x - 1]))
				nodes++;
		put_text(s, P_T_K, m->names.s[types[t].k]);
		put_text(s, P_T_CAT, types[t].in_catalog ? "t" : "f");
		put_int(s, P_T_GPUS, types[t].gpus);
		put_int(s, P_T_NODES, nodes);
	}
	rc = 0;
out:
	free(tix);
	free(gtype);
	free(types);
	free(hosts);
	free(start);
	free(el);
	free(tmp);
	free(med);
	free(flagged);
	return rc;
}

enum store_status fleet_mirror_fleet(struct db_pool *pool, int window_days,
				     double threshold, bool with_synthetic,
				     json_t **out, struct store_err *e)
{
	struct mirror *m = &the_mirror;
	struct shape s;
	char days[16], thr[32];
	const char *params[P_COUNT] = {days, thr};
	char *lits[P_COUNT] = {NULL};
	int64_t now_us = 0;
	PGresult *r = NULL;
	enum store_status st;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	memset(e, 0, sizeof(*e));
	snprintf(days, sizeof(days), "%d", window_days);
	/* the threshold as the SQL took it: six decimals */
	snprintf(thr, sizeof(thr), "%.6f", threshold);
	pthread_mutex_lock(&m->mu);
	st = copy_sync(pool, &m->pos, m, &mirror_ops, &now_us, e);
	if (st == STORE_OK &&
	    mirror_reduce(m, now_us, window_days, strtod(thr, NULL),
			  with_synthetic, &s)) {
		mirror_clear(m);
		st = e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
	}
	pthread_mutex_unlock(&m->mu);
	if (st != STORE_OK)
		goto out;
	for (int p = P_T_K; p < P_COUNT; p++) {
		if (!s.a[p].len)
			sbuf_put(&s.a[p], "{");
		sbuf_put(&s.a[p], "}");
		if (!(lits[p] = sbuf_finish(&s.a[p]))) {
			st = e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "out of memory");
			goto out;
		}
		params[p] = lits[p];
	}
	if ((st = db_exec(pool, shape_sql, P_COUNT, params, 1, &r, e)) ==
	    STORE_OK)
		st = db_one_json(r, out, e);
out:
	for (int p = 0; p < P_COUNT; p++) {
		free(lits[p]);
		free(s.a[p].p);
	}
	return st;
}

/* ---- calibration: rollup_type_runs ----------------------------------- */

/* One rollup_type_runs row: a run's value per metric and dtype for one
 * GPU type. */
struct trun {
	bool live;
	int type, key; /* uuids id: run_id|gpu_type, the row's identity */
	bool synthetic;
	int64_t measured_us;
	int n;
	double *v; /* n, one allocation with mkey (owned through v) */
	int *mkey;
};

struct cmirror {
	pthread_mutex_t mu;
	struct copy_pos pos;
	int window_days; /* rows kept: the last this many days */
	char days[16];	 /* window_days, the statement's parameter */
	struct strtab keys, names;
	struct mkeytab mkeys;
	int *row_of_key; /* by keys id: index into runs + 1, 0 = none */
	int row_of_key_cap;
	struct trun *runs;
	int nruns, runs_cap, dead;
};

static struct cmirror the_cmirror = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void cmirror_clear(void *mv)
{
	struct cmirror *m = mv;

	for (int i = 0; i < m->nruns; i++)
		free(m->runs[i].v);
	free(m->runs);
	free(m->row_of_key);
	strtab_free(&m->keys);
	strtab_free(&m->names);
	mkeytab_free(&m->mkeys);
	m->runs = NULL;
	m->row_of_key = NULL;
	m->nruns = m->runs_cap = m->dead = 0;
	m->row_of_key_cap = 0;
	copy_pos_clear(&m->pos); /* the window asked for stays */
}

/* The window's rows ($2 days) written since the copy's snapshot ($1),
 * or all of them (a whole load), and the snapshot's xmin ('S'). */
#define CALIB_SYNC_SQL                                                         \
	"SELECT 'S', pg_snapshot_xmin(pg_current_snapshot())::text,"           \
	" (SELECT epoch FROM fleet_mirror_epoch)::text,"                       \
	" (extract(epoch FROM now()) * 1000000)::bigint::text,"                \
	" NULL, NULL, NULL, NULL"                                              \
	" UNION ALL"                                                           \
	" SELECT 'R', r.gpu_type, r.run_id::text,"                             \
	"  (extract(epoch FROM r.measured_at) * 1000000)::bigint::text,"       \
	"  r.synthetic::text, r.metrics::text, r.dtypes::text, r.v::text"      \
	" FROM rollup_type_runs r"                                             \
	" WHERE r.measured_at > now() - make_interval(days => $2::int)"
static const char calib_load_sql[] = CALIB_SYNC_SQL " AND $1::xid8 IS NOT NULL";
static const char calib_sync_sql[] =
    CALIB_SYNC_SQL " AND r.change_xid >= $1::xid8";

static void trun_free(struct trun *t)
{
	free(t->v);
	t->mkey = NULL;
	t->v = NULL;
	t->live = false;
}

static int trun_set(struct cmirror *m, struct trun *t, PGresult *r, int i)
{
	char *cols[3] = {NULL};
	char **el = NULL;
	size_t st = 0;
	int n, rc = -1;

	trun_free(t);
	if ((n = split_cols(r, i, 5, 3, cols, &el, &st)) < 0)
		goto out;
	/* one block: v[n] then mkey[n] */
	if (!(t->v =
		  malloc((size_t)(n ? n : 1) * (sizeof(double) + sizeof(int)))))
		goto out;
	t->mkey = (int *)(void *)(t->v + n);
	t->n = n;
	for (int j = 0; j < n; j++) {
		if (!el[j] || !el[st + j] ||
		    (t->mkey[j] = mkeytab_id(&m->mkeys, &m->names, el[j],
					     el[st + j])) < 0 ||
		    parse_double(el[2 * st + j], &t->v[j])) {
			free(t->v);
			t->v = NULL;
			t->mkey = NULL;
			goto out;
		}
	}
	if ((t->type = strtab_id(&m->names, PQgetvalue(r, i, 1))) < 0)
		goto out;
	t->synthetic = !strcmp(PQgetvalue(r, i, 4), "true");
	t->measured_us = strtoll(PQgetvalue(r, i, 3), NULL, 10);
	t->live = true;
	rc = 0;
out:
	for (int c = 0; c < 3; c++)
		free(cols[c]);
	free(el);
	return rc;
}

/* Drops the rows out of the loaded window; when half the rows are gone,
 * packs the rest and forgets the keys of the dropped (the key table would
 * otherwise grow with every run ever seen). */
static int cmirror_evict(void *mv, int64_t now_us)
{
	struct cmirror *m = mv;
	int64_t t0 = now_us - (int64_t)m->window_days * 86400 * 1000000;
	struct strtab keys = {0};
	int live = 0;

	for (int i = 0; i < m->nruns; i++) {
		struct trun *t = &m->runs[i];
		if (t->live && t->measured_us <= t0) {
			trun_free(t);
			m->row_of_key[t->key] = 0;
			m->dead++;
		}
	}
	if (m->dead * 2 <= m->nruns)
		return 0;
	for (int i = 0; i < m->nruns; i++) {
		struct trun *t = &m->runs[i];
		int key;
		if (!t->live)
			continue;
		if ((key = strtab_id(&keys, m->keys.s[t->key])) < 0) {
			strtab_free(&keys);
			return -1;
		}
		t->key = key;
		m->runs[live++] = *t;
	}
	strtab_free(&m->keys);
	m->keys = keys;
	memset(m->row_of_key, 0, (size_t)m->row_of_key_cap * sizeof(int));
	for (int i = 0; i < live; i++)
		m->row_of_key[m->runs[i].key] = i + 1;
	m->nruns = live;
	m->dead = 0;
	return 0;
}

/* The row of key (run_id|gpu_type), appended when absent. */
static struct trun *cmirror_find(struct cmirror *m, const char *run_id,
				 const char *gpu_type)
{
	char key[512];
	int id;

	snprintf(key, sizeof(key), "%s|%s", run_id, gpu_type);
	if ((id = strtab_id(&m->keys, key)) < 0)
		return NULL;
	if (grow(&m->row_of_key, &m->row_of_key_cap, sizeof(int), id, 1024))
		return NULL;
	if (!m->row_of_key[id]) {
		if (grow(&m->runs, &m->runs_cap, sizeof(*m->runs), m->nruns,
			 1024))
			return NULL;
		memset(&m->runs[m->nruns], 0, sizeof(m->runs[0]));
		m->runs[m->nruns].key = id;
		m->row_of_key[id] = ++m->nruns;
	}
	return &m->runs[m->row_of_key[id] - 1];
}

static int cmirror_row(void *mv, PGresult *r, int i)
{
	struct cmirror *m = mv;
	struct trun *t;

	if (PQgetvalue(r, i, 0)[0] != 'R')
		return 0;
	t = cmirror_find(m, PQgetvalue(r, i, 2), PQgetvalue(r, i, 1));
	return !t || trun_set(m, t, r, i) ? -1 : 0;
}

static enum store_status cmirror_fetch(void *mv, struct db_pool *pool,
				       bool load, PGresult **out,
				       struct store_err *e)
{
	struct cmirror *m = mv;
	const char *params[2] = {m->pos.xmin, m->days};

	if (load)
		return db_exec(pool, calib_load_sql, 2, params, 1, out, e);
	return db_exec(pool, calib_sync_sql, 2, params, 1, out, e);
}

static const struct copy_ops cmirror_ops = {
    .what = "calibration copy",
    .clear = cmirror_clear,
    .fetch = cmirror_fetch,
    .row = cmirror_row,
    .done = cmirror_evict,
};

struct cval {
	int mkey;
	double v;
};

/* How far ahead of the server's clock a run's measured time may be and
 * still calibrate: a probe node whose clock runs ahead dates its results
 * there (they are stored so, partitioned by that date), and one dated
 * years ahead would otherwise stay "in the window" until then. A day
 * covers skewed clocks and time zones written wrong. */
#define CALIB_AHEAD_US ((int64_t)86400 * 1000000)

enum store_status fleet_mirror_type_medians(
    struct db_pool *pool, const char *gpu_type, int window_days,
    bool with_synthetic, double lo, double hi,
    void (*fn)(void *ctx, const char *metric, const char *dtype, double median,
	       long long n),
    void *ctx, long long *runs, struct store_err *e)
{
	struct cmirror *m = &the_cmirror;
	int64_t now_us = 0, t0, t1;
	struct cval *vals = NULL;
	double *tmp = NULL;
	size_t nv = 0, cap = 0, nk, *start = NULL;
	int type = -1;
	enum store_status st;

	*runs = 0;
	memset(e, 0, sizeof(*e));
	pthread_mutex_lock(&m->mu);
	/* a wider window than kept: load again, that wide */
	if (m->window_days < window_days) {
		cmirror_clear(m);
		m->window_days = window_days;
		snprintf(m->days, sizeof(m->days), "%d", window_days);
	}
	st = copy_sync(pool, &m->pos, m, &cmirror_ops, &now_us, e);
	if (st != STORE_OK)
		goto out;
	t0 = now_us - (int64_t)window_days * 86400 * 1000000;
	t1 = now_us + CALIB_AHEAD_US;
	type = strtab_find(&m->names, gpu_type);
	for (int i = 0; type >= 0 && i < m->nruns; i++) {
		struct trun *t = &m->runs[i];
		bool any = false;
		if (!t->live || t->type != type || t->measured_us <= t0 ||
		    t->measured_us > t1 || (t->synthetic && !with_synthetic))
			continue;
		for (int j = 0; j < t->n; j++) {
			if (!(t->v[j] >= lo && t->v[j] <= hi))
				continue;
			if (nv == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				struct cval *a = realloc(vals, nc * sizeof(*a));
				if (!a)
					goto oom;
				vals = a;
				cap = nc;
			}
			vals[nv++] = (struct cval){t->mkey[j], t->v[j]};
			any = true;
		}
		*runs += any;
	}
	/* counting sort by metric and dtype, then each group's median */
	nk = (size_t)m->mkeys.pairs.n;
	if (!(tmp = malloc((nv ? nv : 1) * sizeof(*tmp))) ||
	    !(start = calloc(nk + 1, sizeof(*start))))
		goto oom;
	for (size_t x = 0; x < nv; x++)
		start[vals[x].mkey + 1]++;
	for (size_t k = 0; k < nk; k++)
		start[k + 1] += start[k];
	for (size_t x = 0; x < nv; x++)
		tmp[start[vals[x].mkey]++] = vals[x].v;
	for (size_t k = 0, b = 0; k < nk; b = start[k++])
		if (start[k] > b)
			fn(ctx, m->names.s[m->mkeys.by_id[k].metric],
			   m->names.s[m->mkeys.by_id[k].dtype],
			   median_cont(tmp + b, start[k] - b),
			   (long long)(start[k] - b));
	goto out;
oom:
	cmirror_clear(m);
	st = e->status = STORE_ERROR;
	snprintf(e->message, sizeof(e->message), "out of memory");
out:
	pthread_mutex_unlock(&m->mu);
	free(vals);
	free(tmp);
	free(start);
	return st;
}

/* ---- the capacity report's weeks: each node's latest run a week ------ */

/* A run's rollup row of one GPU (rollup_gpu_values, 0020): its non-NULL
 * v_week values. */
struct wgpu {
	int uuid; /* wmirror uuids id */
	bool slow;
	int n;
	double *v; /* n, one allocation with mkey (owned through v) */
	int *mkey;
};

/* A run's rollup rows, shared by the slots whose winner it is. */
struct wdata {
	int refs;
	int ngpu, cap;
	struct wgpu *g;
};

/* The latest ok or partial run of a week and node. */
struct wrun {
	int run; /* wmirror runids id, -1: none */
	int64_t received_us;
	bool synthetic;
	struct wdata *d;
};

/* A week (the days since 1970-01-01 of its Monday, UTC) and node: [0] its
 * latest non-synthetic run, [1] its latest run. */
struct wslot {
	bool live;
	int wk, host;
	struct wrun r[2];
};

/* A node_gpus row as the report reads it. */
struct wgpuinfo {
	bool known, pcie;
	int k; /* names id */
};

/* A run of the current fetch ('R' and its 'W' rows). */
struct wpend {
	bool has_r, ok, synthetic;
	int host;
	int64_t received_us;
	struct wdata *d;
};

struct wmirror {
	pthread_mutex_t mu;
	struct copy_pos pos;
	int window_days; /* runs kept: received in the last this many days */
	char days[16];
	struct strtab uuids, names, slotkeys, runids, pendids;
	struct mkeytab mkeys;
	struct wgpuinfo *gi; /* by uuids id */
	int gi_cap;
	struct wslot *slots; /* by slotkeys id */
	int slots_cap;
	int *run_slot; /* by runids id: the slot it wins + 1, 0 = none */
	int run_slot_cap;
	struct wpend *pend; /* by pendids id */
	int pend_cap;
};

static struct wmirror the_wmirror = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void wdata_unref(struct wdata *d)
{
	if (!d || --d->refs > 0)
		return;
	for (int i = 0; i < d->ngpu; i++)
		free(d->g[i].v);
	free(d->g);
	free(d);
}

static void wpend_clear(struct wmirror *m)
{
	for (int i = 0; i < m->pendids.n; i++)
		wdata_unref(m->pend[i].d);
	free(m->pend);
	m->pend = NULL;
	m->pend_cap = 0;
	strtab_free(&m->pendids);
}

static void wmirror_clear(void *mv)
{
	struct wmirror *m = mv;

	wpend_clear(m);
	for (int i = 0; i < m->slotkeys.n; i++) {
		wdata_unref(m->slots[i].r[0].d);
		wdata_unref(m->slots[i].r[1].d);
	}
	free(m->slots);
	free(m->gi);
	free(m->run_slot);
	m->slots = NULL;
	m->gi = NULL;
	m->run_slot = NULL;
	m->slots_cap = m->gi_cap = m->run_slot_cap = 0;
	strtab_free(&m->uuids);
	strtab_free(&m->names);
	strtab_free(&m->slotkeys);
	strtab_free(&m->runids);
	mkeytab_free(&m->mkeys);
	copy_pos_clear(&m->pos); /* the window asked for stays */
}

/* Rows written since the copy's snapshot ($1), and the snapshot's xmin
 * ('S'): node_gpus ('G': the type key and whether the PCIe link trained
 * below its maximum, as the report's statement read them), runs ('R':
 * whether ok or partial) and the rollup rows of the ok or partial ones
 * ('W': v_week and whether clock slowdowns fired). A whole load ($1 0)
 * reads only each week's and node's latest runs, real and any, received
 * in the last $2 days; a later read every run written since (whatever it
 * was received: an UPDATE can move a run out of its week). */
/* clang-format off */
#define WEEK_SYNC_TAIL                                                         \
	" SELECT 'S', pg_snapshot_xmin(pg_current_snapshot())::text,"          \
	" (SELECT epoch FROM fleet_mirror_epoch)::text,"                       \
	" (extract(epoch FROM now()) * 1000000)::bigint::text, NULL, NULL,"    \
	" NULL"                                                                \
	" UNION ALL"                                                           \
	" SELECT 'G', g.uuid, coalesce(g.gpu_type, 'nvml:' || g.name),"        \
	"  coalesce(" PCIE_NUM("gen_current") " < " PCIE_NUM("gen_max")       \
	"   OR " PCIE_NUM("width_current") " < " PCIE_NUM("width_max")         \
	"   , false)::text,"                                                   \
	"  NULL, NULL, NULL"                                                   \
	" FROM node_gpus g WHERE g.change_xid >= $1::xid8"                     \
	" UNION ALL"                                                           \
	" SELECT 'R', rr.run_id::text, rr.hostname,"                           \
	"  (extract(epoch FROM rr.received_at) * 1000000)::bigint::text,"      \
	"  (rr.status IN ('ok', 'partial'))::text, rr.synthetic::text, NULL"   \
	" FROM rr"                                                             \
	" UNION ALL"                                                           \
	" SELECT 'W', x.run_id::text, x.gpu_uuid, x.metrics::text,"            \
	"  x.dtypes::text, x.v_week::text,"                                    \
	"  (cardinality(x.slowdowns) > 0)::text"                               \
	" FROM rollup_gpu_values x WHERE x.run_id IN (SELECT run_id FROM rr"   \
	"  WHERE status IN ('ok', 'partial'))"
/* clang-format on */
static const char week_load_sql[] =
    /* clang-format off */
    "WITH rr AS MATERIALIZED (SELECT DISTINCT ON (date_trunc('week',"
    "  r.received_at AT TIME ZONE 'UTC'), r.hostname, s.ws) r.run_id,"
    "  r.hostname, r.received_at, r.status, r.synthetic"
    " FROM benchmark_runs r, (VALUES (false), (true)) s (ws)"
    " WHERE r.received_at >= now() - make_interval(days => $2::int)"
    "  AND r.status IN ('ok', 'partial') AND (s.ws OR NOT r.synthetic)"
    " ORDER BY date_trunc('week', r.received_at AT TIME ZONE 'UTC'),"
    "  r.hostname, s.ws, r.received_at DESC)"
    /* clang-format on */
    WEEK_SYNC_TAIL;
static const char week_sync_sql[] =
    /* clang-format off */
    "WITH rr AS MATERIALIZED (SELECT r.run_id, r.hostname, r.received_at,"
    "  r.status, r.synthetic FROM benchmark_runs r"
    " WHERE r.change_xid >= $1::xid8 AND $2::int IS NOT NULL)"
    /* clang-format on */
    WEEK_SYNC_TAIL;

static enum store_status wmirror_fetch(void *mv, struct db_pool *pool,
				       bool load, PGresult **out,
				       struct store_err *e)
{
	struct wmirror *m = mv;
	const char *params[2] = {m->pos.xmin, m->days};

	if (load)
		return db_exec(pool, week_load_sql, 2, params, 1, out, e);
	return db_exec(pool, week_sync_sql, 2, params, 1, out, e);
}

/* The pending run of run_id, added when absent. */
static struct wpend *wpend_get(struct wmirror *m, const char *run_id)
{
	int id = strtab_id(&m->pendids, run_id);

	if (id < 0 || grow(&m->pend, &m->pend_cap, sizeof(*m->pend), id, 64))
		return NULL;
	if (!m->pend[id].d) {
		if (!(m->pend[id].d = calloc(1, sizeof(struct wdata))))
			return NULL;
		m->pend[id].d->refs = 1;
	}
	return &m->pend[id];
}

/* One 'W' row into its run's pending data. */
static int wgpu_add(struct wmirror *m, struct wdata *d, PGresult *r, int i)
{
	char *cols[3] = {NULL};
	char **el = NULL;
	size_t st = 0;
	struct wgpu *g;
	int n, rc = -1;

	if (grow(&d->g, &d->cap, sizeof(*d->g), d->ngpu, 8))
		return -1;
	g = &d->g[d->ngpu];
	memset(g, 0, sizeof(*g));
	if ((n = split_cols(r, i, 3, 3, cols, &el, &st)) < 0 ||
	    (g->uuid = strtab_id(&m->uuids, PQgetvalue(r, i, 2))) < 0)
		goto out;
	if (!(g->v =
		  malloc((size_t)(n ? n : 1) * (sizeof(double) + sizeof(int)))))
		goto out;
	g->mkey = (int *)(void *)(g->v + n);
	for (int j = 0; j < n; j++) {
		if (!el[2 * st + j]) /* NULL: nothing at that size */
			continue;
		if (!el[j] || !el[st + j] ||
		    (g->mkey[g->n] = mkeytab_id(&m->mkeys, &m->names, el[j],
						el[st + j])) < 0 ||
		    parse_double(el[2 * st + j], &g->v[g->n]) ||
		    isnan(g->v[g->n]))
			goto out;
		g->n++;
	}
	g->slow = !strcmp(PQgetvalue(r, i, 6), "true");
	d->ngpu++;
	rc = 0;
out:
	if (rc) {
		free(g->v);
		g->v = NULL;
	}
	for (int c = 0; c < 3; c++)
		free(cols[c]);
	free(el);
	return rc;
}

static int wmirror_row(void *mv, PGresult *r, int i)
{
	struct wmirror *m = mv;
	char kind = PQgetvalue(r, i, 0)[0];
	struct wpend *p;

	if (kind == 'G') {
		int id = strtab_id(&m->uuids, PQgetvalue(r, i, 1));
		if (id < 0 ||
		    grow(&m->gi, &m->gi_cap, sizeof(*m->gi), id, 256) ||
		    (m->gi[id].k = strtab_id(&m->names, PQgetvalue(r, i, 2))) <
			0)
			return -1;
		m->gi[id].known = true;
		m->gi[id].pcie = !strcmp(PQgetvalue(r, i, 3), "true");
		return 0;
	}
	if (kind != 'R' && kind != 'W')
		return 0;
	if (!(p = wpend_get(m, PQgetvalue(r, i, 1))))
		return -1;
	if (kind == 'W')
		return wgpu_add(m, p->d, r, i);
	if ((p->host = strtab_id(&m->names, PQgetvalue(r, i, 2))) < 0)
		return -1;
	p->received_us = strtoll(PQgetvalue(r, i, 3), NULL, 10);
	p->ok = !strcmp(PQgetvalue(r, i, 4), "true");
	p->synthetic = !strcmp(PQgetvalue(r, i, 5), "true");
	p->has_r = true;
	return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* date_trunc('week', t AT TIME ZONE 'UTC'), in days since 1970-01-01 (a
 * Thursday: Monday is three days before). */
static int week_of(int64_t us)
{
	int64_t day = floor_div(us, (int64_t)86400 * 1000000);

	return (int)(day - (((day + 3) % 7) + 7) % 7);
}

/* The slot of week wk and node host, added when absent; -1: out of
 * memory. */
static int wslot_id(struct wmirror *m, int wk, int host)
{
	char key[48];
	int id;

	snprintf(key, sizeof(key), "%d|%d", wk, host);
	if ((id = strtab_id(&m->slotkeys, key)) < 0 ||
	    grow(&m->slots, &m->slots_cap, sizeof(*m->slots), id, 1024))
		return -1;
	if (!m->slots[id].live) {
		m->slots[id] = (struct wslot){.live = true,
					      .wk = wk,
					      .host = host,
					      .r = {{.run = -1}, {.run = -1}}};
	}
	return id;
}

/* Run x no longer wins r: its slot is forgotten when it wins neither. */
static void wrun_drop(struct wmirror *m, struct wslot *s, int ws)
{
	int run = s->r[ws].run;

	wdata_unref(s->r[ws].d);
	s->r[ws] = (struct wrun){.run = -1};
	if (run >= 0 && s->r[!ws].run != run)
		m->run_slot[run] = 0;
}

/* One fetched run into the slots. 1: a run the copy holds changed its
 * week, node, time, kind or status (what it displaced is not held: load
 * again); -1: out of memory. */
static int wpend_apply(struct wmirror *m, const char *run_id, struct wpend *p,
		       int64_t t_keep)
{
	int run = strtab_find(&m->runids, run_id), sid;
	struct wslot *s;

	if (run >= 0 && m->run_slot[run]) {
		s = &m->slots[m->run_slot[run] - 1];
		for (int ws = 0; ws < 2; ws++) {
			struct wrun *w = &s->r[ws];
			if (w->run != run)
				continue;
			if (!p->ok || s->wk != week_of(p->received_us) ||
			    s->host != p->host ||
			    w->received_us != p->received_us ||
			    w->synthetic != p->synthetic)
				return 1;
			/* the same run again: its rollup rows as they are now
			 */
			wdata_unref(w->d);
			w->d = p->d;
			p->d->refs++;
		}
		return 0;
	}
	if (!p->ok || p->received_us < t_keep)
		return 0;
	if ((sid = wslot_id(m, week_of(p->received_us), p->host)) < 0)
		return -1;
	s = &m->slots[sid];
	for (int ws = 0; ws < 2; ws++) {
		struct wrun *w = &s->r[ws];
		if (ws == 0 && p->synthetic)
			continue;
		/* the latest received wins (the statement's DISTINCT ON left
		 * equal times to chance; here the larger run id) */
		if (w->run >= 0 && (w->received_us > p->received_us ||
				    (w->received_us == p->received_us &&
				     strcmp(m->runids.s[w->run], run_id) > 0)))
			continue;
		if (run < 0) {
			if ((run = strtab_id(&m->runids, run_id)) < 0 ||
			    grow(&m->run_slot, &m->run_slot_cap, sizeof(int),
				 run, 1024))
				return -1;
		}
		wrun_drop(m, s, ws);
		*w = (struct wrun){.run = run,
				   .received_us = p->received_us,
				   .synthetic = p->synthetic,
				   .d = p->d};
		p->d->refs++;
		m->run_slot[run] = sid + 1;
	}
	return 0;
}

/* Forgets the slots whose runs are all out of the kept window; when most
 * keys are dead, packs the slot and run tables (they would otherwise grow
 * with every week and run ever seen). -1: out of memory. */
static int wmirror_evict(struct wmirror *m, int64_t t_keep)
{
	struct strtab keys = {0}, runs = {0};
	struct wslot *slots = NULL;
	int *run_slot = NULL, nlive = 0, slots_cap = 0, run_slot_cap = 0;

	for (int i = 0; i < m->slotkeys.n; i++) {
		struct wslot *s = &m->slots[i];
		if (!s->live)
			continue;
		for (int ws = 0; ws < 2; ws++)
			if (s->r[ws].run >= 0 && s->r[ws].received_us < t_keep)
				wrun_drop(m, s, ws);
		if (s->r[0].run < 0 && s->r[1].run < 0)
			s->live = false;
		else
			nlive++;
	}
	if (m->slotkeys.n < 1024 || nlive * 2 >= m->slotkeys.n)
		return 0;
	for (int i = 0; i < m->slotkeys.n; i++) {
		struct wslot s = m->slots[i];
		int id;
		if (!s.live)
			continue;
		if ((id = strtab_id(&keys, m->slotkeys.s[i])) < 0 ||
		    grow(&slots, &slots_cap, sizeof(*slots), id, 1024))
			goto oom;
		for (int ws = 0; ws < 2; ws++) {
			int run;
			if (s.r[ws].run < 0)
				continue;
			if ((run = strtab_id(&runs, m->runids.s[s.r[ws].run])) <
				0 ||
			    grow(&run_slot, &run_slot_cap, sizeof(int), run,
				 1024))
				goto oom;
			run_slot[run] = id + 1;
			s.r[ws].run = run;
		}
		slots[id] = s;
	}
	free(m->slots);
	free(m->run_slot);
	strtab_free(&m->slotkeys);
	strtab_free(&m->runids);
	m->slotkeys = keys;
	m->runids = runs;
	m->slots = slots;
	m->slots_cap = slots_cap;
	m->run_slot = run_slot;
	m->run_slot_cap = run_slot_cap;
	return 0;
oom:
	strtab_free(&keys);
	strtab_free(&runs);
	free(slots);
	free(run_slot);
	return -1;
}

static int wmirror_done(void *mv, int64_t now_us)
{
	struct wmirror *m = mv;
	int64_t t_keep = now_us - (int64_t)m->window_days * 86400 * 1000000;
	int rc = 0;

	for (int i = 0; i < m->pendids.n && !rc; i++)
		if (m->pend[i].has_r)
			rc = wpend_apply(m, m->pendids.s[i], &m->pend[i],
					 t_keep);
	wpend_clear(m);
	return rc ? rc : wmirror_evict(m, t_keep);
}

static const struct copy_ops wmirror_ops = {
    .what = "capacity weeks copy",
    .clear = wmirror_clear,
    .fetch = wmirror_fetch,
    .row = wmirror_row,
    .done = wmirror_done,
};

/* A GPU of a run in the window: where its week's values group. */
struct went {
	int week, type; /* indexes into the read's weeks and types */
	int uuid;
	bool bad;
	const struct wgpu *g;
};

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_went(const void *a, const void *b)
{
	const struct went *x = a, *y = b;

	if (x->week != y->week)
		return (x->week > y->week) - (x->week < y->week);
	return (x->uuid > y->uuid) - (x->uuid < y->uuid);
}

/* The weekly table for one read (see fleet_mirror_weeks()) into lits. */
static int wmirror_reduce(struct wmirror *m, int64_t now_us, int window_days,
			  double thr, bool ws, struct sbuf lits[4])
{
	int64_t t0 = now_us - (int64_t)window_days * 86400 * 1000000;
	int nw = 0, nt = 0, nmk = m->mkeys.pairs.n, rc = -1;
	int *weeks = NULL, *tix = NULL, *types = NULL;
	struct went *en = NULL;
	size_t nen = 0, nval = 0, ngroups, *start = NULL;
	double *vals = NULL, *med = NULL;
	long long *seen = NULL, *healthy = NULL;

	/* the window's runs' GPUs that node_gpus knows */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < m->slotkeys.n; i++) {
			const struct wslot *s = &m->slots[i];
			const struct wrun *w = &s->r[ws];
			if (!s->live || w->run < 0 || w->received_us < t0)
				continue;
			for (int j = 0; j < w->d->ngpu; j++) {
				const struct wgpu *g = &w->d->g[j];
				const struct wgpuinfo *gi =
				    g->uuid < m->gi_cap ? &m->gi[g->uuid]
							: NULL;
				if (!gi || !gi->known)
					continue;
				if (pass == 1)
					en[nen] = (struct went){
					    .week = s->wk,
					    .type = gi->k,
					    .uuid = g->uuid,
					    .bad = gi->pcie || g->slow,
					    .g = g};
				else
					nval += (size_t)g->n;
				nen++;
			}
		}
		if (pass == 0) {
			en = malloc((nen ? nen : 1) * sizeof(*en));
			if (!en)
				goto out;
			nen = 0;
		}
	}
	/* weeks and types by index */
	weeks = malloc((nen ? nen : 1) * sizeof(*weeks));
	tix = malloc((size_t)(m->names.n ? m->names.n : 1) * sizeof(*tix));
	types = malloc((size_t)(m->names.n ? m->names.n : 1) * sizeof(*types));
	if (!weeks || !tix || !types)
		goto out;
	for (size_t x = 0; x < nen; x++)
		weeks[x] = en[x].week;
	qsort(weeks, nen, sizeof(*weeks), cmp_int);
	for (size_t x = 0; x < nen; x++)
		if (x == 0 || weeks[x] != weeks[nw - 1])
			weeks[nw++] = weeks[x];
	for (int i = 0; i < m->names.n; i++)
		tix[i] = -1;
	for (size_t x = 0; x < nen; x++) {
		int lo = 0, hi = nw - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (weeks[mid] < en[x].week)
				lo = mid + 1;
			else
				hi = mid;
		}
		en[x].week = lo;
		if (tix[en[x].type] < 0) {
			types[nt] = en[x].type;
			tix[en[x].type] = nt++;
		}
		en[x].type = tix[en[x].type];
	}
	/* each week's, type's, metric's and dtype's values, by counting sort
	 * (the group of entry x's value j is ((week * nt) + type) * nmk +
	 * mkey) */
	ngroups = (size_t)nw * (size_t)nt * (size_t)(nmk ? nmk : 1);
	start = calloc(ngroups + 2, sizeof(*start));
	vals = malloc((nval ? nval : 1) * sizeof(*vals));
	med = malloc((ngroups ? ngroups : 1) * sizeof(*med));
	if (!start || !vals || !med)
		goto out;
#define WGROUP(e, j)                                                           \
	((((size_t)(e)->week * (size_t)nt) + (size_t)(e)->type) *              \
	     (size_t)nmk +                                                     \
	 (size_t)(e)->g->mkey[j])
	for (size_t x = 0; x < nen; x++)
		for (int j = 0; j < en[x].g->n; j++)
			start[WGROUP(&en[x], j) + 2]++;
	for (size_t gi = 0; gi < ngroups; gi++)
		start[gi + 2] += start[gi + 1];
	for (size_t x = 0; x < nen; x++)
		for (int j = 0; j < en[x].g->n; j++)
			vals[start[WGROUP(&en[x], j) + 1]++] = en[x].g->v[j];
	/* start[gi] .. start[gi + 1]: group gi; its median (percentile_cont,
	 * as the statement took it) */
	for (size_t gi = 0; gi < ngroups; gi++)
		if (start[gi + 1] > start[gi])
			med[gi] = median_cont(vals + start[gi],
					      start[gi + 1] - start[gi]);
	/* degraded: a value more than thr under its group's median (over,
	 * for latencies) where two or more values make it, a slowdown, or
	 * the PCIe link */
	for (size_t x = 0; x < nen; x++) {
		struct went *e = &en[x];
		for (int j = 0; j < e->g->n && !e->bad; j++) {
			size_t gi = WGROUP(e, j);
			double v = e->g->v[j];
			const char *metric =
			    m->names.s[m->mkeys.by_id[e->g->mkey[j]].metric];
			if (start[gi + 1] - start[gi] < 2 || !(med[gi] > 0))
				continue;
			if (strstr(metric, "latency") ? v > (1 + thr) * med[gi]
						      : v < (1 - thr) * med[gi])
				e->bad = true;
		}
	}
#undef WGROUP
	/* seen and healthy: distinct GPUs per week (a GPU in two nodes' runs
	 * of a week counts once, degraded if either run says so) */
	qsort(en, nen, sizeof(*en), cmp_went);
	seen = calloc((size_t)nw * (size_t)nt + 1, sizeof(*seen));
	healthy = calloc((size_t)nw * (size_t)nt + 1, sizeof(*healthy));
	if (!seen || !healthy)
		goto out;
	for (size_t x = 0; x < nen;) {
		size_t y = x;
		bool bad = false;
		for (; y < nen && en[y].week == en[x].week &&
		       en[y].uuid == en[x].uuid;
		     y++)
			bad |= en[y].bad;
		seen[en[x].week * nt + en[x].type]++;
		healthy[en[x].week * nt + en[x].type] += !bad;
		x = y;
	}
	for (int w = 0; w < nw; w++) {
		time_t t = (time_t)weeks[w] * 86400;
		struct tm tm;
		char day[16], num[24];
		gmtime_r(&t, &tm);
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
		for (int k = 0; k < nt; k++) {
			if (!seen[w * nt + k])
				continue;
			db_array_elem(&lits[0], day);
			db_array_elem(&lits[1], m->names.s[types[k]]);
			snprintf(num, sizeof(num), "%lld", seen[w * nt + k]);
			db_array_elem(&lits[2], num);
			snprintf(num, sizeof(num), "%lld", healthy[w * nt + k]);
			db_array_elem(&lits[3], num);
		}
	}
	rc = 0;
out:
	free(en);
	free(weeks);
	free(tix);
	free(types);
	free(start);
	free(vals);
	free(med);
	free(seen);
	free(healthy);
	return rc;
}

enum store_status fleet_mirror_weeks(struct db_pool *pool, int window_days,
				     double threshold, bool with_synthetic,
				     char *lits[4], struct store_err *e)
{
	struct wmirror *m = &the_wmirror;
	struct sbuf s[4];
	int64_t now_us = 0;
	enum store_status st;

	memset(e, 0, sizeof(*e));
	for (int i = 0; i < 4; i++) {
		lits[i] = NULL;
		sbuf_init(&s[i]);
		sbuf_put(&s[i], "{");
	}
	pthread_mutex_lock(&m->mu);
	/* a wider window than kept: load again, that wide */
	if (m->window_days < window_days) {
		wmirror_clear(m);
		m->window_days = window_days;
		snprintf(m->days, sizeof(m->days), "%d", window_days);
	}
	st = copy_sync(pool, &m->pos, m, &wmirror_ops, &now_us, e);
	if (st == STORE_OK && wmirror_reduce(m, now_us, window_days, threshold,
					     with_synthetic, s)) {
		wmirror_clear(m);
		st = e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
	}
	/* A failed read leaves the copy empty; the next loads only the
	 * window it asks for, so one wide window that cannot be loaded (a
	 * year at a large fleet past statement_timeout) does not fail the
	 * narrower reads after it. */
	if (st != STORE_OK)
		m->window_days = 0;
	pthread_mutex_unlock(&m->mu);
	for (int i = 0; i < 4; i++) {
		sbuf_put(&s[i], "}");
		if (st == STORE_OK && !(lits[i] = sbuf_finish(&s[i]))) {
			st = e->status = STORE_ERROR;
			snprintf(e->message, sizeof(e->message),
				 "out of memory");
		}
		sbuf_free(&s[i]);
	}
	if (st != STORE_OK)
		for (int i = 0; i < 4; i++) {
			free(lits[i]);
			lits[i] = NULL;
		}
	return st;
}

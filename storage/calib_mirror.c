/* calib_mirror.c - calibration's medians from an in-memory copy of
 * rollup_type_runs (see calib_mirror.h, migrations/0018, mirror.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/calib_mirror.h"
#include "storage/mirror.h"

/* ---- calibration: rollup_type_runs ----------------------------------- */

/* One rollup_type_runs row: a run's value per metric and dtype for one
 * GPU type. */
struct trun {
	bool live;
	int type, key; /* uuids id: run_id|gpu_type, the row's identity */
	int host;      /* hosts id of its node; -1: not known (0037) */
	int gkey;      /* hosts id of its GPUs' key; -1: none (0038) */
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
	/* node host names (0037) and GPU keys, "gpu:<uuid>" (0038) */
	struct strtab hosts;
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
	strtab_free(&m->hosts);
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
	" NULL, NULL, NULL, NULL, NULL, NULL"                                  \
	" UNION ALL"                                                           \
	" SELECT 'R', r.gpu_type, r.run_id::text,"                             \
	"  (extract(epoch FROM r.measured_at) * 1000000)::bigint::text,"       \
	"  r.synthetic::text, r.metrics::text, r.dtypes::text, r.v::text,"     \
	"  r.hostname, r.node_key"                                             \
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
	if ((n = mirror_split_cols(r, i, 5, 3, cols, &el, &st)) < 0)
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
		    mirror_parse_double(el[2 * st + j], &t->v[j])) {
			free(t->v);
			t->v = NULL;
			t->mkey = NULL;
			goto out;
		}
	}
	if ((t->type = strtab_id(&m->names, PQgetvalue(r, i, 1))) < 0)
		goto out;
	t->synthetic = !strcmp(PQgetvalue(r, i, 4), "true");
	t->host = t->gkey = -1;
	if (!PQgetisnull(r, i, 8) &&
	    (t->host = strtab_id(&m->hosts, PQgetvalue(r, i, 8))) < 0)
		goto out;
	if (!PQgetisnull(r, i, 9) &&
	    (t->gkey = strtab_id(&m->hosts, PQgetvalue(r, i, 9))) < 0)
		goto out;
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
	if (mirror_grow(&m->row_of_key, &m->row_of_key_cap, sizeof(int), id,
			1024))
		return NULL;
	if (!m->row_of_key[id]) {
		if (mirror_grow(&m->runs, &m->runs_cap, sizeof(*m->runs),
				m->nruns, 1024))
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
	struct fleet_run_value rv;
};

/* How far ahead of the server's clock a run's measured time may be and
 * still calibrate: a probe node whose clock runs ahead dates its results
 * there (they are stored so, partitioned by that date), and one dated
 * years ahead would otherwise stay "in the window" until then. A day
 * covers skewed clocks and time zones written wrong. */
#define CALIB_AHEAD_US ((int64_t)86400 * 1000000)

/* The root of h's set, halving the path on the way. */
static int uf_find(int *uf, int h)
{
	while (uf[h] != h) {
		uf[h] = uf[uf[h]];
		h = uf[h];
	}
	return h;
}

enum store_status calib_mirror_type_medians(
    struct db_pool *pool, const char *gpu_type, int window_days,
    bool with_synthetic, double lo, double hi,
    void (*fn)(void *ctx, const char *metric, const char *dtype,
	       struct fleet_run_value *v, size_t n),
    void *ctx, long long *runs, struct store_err *e)
{
	long long queued_ns;
	struct cmirror *m = &the_cmirror;
	int64_t now_us = 0, t0, t1;
	struct cval *vals = NULL;
	struct fleet_run_value *tmp = NULL;
	size_t nv = 0, cap = 0, nk, *start = NULL;
	int *uf = NULL; /* union-find over hosts ids */
	int type = -1;
	enum store_status st;

	*runs = 0;
	memset(e, 0, sizeof(*e));
	queued_ns = mirror_now_ns();
	pthread_mutex_lock(&m->mu);
	/* a wider window than kept: load again, that wide */
	if (m->window_days < window_days) {
		cmirror_clear(m);
		m->window_days = window_days;
		snprintf(m->days, sizeof(m->days), "%d", window_days);
	}
	st = copy_sync(pool, &m->pos, m, &cmirror_ops, queued_ns, &now_us, e);
	if (st != STORE_OK)
		goto out;
	t0 = now_us - (int64_t)window_days * 86400 * 1000000;
	t1 = now_us + CALIB_AHEAD_US;
	type = strtab_find(&m->names, gpu_type);
	/* A node is its host name and its GPUs: runs that share either are
	 * one node (union-find over both; review s19c F5: the same GPUs
	 * under other host names were more nodes; s19d F1: a run on some of
	 * a host's GPUs, or of NCCL alone, has another GPU key or none) */
	if (!(uf = malloc((size_t)(m->hosts.n ? m->hosts.n : 1) * sizeof(*uf))))
		goto oom;
	for (int h = 0; h < m->hosts.n; h++)
		uf[h] = h;
	for (int i = 0; type >= 0 && i < m->nruns; i++) {
		struct trun *t = &m->runs[i];
		if (t->live && t->type == type && t->host >= 0 && t->gkey >= 0)
			uf[uf_find(uf, t->host)] = uf_find(uf, t->gkey);
	}
	for (int i = 0; type >= 0 && i < m->nruns; i++) {
		struct trun *t = &m->runs[i];
		int id = t->host >= 0 ? t->host : t->gkey;
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
			/* a run whose node is not known is one of its own */
			vals[nv++] = (struct cval){
			    t->mkey[j],
			    {id >= 0 ? uf_find(uf, id) : -1 - (long long)i,
			     t->v[j]}};
			any = true;
		}
		*runs += any;
	}
	/* counting sort by metric and dtype, then each group's values */
	nk = (size_t)m->mkeys.pairs.n;
	if (!(tmp = malloc((nv ? nv : 1) * sizeof(*tmp))) ||
	    !(start = calloc(nk + 1, sizeof(*start))))
		goto oom;
	for (size_t x = 0; x < nv; x++)
		start[vals[x].mkey + 1]++;
	for (size_t k = 0; k < nk; k++)
		start[k + 1] += start[k];
	for (size_t x = 0; x < nv; x++)
		tmp[start[vals[x].mkey]++] = vals[x].rv;
	for (size_t k = 0, b = 0; k < nk; b = start[k++])
		if (start[k] > b)
			fn(ctx, m->names.s[m->mkeys.by_id[k].metric],
			   m->names.s[m->mkeys.by_id[k].dtype], tmp + b,
			   start[k] - b);
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
	free(uf);
	return st;
}

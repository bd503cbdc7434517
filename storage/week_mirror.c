/* week_mirror.c - the capacity report's weekly table from an in-memory
 * copy of each node's latest runs a week (see week_mirror.h,
 * migrations/0021_week_mirror.sql, mirror.h). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"
#include "storage/week_mirror.h"
#include "storage/mirror.h"

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

	if (id < 0 ||
	    mirror_grow(&m->pend, &m->pend_cap, sizeof(*m->pend), id, 64))
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

	if (mirror_grow(&d->g, &d->cap, sizeof(*d->g), d->ngpu, 8))
		return -1;
	g = &d->g[d->ngpu];
	memset(g, 0, sizeof(*g));
	if ((n = mirror_split_cols(r, i, 3, 3, cols, &el, &st)) < 0 ||
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
		    mirror_parse_double(el[2 * st + j], &g->v[g->n]) ||
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
		    mirror_grow(&m->gi, &m->gi_cap, sizeof(*m->gi), id, 256) ||
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
	    mirror_grow(&m->slots, &m->slots_cap, sizeof(*m->slots), id, 1024))
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
			    mirror_grow(&m->run_slot, &m->run_slot_cap,
					sizeof(int), run, 1024))
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
		    mirror_grow(&slots, &slots_cap, sizeof(*slots), id, 1024))
			goto oom;
		for (int ws = 0; ws < 2; ws++) {
			int run;
			if (s.r[ws].run < 0)
				continue;
			if ((run = strtab_id(&runs, m->runids.s[s.r[ws].run])) <
				0 ||
			    mirror_grow(&run_slot, &run_slot_cap, sizeof(int),
					run, 1024))
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
	int host; /* the run's node (names id) */
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

/* The weekly table for one read (see week_mirror_weeks()) into lits. */
static int wmirror_reduce(struct wmirror *m, int64_t now_us, int window_days,
			  double thr, bool ws, struct sbuf lits[4])
{
	int64_t t0 = now_us - (int64_t)window_days * 86400 * 1000000;
	int nw = 0, nt = 0, nmk = m->mkeys.pairs.n, rc = -1;
	int *weeks = NULL, *tix = NULL, *types = NULL;
	struct went *en = NULL;
	size_t nen = 0, nval = 0, ngroups, *start = NULL;
	double *vals = NULL, *med = NULL, *nodev = NULL;
	int *vhost = NULL;
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
					    .host = s->host,
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
	vhost = malloc((nval ? nval : 1) * sizeof(*vhost));
	nodev = malloc((nval ? nval : 1) * sizeof(*nodev));
	med = malloc((ngroups ? ngroups : 1) * sizeof(*med));
	if (!start || !vals || !vhost || !nodev || !med)
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
		for (int j = 0; j < en[x].g->n; j++) {
			size_t at = start[WGROUP(&en[x], j) + 1]++;
			vals[at] = en[x].g->v[j];
			vhost[at] = en[x].host;
		}
	/* start[gi] .. start[gi + 1]: group gi, a node at a time (en holds
	 * each slot's GPUs together, a slot is one node's week, and a group
	 * one week: no sort needed; review s23e F4 measured one at 150 ms
	 * over a year of weeks); its median over the nodes' medians
	 * (percentile_cont, as tests/api/sql/report_rollup.sql takes them) */
	for (size_t gi = 0; gi < ngroups; gi++)
		if (start[gi + 1] > start[gi])
			med[gi] = mirror_node_median(
			    vhost + start[gi], vals + start[gi],
			    start[gi + 1] - start[gi], nodev);
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
	free(vhost);
	free(nodev);
	free(med);
	free(seen);
	free(healthy);
	return rc;
}

enum store_status week_mirror_weeks(struct db_pool *pool, int window_days,
				    double threshold, bool with_synthetic,
				    char *lits[4], struct store_err *e)
{
	long long queued_ns;
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
	queued_ns = mirror_now_ns();
	pthread_mutex_lock(&m->mu);
	/* a wider window than kept: load again, that wide */
	if (m->window_days < window_days) {
		wmirror_clear(m);
		m->window_days = window_days;
		snprintf(m->days, sizeof(m->days), "%d", window_days);
	}
	st = copy_sync(pool, &m->pos, m, &wmirror_ops, queued_ns, &now_us, e);
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

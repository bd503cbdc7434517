/* fleet_mirror.c - GET /v1/fleet from an in-memory copy of node_gpus and
 * rollup_gpu_latest (see fleet_mirror.h, migrations/0017_fleet_mirror.sql);
 * calibration (calib_mirror.c, 0018) and the capacity report's weekly
 * table (week_mirror.c, 0021) from copies kept the same way (mirror.h).
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
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"
#include "storage/bench.h"
#include "storage/fleet_mirror.h"
#include "storage/mirror.h"

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

/* One node_gpus row (known; not counted once removed: a newer inventory
 * of its node no longer lists it, migrations/0043) and its two latest
 * rows, [0] of real runs only, [1] of any run (with_synthetic). */
struct gpu {
	bool known, removed;
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

	if (id < 0 ||
	    mirror_grow(&m->gpus, &m->gpus_cap, sizeof(*m->gpus), id, 256))
		return NULL;
	return &m->gpus[id];
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
	if ((n = mirror_split_cols(r, i, 4, 5, cols, &el, &st)) < 0)
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
		if (mirror_parse_double(el[3 * st + j], &l->v[k]) ||
		    mirror_parse_double(el[4 * st + j], &l->lim[k]))
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
    "   g.info->'pcie'->>'width_max') END,"
    "  (g.removed_at IS NOT NULL)::text, NULL"
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
	g->removed = !strcmp(PQgetvalue(r, i, 8), "true");
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
	long long *order = NULL; /* host << 32 | GPU index, by node */
	int *vhost = NULL;
	double *nodev = NULL;
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
		/* without synthetic runs, a GPU only they measured is not
		 * in the fleet (review s15: its GPUs and nodes were counted,
		 * beside medians that left them out) */
		if (!g->known || g->removed || g->last_seen_us < t0 ||
		    (ws == 0 &&
		     !(g->latest[0].present && g->latest[0].measured_us >= t0)))
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
	vhost = malloc((nel ? nel : 1) * sizeof(*vhost));
	nodev = malloc((nel ? nel : 1) * sizeof(*nodev));
	order = malloc((size_t)(ng ? ng : 1) * sizeof(*order));
	if (!start || !el || !tmp || !med || !vhost || !nodev || !order)
		goto out;
	/* the GPUs by node, so that each group's values come a node at a
	 * time (mirror_node_median) */
	for (int i = 0; i < ng; i++)
		order[i] = (long long)m->gpus[i].host << 32 | i;
	qsort(order, (size_t)ng, sizeof(*order), cmp_ll);
	/* counting sort of the values by group, the GPUs a node at a time */
	for (int pass = 0; pass < 2; pass++) {
		for (int oi = 0; oi < ng; oi++) {
			int i = (int)(order[oi] & 0xffffffff);
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
	/* per group: the median of the nodes' medians, and of the limits */
	for (size_t gi = 0; gi < ngroups; gi++) {
		size_t b = start[gi], n = start[gi + 1] - b, nl = 0;
		int unit = -1;
		double lim;
		if (!n)
			continue;
		for (size_t x = 0; x < n; x++) {
			struct gpu *g = &m->gpus[el[b + x].gpu];
			struct latest *l = &g->latest[ws];
			int u = l->unit[el[b + x].j];
			tmp[x] = l->v[el[b + x].j];
			vhost[x] = g->host;
			if (unit < 0 ||
			    strcmp(m->names.s[u], m->names.s[unit]) > 0)
				unit = u;
		}
		med[gi] = mirror_node_median(vhost, tmp, n, nodev);
		for (size_t x = 0; x < n; x++) {
			struct latest *l = &m->gpus[el[b + x].gpu].latest[ws];
			if (!isnan(l->lim[el[b + x].j]))
				tmp[nl++] = l->lim[el[b + x].j];
		}
		lim = nl ? mirror_median(tmp, nl) : NAN;
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
	/* a GPU more than thr under its type's median of node medians (over,
	 * for latencies): only where two or more GPUs make the median */
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
	free(vhost);
	free(nodev);
	free(order);
	free(flagged);
	return rc;
}

enum store_status fleet_mirror_fleet(struct db_pool *pool, int window_days,
				     double threshold, bool with_synthetic,
				     json_t **out, struct store_err *e)
{
	long long queued_ns;
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
	queued_ns = mirror_now_ns();
	pthread_mutex_lock(&m->mu);
	st = copy_sync(pool, &m->pos, m, &mirror_ops, queued_ns, &now_us, e);
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

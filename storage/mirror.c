/* mirror.c - what the in-memory copies of rollups share (see mirror.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/mirror.h"

/* ---- interned strings ------------------------------------------------ */

int mirror_grow(void *p, int *cap, size_t size, int need, int first)
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

void strtab_free(struct strtab *t)
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

int strtab_find(const struct strtab *t, const char *s)
{
	return t->nslot ? t->slot[strtab_slot(t, s)] - 1 : -1;
}

int strtab_id(struct strtab *t, const char *s)
{
	size_t j;

	if ((size_t)(t->n + 1) * 2 > t->nslot && strtab_grow(t))
		return -1;
	j = strtab_slot(t, s);
	if (t->slot[j])
		return t->slot[j] - 1;
	if (mirror_grow(&t->s, &t->cap, sizeof(*t->s), t->n, 64) ||
	    !(t->s[t->n] = strdup(s)))
		return -1;
	t->slot[j] = t->n + 1;
	return t->n++;
}

void mkeytab_free(struct mkeytab *t)
{
	strtab_free(&t->pairs);
	free(t->by_id);
	memset(t, 0, sizeof(*t));
}

int mkeytab_id(struct mkeytab *t, struct strtab *names, const char *metric,
	       const char *dtype)
{
	char key[512];
	int id;

	snprintf(key, sizeof(key), "%s\x1f%s", metric, dtype);
	if ((id = strtab_id(&t->pairs, key)) < 0)
		return -1;
	if (mirror_grow(&t->by_id, &t->cap, sizeof(*t->by_id), id, 64))
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

void copy_pos_clear(struct copy_pos *p)
{
	p->pool_serial = 0;
	p->epoch = 0;
	snprintf(p->xmin, sizeof(p->xmin), "0");
}

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
	/* On one history a snapshot's xmin never goes back; it does when
	 * the database did (a failover to a replica that lacked the last
	 * commits, a restore to an earlier point): the copy then holds rows
	 * the database no longer has, and rows with a change_xid between the
	 * new xmin and the cursor would never be fetched, so it loads whole
	 * (review s19a F5: a running daemon showed 42 GPUs where the
	 * database had 6, until restarted) */
	if (pos->pool_serial && pos->xmin[0] &&
	    strtoull(PQgetvalue(r, s, 1), NULL, 10) <
		strtoull(pos->xmin, NULL, 10)) {
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

long long mirror_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

enum store_status copy_sync(struct db_pool *pool, struct copy_pos *pos, void *m,
			    const struct copy_ops *ops, long long queued_ns,
			    int64_t *now_us, struct store_err *e)
{
	unsigned long long serial = db_pool_serial(pool);

	if (pos->down_at_ns && pos->down_at_ns >= queued_ns) {
		e->status = STORE_UNAVAILABLE;
		snprintf(e->message, sizeof(e->message),
			 "%s: the database did not answer the request "
			 "ahead of this one; try again",
			 ops->what);
		return e->status;
	}
	if (pos->pool_serial != serial)
		ops->clear(m);
	for (int attempt = 0; attempt < 2; attempt++) {
		PGresult *r = NULL;
		bool reload = false;
		int rc;

		if (ops->fetch(m, pool, !pos->pool_serial, &r, e) != STORE_OK) {
			ops->clear(m);
			if (e->status == STORE_UNAVAILABLE)
				pos->down_at_ns = mirror_now_ns();
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

int mirror_split_cols(PGresult *r, int i, int first, int ncols, char **cols,
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

int mirror_parse_double(const char *s, double *out)
{
	char *end;

	if (!s) {
		*out = NAN;
		return 0;
	}
	*out = strtod(s, &end);
	return *end || end == s ? -1 : 0;
}

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

double mirror_median(double *a, size_t n)
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

double mirror_node_median(const int *host, double *v, size_t n, double *scratch)
{
	size_t nodes = 0, i, j;

	for (i = 0; i < n; i = j) {
		for (j = i; j < n && host[j] == host[i]; j++)
			;
		scratch[nodes++] = mirror_median(v + i, j - i);
	}
	return mirror_median(scratch, nodes);
}

/* mirror.h - internal to storage/: what the daemon's in-memory copies of
 * rollup tables share (issue 18; fleet_mirror.c, calib_mirror.c,
 * week_mirror.c): interned strings, metric and dtype keys, bringing a copy
 * up to date from the rows written since its last fetch
 * (migrations/0017_fleet_mirror.sql: change_xid, fleet_mirror_epoch), the
 * parsing of array columns, and PostgreSQL's median.
 */
#ifndef GPUSIZER_STORAGE_MIRROR_H
#define GPUSIZER_STORAGE_MIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/pgconn.h"

/* A member of a GPU's stored "pcie" object as SQL numeric, or NULL when it
 * is not a JSON number: reports are checked at ingest (handlers/
 * benchmarks.c), but a row stored before that must not break every fleet
 * read with a cast error. */
#define PCIE_NUM(k)                                                            \
	"(CASE WHEN jsonb_typeof(g.info->'pcie'->'" k "') = 'number'"          \
	" THEN (g.info->'pcie'->>'" k "')::numeric END)"

/* Strings by id (0, 1, ...), each stored once: GPU uuids, type names,
 * hostnames, metric names, dtypes, units. Open addressing on FNV-1a.
 */
struct strtab {
	char **s;     /* s[id], owned */
	int n, cap;   /* ids in use, room in s */
	int *slot;    /* id + 1, 0 = empty */
	size_t nslot; /* power of two, at least 2n */
};

/* Metric and dtype pairs by id, their names in a strtab of names. */
struct mkeytab {
	struct strtab pairs; /* "metric\x1fdtype" */
	struct mkey {
		int metric, dtype; /* names ids */
	} * by_id;
	int cap;
};

/* Where a copy stands against the database. */
struct copy_pos {
	unsigned long long pool_serial; /* 0: nothing loaded */
	long long epoch;		/* fleet_mirror_epoch seen */
	char xmin[32];			/* fetch change_xid >= this next time */
	/* CLOCK_MONOTONIC ns of the last fetch that found the database
	 * unavailable: a reader that queued on the copy's lock before it
	 * answers unavailable at once instead of waiting out its own timeout
	 * (review s16b F2: the sixth of six fleet reads took 45 s); one that
	 * came after tries again */
	long long down_at_ns;
};

/* CLOCK_MONOTONIC now, ns: what a reader notes before it takes a copy's
 * lock, for copy_sync. */
long long mirror_now_ns(void);

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

/* Room for index need in the array *p of elements of size bytes, whose
 * capacity *cap doubles from first; new room is zeroed. -1: out of
 * memory (the array is left as it was). */
int mirror_grow(void *p, int *cap, size_t size, int need, int first);

/* Frees t's strings and tables; t is left empty. */
void strtab_free(struct strtab *t);

/* The id of s, or -1 when it is not there. */
int strtab_find(const struct strtab *t, const char *s);

/* The id of s, added when absent. -1: out of memory. */
int strtab_id(struct strtab *t, const char *s);

/* Frees t; t is left empty. */
void mkeytab_free(struct mkeytab *t);

/* The id of a metric and dtype pair, its names interned in names. -1: out
 * of memory. */
int mkeytab_id(struct mkeytab *t, struct strtab *names, const char *metric,
	       const char *dtype);

/* A position of nothing loaded. */
void copy_pos_clear(struct copy_pos *p);

/* Brings copy m up to date with the database of pool: the rows written
 * since its last fetch, or all of them when it is empty, holds another
 * pool's rows, or rows were deleted (migrations/0017_fleet_mirror.sql).
 * Any failure empties it, so the next read loads it whole. queued_ns:
 * mirror_now_ns() before the caller took the copy's lock; when a fetch
 * found the database unavailable since, it answers STORE_UNAVAILABLE
 * without trying. */
enum store_status copy_sync(struct db_pool *pool, struct copy_pos *pos, void *m,
			    const struct copy_ops *ops, long long queued_ns,
			    int64_t *now_us, struct store_err *e);

/* The array literals in columns first .. first + ncols - 1 of row i, split
 * into their elements: cols[c] (copies, the caller frees each) and el
 * (the caller frees it) with the elements of column c at el[c * *stride].
 * Every array must have the same length, which is returned; -1 on a
 * malformed row or out of memory. Room is one more element than the
 * longest literal has characters, so a row of any size fits. */
int mirror_split_cols(PGresult *r, int i, int first, int ncols, char **cols,
		      char ***el, size_t *stride);

/* *out from a column's text: NAN for SQL NULL (s NULL). -1: not a
 * number. */
int mirror_parse_double(const char *s, double *out);

/* percentile_cont(0.5) as PostgreSQL computes it over n > 0 values
 * (orderedsetaggs.c: the values at floor and ceil of 0.5 (n - 1),
 * interpolated lo + 0.5 (hi - lo)); a is reordered. */
double mirror_median(double *a, size_t n);

/* The median over nodes of each node's median (both as mirror_median)
 * of n > 0 values v whose nodes host[] come in runs (the values of one
 * node together); v is reordered, scratch holds n. A node counts once
 * whatever its GPU count (review s23c F1, s23d F1: one report of 64
 * invented GPUs had outvoted two real nodes of 8). */
double mirror_node_median(const int *host, double *v, size_t n,
			  double *scratch);

#endif

/* maintain.c - partition upkeep in SQL (see maintain.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sbuf.h"
#include "storage/maintain.h"
#include "storage/pgconn.h"

enum store_status store_maintain(struct db_pool *pool,
				 const struct maintain_policy *p,
				 char **actions, int *n_actions,
				 struct store_err *e)
{
	char hist[16], recs[16], ahead[16];
	const char *params[3] = {hist, recs, ahead};
	struct sbuf b = {0};
	PGresult *r = NULL;

	*actions = NULL;
	*n_actions = 0;
	store_err_clear(e);
	snprintf(hist, sizeof(hist), "%d", p->history_days);
	snprintf(recs, sizeof(recs), "%d", p->recommendation_days);
	snprintf(ahead, sizeof(ahead), "%d", MAINTAIN_MONTHS_AHEAD);
	if (db_exec(pool, "SELECT gpusizer_maintain($1::int, $2::int, $3::int)",
		    3, params, 0, &r, e) != STORE_OK)
		goto out;
	for (int i = 0; i < PQntuples(r); i++) {
		sbuf_put(&b, PQgetvalue(r, i, 0));
		sbuf_putn(&b, "\n", 1);
	}
	if (b.oom) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "out of memory listing maintenance actions");
		goto out;
	}
	*n_actions = PQntuples(r);
	if (b.len > 0)
		*actions = sbuf_finish(&b);
out:
	PQclear(r);
	sbuf_free(&b);
	return e->status;
}

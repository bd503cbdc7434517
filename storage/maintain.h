/* maintain.h - time partitions of the probe history and of the sizing
 * answers: months made ahead, retention by dropping whole months
 * (migrations/0013_time_partitions.sql, gpusizer_maintain()).
 */
#ifndef GPUSIZER_STORAGE_MAINTAIN_H
#define GPUSIZER_STORAGE_MAINTAIN_H

#include <stddef.h>

#include "storage/db.h"

/* Months of partitions kept ready past the current one. */
#define MAINTAIN_MONTHS_AHEAD 3

struct maintain_policy {
	int history_days;	 /* probe runs and results; 0 keeps all */
	int recommendation_days; /* sizing answers; 0 keeps all */
};

/* Creates the coming months' partitions and drops those past retention.
 * *actions (caller frees; NULL when nothing was done) holds one line per
 * partition created or dropped; *n_actions counts them.
 */
enum store_status store_maintain(struct db_pool *pool,
				 const struct maintain_policy *p,
				 char **actions, int *n_actions,
				 struct store_err *e);

#endif

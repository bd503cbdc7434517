/* Writing and delivering reports (plain C). */
#ifndef GPUSIZER_PROBE_DELIVER_H
#define GPUSIZER_PROBE_DELIVER_H

#include <stddef.h>

#include "post.h"
#include "run.h"
#include "status.h"

/* Fills o from the CLI (reads the token file into token). 0 or -1. */
int probe_post_setup(struct probe_ctx *c, struct probe_post_opts *o,
		     char *token, size_t toklen);
/* --flush-spool: resends the spool; returns the exit code. */
int probe_do_flush(struct probe_ctx *c, const struct probe_post_opts *o);
/* --post FILE: checks and sends a stored report; returns the exit code. */
int probe_do_post_file(struct probe_ctx *c, const struct probe_post_opts *o);
/* Writes the report (pretty JSON) to --output or stdout. 0 or -1. */
int probe_emit(struct probe_ctx *c);
/* Posts the run's report (spooling it when it does not go through), and
 * after a delivery the older spooled reports. */
enum probe_delivery probe_deliver_report(struct probe_ctx *c,
					 const struct probe_post_opts *o);

#endif

/* Writing and delivering reports: stdout or --output, the server, the
 * spool (docs/PROBE.md "Delivery and spool"). */
#define _GNU_SOURCE
#include "deliver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_check.h"
#include "spool.h"
#include "util.h"

int probe_post_setup(struct probe_ctx *c, struct probe_post_opts *o,
		     char *token, size_t toklen)
{
	char err[512];

	memset(o, 0, sizeof(*o));
	o->server = c->cli.server;
	o->timeout_ms = c->cli.timeout_ms;
	o->connect_timeout_ms = c->cli.connect_timeout_ms;
	o->retries = c->cli.retries;
	o->backoff_ms = c->cli.backoff_ms;
	o->backoff_max_ms = 30000;
	o->log = stderr;
	if (c->cli.token_file) {
		if (probe_read_token(c->cli.token_file, token, toklen, err,
				     sizeof(err))) {
			probe_log("%s", err);
			return -1;
		}
		o->token = token;
	}
	return 0;
}

static int flush_code(const struct probe_flush_counts *fc)
{
	if (fc->unauthorized)
		return PROBE_EXIT_UNAUTHORIZED;
	if (fc->kept || fc->unreadable)
		return PROBE_EXIT_UNDELIVERED;
	if (fc->rejected)
		return PROBE_EXIT_REJECTED;
	return PROBE_EXIT_OK;
}

int probe_do_flush(struct probe_ctx *c, const struct probe_post_opts *o)
{
	struct probe_flush_counts fc;

	if (probe_flush_spool(o, c->cli.spool_dir, &fc) != 0)
		return PROBE_EXIT_FAILED;
	if (fc.busy) /* said, and left to the probe that flushes */
		return PROBE_EXIT_OK;
	if (fc.delivered + fc.kept + fc.rejected + fc.unreadable > 0)
		probe_log("spool %s: %d delivered, %d kept, %d rejected, %d "
			  "unreadable",
			  c->cli.spool_dir, fc.delivered, fc.kept, fc.rejected,
			  fc.unreadable);
	else if (c->cli.flush_spool) /* asked for: a wrong --spool-dir shows */
		probe_log("spool %s: nothing to resend (empty or missing)",
			  c->cli.spool_dir);
	return flush_code(&fc);
}

int probe_do_post_file(struct probe_ctx *c, const struct probe_post_opts *o)
{
	size_t len;
	char *text = probe_read_file(c->cli.post_file, &len), err[512];
	json_t *j;
	json_error_t je;
	const char *run_id;
	enum probe_post_outcome out;
	int spool_failed = 0;

	if (text == NULL) {
		probe_log("cannot read %s: %s", c->cli.post_file,
			  strerror(errno));
		return PROBE_EXIT_FAILED;
	}
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (j == NULL) {
		probe_log("%s: not JSON (line %d: %s)", c->cli.post_file,
			  je.line, je.text);
		free(text);
		return PROBE_EXIT_FAILED;
	}
	if (probe_report_check(j, err, sizeof(err)) != 0) {
		probe_log("%s: not a probe report: %s", c->cli.post_file, err);
		json_decref(j);
		free(text);
		return PROBE_EXIT_FAILED;
	}
	run_id = json_string_value(json_object_get(j, "run_id"));
	out = probe_deliver(o, c->cli.spool_dir, run_id, text, len,
			    &spool_failed);
	json_decref(j);
	free(text);
	if (out == PROBE_POST_DELIVERED)
		return PROBE_EXIT_OK;
	if (spool_failed)
		return PROBE_EXIT_FAILED;
	if (out == PROBE_POST_UNAUTHORIZED)
		return PROBE_EXIT_UNAUTHORIZED;
	return out == PROBE_POST_REJECTED ? PROBE_EXIT_REJECTED
					  : PROBE_EXIT_UNDELIVERED;
}

int probe_emit(struct probe_ctx *c)
{
	json_t *j = probe_report_to_json(&c->rep);
	char *pretty, err[512];
	int rc = 0;

	if (j == NULL)
		return -1;
	pretty = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	json_decref(j);
	if (pretty == NULL)
		return -1;
	if (c->cli.output) {
		if (probe_write_atomic(c->cli.output, pretty, strlen(pretty),
				       err, sizeof(err))) {
			probe_log("%s", err);
			rc = -1;
		}
	} else {
		fputs(pretty, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	}
	free(pretty);
	return rc;
}

enum probe_delivery probe_deliver_report(struct probe_ctx *c,
					 const struct probe_post_opts *o)
{
	char *body = probe_report_dumps(&c->rep);
	int spool_failed = 0, have_body = body != NULL;
	enum probe_post_outcome out = PROBE_POST_KEEP;

	if (body) {
		out = probe_deliver(o, c->cli.spool_dir, c->rep.run_id, body,
				    strlen(body), &spool_failed);
		free(body);
	}
	/* Older spooled reports go once the server answers. */
	if (out == PROBE_POST_DELIVERED)
		probe_do_flush(c, o);
	switch (out) {
	case PROBE_POST_DELIVERED:
		return PROBE_DELIVERY_DELIVERED;
	case PROBE_POST_REJECTED:
		return PROBE_DELIVERY_REJECTED;
	case PROBE_POST_UNAUTHORIZED:
		return PROBE_DELIVERY_UNAUTHORIZED;
	case PROBE_POST_RETRY:
	case PROBE_POST_KEEP:
		break;
	}
	return have_body && !spool_failed ? PROBE_DELIVERY_KEPT
					  : PROBE_DELIVERY_LOST;
}

/* Statuses and exit codes of gpusizer-probe (plain C).
 *
 * A result is ok, skipped or failed; a run is ok, partial, no_device or
 * failed (docs/PROBE.md "Report format"); the exit code follows from the
 * run and, with --server, from the delivery (docs/PROBE.md "Exit codes").
 */
#ifndef GPUSIZER_PROBE_STATUS_H
#define GPUSIZER_PROBE_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

enum probe_result_status {
	PROBE_RESULT_OK,
	PROBE_RESULT_SKIPPED,
	PROBE_RESULT_FAILED,
};

enum probe_run_status {
	PROBE_RUN_OK,
	PROBE_RUN_PARTIAL,
	PROBE_RUN_NO_DEVICE,
	PROBE_RUN_FAILED,
};

/* "ok", "skipped", "failed" / "ok", "partial", "no_device", "failed";
 * "?" for a value outside the enum. */
const char *probe_result_status_name(enum probe_result_status s);
const char *probe_run_status_name(enum probe_run_status s);

enum probe_exit {
	PROBE_EXIT_OK = 0,
	PROBE_EXIT_FAILED = 1,
	PROBE_EXIT_PARTIAL = 2,
	PROBE_EXIT_NO_DEVICE = 3,
	PROBE_EXIT_LIB_MISSING = 4,
	PROBE_EXIT_UNDELIVERED = 5,
	PROBE_EXIT_REJECTED = 6,
	PROBE_EXIT_UNAUTHORIZED = 7, /* token (401/403) or URL (404/405/421) */
	PROBE_EXIT_USAGE = 64,
};

/* How the report's delivery went (--server); PROBE_DELIVERY_NONE when
 * there was no --server. */
enum probe_delivery {
	PROBE_DELIVERY_NONE,
	PROBE_DELIVERY_DELIVERED,
	PROBE_DELIVERY_KEPT, /* spooled: network error, 5xx, 408, 429 */
	PROBE_DELIVERY_REJECTED,
	PROBE_DELIVERY_UNAUTHORIZED,
	/* neither delivered nor spooled (the spool could not be written):
	 * exits as an unwritten report does (review s24g G2: it exited 5,
	 * "in the spool") */
	PROBE_DELIVERY_LOST,
};

/* The measurement part of the exit code: no_device 3, ok 0, partial 2;
 * a failed run is 4 when nothing succeeded only because libraries are
 * missing (every non-ok result is a lib_missing skip), else 1. ok, lib
 * and other count the run's results: ok, skipped for a missing library,
 * and every other skip or failure that makes a run partial. */
enum probe_exit probe_exit_for_run(enum probe_run_status run, int n_ok,
				   int n_lib_missing, int n_other_partial);

/* The final code from the measurement code and the delivery: a refused
 * token turns 0 and 2 into 7 (units count 2 as success, a revoked token
 * must show at once); otherwise 1-4 stand, and a 0 becomes 6 when the
 * server rejected the report, 5 when it stayed in the spool, 1 when the
 * report could not be written (report_written == 0). */
enum probe_exit probe_exit_final(enum probe_exit measured, int report_written,
				 enum probe_delivery delivery);

/* The code of --flush-spool --post from the flush's and the post's codes:
 * 64 over 1-4 (a refused spool, an unreadable file: review s25c K5) over
 * 7 over 5 over 6 over 0, as within one flush; a tie keeps a. */
enum probe_exit probe_exit_combine(enum probe_exit a, enum probe_exit b);

#ifdef __cplusplus
}
#endif

#endif

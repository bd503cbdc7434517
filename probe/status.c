#include "status.h"

const char *probe_result_status_name(enum probe_result_status s)
{
	switch (s) {
	case PROBE_RESULT_OK:
		return "ok";
	case PROBE_RESULT_SKIPPED:
		return "skipped";
	case PROBE_RESULT_FAILED:
		return "failed";
	}
	return "?";
}

const char *probe_run_status_name(enum probe_run_status s)
{
	switch (s) {
	case PROBE_RUN_OK:
		return "ok";
	case PROBE_RUN_PARTIAL:
		return "partial";
	case PROBE_RUN_NO_DEVICE:
		return "no_device";
	case PROBE_RUN_FAILED:
		return "failed";
	}
	return "?";
}

enum probe_exit probe_exit_for_run(enum probe_run_status run, int n_ok,
				   int n_lib_missing, int n_other_partial)
{
	switch (run) {
	case PROBE_RUN_NO_DEVICE:
		return PROBE_EXIT_NO_DEVICE;
	case PROBE_RUN_OK:
		return PROBE_EXIT_OK;
	case PROBE_RUN_PARTIAL:
		return PROBE_EXIT_PARTIAL;
	case PROBE_RUN_FAILED:
		break;
	}
	if (n_ok == 0 && n_lib_missing > 0 && n_other_partial == 0)
		return PROBE_EXIT_LIB_MISSING;
	return PROBE_EXIT_FAILED;
}

enum probe_exit probe_exit_final(enum probe_exit measured, int report_written,
				 enum probe_delivery delivery)
{
	enum probe_exit code = measured;

	if ((!report_written || delivery == PROBE_DELIVERY_LOST) &&
	    code == PROBE_EXIT_OK)
		code = PROBE_EXIT_FAILED;
	if (delivery == PROBE_DELIVERY_UNAUTHORIZED &&
	    (code == PROBE_EXIT_OK || code == PROBE_EXIT_PARTIAL))
		return PROBE_EXIT_UNAUTHORIZED;
	if (code != PROBE_EXIT_OK)
		return code;
	if (delivery == PROBE_DELIVERY_REJECTED)
		return PROBE_EXIT_REJECTED;
	if (delivery == PROBE_DELIVERY_KEPT)
		return PROBE_EXIT_UNDELIVERED;
	return code;
}

/* The order of precedence of combine: the higher, the stronger. */
static int exit_rank(enum probe_exit e)
{
	switch (e) {
	case PROBE_EXIT_OK:
		return 0;
	case PROBE_EXIT_REJECTED:
		return 1;
	case PROBE_EXIT_UNDELIVERED:
		return 2;
	case PROBE_EXIT_UNAUTHORIZED:
		return 3;
	case PROBE_EXIT_USAGE:
		return 5;
	default: /* 1-4 */
		return 4;
	}
}

enum probe_exit probe_exit_combine(enum probe_exit a, enum probe_exit b)
{
	return exit_rank(b) > exit_rank(a) ? b : a;
}

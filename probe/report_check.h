/* The probe's report checker (plain C): the server's POST /v1/benchmarks
 * rules applied to an encoded report before --post sends it.
 *
 * docs/PROBE.md "Checking a report" is the contract; the encoder that
 * writes what this reads is probe/report.h.
 */
#ifndef GPUSIZER_PROBE_REPORT_CHECK_H
#define GPUSIZER_PROBE_REPORT_CHECK_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checks a report against every rule of the server's POST /v1/benchmarks
 * validation (so --post never sends what the server refuses with 400) plus
 * the probe's own stricter contract (docs/PROBE.md "Checking a report"):
 * required run/result fields, a version-4 run_id, full date-times, known
 * units, reason/median by status. Returns 0, or -1 with a message that
 * starts with the field's path ("results[3].gpu_uuid: ..."). */
int probe_report_check(const json_t *root, char *err, size_t errlen);

/* 1 when s is a date-time the server and the probe accept: RFC 3339
 * "YYYY-MM-DD(T|t)hh:mm:ss[.frac](Z|z|+hh:mm|-hh:mm)" with a real calendar
 * day, year >= 1, hh <= 23, mm <= 59, ss <= 60, an offset of at most
 * PROBE_UTC_OFFSET_MAX_H:59, and at most PROBE_TIME_MAX bytes. */
int probe_time_valid(const char *s);

/* Seconds since 1970-01-01T00:00:00Z of a date-time probe_time_valid
 * takes, as the server counts them (rfc3339_epoch_s). 0, or -1 when s is
 * not valid. */
int probe_time_epoch_s(const char *s, double *out);

#ifdef __cplusplus
}
#endif

#endif

/* Small host utilities for the probe (plain C, no GPU). */
#ifndef GPUSIZER_PROBE_UTIL_H
#define GPUSIZER_PROBE_UTIL_H

#include <stddef.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROBE_UUID_LEN 36 /* without the NUL */

/* Writes a random (version 4, RFC 9562) UUID, lower-case, into
 * out[PROBE_UUID_LEN + 1]. Randomness from getrandom(2), falling back to
 * /dev/urandom. Returns 0 or -1. */
int probe_uuid_v4(char *out);

/* 1 when s is a lower- or upper-case 8-4-4-4-12 UUID with version 4 and
 * the RFC 9562 variant (10xx), else 0. */
int probe_uuid_is_v4(const char *s);

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" (RFC 3339, UTC) for a wall-clock time.
 * out must hold at least 32 bytes. */
void probe_rfc3339_utc(const struct timespec *ts, char *out, size_t outlen);

/* Monotonic seconds. */
double probe_now_s(void);

/* The CPU model from a /proc/cpuinfo-format file ("model name", else
 * "Hardware", else "CPU implementer/part" on Arm); "unknown" when none.
 * Returns 0 when a model line was found, -1 otherwise. */
int probe_cpu_model(const char *cpuinfo_path, char *out, size_t outlen);

/* Reads a bearer token: the first line of the file, surrounding white
 * space removed. Returns 0, or -1 with a message in err (the token itself
 * is never put in a message). */
int probe_read_token(const char *path, char *out, size_t outlen, char *err,
		     size_t errlen);

/* Names of NVML clock-event-reason bits (nvmlClocksEventReason*): writes
 * up to max pointers to static strings and returns the count. Bits without
 * a name are reported once, as "other". */
size_t probe_clock_event_reason_names(unsigned long long mask,
				      const char **names, size_t max);

/* Reads a whole regular file of at most PROBE_MAX_FILE_BYTES into a
 * NUL-terminated malloc'd buffer (caller frees). Returns NULL with errno
 * set on failure (EFBIG past the cap, EINVAL for a device, FIFO or
 * directory); *len gets the size. */
char *probe_read_file(const char *path, size_t *len);
/* The same, but a symbolic link as path's last component is not followed
 * (ELOOP): the spool's files (review s24g G11: a link planted in the spool
 * sent the file it named, with the token). */
char *probe_read_file_nofollow(const char *path, size_t *len);
/* 8 x the server's default body cap (1 MiB): a report or token file is
 * far smaller; --post /dev/zero must not eat the node's memory. */
#define PROBE_MAX_FILE_BYTES ((size_t)8 << 20)

/* Lower-cases a string in place. */
void probe_strlower(char *s);

/* Bounded copy that always terminates (truncating). */
void probe_strlcpy(char *dst, const char *src, size_t dstlen);

#ifdef __cplusplus
}
#endif

#endif

/* The spool: reports that could not be delivered yet (plain C).
 *
 * Layout: DIR/<run_id>.json (pending), DIR/rejected/<run_id>.json (the
 * server answered 4xx other than 408/429, or the flush will not send it:
 * not a regular file of at most 8 MiB, not JSON, not a probe report).
 * Files are written atomically:
 * DIR/.<run_id>.json.tmp, fsync, rename, fsync(DIR).
 */
#ifndef GPUSIZER_PROBE_SPOOL_H
#define GPUSIZER_PROBE_SPOOL_H

#include <stddef.h>

/* Creates dir (and parents) with mode 0700 when missing. 0 or -1. */
int probe_mkdirs(const char *dir, char *err, size_t errlen);

/* Atomically writes text as DIR/<run_id>.json (run_id must be a UUID, so
 * it is safe as a file name). Returns 0 or -1 with a message. */
int probe_spool_write(const char *dir, const char *run_id, const char *text,
		      size_t len, char *err, size_t errlen);

/* Pending reports, oldest first (mtime, then name): malloc'd array of
 * malloc'd file names (not paths) of the regular files named *.json (by
 * lstat: a symbolic link, FIFO or directory is not listed, and a link is
 * not followed). A missing dir is an empty list.
 * Returns 0 or -1. Free with probe_spool_list_free. */
int probe_spool_list(const char *dir, char ***names, size_t *n, char *err,
		     size_t errlen);
void probe_spool_list_free(char **names, size_t n);

/* Removes DIR/name. 0 or -1. */
int probe_spool_remove(const char *dir, const char *name, char *err,
		       size_t errlen);

/* Sets DIR/name's mtime to now (a link is not followed), which puts it
 * last in probe_spool_list's order. 0 or -1. */
int probe_spool_touch(const char *dir, const char *name, char *err,
		      size_t errlen);

/* Whether the flush may read and send DIR's files (review s24g G11: the
 * files of a spool any local user can write to are that user's choice,
 * sent with the node's token): 0 when DIR is a directory (not a symbolic
 * link) owned by the effective uid and not writable by group or others;
 * 1 when DIR does not exist (nothing to flush); -1 with a message naming
 * DIR and the fix (chmod 700, chown) otherwise. */
int probe_spool_dir_check(const char *dir, char *err, size_t errlen);

/* Moves DIR/name to DIR/rejected/name. 0 or -1. */
int probe_spool_reject(const char *dir, const char *name, char *err,
		       size_t errlen);

/* Atomic write of a regular file (tmp in the same dir + fsync + rename;
 * an existing file keeps its mode, and a symbolic link to one stays a
 * link: the file it names is replaced). A path that names something else
 * (a device such as /dev/null, a FIFO, /dev/stdout) is written in place,
 * never replaced (review s24g G1: as root, --output /dev/null made
 * /dev/null a 0600 file). */
int probe_write_atomic(const char *path, const char *text, size_t len,
		       char *err, size_t errlen);

#endif

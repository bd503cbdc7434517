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
 * it is safe as a file name), creating DIR when missing. A DIR that
 * probe_spool_dir_check refuses is not written to (review s25c K5).
 * Returns 0 or -1 with a message. */
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

/* Puts DIR/name last in probe_spool_list's order (review s25c K1-K3): its
 * mtime set to 1 s after the later of now and the newest mtime in DIR (a
 * clock that was ahead stamped files in the future). When the mtime
 * cannot be set (another uid's file: EPERM), DIR/name is rewritten as a
 * new file of the probe's, text (its content) with that mtime, atomically.
 * A link is not followed. Returns 0 (touched), 1 (rewritten) or -1 with a
 * message (neither: it stays where it is in the order). */
int probe_spool_to_back(const char *dir, const char *name, const char *text,
			size_t len, char *err, size_t errlen);

/* Tests only: 1, the touch of probe_spool_to_back fails (EPERM); 2, its
 * rewrite fails too (EACCES); or both bits. 0 in the probe. */
extern int probe_spool_test_fail;

/* Whether the probe may use DIR as a spool, to send its files (review
 * s24g G11: the files of a spool any local user can write to are that
 * user's choice, sent with the node's token) or to write into it (review
 * s25c K5: what it wrote there would never be sent): 0 when DIR is a
 * directory (not a symbolic link) owned by the effective uid and not
 * writable by group or others; 1 when DIR does not exist; -1 with a
 * message naming DIR, consequence ("nothing sent from it") and the fix
 * (chmod 700, chown) otherwise. */
int probe_spool_dir_check(const char *dir, const char *consequence, char *err,
			  size_t errlen);

/* Moves DIR/name to DIR/rejected/name, creating rejected/ (0700) when
 * missing; rejected/ must pass probe_spool_dir_check (a directory of the
 * probe's, not a link or a file). 0 or -1. */
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

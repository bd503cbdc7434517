#define _XOPEN_SOURCE 700
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int probe_mkdirs(const char *dir, char *err, size_t errlen)
{
	char buf[4096];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen,
			 "spool directory path is empty or too "
			 "long");
		return -1;
	}
	probe_strlcpy(buf, dir, sizeof(buf));
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char saved = buf[i];
		buf[i] = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", buf,
				 strerror(errno));
			return -1;
		}
		buf[i] = saved;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Writes all of text to fd. 0, or -1 with errno. */
static int write_all(int fd, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* path is something other than a regular file (or a link to one): written
 * in place, as a shell's > would. */
static int write_in_place(const char *path, const char *text, size_t len,
			  char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0 || write_all(fd, text, len) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return close(fd) == 0 ? 0 : -1;
}

int probe_write_atomic(const char *path, const char *text, size_t len,
		       char *err, size_t errlen)
{
	char tmp[4200], dirbuf[4096], real[4096], *base;
	const char *dir;
	struct stat st, lst;
	mode_t mode = 0600;
	int fd;

	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, text, len, err, errlen);
		mode = st.st_mode & 07777;
		/* a link to a regular file: replace the file, keep the
		 * link */
		if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) &&
		    realpath(path, real) != NULL)
			path = real;
	}
	if (strlen(path) >= sizeof(dirbuf)) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	probe_strlcpy(dirbuf, path, sizeof(dirbuf));
	base = strrchr(dirbuf, '/');
	if (base) {
		*base++ = '\0';
		dir = dirbuf[0] ? dirbuf : "/";
		snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, base,
			 (long)getpid());
	} else {
		base = dirbuf;
		dir = ".";
		snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", base, (long)getpid());
	}
	/* a leftover of this pid's earlier run is removed, and nothing is
	 * followed or reused: a link planted at the temporary name fails */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	if (write_all(fd, text, len) != 0 || fchmod(fd, mode) != 0 ||
	    fsync(fd) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp,
			 strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) != 0) {
		snprintf(err, errlen, "cannot close %s: %s", tmp,
			 strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path,
			 strerror(errno));
		unlink(tmp);
		return -1;
	}
	fsync_dir(dir);
	return 0;
}

int probe_spool_write(const char *dir, const char *run_id, const char *text,
		      size_t len, char *err, size_t errlen)
{
	char path[4200];

	if (!probe_uuid_is_v4(run_id)) {
		snprintf(err, errlen, "run_id is not a UUID; not spooling");
		return -1;
	}
	if (probe_mkdirs(dir, err, errlen))
		return -1;
	/* review s25c K5: not into a directory the flush would refuse (its
	 * files would never be sent) */
	if (probe_spool_dir_check(dir, "nothing written to it", err, errlen) <
	    0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.json", dir, run_id);
	return probe_write_atomic(path, text, len, err, errlen);
}

struct entry {
	char *name;
	struct timespec mtime;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int is_report_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* 0 when NAME in DIR is a spooled report: a *.json name and a regular
 * file by lstat, *st its status and path its path. A symbolic link is not
 * followed, so neither its target's mtime nor the target itself counts
 * (review s24g G11); links, FIFOs and directories are left where they
 * are. */
static int report_file(const char *dir, const char *name, char *path,
		       size_t len, struct stat *st)
{
	if (!is_report_name(name))
		return -1;
	snprintf(path, len, "%s/%s", dir, name);
	return lstat(path, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
}

int probe_spool_list(const char *dir, char ***names_out, size_t *n_out,
		     char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct entry *ents = NULL;
	size_t n = 0, cap = 0, i;
	char **names;

	*names_out = NULL;
	*n_out = 0;
	if (d == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot open spool %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char path[4400];
		struct stat st;

		if (report_file(dir, de->d_name, path, sizeof(path), &st) != 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct entry *ne = realloc(ents, ncap * sizeof(*ne));
			if (ne == NULL)
				goto oom;
			ents = ne;
			cap = ncap;
		}
		ents[n].name = strdup(de->d_name);
		if (ents[n].name == NULL)
			goto oom;
		ents[n].mtime = st.st_mtim;
		n++;
	}
	closedir(d);
	d = NULL;
	if (n == 0) {
		free(ents);
		return 0;
	}
	qsort(ents, n, sizeof(*ents), cmp_entry);
	names = malloc(n * sizeof(*names));
	if (names == NULL)
		goto oom;
	for (i = 0; i < n; i++)
		names[i] = ents[i].name;
	free(ents);
	*names_out = names;
	*n_out = n;
	return 0;
oom:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(ents[i].name);
	free(ents);
	snprintf(err, errlen, "out of memory listing %s", dir);
	return -1;
}

void probe_spool_list_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int safe_name(const char *name, char *err, size_t errlen)
{
	if (!is_report_name(name) || strchr(name, '/') != NULL) {
		snprintf(err, errlen, "not a spool file name: %.80s", name);
		return 0;
	}
	return 1;
}

int probe_spool_remove(const char *dir, const char *name, char *err,
		       size_t errlen)
{
	char path[4400];

	if (!safe_name(name, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) != 0) {
		snprintf(err, errlen, "cannot remove %s: %s", path,
			 strerror(errno));
		return -1;
	}
	fsync_dir(dir);
	return 0;
}

int probe_spool_test_fail;

/* The newest mtime among DIR's regular *.json files (lstat), or {0, 0}. */
static struct timespec newest_mtime(const char *dir)
{
	struct timespec newest = {0, 0};
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return newest;
	while ((de = readdir(d)) != NULL) {
		char path[4400];
		struct stat st;

		if (report_file(dir, de->d_name, path, sizeof(path), &st) != 0)
			continue;
		if (st.st_mtim.tv_sec > newest.tv_sec ||
		    (st.st_mtim.tv_sec == newest.tv_sec &&
		     st.st_mtim.tv_nsec > newest.tv_nsec))
			newest = st.st_mtim;
	}
	closedir(d);
	return newest;
}

/* DIR/name rewritten as a new file (DIR/.name.pid.tmp, 0600, text, mtime
 * t, fsync, rename over DIR/name, fsync(DIR)): the probe owns the new
 * file, so this works where the old one's mtime cannot be set (another
 * uid's file). rename replaces the entry itself, never a link's target.
 * 0, or -1 with errno. */
static int rewrite_with_mtime(const char *dir, const char *name,
			      const char *text, size_t len,
			      const struct timespec t[2])
{
	char tmp[4400], path[4400];
	int fd = -1, rc = -1, e = 0;

	if (probe_spool_test_fail & 2) {
		errno = EACCES;
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, name, (long)getpid());
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, len) != 0 || futimens(fd, t) != 0 ||
	    fsync(fd) != 0) {
		e = errno;
		goto out;
	}
	if (close(fd) != 0) {
		e = errno;
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		e = errno;
		goto out;
	}
	fsync_dir(dir);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		unlink(tmp);
		errno = e;
	}
	return rc;
}

int probe_spool_to_back(const char *dir, const char *name, const char *text,
			size_t len, char *err, size_t errlen)
{
	char path[4400];
	struct timespec now, t[2];
	int touch_errno;

	if (!safe_name(name, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* review s25c K3: after every other file, even those a clock ahead
	 * stamped in the future, whatever the clock says now */
	clock_gettime(CLOCK_REALTIME, &now);
	t[1] = newest_mtime(dir);
	if (now.tv_sec > t[1].tv_sec ||
	    (now.tv_sec == t[1].tv_sec && now.tv_nsec > t[1].tv_nsec))
		t[1] = now;
	t[1].tv_sec += 1;
	t[0] = t[1];
	if (!(probe_spool_test_fail & 1) &&
	    utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	touch_errno = probe_spool_test_fail & 1 ? EPERM : errno;
	if (touch_errno == ENOENT) {
		snprintf(err, errlen, "cannot touch %s: %s", path,
			 strerror(touch_errno));
		return -1;
	}
	/* review s25c K2: another uid's file (an operator's sudo --post
	 * into the service's spool) cannot be touched, but the probe owns
	 * the directory and can replace it */
	if (rewrite_with_mtime(dir, name, text, len, t) == 0)
		return 1;
	snprintf(err, errlen, "cannot touch %s (%s) nor rewrite it (%s)", path,
		 strerror(touch_errno), strerror(errno));
	return -1;
}

int probe_spool_dir_check(const char *dir, const char *consequence, char *err,
			  size_t errlen)
{
	char buf[4096];
	size_t n = strlen(dir);
	struct stat st;
	uid_t euid = geteuid();

	/* "DIR/" would make lstat follow a link named DIR */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen,
			 "spool directory path is empty or too long");
		return -1;
	}
	memcpy(buf, dir, n);
	buf[n] = '\0';
	if (lstat(buf, &st) != 0) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "cannot use spool %s: %s", buf,
			 strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen,
			 "spool %s is a symbolic link: %s; give --spool-dir "
			 "the directory itself",
			 buf, consequence);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "spool %s is not a directory: %s", buf,
			 consequence);
		return -1;
	}
	if (st.st_uid != euid) {
		snprintf(err, errlen,
			 "spool %s is owned by uid %lu, not by this probe's "
			 "uid %lu: %s; fix with chown %lu %s (and chmod 700)",
			 buf, (unsigned long)st.st_uid, (unsigned long)euid,
			 consequence, (unsigned long)euid, buf);
		return -1;
	}
	if (st.st_mode & 022) {
		snprintf(err, errlen,
			 "spool %s is writable by %s (mode %04o): %s; fix "
			 "with chmod 700 %s",
			 buf,
			 (st.st_mode & 022) == 022 ? "group and others"
			 : (st.st_mode & 020)	   ? "its group"
						   : "others",
			 (unsigned)(st.st_mode & 07777), consequence, buf);
		return -1;
	}
	return 0;
}

int probe_spool_reject(const char *dir, const char *name, char *err,
		       size_t errlen)
{
	char from[4400], rdir[4200], to[4400];

	if (!safe_name(name, err, errlen))
		return -1;
	snprintf(rdir, sizeof(rdir), "%s/rejected", dir);
	if (probe_mkdirs(rdir, err, errlen))
		return -1;
	/* a directory of the probe's, not a link leading elsewhere nor a
	 * file (review s25c I2, K4) */
	if (probe_spool_dir_check(rdir, "nothing moved into it", err, errlen) <
	    0)
		return -1;
	snprintf(from, sizeof(from), "%s/%s", dir, name);
	snprintf(to, sizeof(to), "%s/%s", rdir, name);
	if (rename(from, to) != 0) {
		snprintf(err, errlen, "cannot move %s to %s: %s", from, to,
			 strerror(errno));
		return -1;
	}
	fsync_dir(rdir);
	fsync_dir(dir);
	return 0;
}

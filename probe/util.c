#define _GNU_SOURCE
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

void probe_strlcpy(char *dst, const char *src, size_t dstlen)
{
	size_t n;

	if (dstlen == 0)
		return;
	if (src == NULL)
		src = "";
	n = strlen(src);
	if (n >= dstlen)
		n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void probe_strlower(char *s)
{
	for (; s && *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static int random_bytes(unsigned char *buf, size_t n)
{
	size_t got = 0;
	int fd;

	while (got < n) {
		ssize_t r = getrandom(buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	if (got == n)
		return 0;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

int probe_uuid_v4(char *out)
{
	unsigned char b[16];

	if (random_bytes(b, sizeof(b)) != 0)
		return -1;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, PROBE_UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

int probe_uuid_is_v4(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != PROBE_UUID_LEN)
		return 0;
	for (i = 0; i < PROBE_UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	if (s[14] != '4')
		return 0;
	return strchr("89abAB", s[19]) != NULL && s[19] != '\0';
}

void probe_rfc3339_utc(const struct timespec *ts, char *out, size_t outlen)
{
	struct tm tm;
	char base[24];

	gmtime_r(&ts->tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outlen, "%s.%03ldZ", base, ts->tv_nsec / 1000000L);
}

double probe_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *trim(char *s)
{
	char *e;

	while (*s && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int probe_cpu_model(const char *cpuinfo_path, char *out, size_t outlen)
{
	FILE *f = fopen(cpuinfo_path, "r");
	char line[512], hw[256] = "", impl[64] = "", part[64] = "";
	int found = 0;

	probe_strlcpy(out, "unknown", outlen);
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *key, *val;

		if (colon == NULL)
			continue;
		*colon = '\0';
		key = trim(line);
		val = trim(colon + 1);
		if (strcmp(key, "model name") == 0 && *val) {
			probe_strlcpy(out, val, outlen);
			found = 1;
			break;
		}
		if (strcmp(key, "Hardware") == 0 && !hw[0])
			probe_strlcpy(hw, val, sizeof(hw));
		if (strcmp(key, "CPU implementer") == 0 && !impl[0])
			probe_strlcpy(impl, val, sizeof(impl));
		if (strcmp(key, "CPU part") == 0 && !part[0])
			probe_strlcpy(part, val, sizeof(part));
	}
	fclose(f);
	if (found)
		return 0;
	if (hw[0]) {
		probe_strlcpy(out, hw, outlen);
		return 0;
	}
	if (impl[0]) {
		snprintf(out, outlen, "arm implementer %s part %s", impl,
			 part[0] ? part : "?");
		return 0;
	}
	return -1;
}

static char *read_file(const char *path, int extra_flags, size_t *len)
{
	/* opened without blocking, and checked before a read: a FIFO's
	 * open waits for a writer (review s24g G3: --post and --token-file
	 * of a FIFO hung the probe) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
				extra_flags);
	FILE *f;
	char *buf = NULL;
	size_t cap = 0, n = 0;

	struct stat st = {0};

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    (f = fdopen(fd, "rb")) == NULL) {
		int e = errno, reg = S_ISREG(st.st_mode);
		close(fd);
		errno = reg ? (e ? e : EIO) : EINVAL;
		return NULL;
	}
	for (;;) {
		size_t r;
		if (n > PROBE_MAX_FILE_BYTES) {
			free(buf);
			fclose(f);
			errno = EFBIG;
			return NULL;
		}
		if (cap - n < 4096) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, ncap + 1);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;
		free(buf);
		fclose(f);
		errno = e ? e : EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *probe_read_file(const char *path, size_t *len)
{
	return read_file(path, 0, len);
}

char *probe_read_file_nofollow(const char *path, size_t *len)
{
	return read_file(path, O_NOFOLLOW, len);
}

int probe_read_token(const char *path, char *out, size_t outlen, char *err,
		     size_t errlen)
{
	size_t len;
	char *buf = probe_read_file(path, &len), *t, *nl;

	if (buf == NULL) {
		snprintf(err, errlen, "cannot read token file %s: %s", path,
			 strerror(errno));
		return -1;
	}
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	t = trim(buf);
	if (*t == '\0') {
		snprintf(err, errlen, "token file %s is empty", path);
		free(buf);
		return -1;
	}
	if (strlen(t) >= outlen) {
		snprintf(err, errlen, "token in %s is too long", path);
		free(buf);
		return -1;
	}
	for (const char *p = t; *p; p++) {
		if (!isgraph((unsigned char)*p)) {
			snprintf(err, errlen,
				 "token in %s contains white space or control "
				 "characters",
				 path);
			free(buf);
			return -1;
		}
	}
	probe_strlcpy(out, t, outlen);
	free(buf);
	return 0;
}

size_t probe_clock_event_reason_names(unsigned long long mask,
				      const char **names, size_t max)
{
	static const struct {
		unsigned long long bit;
		const char *name;
	} bits[] = {
	    {0x1ULL, "gpu_idle"},
	    {0x2ULL, "applications_clocks_setting"},
	    {0x4ULL, "sw_power_cap"},
	    {0x8ULL, "hw_slowdown"},
	    {0x10ULL, "sync_boost"},
	    {0x20ULL, "sw_thermal_slowdown"},
	    {0x40ULL, "hw_thermal_slowdown"},
	    {0x80ULL, "hw_power_brake_slowdown"},
	    {0x100ULL, "display_clock_setting"},
	};
	size_t i, n = 0;
	unsigned long long known = 0;

	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		known |= bits[i].bit;
		if ((mask & bits[i].bit) && n < max)
			names[n++] = bits[i].name;
	}
	if ((mask & ~known) && n < max)
		names[n++] = "other";
	return n;
}

#define _GNU_SOURCE
#include "numa.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* <numaif.h> values (stable kernel ABI), so libnuma's headers are not
 * needed either. */
#define PROBE_MPOL_PREFERRED 1
#define PROBE_MPOL_F_NODE    (1 << 0)
#define PROBE_MPOL_F_ADDR    (1 << 1)

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* A decimal number at *s (digits only), advancing *s; -1 when none or
 * >= limit. */
static long take_number(const char **s, long limit)
{
	long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v >= limit)
			return -1;
		p++;
	}
	*s = p;
	return v;
}

int probe_numa_parse_node(const char *text)
{
	const char *p;
	long v;

	if (text == NULL)
		return -1;
	p = skip_space(text);
	if (*p == '-')
		return -1; /* "-1": no NUMA information */
	v = take_number(&p, PROBE_NUMA_MAX_NODES);
	if (v < 0 || *skip_space(p) != '\0')
		return -1;
	return (int)v;
}

static void set_bit(struct probe_cpuset *set, long cpu)
{
	size_t w = 8 * sizeof(unsigned long);

	set->bits[(size_t)cpu / w] |= 1UL << ((size_t)cpu % w);
}

int probe_cpuset_has(const struct probe_cpuset *set, int cpu)
{
	size_t w = 8 * sizeof(unsigned long);

	if (cpu < 0 || cpu >= PROBE_MAX_CPUS)
		return 0;
	return (set->bits[(size_t)cpu / w] >> ((size_t)cpu % w)) & 1UL;
}

int probe_cpulist_parse(const char *text, struct probe_cpuset *set)
{
	const char *p;
	int count = 0;

	memset(set, 0, sizeof(*set));
	if (text == NULL)
		return -1;
	p = skip_space(text);
	if (*p == '\0')
		return -1;
	for (;;) {
		long lo = take_number(&p, PROBE_MAX_CPUS), hi, c;
		if (lo < 0)
			return -1;
		hi = lo;
		if (*p == '-') {
			p++;
			hi = take_number(&p, PROBE_MAX_CPUS);
			if (hi < lo)
				return -1;
		}
		for (c = lo; c <= hi; c++) {
			if (!probe_cpuset_has(set, (int)c))
				count++;
			set_bit(set, c);
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*skip_space(p) != '\0')
			return -1;
		return count;
	}
}

static int read_small(const char *root, const char *bus_id, const char *leaf,
		      char *buf, size_t len)
{
	char path[512], id[64];
	FILE *f;
	size_t n;

	probe_strlcpy(id, bus_id, sizeof(id));
	probe_strlower(id);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s", root, id,
		 leaf);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

int probe_pci_numa_node(const char *root, const char *bus_id)
{
	char buf[64];

	if (read_small(root, bus_id, "numa_node", buf, sizeof(buf)) != 0)
		return -1;
	return probe_numa_parse_node(buf);
}

static void to_cpu_set(const struct probe_cpuset *in, cpu_set_t *out)
{
	int c;

	CPU_ZERO(out);
	for (c = 0; c < PROBE_MAX_CPUS && c < CPU_SETSIZE; c++)
		if (probe_cpuset_has(in, c))
			CPU_SET(c, out);
}

int probe_thread_bind_near(const char *root, const char *bus_id,
			   struct probe_cpuset *saved, char *err, size_t errlen)
{
	char buf[4096];
	struct probe_cpuset want;
	cpu_set_t cur, set;
	int c, e;

	memset(saved, 0, sizeof(*saved));
	if (read_small(root, bus_id, "local_cpulist", buf, sizeof(buf)) != 0) {
		snprintf(err, errlen, "no local_cpulist for %s", bus_id);
		return -1;
	}
	if (probe_cpulist_parse(buf, &want) <= 0) {
		snprintf(err, errlen, "unreadable local_cpulist for %s",
			 bus_id);
		return -1;
	}
	e = pthread_getaffinity_np(pthread_self(), sizeof(cur), &cur);
	if (e != 0) {
		snprintf(err, errlen, "pthread_getaffinity_np: %s",
			 strerror(e));
		return -1;
	}
	for (c = 0; c < PROBE_MAX_CPUS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &cur))
			set_bit(saved, c);
	to_cpu_set(&want, &set);
	/* Only CPUs this process may use (cgroups, taskset). */
	CPU_AND(&set, &set, &cur);
	if (CPU_COUNT(&set) == 0) {
		snprintf(err, errlen,
			 "none of the GPU's local CPUs is allowed here");
		return -1;
	}
	e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (e != 0) {
		snprintf(err, errlen, "pthread_setaffinity_np: %s",
			 strerror(e));
		return -1;
	}
	return 0;
}

void probe_thread_restore(const struct probe_cpuset *saved)
{
	cpu_set_t set;

	to_cpu_set(saved, &set);
	if (CPU_COUNT(&set) > 0)
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void *probe_host_alloc(size_t bytes, int node, int *node_actual, char *why,
		       size_t whylen)
{
	unsigned long mask[PROBE_NUMA_MAX_NODES / (8 * sizeof(unsigned long))];
	size_t w = 8 * sizeof(unsigned long);
	void *p;
	int at = -1;

	*node_actual = -1;
	if (whylen)
		why[0] = '\0';
	if (bytes == 0)
		bytes = 1;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (node >= 0 && node < PROBE_NUMA_MAX_NODES) {
		memset(mask, 0, sizeof(mask));
		mask[(size_t)node / w] = 1UL << ((size_t)node % w);
		/* maxnode counts one bit more than the mask holds: the
		 * kernel drops the last one (libnuma passes the same). */
		if (syscall(SYS_mbind, p, bytes, PROBE_MPOL_PREFERRED, mask,
			    (unsigned long)(8 * sizeof(mask) + 1), 0U) != 0)
			snprintf(why, whylen, "mbind to node %d: %s", node,
				 strerror(errno));
	} else if (whylen) {
		snprintf(why, whylen, "the GPU's NUMA node is unknown");
	}
	memset(p, 0, bytes); /* places every page now */
	if (syscall(SYS_get_mempolicy, &at, NULL, 0UL, p,
		    (unsigned long)(PROBE_MPOL_F_NODE | PROBE_MPOL_F_ADDR)) ==
	    0)
		*node_actual = at;
	return p;
}

void probe_host_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : 1);
}

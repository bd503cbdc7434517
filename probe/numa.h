/* Host memory and threads next to a GPU (plain C, no libnuma).
 *
 * H2D/D2H copies on a two-socket node lose bandwidth when the pinned
 * buffer or the thread sits on the other socket; nvbandwidth binds both
 * to the GPU's NUMA node first. The node comes from sysfs
 * (/sys/bus/pci/devices/<bus id>/numa_node), the CPUs from local_cpulist;
 * memory is bound with the mbind(2) system call, so no libnuma is needed
 * at build or run time.
 */
#ifndef GPUSIZER_PROBE_NUMA_H
#define GPUSIZER_PROBE_NUMA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROBE_NUMA_MAX_NODES 1024
#define PROBE_MAX_CPUS	     4096

/* The text of a numa_node file: a decimal node number in
 * [0, PROBE_NUMA_MAX_NODES) with optional surrounding white space. -1
 * for "-1" (the platform has no NUMA information) and for anything else
 * (empty, not a number, out of range, trailing text). */
int probe_numa_parse_node(const char *text);

struct probe_cpuset {
	unsigned long bits[PROBE_MAX_CPUS / (8 * sizeof(unsigned long))];
};

/* A cpulist ("0-23,48-71\n", "5", "0,2-3"): returns the number of CPUs
 * and sets their bits, or -1 when malformed (empty, a reversed range, a
 * CPU >= PROBE_MAX_CPUS, stray characters). */
int probe_cpulist_parse(const char *text, struct probe_cpuset *set);
int probe_cpuset_has(const struct probe_cpuset *set, int cpu);

/* The GPU's NUMA node from <root>/bus/pci/devices/<bus_id>/numa_node
 * (root is "/sys"; tests pass a fixture tree), -1 when unknown. */
int probe_pci_numa_node(const char *root, const char *bus_id);

/* Binds the calling thread to the GPU's local CPUs (local_cpulist);
 * *saved gets the previous affinity for probe_thread_restore. Returns 0,
 * or -1 with the reason in err (the thread is left as it was). */
int probe_thread_bind_near(const char *root, const char *bus_id,
			   struct probe_cpuset *saved, char *err,
			   size_t errlen);
void probe_thread_restore(const struct probe_cpuset *saved);

/* bytes of anonymous, page-aligned host memory whose pages are placed on
 * NUMA node `node` (mbind MPOL_PREFERRED, then every page touched) when
 * node >= 0. *node_actual: the node the first page is on
 * (get_mempolicy), -1 when unknown. why: "" or the reason the memory is
 * not bound (mbind refused, as in containers without CAP_SYS_NICE).
 * NULL when out of memory. Free with probe_host_free. */
void *probe_host_alloc(size_t bytes, int node, int *node_actual, char *why,
		       size_t whylen);
void probe_host_free(void *p, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif

#define _POSIX_C_SOURCE 200809L
#include "nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "limits.h"
#include "numa.h"
#include "util.h"

typedef int nvml_ret;
typedef void *nvml_dev;

#define NVML_SUCCESS		   0
#define NVML_ERROR_INSUFFICIENT_SZ 7
#define NVML_CLOCK_SM		   1
#define NVML_CLOCK_MEM		   2
#define NVML_TEMPERATURE_GPU	   0
#define NVML_NVLINK_MAX_LINKS	   18

struct probe_nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*driver_version)(char *, unsigned);
	nvml_ret (*cuda_driver_version)(int *);
	nvml_ret (*by_uuid)(const char *, nvml_dev *);
	nvml_ret (*by_pci)(const char *, nvml_dev *);
	nvml_ret (*pcie_gen_cur)(nvml_dev, unsigned *);
	nvml_ret (*pcie_gen_max)(nvml_dev, unsigned *);
	nvml_ret (*pcie_width_cur)(nvml_dev, unsigned *);
	nvml_ret (*pcie_width_max)(nvml_dev, unsigned *);
	nvml_ret (*nvlink_state)(nvml_dev, unsigned, int *);
	nvml_ret (*nvlink_version)(nvml_dev, unsigned, unsigned *);
	nvml_ret (*ecc_mode)(nvml_dev, int *, int *);
	nvml_ret (*mig_mode)(nvml_dev, unsigned *, unsigned *);
	nvml_ret (*power_limit)(nvml_dev, unsigned *);
	nvml_ret (*max_clock)(nvml_dev, int, unsigned *);
	nvml_ret (*clock)(nvml_dev, int, unsigned *);
	nvml_ret (*power)(nvml_dev, unsigned *);
	nvml_ret (*temperature)(nvml_dev, int, unsigned *);
	nvml_ret (*reasons)(nvml_dev, unsigned long long *);
	nvml_ret (*procs)(nvml_dev, unsigned *, void *);
	nvml_ret (*energy)(nvml_dev, unsigned long long *);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*by_index)(unsigned, nvml_dev *);
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);
	const char *(*error_string)(nvml_ret);
};

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);

	if (p == NULL && b)
		p = dlsym(lib, b);
	return p;
}

/* Casting dlsym's void * to a function pointer is what POSIX requires to
 * work; route it through memcpy so -Wpedantic stays quiet. */
#define LOAD(field, a, b)                                                      \
	do {                                                                   \
		void *p_ = sym(n->lib, a, b);                                  \
		memcpy(&n->field, &p_, sizeof(p_));                            \
	} while (0)

struct probe_nvml *probe_nvml_load(char *err, size_t errlen)
{
	struct probe_nvml *n = calloc(1, sizeof(*n));
	nvml_ret rc;

	if (n == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (n->lib == NULL) {
		snprintf(err, errlen, "cannot load libnvidia-ml.so.1: %s",
			 dlerror());
		free(n);
		return NULL;
	}
	LOAD(init, "nvmlInit_v2", "nvmlInit");
	LOAD(shutdown, "nvmlShutdown", NULL);
	LOAD(driver_version, "nvmlSystemGetDriverVersion", NULL);
	LOAD(cuda_driver_version, "nvmlSystemGetCudaDriverVersion_v2",
	     "nvmlSystemGetCudaDriverVersion");
	LOAD(by_uuid, "nvmlDeviceGetHandleByUUID", NULL);
	LOAD(by_pci, "nvmlDeviceGetHandleByPciBusId_v2",
	     "nvmlDeviceGetHandleByPciBusId");
	LOAD(pcie_gen_cur, "nvmlDeviceGetCurrPcieLinkGeneration", NULL);
	LOAD(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", NULL);
	LOAD(pcie_width_cur, "nvmlDeviceGetCurrPcieLinkWidth", NULL);
	LOAD(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth", NULL);
	LOAD(nvlink_state, "nvmlDeviceGetNvLinkState", NULL);
	LOAD(nvlink_version, "nvmlDeviceGetNvLinkVersion", NULL);
	LOAD(ecc_mode, "nvmlDeviceGetEccMode", NULL);
	LOAD(mig_mode, "nvmlDeviceGetMigMode", NULL);
	LOAD(power_limit, "nvmlDeviceGetEnforcedPowerLimit", NULL);
	LOAD(max_clock, "nvmlDeviceGetMaxClockInfo", NULL);
	LOAD(clock, "nvmlDeviceGetClockInfo", NULL);
	LOAD(power, "nvmlDeviceGetPowerUsage", NULL);
	LOAD(temperature, "nvmlDeviceGetTemperature", NULL);
	LOAD(reasons, "nvmlDeviceGetCurrentClocksEventReasons",
	     "nvmlDeviceGetCurrentClocksThrottleReasons");
	LOAD(procs, "nvmlDeviceGetComputeRunningProcesses_v3",
	     "nvmlDeviceGetComputeRunningProcesses_v2");
	LOAD(energy, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	/* the _v2 enumeration only (no fallback): the old one leaves out
	 * the GPUs this process may not use (probe_nvml_enumerate) */
	LOAD(count, "nvmlDeviceGetCount_v2", NULL);
	LOAD(by_index, "nvmlDeviceGetHandleByIndex_v2", NULL);
	LOAD(uuid, "nvmlDeviceGetUUID", NULL);
	LOAD(error_string, "nvmlErrorString", NULL);
	if (n->init == NULL) {
		snprintf(err, errlen, "libnvidia-ml.so.1 has no nvmlInit");
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	rc = n->init();
	if (rc != NVML_SUCCESS) {
		snprintf(err, errlen, "nvmlInit failed (NVML error %d)", rc);
		dlclose(n->lib);
		free(n);
		return NULL;
	}
	return n;
}

void probe_nvml_unload(struct probe_nvml *n)
{
	if (n == NULL)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

int probe_nvml_driver_version(struct probe_nvml *n, char *out, size_t len)
{
	if (n == NULL || n->driver_version == NULL ||
	    n->driver_version(out, (unsigned)len) != NVML_SUCCESS) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

int probe_nvml_cuda_driver_version(struct probe_nvml *n, int *v)
{
	if (n == NULL || n->cuda_driver_version == NULL ||
	    n->cuda_driver_version(v) != NVML_SUCCESS)
		return -1;
	return 0;
}

void *probe_nvml_device(struct probe_nvml *n, const char *uuid,
			const char *pci_bus_id)
{
	nvml_dev d = NULL;

	if (n == NULL)
		return NULL;
	if (uuid && *uuid && n->by_uuid && n->by_uuid(uuid, &d) == NVML_SUCCESS)
		return d;
	if (pci_bus_id && *pci_bus_id && n->by_pci &&
	    n->by_pci(pci_bus_id, &d) == NVML_SUCCESS)
		return d;
	return NULL;
}

/* NVML's text of rc ("Insufficient Permissions"), or its number. */
static void nvml_error_text(const struct probe_nvml *n, nvml_ret rc, char *out,
			    size_t len)
{
	const char *s = n->error_string ? n->error_string(rc) : NULL;

	if (s && *s)
		snprintf(out, len, "%s", s);
	else
		snprintf(out, len, "NVML error %d", rc);
	probe_shown_text_clean(out);
}

int probe_nvml_enumerate(struct probe_nvml *n, struct probe_nvml_enum *e)
{
	const char *missing = NULL;
	unsigned i;

	memset(e, 0, sizeof(*e));
	if (n == NULL) {
		snprintf(e->unavailable, sizeof(e->unavailable),
			 "NVML not loaded");
		return -1;
	}
	if (n->count == NULL)
		missing = "nvmlDeviceGetCount_v2";
	else if (n->by_index == NULL)
		missing = "nvmlDeviceGetHandleByIndex_v2";
	else if (n->uuid == NULL)
		missing = "nvmlDeviceGetUUID";
	if (missing) {
		snprintf(e->unavailable, sizeof(e->unavailable),
			 "libnvidia-ml.so.1 has no %s", missing);
		return -1;
	}
	e->count_rc = n->count(&e->count);
	if (e->count_rc != NVML_SUCCESS) {
		nvml_error_text(n, e->count_rc, e->count_error,
				sizeof(e->count_error));
		return 0;
	}
	for (i = 0; i < e->count && i < PROBE_MAX_GPUS; i++) {
		struct probe_nvml_index *x = &e->gpu[i];
		nvml_dev d = NULL;

		x->handle_rc = n->by_index(i, &d);
		if (x->handle_rc != NVML_SUCCESS) {
			nvml_error_text(n, x->handle_rc, x->error,
					sizeof(x->error));
			continue;
		}
		x->uuid_rc = n->uuid(d, x->uuid, (unsigned)sizeof(x->uuid));
		x->uuid[sizeof(x->uuid) - 1] = '\0';
		if (x->uuid_rc != NVML_SUCCESS) {
			x->uuid[0] = '\0';
			nvml_error_text(n, x->uuid_rc, x->error,
					sizeof(x->error));
		}
	}
	return 0;
}

#define WHY(...) snprintf(why, whylen, __VA_ARGS__)

int probe_gpu_uuids_decide(const struct probe_nvml_enum *e,
			   const char *const *measured, size_t n_measured,
			   char (*out)[PROBE_GPU_UUID_MAX + 1], size_t *n_out,
			   char *why, size_t whylen)
{
	size_t i, j, len;
	int rc = -1;

	*n_out = 0;
	if (whylen)
		why[0] = '\0';
	if (e->unavailable[0]) {
		WHY("%s", e->unavailable);
		goto out;
	}
	if (e->count_rc != NVML_SUCCESS) {
		WHY("NVML could not count the node's GPUs (%s)",
		    e->count_error);
		goto out;
	}
	if (e->count > PROBE_MAX_GPUS) {
		WHY("NVML counts %u GPUs, more than the %d a report lists",
		    e->count, PROBE_MAX_GPUS);
		goto out;
	}
	/* an empty inventory would remove every GPU of the node; a node NVML
	 * finds none on has no inventory to give (review s25a F7) */
	if (e->count == 0) {
		WHY("NVML counts no GPU (this run measured %zu)", n_measured);
		goto out;
	}
	for (i = 0; i < e->count; i++) {
		const struct probe_nvml_index *x = &e->gpu[i];

		if (x->handle_rc != NVML_SUCCESS) {
			WHY("NVML could not read GPU %zu's handle (%s)", i,
			    x->error);
			goto out;
		}
		if (x->uuid_rc != NVML_SUCCESS) {
			WHY("NVML could not read GPU %zu's UUID (%s)", i,
			    x->error);
			goto out;
		}
		len = strnlen(x->uuid, sizeof(x->uuid));
		if (len == 0 || len > PROBE_GPU_UUID_MAX ||
		    !probe_shown_text_ok(x->uuid)) {
			WHY("NVML gave GPU %zu no usable UUID", i);
			goto out;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(e->gpu[j].uuid, x->uuid) == 0) {
				WHY("NVML gives GPUs %zu and %zu the same "
				    "UUID %s",
				    j, i, x->uuid);
				goto out;
			}
		}
	}
	for (i = 0; i < n_measured; i++) {
		if (measured[i] == NULL || measured[i][0] == '\0')
			continue;
		for (j = 0; j < e->count; j++)
			if (strcmp(e->gpu[j].uuid, measured[i]) == 0)
				break;
		if (j == e->count) {
			WHY("measured GPU %s is not among NVML's %u (MIG, or "
			    "CUDA and NVML disagree)",
			    measured[i], e->count);
			goto out;
		}
	}
	for (i = 0; i < e->count; i++)
		memcpy(out[i], e->gpu[i].uuid, sizeof(out[i]));
	*n_out = e->count;
	rc = 0;
out:
	return rc;
}

#undef WHY

static int get_u(nvml_ret (*fn)(nvml_dev, unsigned *), nvml_dev d)
{
	unsigned v;

	if (fn == NULL || fn(d, &v) != NVML_SUCCESS)
		return -1;
	return (int)v;
}

void probe_nvml_fill_gpu(struct probe_nvml *n, void *dev, struct probe_gpu *g)
{
	unsigned u, pending;
	int cur, pend, cc_major = -1, cc_minor = -1;

	if (n == NULL || dev == NULL)
		return;
	g->pcie_gen_current = get_u(n->pcie_gen_cur, dev);
	g->pcie_gen_max = get_u(n->pcie_gen_max, dev);
	g->pcie_width_current = get_u(n->pcie_width_cur, dev);
	g->pcie_width_max = get_u(n->pcie_width_max, dev);
	g->pcie_limit_gbps =
	    probe_pcie_gbps(g->pcie_gen_max, g->pcie_width_max);
	if (n->nvlink_state) {
		int active = 0;
		unsigned link;
		for (link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
			int st = 0;
			if (n->nvlink_state(dev, link, &st) != NVML_SUCCESS)
				continue;
			if (st) {
				active++;
				if (g->nvlink_version < 0 &&
				    n->nvlink_version &&
				    n->nvlink_version(dev, link, &u) ==
					NVML_SUCCESS)
					g->nvlink_version = (int)u;
			}
		}
		g->nvlink_active_links = active;
	}
	sscanf(g->compute_capability, "%d.%d", &cc_major, &cc_minor);
	if (g->nvlink_active_links > 0) {
		g->nvlink_per_link_gbps =
		    probe_nvlink_per_link_gbps(cc_major, cc_minor);
		g->nvlink_limit_gbps = probe_nvlink_gbps(
		    g->nvlink_active_links, g->nvlink_per_link_gbps);
	}
	if (n->ecc_mode && n->ecc_mode(dev, &cur, &pend) == NVML_SUCCESS)
		g->ecc_enabled = cur ? 1 : 0;
	if (n->mig_mode && n->mig_mode(dev, &u, &pending) == NVML_SUCCESS)
		g->mig_mode = u ? 1 : 0;
	if (n->power_limit && n->power_limit(dev, &u) == NVML_SUCCESS)
		g->power_limit_w = u / 1000.0;
	if (n->max_clock &&
	    n->max_clock(dev, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
		g->sm_clock_max_mhz = u;
	if (n->procs) {
		unsigned count = 0;
		nvml_ret rc = n->procs(dev, &count, NULL);
		if (rc == NVML_SUCCESS)
			g->compute_processes = 0;
		else if (rc == NVML_ERROR_INSUFFICIENT_SZ)
			g->compute_processes = (int)count;
	}
}

int probe_nvml_read(struct probe_nvml *n, void *dev,
		    struct probe_nvml_sample *s)
{
	unsigned u;
	unsigned long long r;

	s->t_s = probe_now_s();
	s->sm_clock_mhz = s->mem_clock_mhz = s->power_w = -1;
	s->temperature_c = -1;
	s->reasons = -1;
	s->pcie_gen = s->pcie_width = -1;
	if (n == NULL || dev == NULL)
		return -1;
	if (n->clock && n->clock(dev, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
		s->sm_clock_mhz = u;
	if (n->clock && n->clock(dev, NVML_CLOCK_MEM, &u) == NVML_SUCCESS)
		s->mem_clock_mhz = u;
	if (n->power && n->power(dev, &u) == NVML_SUCCESS)
		s->power_w = u / 1000.0;
	if (n->temperature &&
	    n->temperature(dev, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS)
		s->temperature_c = u;
	if (n->reasons && n->reasons(dev, &r) == NVML_SUCCESS)
		s->reasons = (long long)r;
	s->pcie_gen = get_u(n->pcie_gen_cur, dev);
	s->pcie_width = get_u(n->pcie_width_cur, dev);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_d);
	return probe_quantile_sorted(v, n, 0.5);
}

void probe_telemetry_aggregate(const struct probe_nvml_sample *s, size_t n,
			       struct probe_telemetry *out)
{
	double *sm, *mem, psum = 0, tmax = NAN;
	size_t i, nsm = 0, nmem = 0, np = 0;

	memset(out, 0, sizeof(*out));
	out->sm_clock_mhz = out->mem_clock_mhz = NAN;
	out->power_w = out->temperature_c = NAN;
	out->pcie_gen = out->pcie_width = -1;
	if (n == 0)
		return;
	sm = malloc(n * sizeof(*sm));
	mem = malloc(n * sizeof(*mem));
	if (sm == NULL || mem == NULL) {
		free(sm);
		free(mem);
		return;
	}
	for (i = 0; i < n; i++) {
		if (s[i].sm_clock_mhz >= 0)
			sm[nsm++] = s[i].sm_clock_mhz;
		if (s[i].mem_clock_mhz >= 0)
			mem[nmem++] = s[i].mem_clock_mhz;
		if (s[i].power_w >= 0) {
			psum += s[i].power_w;
			np++;
		}
		if (s[i].temperature_c >= 0 &&
		    (isnan(tmax) || s[i].temperature_c > tmax))
			tmax = s[i].temperature_c;
		if (s[i].reasons >= 0)
			out->reasons |= (unsigned long long)s[i].reasons;
		if (s[i].pcie_gen >= 0)
			out->pcie_gen = s[i].pcie_gen;
		if (s[i].pcie_width >= 0)
			out->pcie_width = s[i].pcie_width;
	}
	out->sm_clock_mhz = median_of(sm, nsm);
	out->mem_clock_mhz = median_of(mem, nmem);
	out->power_w = np ? psum / (double)np : NAN;
	out->temperature_c = tmax;
	out->samples = (int)n;
	out->valid = 1;
	free(sm);
	free(mem);
}

struct probe_sampler {
	struct probe_nvml *nvml;
	void **devs;
	size_t ndevs;
	/* Energy counters (mJ) at the start of the window, and when. */
	unsigned long long *energy0;
	int *energy_ok;
	double t0;
	int period_ms;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	struct probe_nvml_sample *s;
	size_t n, cap;
};

static void sampler_take(struct probe_sampler *p)
{
	size_t i;

	for (i = 0; i < p->ndevs; i++) {
		if (p->n == p->cap) {
			size_t ncap = p->cap ? p->cap * 2 : 256;
			struct probe_nvml_sample *ns =
			    realloc(p->s, ncap * sizeof(*ns));
			if (ns == NULL)
				return;
			p->s = ns;
			p->cap = ncap;
		}
		if (probe_nvml_read(p->nvml, p->devs[i], &p->s[p->n]) == 0)
			p->n++;
	}
}

static void *sampler_main(void *arg)
{
	struct probe_sampler *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec ts;
		pthread_mutex_unlock(&p->mu);
		sampler_take(p);
		pthread_mutex_lock(&p->mu);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)p->period_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		while (!p->stop &&
		       pthread_cond_timedwait(&p->cv, &p->mu, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct probe_sampler *probe_sampler_start(struct probe_nvml *n,
					  void *const *devs, size_t ndevs,
					  int period_ms)
{
	struct probe_sampler *p;
	size_t i;

	if (n == NULL || ndevs == 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->devs = calloc(ndevs, sizeof(*p->devs));
	if (p->devs == NULL) {
		free(p);
		return NULL;
	}
	for (i = 0; i < ndevs; i++)
		if (devs[i])
			p->devs[p->ndevs++] = devs[i];
	p->nvml = n;
	p->period_ms = period_ms > 0 ? period_ms : 100;
	p->energy0 = calloc(ndevs, sizeof(*p->energy0));
	p->energy_ok = calloc(ndevs, sizeof(*p->energy_ok));
	if (p->energy0 == NULL || p->energy_ok == NULL) {
		free(p->energy0);
		free(p->energy_ok);
		free(p->devs);
		free(p);
		return NULL;
	}
	for (i = 0; i < p->ndevs; i++)
		p->energy_ok[i] =
		    n->energy &&
		    n->energy(p->devs[i], &p->energy0[i]) == NVML_SUCCESS;
	p->t0 = probe_now_s();
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (p->ndevs == 0 ||
	    pthread_create(&p->thread, NULL, sampler_main, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p->energy0);
		free(p->energy_ok);
		free(p->devs);
		free(p);
		return NULL;
	}
	return p;
}

void probe_sampler_stop(struct probe_sampler *p, struct probe_telemetry *out)
{
	unsigned long long *e1;
	double pw;
	size_t i;

	if (p == NULL) {
		probe_telemetry_aggregate(NULL, 0, out);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	sampler_take(p); /* one reading at the end of the measurement */
	probe_telemetry_aggregate(p->s, p->n, out);
	/* Power over the whole window from the energy counters rather than
	 * instantaneous readings (nvmlDeviceGetPowerUsage is a 1 s average
	 * on recent GPUs and misses short windows). */
	e1 = calloc(p->ndevs, sizeof(*e1));
	if (e1 != NULL) {
		for (i = 0; i < p->ndevs; i++)
			if (p->energy_ok[i] &&
			    p->nvml->energy(p->devs[i], &e1[i]) != NVML_SUCCESS)
				p->energy_ok[i] = 0;
		pw = probe_energy_power_w(p->energy0, e1, p->energy_ok,
					  p->ndevs, probe_now_s() - p->t0);
		if (out->valid && isfinite(pw))
			out->power_w = pw;
		free(e1);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->s);
	free(p->devs);
	free(p->energy0);
	free(p->energy_ok);
	free(p);
}

double probe_energy_power_w(const unsigned long long *start_mj,
			    const unsigned long long *end_mj, const int *valid,
			    size_t n, double dt_s)
{
	double sum = 0;
	size_t i, used = 0;

	if (!(dt_s >= PROBE_ENERGY_MIN_WINDOW_S))
		return NAN;
	for (i = 0; i < n; i++) {
		if (!valid[i])
			continue;
		if (end_mj[i] < start_mj[i])
			return NAN; /* counter reset: no figure */
		sum += (double)(end_mj[i] - start_mj[i]) * 1e-3 / dt_s;
		used++;
	}
	return used ? sum / (double)used : NAN;
}

int probe_sysfs_pci(const char *root, const char *bus_id, int *numa_node,
		    char *device_id, size_t idlen)
{
	char path[512], buf[64], id[64];
	FILE *f;
	int rc = 0;

	*numa_node = -1;
	if (idlen)
		device_id[0] = '\0';
	probe_strlcpy(id, bus_id, sizeof(id));
	probe_strlower(id);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/numa_node", root,
		 id);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f)) {
		*numa_node = probe_numa_parse_node(buf);
	} else {
		rc = -1;
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/device", root, id);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, " \r\n")] = '\0';
		probe_strlcpy(device_id, buf, idlen);
		probe_strlower(device_id);
	} else {
		rc = -1;
	}
	if (f)
		fclose(f);
	return rc;
}

/* Unit tests of the probe's registry of measurements (registry.h): the
 * table the binary is built from, checked without a GPU. The table here
 * comes from the same PROBE_MEASUREMENTS list as the binary's, without
 * the run functions (they need CUDA). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "registry.h"
#include "report.h"
#include "testlib.h"

#define ROW(name, scope, group, modes, metrics, what, run)                     \
	{name, scope, group, modes, metrics, what, NULL},

static const struct probe_measurement tab[] = {PROBE_MEASUREMENTS(ROW)};
#define NTAB (sizeof(tab) / sizeof(tab[0]))

static const struct probe_measurement *find(const char *name)
{
	for (size_t i = 0; i < NTAB; i++)
		if (strcmp(tab[i].name, name) == 0)
			return &tab[i];
	return NULL;
}

static void test_table_is_valid(void)
{
	char err[256] = "";

	CHECK(NTAB >= 6);
	CHECK(probe_registry_check(tab, NTAB, err, sizeof(err)) == 0);
	if (err[0])
		printf("# %s\n", err);
}

/* Every metric of the report's (the server's) vocabulary is written by
 * some measurement, and each measurement's metrics are in it. */
static void test_metrics_covered(void)
{
	size_t n, i, j;
	const char *const *names = probe_metric_names(&n);

	for (i = 0; i < n; i++) {
		int found = 0;
		for (j = 0; j < NTAB && !found; j++) {
			const char *p = strstr(tab[j].metrics, names[i]);
			size_t l = strlen(names[i]);
			found = p && (p == tab[j].metrics || p[-1] == ',') &&
				(p[l] == '\0' || p[l] == ',');
		}
		if (!found)
			printf("# no measurement writes %s\n", names[i]);
		CHECK(found);
	}
}

static void test_check_refuses(void)
{
	struct probe_measurement bad[2];
	char err[256];

	memcpy(bad, tab, sizeof(bad));
	bad[1].name = bad[0].name;
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
	CHECK(strstr(err, "twice") != NULL);
	memcpy(bad, tab, sizeof(bad));
	bad[1].metrics = "gemm_tflops,nonsense_gbps";
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
	CHECK(strstr(err, "nonsense_gbps") != NULL);
	memcpy(bad, tab, sizeof(bad));
	bad[0].group = PROBE_ONLY_GEMM | PROBE_ONLY_HBM;
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
	bad[0].group = 0;
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
	memcpy(bad, tab, sizeof(bad));
	bad[0].modes = 0;
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
	bad[0].modes = PROBE_MODE_FULL;
	bad[0].name = "";
	CHECK(probe_registry_check(bad, 2, err, sizeof(err)) == -1);
}

static void test_selection(void)
{
	const struct probe_measurement *g = find("gemm"),
				       *n = find("nccl_allreduce");
	struct probe_measurement full_only;

	CHECK(g && n);
	if (!g || !n)
		return;
	CHECK(probe_measurement_selected(g, PROBE_ONLY_ALL, 1));
	CHECK(probe_measurement_selected(g, PROBE_ONLY_GEMM, 0));
	CHECK(!probe_measurement_selected(g, PROBE_ONLY_NCCL, 1));
	CHECK(probe_measurement_selected(n, PROBE_ONLY_NCCL, 1));
	full_only = *g;
	full_only.modes = PROBE_MODE_FULL;
	CHECK(!probe_measurement_selected(&full_only, PROBE_ONLY_ALL, 1));
	CHECK(probe_measurement_selected(&full_only, PROBE_ONLY_ALL, 0));
	CHECK(g->scope == PROBE_SCOPE_GPU && n->scope == PROBE_SCOPE_NODE);
	CHECK(find("host_copy")->scope == PROBE_SCOPE_GPU_SERIAL);
	CHECK(find("p2p_bw")->scope == PROBE_SCOPE_PAIR);
}

static void test_print(void)
{
	char *buf = NULL;
	size_t len = 0, i, lines = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (f == NULL)
		return;
	probe_registry_print(tab, NTAB, f);
	fclose(f);
	for (i = 0; i < NTAB; i++) {
		char head[64];
		snprintf(head, sizeof(head), "%s ", tab[i].name);
		CHECK(strstr(buf, head) != NULL);
		CHECK(strstr(buf, tab[i].metrics) != NULL);
	}
	for (i = 0; i < len; i++)
		lines += buf[i] == '\n';
	CHECK(lines == 3 * NTAB);
	CHECK(strstr(buf, "per-node") != NULL);
	CHECK(strstr(buf, "--only nccl") != NULL);
	free(buf);
	CHECK(strcmp(probe_scope_name(PROBE_SCOPE_PAIR), "per-pair") == 0);
	CHECK(strcmp(probe_scope_name((enum probe_scope)9), "?") == 0);
}

int main(void)
{
	RUN(test_table_is_valid);
	RUN(test_metrics_covered);
	RUN(test_check_refuses);
	RUN(test_selection);
	RUN(test_print);
	return testlib_finish();
}

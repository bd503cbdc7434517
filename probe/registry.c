#define _POSIX_C_SOURCE 200809L
#include "registry.h"

#include <string.h>

#include "cli.h"
#include "report.h"

const char *probe_scope_name(enum probe_scope s)
{
	switch (s) {
	case PROBE_SCOPE_GPU:
		return "per-GPU";
	case PROBE_SCOPE_GPU_SERIAL:
		return "per-GPU (one at a time)";
	case PROBE_SCOPE_PAIR:
		return "per-pair";
	case PROBE_SCOPE_NODE:
		return "per-node";
	}
	return "?";
}

int probe_measurement_selected(const struct probe_measurement *m, int only_mask,
			       int quick)
{
	unsigned mode = quick ? PROBE_MODE_QUICK : PROBE_MODE_FULL;

	return (m->group & only_mask) != 0 && (m->modes & mode) != 0;
}

static const char *modes_name(unsigned modes)
{
	if ((modes & PROBE_MODE_QUICK) && (modes & PROBE_MODE_FULL))
		return "quick,full";
	if (modes & PROBE_MODE_FULL)
		return "full";
	if (modes & PROBE_MODE_QUICK)
		return "quick";
	return "-";
}

void probe_registry_print(const struct probe_measurement *tab, size_t n,
			  FILE *f)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char group[16];
		probe_only_text(tab[i].group, group, sizeof(group));
		fprintf(f, "%-20s %-24s --only %-5s %s\n", tab[i].name,
			probe_scope_name(tab[i].scope), group,
			modes_name(tab[i].modes));
		fprintf(f, "    metrics: %s\n    %s\n", tab[i].metrics,
			tab[i].what);
	}
}

int probe_registry_check(const struct probe_measurement *tab, size_t n,
			 char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct probe_measurement *m = &tab[i];
		char buf[512], *save = NULL, *tok;

		if (m->name == NULL || m->name[0] == '\0') {
			snprintf(err, errlen, "entry %zu: no name", i);
			return -1;
		}
		for (j = 0; j < i; j++)
			if (strcmp(tab[j].name, m->name) == 0) {
				snprintf(err, errlen, "%s: listed twice",
					 m->name);
				return -1;
			}
		if (m->group <= 0 || (m->group & ~PROBE_ONLY_ALL) ||
		    (m->group & (m->group - 1))) {
			snprintf(err, errlen, "%s: not one --only group",
				 m->name);
			return -1;
		}
		if ((m->modes & (PROBE_MODE_QUICK | PROBE_MODE_FULL)) == 0) {
			snprintf(err, errlen, "%s: runs in no mode", m->name);
			return -1;
		}
		if (m->metrics == NULL || strlen(m->metrics) >= sizeof(buf)) {
			snprintf(err, errlen, "%s: no metric list", m->name);
			return -1;
		}
		strcpy(buf, m->metrics);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save))
			if (!probe_metric_known(tok)) {
				snprintf(err, errlen,
					 "%s: metric %s is not in the report's "
					 "list",
					 m->name, tok);
				return -1;
			}
	}
	return 0;
}

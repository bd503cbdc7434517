/* The binary's registry: PROBE_MEASUREMENTS with the run functions. */
#include "registry.h"

#include "cli.h"
#include "run.h"

#define PROBE_ROW(name, scope, group, modes, metrics, what, run)               \
	{name, scope, group, modes, metrics, what, run},

static const struct probe_measurement table[] = {PROBE_MEASUREMENTS(PROBE_ROW)};

const struct probe_measurement *probe_registry(size_t *n)
{
	*n = sizeof(table) / sizeof(table[0]);
	return table;
}

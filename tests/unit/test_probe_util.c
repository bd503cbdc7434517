/* Unit tests of gpusizer-probe's helpers: run_id, times, cpuinfo, clock
 * reasons, token, sysfs and the NVML-free telemetry aggregate. Run from the
 * repository root (fixtures are read from tests/fixtures/probe). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "limits.h"
#include "nvml.h"
#include "probe_fixtures.h"
#include "report.h"
#include "testlib.h"
#include "util.h"

/* ---- util ---------------------------------------------------------- */

static void test_uuid(void)
{
	char ids[50][PROBE_UUID_LEN + 1];
	int i, j, dup = 0, bad = 0;

	for (i = 0; i < 50; i++) {
		CHECK(probe_uuid_v4(ids[i]) == 0);
		if (!probe_uuid_is_v4(ids[i]) || strlen(ids[i]) != 36)
			bad++;
		for (j = 0; j < i; j++)
			dup += strcmp(ids[i], ids[j]) == 0;
	}
	CHECK(bad == 0 && dup == 0);
	CHECK(ids[0][14] == '4');
	CHECK(strchr("89ab", ids[0][19]) != NULL);
	CHECK(probe_uuid_is_v4("3b0f5c1e-9a7d-4c2b-8e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e-9a7d-1c2b-8e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e-9a7d-4c2b-7e51-6f2a1d0c9b84"));
	CHECK(!probe_uuid_is_v4("3b0f5c1e9a7d-4c2b-8e51-6f2a1d0c9b84-"));
	CHECK(!probe_uuid_is_v4("../../etc/passwd"));
	CHECK(!probe_uuid_is_v4(""));
	CHECK(!probe_uuid_is_v4(NULL));
}

static void test_rfc3339(void)
{
	struct timespec ts = {0, 5000000};
	char buf[40];

	probe_rfc3339_utc(&ts, buf, sizeof(buf));
	CHECK(strcmp(buf, "1970-01-01T00:00:00.005Z") == 0);
	ts.tv_sec = 1763683200; /* 2025-11-21 00:00:00 UTC */
	ts.tv_nsec = 999999999;
	probe_rfc3339_utc(&ts, buf, sizeof(buf));
	CHECK(strcmp(buf, "2025-11-21T00:00:00.999Z") == 0);
}

static void test_cpu_model(void)
{
	char m[256];

	CHECK(probe_cpu_model(FIX "cpuinfo_synthetic_x86.txt", m, sizeof(m)) ==
	      0);
	CHECK(strcmp(m, "Synthetic(R) Xeon(R) Platinum 0000 CPU @ 2.00GHz") ==
	      0);
	CHECK(probe_cpu_model(FIX "cpuinfo_synthetic_arm.txt", m, sizeof(m)) ==
	      0);
	CHECK(strcmp(m, "arm implementer 0x41 part 0xd4f") == 0);
	CHECK(probe_cpu_model(FIX "does-not-exist", m, sizeof(m)) == -1);
	CHECK(strcmp(m, "unknown") == 0);
}

static void test_clock_reasons(void)
{
	const char *n[16];
	size_t k;

	CHECK(probe_clock_event_reason_names(0, n, 16) == 0);
	k = probe_clock_event_reason_names(0x4 | 0x40, n, 16);
	CHECK(k == 2 && strcmp(n[0], "sw_power_cap") == 0 &&
	      strcmp(n[1], "hw_thermal_slowdown") == 0);
	k = probe_clock_event_reason_names(0x1ULL | 0x10000ULL, n, 16);
	CHECK(k == 2 && strcmp(n[0], "gpu_idle") == 0 &&
	      strcmp(n[1], "other") == 0);
	CHECK(probe_clock_event_reason_names(0x1ff, n, 3) == 3);
}

static void test_token(void)
{
	char path[] = "/tmp/probe-token-XXXXXX", tok[128], err[256];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, "  s3cr3t-token\nsecond line\n", 27) == 27);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == 0);
	CHECK(strcmp(tok, "s3cr3t-token") == 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "\n", 1) == 1);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
	CHECK(strstr(err, "empty") != NULL);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "a b\n", 4) == 4);
	close(fd);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
	CHECK(strstr(err, "a b") == NULL); /* never echo the token */
	unlink(path);
	CHECK(probe_read_token(path, tok, sizeof(tok), err, sizeof(err)) == -1);
}

static void test_sysfs(void)
{
	int numa = 7;
	char id[16];

	CHECK(probe_sysfs_pci(FIX "sysfs_synthetic", "0000:5D:00.0", &numa, id,
			      sizeof(id)) == 0);
	CHECK(numa == 1);
	CHECK(strcmp(id, "0x2330") == 0);
	CHECK(probe_sysfs_pci(FIX "sysfs_synthetic", "0000:01:00.0", &numa, id,
			      sizeof(id)) == -1);
	CHECK(numa == -1 && id[0] == '\0');
}

static void test_telemetry_aggregate(void)
{
	struct probe_nvml_sample s[3] = {
	    {0, 1755, 2619, 690, 60, 0x4, 5, 16},
	    {0, 1980, 2619, 650, 64, 0x0, 5, 16},
	    {0, 1800, -1, -1, 62, 0x20, 4, 8},
	};
	struct probe_telemetry t;

	probe_telemetry_aggregate(s, 3, &t);
	CHECK(t.valid && t.samples == 3);
	CHECK_NEAR(t.sm_clock_mhz, 1800, 1e-12);
	CHECK_NEAR(t.mem_clock_mhz, 2619, 1e-12);
	CHECK_NEAR(t.power_w, 670, 1e-12);
	CHECK_NEAR(t.temperature_c, 64, 1e-12);
	CHECK(t.reasons == 0x24);
	CHECK(t.pcie_gen == 4 && t.pcie_width == 8);
	probe_telemetry_aggregate(s, 0, &t);
	CHECK(!t.valid);
}

int main(void)
{
	RUN(test_uuid);
	RUN(test_rfc3339);
	RUN(test_cpu_model);
	RUN(test_clock_reasons);
	RUN(test_token);
	RUN(test_sysfs);
	RUN(test_telemetry_aggregate);
	return testlib_finish();
}

#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const struct {
	const char *name;
	int bit;
} only_names[] = {
    {"gemm", PROBE_ONLY_GEMM}, {"hbm", PROBE_ONLY_HBM},
    {"h2d", PROBE_ONLY_H2D},   {"p2p", PROBE_ONLY_P2P},
    {"nccl", PROBE_ONLY_NCCL},
};

#define N_ONLY (sizeof(only_names) / sizeof(only_names[0]))

const char *probe_usage(void)
{
	return "usage: gpusizer-probe [--quick | --full] "
	       "[--only gemm,hbm,h2d,p2p,nccl]\n"
	       "                      [--devices 0,1,...] [--isolated] "
	       "[--output FILE] [--sustain-s N]\n"
	       "                      [--server URL [--token-file F]] "
	       "[--spool-dir DIR]\n"
	       "                      [--timeout-ms N] "
	       "[--connect-timeout-ms N] [--retries N] [--backoff-ms N]\n"
	       "                      [--no-nvml (testing: no telemetry, "
	       "no NVML limits)]\n"
	       "       gpusizer-probe --post FILE --server URL "
	       "[--token-file F] [--spool-dir DIR]\n"
	       "       gpusizer-probe --flush-spool --server URL "
	       "[--token-file F] [--spool-dir DIR]\n"
	       "       gpusizer-probe --list | --help | --version\n"
	       "\n"
	       "Measures the node's GPUs and writes one JSON report (stdout "
	       "or --output);\n"
	       "with --server posts it to URL/v1/benchmarks and spools it "
	       "when that fails.\n"
	       "Spool directory: --spool-dir, else $GPUSIZER_SPOOL_DIR, "
	       "else " PROBE_DEFAULT_SPOOL_DIR ".\n"
	       "Exit codes: 0 ok, 1 failed, 2 partial, 3 no usable GPU, "
	       "4 library missing,\n"
	       "            5 report not delivered (spooled), 6 rejected by "
	       "the server,\n"
	       "            7 token or server URL refused (spooled), 64 "
	       "usage.\n"
	       "See docs/PROBE.md.\n";
}

void probe_only_text(int mask, char *out, size_t outlen)
{
	size_t i, used = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < N_ONLY; i++) {
		if (!(mask & only_names[i].bit))
			continue;
		int w = snprintf(out + used, outlen - used, "%s%s",
				 used ? "," : "", only_names[i].name);
		if (w < 0 || (size_t)w >= outlen - used)
			return;
		used += (size_t)w;
	}
}

int probe_parse_only(const char *list, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	int mask = 0;
	size_t i;

	if (list == NULL || *list == '\0') {
		snprintf(err, errlen, "--only: empty list");
		return -1;
	}
	if (strlen(list) >= sizeof(buf)) {
		snprintf(err, errlen, "--only: list too long");
		return -1;
	}
	probe_strlcpy(buf, list, sizeof(buf));
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < N_ONLY; i++)
			if (strcmp(tok, only_names[i].name) == 0)
				break;
		if (i == N_ONLY) {
			snprintf(err, errlen,
				 "--only: unknown measurement '%.40s' (known: "
				 "gemm, hbm, h2d, p2p, nccl)",
				 tok);
			return -1;
		}
		mask |= only_names[i].bit;
	}
	if (mask == 0) {
		snprintf(err, errlen, "--only: empty list");
		return -1;
	}
	return mask;
}

static int parse_long(const char *opt, const char *s, long lo, long hi,
		      long *out, char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	/* digits only: strtol would also take " 1" and "+1" */
	if (errno || end == s || *end != '\0' || v < lo || v > hi || *s < '0' ||
	    *s > '9') {
		snprintf(err, errlen, "%s: expected an integer in [%ld, %ld]",
			 opt, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_devices(const char *s, struct probe_cli *c, char *err,
			 size_t errlen)
{
	char buf[512], *save = NULL, *tok;

	/* every item a number: an empty one (",", "0,,1", "1,") is a
	 * mistake, not "all GPUs" (review s24g G9) */
	if (strlen(s) >= sizeof(buf) || *s == '\0' || *s == ',' ||
	    s[strlen(s) - 1] == ',' || strstr(s, ",,")) {
		snprintf(err, errlen, "--devices: expected a list like 0,1,2");
		return -1;
	}
	probe_strlcpy(buf, s, sizeof(buf));
	c->n_devices = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long v;
		int i;
		if (parse_long("--devices", tok, 0, PROBE_MAX_DEVICES - 1, &v,
			       err, errlen))
			return -1;
		for (i = 0; i < c->n_devices; i++) {
			if (c->devices[i] == (int)v) {
				snprintf(err, errlen,
					 "--devices: %ld given twice", v);
				return -1;
			}
		}
		c->devices[c->n_devices++] = (int)v;
	}
	return 0;
}

/* Options that shape a measurement run, which --post and --flush-spool
 * (they measure nothing) must not be given: ignored, they had read as
 * done (review s24g G10: --post f --output x wrote no x, exit 0). */
static const char *const measuring_options[] = {
    "--quick",	 "--full",     "--only",      "--output",
    "--devices", "--isolated", "--sustain-s", "--no-nvml"};

int probe_cli_parse(int argc, char *const *argv, const char *env_spool,
		    struct probe_cli *c, char *err, size_t errlen)
{
	int i, full = 0;
	const char *spool = NULL, *measuring = NULL;

	memset(c, 0, sizeof(*c));
	c->only_mask = PROBE_ONLY_ALL;
	c->timeout_ms = 30000;
	c->connect_timeout_ms = 5000;
	c->retries = 4;
	c->backoff_ms = 1000;
	c->sustain_s = 60;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq;
		char name[64];
		int takes;

		if (strncmp(a, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument '%.60s'", a);
			return -1;
		}
		eq = strchr(a, '=');
		if (eq) {
			size_t n = (size_t)(eq - a);
			if (n >= sizeof(name))
				n = sizeof(name) - 1;
			memcpy(name, a, n);
			name[n] = '\0';
			val = eq + 1;
		} else {
			probe_strlcpy(name, a, sizeof(name));
		}
		takes = strcmp(name, "--only") == 0 ||
			strcmp(name, "--output") == 0 ||
			strcmp(name, "--server") == 0 ||
			strcmp(name, "--token-file") == 0 ||
			strcmp(name, "--spool-dir") == 0 ||
			strcmp(name, "--post") == 0 ||
			strcmp(name, "--devices") == 0 ||
			strcmp(name, "--timeout-ms") == 0 ||
			strcmp(name, "--connect-timeout-ms") == 0 ||
			strcmp(name, "--retries") == 0 ||
			strcmp(name, "--backoff-ms") == 0 ||
			strcmp(name, "--sustain-s") == 0;
		if (takes && val == NULL) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s: missing value",
					 name);
				return -1;
			}
			val = argv[++i];
		} else if (!takes && val != NULL) {
			snprintf(err, errlen, "%s: takes no value", name);
			return -1;
		}
		if (takes && *val == '\0') {
			snprintf(err, errlen, "%s: empty value", name);
			return -1;
		}
		for (size_t k = 0; k < sizeof(measuring_options) /
					   sizeof(measuring_options[0]);
		     k++)
			if (strcmp(name, measuring_options[k]) == 0)
				measuring = measuring_options[k];

		if (strcmp(name, "--quick") == 0) {
			c->quick = 1;
		} else if (strcmp(name, "--full") == 0) {
			full = 1;
		} else if (strcmp(name, "--only") == 0) {
			int m = probe_parse_only(val, err, errlen);
			if (m < 0)
				return -1;
			c->only_mask = m;
			c->only_given = 1;
		} else if (strcmp(name, "--output") == 0) {
			c->output = val;
		} else if (strcmp(name, "--server") == 0) {
			if (strncmp(val, "http://", 7) != 0 &&
			    strncmp(val, "https://", 8) != 0) {
				snprintf(err, errlen,
					 "--server: expected an http:// or "
					 "https:// URL");
				return -1;
			}
			/* /v1/benchmarks is appended: a query or fragment
			 * would swallow it ("/?token=x/v1/benchmarks") */
			if (strpbrk(val, "?#")) {
				snprintf(err, errlen,
					 "--server: the daemon's base URL, "
					 "without a query or fragment (the "
					 "token goes in --token-file)");
				return -1;
			}
			c->server = val;
		} else if (strcmp(name, "--token-file") == 0) {
			c->token_file = val;
		} else if (strcmp(name, "--spool-dir") == 0) {
			spool = val;
		} else if (strcmp(name, "--flush-spool") == 0) {
			c->flush_spool = 1;
		} else if (strcmp(name, "--post") == 0) {
			c->post_file = val;
		} else if (strcmp(name, "--isolated") == 0) {
			c->isolated = 1;
		} else if (strcmp(name, "--devices") == 0) {
			if (parse_devices(val, c, err, errlen))
				return -1;
		} else if (strcmp(name, "--timeout-ms") == 0) {
			if (parse_long(name, val, 100, 3600000, &c->timeout_ms,
				       err, errlen))
				return -1;
		} else if (strcmp(name, "--connect-timeout-ms") == 0) {
			if (parse_long(name, val, 100, 600000,
				       &c->connect_timeout_ms, err, errlen))
				return -1;
		} else if (strcmp(name, "--retries") == 0) {
			long v;
			if (parse_long(name, val, 0, 20, &v, err, errlen))
				return -1;
			c->retries = (int)v;
		} else if (strcmp(name, "--backoff-ms") == 0) {
			if (parse_long(name, val, 0, 600000, &c->backoff_ms,
				       err, errlen))
				return -1;
		} else if (strcmp(name, "--sustain-s") == 0) {
			long v;
			if (parse_long(name, val, 1, 3600, &v, err, errlen))
				return -1;
			c->sustain_s = (int)v;
		} else if (strcmp(name, "--no-nvml") == 0) {
			c->no_nvml = 1;
		} else if (strcmp(name, "--help") == 0) {
			c->help = 1;
		} else if (strcmp(name, "--version") == 0) {
			c->version = 1;
		} else if (strcmp(name, "--list") == 0) {
			c->list = 1;
		} else {
			snprintf(err, errlen, "unknown option '%.60s'", name);
			return -1;
		}
	}
	if (c->quick && full) {
		snprintf(err, errlen, "--quick and --full exclude each other");
		return -1;
	}
	if ((c->post_file || c->flush_spool) && c->server == NULL) {
		snprintf(err, errlen, "%s needs --server URL",
			 c->post_file ? "--post" : "--flush-spool");
		return -1;
	}
	if ((c->post_file || c->flush_spool) && measuring) {
		snprintf(err, errlen, "%s measures nothing: %s does not apply",
			 c->post_file ? "--post" : "--flush-spool", measuring);
		return -1;
	}
	if (c->token_file && c->server == NULL) {
		snprintf(err, errlen, "--token-file needs --server URL");
		return -1;
	}
	if (spool == NULL)
		spool = (env_spool && *env_spool) ? env_spool
						  : PROBE_DEFAULT_SPOOL_DIR;
	if (strlen(spool) >= sizeof(c->spool_dir)) {
		snprintf(err, errlen, "--spool-dir: path too long");
		return -1;
	}
	probe_strlcpy(c->spool_dir, spool, sizeof(c->spool_dir));
	probe_only_text(c->only_mask, c->only_text, sizeof(c->only_text));
	return 0;
}

/* Command-line parsing for gpusizer-probe (plain C, reentrant). */
#ifndef GPUSIZER_PROBE_CLI_H
#define GPUSIZER_PROBE_CLI_H

#include <stddef.h>

#define PROBE_ONLY_GEMM 0x01
#define PROBE_ONLY_HBM	0x02
#define PROBE_ONLY_H2D	0x04
#define PROBE_ONLY_P2P	0x08
#define PROBE_ONLY_NCCL 0x10
#define PROBE_ONLY_ALL	0x1f

#define PROBE_DEFAULT_SPOOL_DIR "/var/spool/gpusizer-probe"
#define PROBE_MAX_DEVICES	64

struct probe_cli {
	int quick;     /* --quick */
	int only_mask; /* PROBE_ONLY_* bits; ALL unless --only */
	int only_given;
	char only_text[128];	/* normalised "gemm,hbm" in canonical order */
	const char *output;	/* --output FILE, NULL: stdout */
	const char *server;	/* --server URL */
	const char *token_file; /* --token-file F */
	char spool_dir[4096];	/* --spool-dir, $GPUSIZER_SPOOL_DIR, default */
	int flush_spool;	/* --flush-spool */
	const char *post_file;	/* --post FILE */
	int isolated;		/* --isolated: one GPU at a time */
	int devices[PROBE_MAX_DEVICES]; /* --devices 0,1,.. */
	int n_devices;			/* 0: all */
	long timeout_ms;		/* --timeout-ms, per HTTP attempt */
	long connect_timeout_ms;
	int retries;	 /* --retries: attempts after the first */
	long backoff_ms; /* --backoff-ms: first retry delay */
	int no_nvml;	 /* --no-nvml (testing: pretend NVML absent) */
	int help;
	int version;
	int list;      /* --list: print the registry of measurements */
	int sustain_s; /* --sustain-s: seconds per sustained GEMM (60) */
};

/* Parses argv[1..argc-1]. env_spool is $GPUSIZER_SPOOL_DIR (may be NULL).
 * Returns 0, or -1 with a one-line message in err naming the option. */
int probe_cli_parse(int argc, char *const *argv, const char *env_spool,
		    struct probe_cli *out, char *err, size_t errlen);

/* Parses "gemm,hbm,h2d,p2p,nccl" (any subset, any order) into a mask.
 * Returns the mask (> 0) or -1 with a message. */
int probe_parse_only(const char *list, char *err, size_t errlen);

/* Writes the canonical comma list for a mask. */
void probe_only_text(int mask, char *out, size_t outlen);

/* The usage text. */
const char *probe_usage(void);

#endif

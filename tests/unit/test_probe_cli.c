/* Unit tests of gpusizer-probe's command line (probe/cli.c). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "testlib.h"

/* ---- CLI ----------------------------------------------------------- */

static int parse(struct probe_cli *c, const char *env, char *err, size_t errlen,
		 int argc, ...)
{
	char *argv[32];
	va_list ap;
	int i;

	argv[0] = (char *)"gpusizer-probe";
	va_start(ap, argc);
	for (i = 1; i <= argc && i < 31; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return probe_cli_parse(argc + 1, argv, env, c, err, errlen);
}

static void test_cli_ok(void)
{
	struct probe_cli c;
	char err[256];

	CHECK(parse(&c, NULL, err, sizeof(err), 0) == 0);
	CHECK(!c.quick && c.only_mask == PROBE_ONLY_ALL && !c.only_given);
	CHECK(strcmp(c.spool_dir, PROBE_DEFAULT_SPOOL_DIR) == 0);
	CHECK(c.output == NULL && c.server == NULL);
	CHECK(c.retries == 4 && c.timeout_ms == 30000);
	CHECK(c.sustain_s == 60 && !c.list);
	CHECK(parse(&c, NULL, err, sizeof(err), 3, "--full", "--sustain-s",
		    "120") == 0);
	CHECK(c.sustain_s == 120);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--list") == 0 && c.list);

	CHECK(parse(&c, "/env/spool", err, sizeof(err), 6, "--quick", "--only",
		    "p2p,gemm", "--output=/tmp/r.json", "--devices",
		    "0,2") == 0);
	CHECK(c.quick && c.only_given);
	CHECK(c.only_mask == (PROBE_ONLY_GEMM | PROBE_ONLY_P2P));
	CHECK(strcmp(c.only_text, "gemm,p2p") == 0);
	CHECK(strcmp(c.output, "/tmp/r.json") == 0);
	CHECK(strcmp(c.spool_dir, "/env/spool") == 0);
	CHECK(c.n_devices == 2 && c.devices[0] == 0 && c.devices[1] == 2);

	CHECK(parse(&c, "/env/spool", err, sizeof(err), 10, "--server",
		    "http://127.0.0.1:8080/", "--token-file", "/etc/tok",
		    "--spool-dir", "/tmp/sp", "--post", "r.json", "--retries",
		    "0") == 0);
	CHECK(strcmp(c.spool_dir, "/tmp/sp") == 0);
	CHECK(strcmp(c.post_file, "r.json") == 0 && c.retries == 0);
	CHECK(strcmp(c.token_file, "/etc/tok") == 0);

	CHECK(parse(&c, NULL, err, sizeof(err), 2, "--flush-spool",
		    "--server=https://gpusizer.example") == 0);
	CHECK(c.flush_spool && !c.quick);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--help") == 0 && c.help);
	CHECK(parse(&c, NULL, err, sizeof(err), 1, "--version") == 0 &&
	      c.version);
}

static void expect_cli_error(const char *want, int argc, const char *a,
			     const char *b, const char *c3)
{
	struct probe_cli c;
	char err[256] = "";
	int rc = parse(&c, NULL, err, sizeof(err), argc, a, b, c3);

	CHECK(rc == -1);
	if (strstr(err, want) == NULL) {
		printf("# error '%s' lacks '%s'\n", err, want);
		CHECK(0);
	}
}

static void test_cli_errors(void)
{
	expect_cli_error("unknown option '--fast'", 1, "--fast", NULL, NULL);
	expect_cli_error("--only: unknown measurement 'gpu'", 2, "--only",
			 "gemm,gpu", NULL);
	expect_cli_error("--only: empty", 1, "--only=", NULL, NULL);
	expect_cli_error("--quick and --full", 2, "--quick", "--full", NULL);
	expect_cli_error("--post needs --server", 2, "--post", "x.json", NULL);
	expect_cli_error("--flush-spool needs --server", 1, "--flush-spool",
			 NULL, NULL);
	expect_cli_error("--token-file needs --server", 2, "--token-file", "t",
			 NULL);
	expect_cli_error("--server: expected an http", 2, "--server", "ftp://x",
			 NULL);
	expect_cli_error("--server: the daemon's base URL, without a query", 2,
			 "--server", "http://h/?token=x", NULL);
	expect_cli_error("--server: the daemon's base URL, without a query", 2,
			 "--server", "http://h/#x", NULL);
	expect_cli_error("--retries: expected an integer", 2, "--retries", "-1",
			 NULL);
	expect_cli_error("--timeout-ms: expected an integer", 2, "--timeout-ms",
			 "12ms", NULL);
	expect_cli_error("--output: missing value", 1, "--output", NULL, NULL);
	expect_cli_error("--devices: 1 given twice", 2, "--devices", "1,1",
			 NULL);
	/* review s24g G9: an empty item, a sign or a space is refused, not
	 * read as all GPUs or as a number */
	expect_cli_error("--devices: expected a list", 2, "--devices", ",",
			 NULL);
	expect_cli_error("--devices: expected a list", 2, "--devices", "0,,1",
			 NULL);
	expect_cli_error("--devices: expected a list", 2, "--devices", "1,",
			 NULL);
	expect_cli_error("--devices: expected an integer", 2, "--devices", "+1",
			 NULL);
	expect_cli_error("--retries: expected an integer", 2, "--retries", " 3",
			 NULL);
	/* review s24g G10: a measuring option beside --post is a mistake */
	expect_cli_error("--flush-spool measures nothing: --quick does not "
			 "apply",
			 3, "--flush-spool", "--server=http://h", "--quick");
	expect_cli_error("--post measures nothing: --output does not apply", 3,
			 "--post=r.json", "--server=http://h", "--output=x");
	expect_cli_error("--quick: takes no value", 1, "--quick=1", NULL, NULL);
	expect_cli_error("unexpected argument 'quick'", 1, "quick", NULL, NULL);
	expect_cli_error("--sustain-s: expected an integer in [1, 3600]", 2,
			 "--sustain-s", "0", NULL);
	expect_cli_error("--sustain-s: missing value", 1, "--sustain-s", NULL,
			 NULL);
}

int main(void)
{
	RUN(test_cli_ok);
	RUN(test_cli_errors);
	return testlib_finish();
}

/* test_conninfo.c - the conninfo the daemon logs (storage/db.c
 * db_conninfo_redacted, used by server/config.c config_log): libpq parses
 * it, and no password survives in any spelling libpq accepts.
 */
#include <string.h>

#include "storage/db.h"
#include "tests/unit/testlib.h"

static char out[1024];

/* Redacts in; true when no secret fragment is left and want is there. */
static int redacts(const char *in, const char *want)
{
	static const char *const secrets[] = {"s3cr3t", "hunter2", "p@ss",
					      "p%40ss", "a b"};

	db_conninfo_redacted(in, out, sizeof(out));
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (strstr(out, secrets[i])) {
			printf("# \"%s\" -> \"%s\": \"%s\" is left\n", in, out,
			       secrets[i]);
			return 0;
		}
	if (want && !strstr(out, want)) {
		printf("# \"%s\" -> \"%s\": no \"%s\"\n", in, out, want);
		return 0;
	}
	return 1;
}

static int count(const char *s, const char *sub)
{
	int n = 0;

	for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub))
		n++;
	return n;
}

static void test_keyword_value(void)
{
	/* In libpq's order of keywords. */
	CHECK(redacts("host=db user=u password=s3cr3t dbname=g",
		      "user=u password=*** dbname=g host=db"));
	/* Spaces around '=' (the old redactor looked for "password="). */
	CHECK(redacts("host=db password = s3cr3t user=u", "password=***"));
	CHECK(redacts("host=db password =s3cr3t", "password=***"));
	/* A quoted password with spaces, quotes and backslashes. */
	CHECK(redacts("password='a b s3cr3t' user=u", "user=u password=***"));
	CHECK(redacts("password='it\\'s s3cr3t\\\\' user=u", "user=u"));
	/* A repeated keyword: libpq uses the last; neither is shown. */
	CHECK(redacts("password=hunter2 host=db password=s3cr3t",
		      "password=*** host=db"));
	CHECK(count(out, "password") == 1);
	CHECK(redacts("sslpassword=s3cr3t host=db", "sslpassword=***"));
}

static void test_uri(void)
{
	CHECK(redacts("postgresql://alice:s3cr3t@db.example:5433/gpusizer",
		      "user=alice password=*** dbname=gpusizer "
		      "host=db.example port=5433"));
	CHECK(redacts("postgres://alice@db/gpusizer?password=s3cr3t&sslmode="
		      "require",
		      "password=***"));
	CHECK(strstr(out, "sslmode=require") != NULL);
	CHECK(redacts("postgresql://alice:hunter2@db/g?password=s3cr3t",
		      "password=***"));
	CHECK(count(out, "password") == 1);
	/* Percent-encoded, in the userinfo and in the query. */
	CHECK(redacts("postgresql://alice:p%40ss@db/g", "password=***"));
	CHECK(redacts("postgresql://db/g?user=alice&password=p%40ss",
		      "user=alice"));
	/* A URI with no password says none. */
	CHECK(redacts("postgresql://alice@db/g", "user=alice"));
	CHECK(strstr(out, "password") == NULL);
}

static void test_values_and_errors(void)
{
	/* Values that need quotes keep them, so the line reads back. */
	CHECK(redacts("host=/run/pg application_name='my app' password=s3cr3t",
		      "password=*** host=/run/pg application_name='my app'"));
	/* What libpq cannot parse is not shown: its message may quote it. */
	CHECK(redacts("host=db password='unterminated s3cr3t",
		      "not a valid conninfo"));
	CHECK(redacts("host=db s3cr3t", "not a valid conninfo"));
	CHECK(redacts("postgresql://alice:s3cr3t@db/g?nosuch=1",
		      "not a valid conninfo"));
	CHECK(redacts("", ""));
	/* A short buffer truncates, terminated. */
	{
		char small[12];

		memset(small, 'x', sizeof(small));
		db_conninfo_redacted("host=averylonghostname password=s3cr3t",
				     small, sizeof(small));
		CHECK(strlen(small) == sizeof(small) - 1);
		CHECK(strstr(small, "s3cr3t") == NULL);
	}
}

int main(void)
{
	RUN(test_keyword_value);
	RUN(test_uri);
	RUN(test_values_and_errors);
	return testlib_finish();
}

/* fuzz_util.c - the small text validators every query and report goes
 * through: rfc3339_valid (since=, started_at, finished_at), uuid_valid
 * (run ids, recommendation ids) and query_limit (?limit=).
 *
 * Oracles: a date rfc3339_valid accepts is a real calendar day (checked
 * independently with timegm/gmtime), its clock fields are in range; a
 * UUID it accepts is 36 bytes of the 8-4-4-4-12 shape; limit is 1..500 or
 * a 400 that names "limit".
 */
#include <ctype.h>
#include <time.h>

#include "handlers/problem.h"
#include "handlers/util.h"
#include "tests/fuzz/fuzz_common.h"

static int num(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

static void check_date(const char *s)
{
	struct tm tm = {0}, back;
	time_t t;

	tm.tm_year = num(s, 4) - 1900;
	tm.tm_mon = num(s + 5, 2) - 1;
	tm.tm_mday = num(s + 8, 2);
	tm.tm_hour = 12;
	t = timegm(&tm);
	gmtime_r(&t, &back);
	if (back.tm_mday != tm.tm_mday || back.tm_mon != tm.tm_mon)
		FZ_FAIL("rfc3339_valid accepted a day that does not exist: "
			"%.10s",
			s);
	if (strlen(s) > 10) {
		const char *p = s + 11;
		if (num(p, 2) > 23 || num(p + 3, 2) > 59 || num(p + 6, 2) > 60)
			FZ_FAIL("rfc3339_valid accepted clock %.8s", p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_strndup(data, size);
	struct request req = {0};
	struct response res = {0};
	int lim;

	if (rfc3339_valid(s))
		check_date(s);
	if (uuid_valid(s)) {
		if (strlen(s) != 36 || s[8] != '-' || s[13] != '-' ||
		    s[18] != '-' || s[23] != '-')
			FZ_FAIL("uuid_valid accepted \"%s\"", s);
		for (int i = 0; i < 36; i++)
			if (s[i] != '-' && !isxdigit((unsigned char)s[i]))
				FZ_FAIL("uuid_valid accepted \"%s\"", s);
	}
	req.query[0].key = "limit";
	req.query[0].value = s;
	req.nquery = 1;
	lim = query_limit(&req, &res);
	if (lim == -1) {
		if (problem_field_count(&res) != 1)
			FZ_FAIL("query_limit refused without a field error");
		fz_check_response(&res, 0);
	} else if (lim < 1 || lim > 500) {
		FZ_FAIL("query_limit returned %d", lim);
	}
	res_release(&res);
	free(s);
	return 0;
}

/* stub_report.c - stands in for storage/report.c: the capacity report
 * finds the database unavailable (no harness fuzzes its rendering; the
 * route table refers to its handler).
 */
#include "storage/report.h"
#include "tests/fuzz/stubs/stub_common.h"

enum store_status store_report_capacity(struct db_pool *pool,
					const struct report_query *q,
					json_t **out, struct store_err *e)
{
	(void)pool;
	(void)q;
	*out = NULL;
	return stub_fail(e, STORE_UNAVAILABLE, "database unavailable: stub");
}

/* stub_common.h - shared by the storage stubs of the fuzz harnesses.
 *
 * The harnesses link the real handlers/, engine/ and server/routes.c but
 * not storage/ (no database in a fuzzer). Each stub_<module>.c stands in
 * for storage/<module>.c with answers a database could give: catalog
 * lookups from a snapshot of the seeded rows, writes that succeed, lists
 * that are empty. One object per module, linked from an archive, so a
 * harness that #includes a real storage file (fuzz_cursor includes
 * storage/recs.c) simply does not pull that module's stub.
 */
#ifndef GPUSIZER_FUZZ_STUB_COMMON_H
#define GPUSIZER_FUZZ_STUB_COMMON_H

#include <stdio.h>

#include "storage/db.h"

static inline enum store_status stub_fail(struct store_err *e,
					  enum store_status s, const char *m)
{
	e->status = s;
	snprintf(e->message, sizeof(e->message), "%s", m);
	return s;
}

static inline enum store_status stub_ok(struct store_err *e)
{
	e->status = STORE_OK;
	e->message[0] = '\0';
	return STORE_OK;
}

#endif

/* fuzz_cursor.c - the opaque pagination cursor of GET /v1/recommendations:
 * cursor_decode and cursor_encode (static in storage/recs.c, so this
 * harness includes that file), and store_rec_list with the cursor as a
 * client sends it (db_exec is the stub: it checks the parameters are
 * readable strings and answers unavailable).
 *
 * Properties: whatever decodes re-encodes to a cursor that decodes to the
 * same (created_at, id); any (created_at, id) the server could mint (a
 * created_at::text and a UUID, cursor_fields_ok) encodes to a cursor that
 * decodes back to it, and any other pair is refused (review s17b F7);
 * store_rec_list refuses a malformed cursor as STORE_INVALID, and
 * otherwise reaches the query.
 */
#include "storage/recs.c"

#include "tests/fuzz/fuzz_common.h"

static void roundtrip(const char *ts, const char *id)
{
	char c[REC_CURSOR_MAX], ts2[96], id2[96];

	cursor_encode(ts, id, c);
	if (strlen(c) >= REC_CURSOR_MAX)
		FZ_FAIL("cursor_encode overflow");
	if (cursor_decode(c, ts2, sizeof(ts2), id2, sizeof(id2)) != 0)
		FZ_FAIL("a cursor we encoded does not decode: \"%s\"|\"%s\"",
			ts, id);
	if (strcmp(ts, ts2) || strcmp(id, id2))
		FZ_FAIL("cursor roundtrip changed \"%s\"|\"%s\" into "
			"\"%s\"|\"%s\"",
			ts, id, ts2, id2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fz_strndup(data, size);
	char ts[96], id[96], next[REC_CURSOR_MAX];
	struct rec_filter f = {.cursor = s, .limit = 50};
	struct store_err e;
	json_t *items = NULL;
	enum store_status st;
	char *bar;

	/* As a client sends it. */
	if (cursor_decode(s, ts, sizeof(ts), id, sizeof(id)) == 0)
		roundtrip(ts, id);
	st = store_rec_list(NULL, &f, &items, next, &e);
	if (st != STORE_INVALID && st != STORE_UNAVAILABLE)
		FZ_FAIL("store_rec_list: status %d", st);
	if (items)
		FZ_FAIL("store_rec_list: items without success");
	/* As we would mint it: the bytes as "<created_at>|<id>". */
	bar = strchr(s, '|');
	if (bar && strlen(s) < REC_CURSOR_MAX / 2) {
		*bar = '\0';
		if (strlen(s) < sizeof(ts) && strlen(bar + 1) < sizeof(id)) {
			if (cursor_fields_ok(s, bar + 1))
				roundtrip(s, bar + 1);
			else {
				cursor_encode(s, bar + 1, next);
				if (cursor_decode(next, ts, sizeof(ts), id,
						  sizeof(id)) == 0)
					FZ_FAIL("a pair the server never mints "
						"decodes: \"%s\"|\"%s\"",
						s, bar + 1);
			}
		}
	}
	free(s);
	return 0;
}

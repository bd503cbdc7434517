/* stub_tokens.c - stands in for storage/tokens.c: every token is unknown
 * (the fuzz harnesses reach no authenticated route through auth_check).
 */
#include "storage/tokens.h"
#include "tests/fuzz/stubs/stub_common.h"

enum store_status store_token_check(struct db_pool *pool, const char *token,
				    char *scopes, size_t scopes_len, char *name,
				    size_t name_len, struct store_err *e)
{
	(void)pool;
	(void)token;
	if (scopes_len)
		scopes[0] = '\0';
	if (name_len)
		name[0] = '\0';
	return stub_fail(e, STORE_NOT_FOUND, "unknown token");
}

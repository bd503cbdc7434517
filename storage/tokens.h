/* tokens.h - API bearer tokens, stored only as SHA-256 digests. */
#ifndef GPUSIZER_STORAGE_TOKENS_H
#define GPUSIZER_STORAGE_TOKENS_H

#include <stddef.h>

#include "storage/db.h"

#define TOKEN_TEXT_MAX 80 /* "gsz_" + 64 hex digits + NUL fits */

/* Creates token name with scopes (comma-separated, e.g. "probe,admin") and
 * writes the token, shown to the user once, to token[TOKEN_TEXT_MAX].
 * STORE_CONFLICT when an active or revoked token already has that name.
 */
enum store_status store_token_create(struct db_pool *pool, const char *name,
				     const char *scopes, char *token,
				     struct store_err *e);
/* Revokes token name: STORE_NOT_FOUND when there is no active one. */
enum store_status store_token_revoke(struct db_pool *pool, const char *name,
				     struct store_err *e);
/* Looks token up: STORE_OK with its comma-separated scopes and name, or
 * STORE_NOT_FOUND when unknown or revoked. The digest found is compared
 * again in constant time. The token itself is never logged or stored.
 */
enum store_status store_token_check(struct db_pool *pool, const char *token,
				    char *scopes, size_t scopes_len, char *name,
				    size_t name_len, struct store_err *e);

/* One token as `gpusizerd token list` shows it (never the token). */
struct token_info {
	char name[65];
	char scopes[64];     /* comma-separated */
	char created_at[32]; /* RFC 3339, UTC */
	char revoked_at[32]; /* "" while active */
};

/* Every token, newest first, into *out (caller frees with free()) and *n.
 */
enum store_status store_token_list(struct db_pool *pool,
				   struct token_info **out, size_t *n,
				   struct store_err *e);

#endif

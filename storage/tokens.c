/* tokens.c - token creation, revocation and lookup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "storage/pgconn.h"
#include "lib/sha256.h"
#include "storage/tokens.h"

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* bytea input in hex form: "\x" + 64 digits. */
static void digest_param(const char *token, char out[2 + 64 + 1])
{
	unsigned char d[SHA256_BYTES];

	sha256(token, strlen(token), d);
	out[0] = '\\';
	out[1] = 'x';
	to_hex(d, sizeof(d), out + 2);
}

enum store_status store_token_create(struct db_pool *pool, const char *name,
				     const char *scopes, char *token,
				     struct store_err *e)
{
	unsigned char raw[32];
	char digest[67];
	const char *params[3] = {name, digest, scopes};
	PGresult *r = NULL;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message),
			 "no randomness for a token");
		return e->status;
	}
	memcpy(token, "gsz_", 4);
	to_hex(raw, sizeof(raw), token + 4);
	digest_param(token, digest);
	if (db_exec(pool,
		    /* clang-format off */
		    "INSERT INTO api_tokens (name, token_sha256, scopes)"
		    " VALUES ($1, $2::bytea, string_to_array($3, ','))",
		    /* clang-format on */
		    3, params, 0, &r, e) == STORE_CONFLICT)
		snprintf(e->message, sizeof(e->message),
			 "a token named \"%s\" already exists", name);
	PQclear(r);
	if (e->status != STORE_OK)
		token[0] = '\0';
	return e->status;
}

enum store_status store_token_revoke(struct db_pool *pool, const char *name,
				     struct store_err *e)
{
	const char *params[1] = {name};
	PGresult *r = NULL;

	if (db_exec(pool,
		    /* clang-format off */
		    "UPDATE api_tokens SET revoked_at = now()"
		    " WHERE name = $1 AND revoked_at IS NULL",
		    /* clang-format on */
		    1, params, 0, &r, e) != STORE_OK)
		return e->status;
	if (strcmp(PQcmdTuples(r), "0") == 0) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message),
			 "no active token named \"%s\"", name);
	}
	PQclear(r);
	return e->status;
}

enum store_status store_token_check(struct db_pool *pool, const char *token,
				    char *scopes, size_t scopes_len, char *name,
				    size_t name_len, struct store_err *e)
{
	char digest[67];
	const char *params[1] = {digest};
	unsigned char want[SHA256_BYTES];
	PGresult *r = NULL;

	digest_param(token, digest);
	sha256(token, strlen(token), want);
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT array_to_string(scopes, ','), name,"
		    " encode(token_sha256, 'hex') FROM api_tokens"
		    " WHERE token_sha256 = $1::bytea AND revoked_at IS NULL",
		    /* clang-format on */
		    1, params, 1, &r, e) != STORE_OK)
		return e->status;
	if (PQntuples(r) != 1) {
		e->status = STORE_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "unknown token");
	} else {
		char hex[65];

		to_hex(want, sizeof(want), hex);
		/* The index found it by digest; compare again without
		 * data-dependent timing before trusting the row.
		 */
		if (!sha256_equal((const uint8_t *)hex,
				  (const uint8_t *)PQgetvalue(r, 0, 2)) ||
		    !sha256_equal((const uint8_t *)hex + 32,
				  (const uint8_t *)PQgetvalue(r, 0, 2) + 32)) {
			e->status = STORE_NOT_FOUND;
			snprintf(e->message, sizeof(e->message),
				 "unknown token");
		} else {
			snprintf(scopes, scopes_len, "%s", PQgetvalue(r, 0, 0));
			snprintf(name, name_len, "%s", PQgetvalue(r, 0, 1));
		}
	}
	PQclear(r);
	return e->status;
}

enum store_status store_token_list(struct db_pool *pool,
				   struct token_info **out, size_t *n,
				   struct store_err *e)
{
	PGresult *r = NULL;
	int rows;

	*out = NULL;
	*n = 0;
	if (db_exec(pool,
		    /* clang-format off */
		    "SELECT name, array_to_string(scopes, ','),"
		    " to_char(created_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		    " coalesce(to_char(revoked_at AT TIME ZONE 'UTC',"
		    " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), '')"
		    " FROM api_tokens ORDER BY created_at DESC, id DESC",
		    /* clang-format on */
		    0, NULL, 0, &r, e) != STORE_OK)
		goto out;
	rows = PQntuples(r);
	if (rows > 0 && !(*out = calloc((size_t)rows, sizeof(**out)))) {
		e->status = STORE_ERROR;
		snprintf(e->message, sizeof(e->message), "out of memory");
		goto out;
	}
	for (int i = 0; i < rows; i++) {
		struct token_info *t = &(*out)[i];
		snprintf(t->name, sizeof(t->name), "%s", PQgetvalue(r, i, 0));
		snprintf(t->scopes, sizeof(t->scopes), "%s",
			 PQgetvalue(r, i, 1));
		snprintf(t->created_at, sizeof(t->created_at), "%s",
			 PQgetvalue(r, i, 2));
		snprintf(t->revoked_at, sizeof(t->revoked_at), "%s",
			 PQgetvalue(r, i, 3));
	}
	*n = (size_t)rows;
out:
	PQclear(r);
	return e->status;
}

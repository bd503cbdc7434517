/* auth.c - bearer tokens checked against their stored SHA-256 digests. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "handlers/auth.h"
#include "handlers/problem.h"
#include "storage/tokens.h"

static const char *const scope_names[] = {[SCOPE_NONE] = "",
					  [SCOPE_READ] = "",
					  [SCOPE_PROBE] = "probe",
					  [SCOPE_ADMIN] = "admin"};

static int has_scope(const char *scopes, const char *want)
{
	size_t n = strlen(want);
	const char *p = scopes;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, want, n) == 0)
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static void unauthorized(struct response *res, const char *detail)
{
	problem(res, 401, "unauthorized", "Unauthorized", "%s", detail);
	res->www_authenticate = 1;
}

int auth_check(struct app *app, enum scope need, const char *authorization,
	       char *token_name, size_t name_len, struct response *res)
{
	char scopes[256], tok[257];
	struct store_err e;
	const char *token;
	size_t tlen;

	token_name[0] = '\0';
	if (need == SCOPE_NONE || (need == SCOPE_READ && !app->auth_reads))
		return 0;
	if (!authorization || strncasecmp(authorization, "Bearer ", 7) != 0) {
		unauthorized(res, "this request needs an Authorization: "
				  "Bearer <token> header");
		return -1;
	}
	token = authorization + 7;
	while (*token == ' ' || *token == '\t')
		token++;
	/* a field value has no trailing white space (RFC 9110 5.5): "Bearer
	 * <token> " is the token (review s15: a 401) */
	tlen = strlen(token);
	while (tlen > 0 && (token[tlen - 1] == ' ' || token[tlen - 1] == '\t'))
		tlen--;
	if (tlen < 8 || tlen >= sizeof(tok)) {
		unauthorized(res, "invalid or revoked token");
		return -1;
	}
	memcpy(tok, token, tlen);
	tok[tlen] = '\0';
	if (store_token_check(app->db, tok, scopes, sizeof(scopes), token_name,
			      name_len, &e) != STORE_OK) {
		if (e.status == STORE_NOT_FOUND)
			unauthorized(res, "invalid or revoked token");
		else
			problem_store(res, &e, "token");
		return -1;
	}
	if (need != SCOPE_READ && !has_scope(scopes, scope_names[need])) {
		problem(res, 403, "forbidden", "Forbidden",
			"token \"%s\" lacks the \"%s\" scope this request "
			"needs",
			token_name, scope_names[need]);
		return -1;
	}
	return 0;
}

#!/usr/bin/env bash
# Tokens and scopes on every write route; catalog edits through PUT.
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }

suffix=$RANDOM$RANDOM
admin=$(create_token "admin-$suffix" admin)
probe=$(create_token "probe-$suffix" probe)
[[ $admin == gsz_* && ${#admin} -eq 68 ]] && ok "token create prints a gsz_ token" || not_ok "token create prints a gsz_ token" "$admin"
dup=$("$GSZ_BIN" token create --name "admin-$suffix" --scopes admin --database-url "$DATABASE_URL" 2>&1) &&
	not_ok "a duplicate token name is refused" || ok "a duplicate token name is refused"
"$GSZ_BIN" token create --name "x-$suffix" --scopes root --database-url "$DATABASE_URL" >/dev/null 2>&1 &&
	not_ok "unknown scopes are refused" || ok "unknown scopes are refused"

gpu='{"display_name":"Test GPU","vendor":"Acme","architecture":"Test","memory_gib":48,
 "memory_bandwidth_gbps":1000,"bf16_tflops":200,"fp16_tflops":200,"intra_node_link":"pcie",
 "intra_node_gbps":32,"source":"test fixture","price_per_gpu_hour":1.25}'
name=test-gpu-$suffix

req PUT "/v1/gpus/$name" -H 'Content-Type: application/json' -d "$gpu"
check_problem "PUT without a token is 401" 401
[ "$(header WWW-Authenticate)" != "" ] && ok "401 carries WWW-Authenticate" || not_ok "401 carries WWW-Authenticate"
req PUT "/v1/gpus/$name" -H "Authorization: Bearer gsz_0000000000000000000000000000000000000000000000000000000000000000" -d "$gpu"
check_problem "PUT with an unknown token is 401" 401
req PUT "/v1/gpus/$name" -H "Authorization: Basic dXNlcjpwYXNz" -d "$gpu"
check_problem "PUT with a non-bearer scheme is 401" 401
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $probe" -d "$gpu"
check_problem "PUT with a probe-scoped token is 403" 403
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$gpu"
check "PUT with an admin token creates: 201" 201 '.name == "'"$name"'" and .bf16_tflops == 200 and .max_gpus_per_node == 8 and .fp8_tflops == null'
[ "$(header Location)" = "/v1/gpus/$name" ] && ok "201 carries Location" || not_ok "201 carries Location" "$(header Location)"
req GET "/v1/gpus/$name"
check "the created GPU reads back" 200 '.price_per_gpu_hour == 1.25'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 2.5')"
check "PUT again replaces: 200" 200 '.price_per_gpu_hour == 2.5'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq 'del(.memory_gib) | .bf16_tflops = -1 | .bogus = 1')"
check_problem "PUT validation names each bad field" 400 memory_gib
jq -e '[.errors[].field] | (index("bf16_tflops") != null) and (index("bogus") != null)' "$T/body" >/dev/null &&
	ok "all bad fields reported at once" || not_ok "all bad fields reported at once" "$(body)"
req PUT "/v1/gpus/Bad%20Name" -H "Authorization: Bearer $admin" -d "$gpu"
check_problem "PUT with an invalid name is 400" 400 name
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.name = "other"')"
check_problem "PUT with a body name differing from the path is 400" 400 name

# Tokens never reach the log.
grep -q "$admin" "$GSZ_LOG" && not_ok "tokens are never logged" || ok "tokens are never logged"
grep -q "\"token_name\":\"admin-$suffix\"" "$GSZ_LOG" && ok "the token's name is logged" || not_ok "the token's name is logged"

"$GSZ_BIN" token revoke "admin-$suffix" --database-url "$DATABASE_URL" 2>/dev/null && ok "token revoke" || not_ok "token revoke"
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$gpu"
check_problem "a revoked token is 401" 401
"$GSZ_BIN" token revoke "admin-$suffix" --database-url "$DATABASE_URL" 2>/dev/null &&
	not_ok "revoking twice fails" || ok "revoking twice fails"

# Reads open by default; token-only with --auth-reads.
stop_daemon
start_daemon --auth-reads || { not_ok "daemon starts with --auth-reads"; exit 1; }
req GET /v1/gpus
check_problem "--auth-reads: reads without a token are 401" 401
req GET /v1/gpus -H "Authorization: Bearer $probe"
check "--auth-reads: any valid token may read" 200
req GET /healthz
check "--auth-reads: /healthz stays open" 200
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

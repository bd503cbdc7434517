#!/usr/bin/env bash
# Tokens and scopes on every write route; catalog edits through PUT.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }

suffix=$RANDOM$RANDOM
admin=$(create_token "admin-$suffix" admin)
probe=$(create_token "probe-$suffix" probe)
[[ $admin == gsz_* && ${#admin} -eq 68 ]] && ok "token create prints a gsz_ token" || not_ok "token create prints a gsz_ token" "$admin"
dup=$("$GSZ_BIN" token create --name "admin-$suffix" --scopes admin --database-url "$DATABASE_URL" 2>&1) &&
	not_ok "a duplicate token name is refused" || ok "a duplicate token name is refused"
"$GSZ_BIN" token create --name "x-$suffix" --scopes root --database-url "$DATABASE_URL" >/dev/null 2>&1 &&
	not_ok "unknown scopes are refused" || ok "unknown scopes are refused"
for bad in $'nl-'"$suffix"$'\nadm  admin' $'esc-'"$suffix"$'\e[31mRED'; do
	"$GSZ_BIN" token create --name "$bad" --scopes probe --database-url "$DATABASE_URL" >/dev/null 2>"$T/tc.err"
	[ $? = 2 ] && grep -q "no control characters" "$T/tc.err" &&
		ok "a token name with a control character is refused (exit 2): token list cannot be forged" ||
		not_ok "a token name with a control character is refused" "$(cat "$T/tc.err")"
done
"$GSZ_BIN" token create --name "dup-$suffix" --scopes probe,probe --database-url "$DATABASE_URL" >/dev/null 2>&1 &&
	not_ok "--scopes probe,probe is refused" || ok "--scopes probe,probe is refused (each scope once)"
# review s16b F6: a bad --scopes is named with the allowed ones; an option
# with no value (the next word is an option) is an error, not a value;
# --help after each subcommand is its usage on stdout, exit 0
"$GSZ_BIN" token create --name "x-$suffix" --scopes probe,root --database-url "$DATABASE_URL" >/dev/null 2>"$T/tc.err"
[ $? = 2 ] && grep -q 'unknown scope "root"; the scopes are probe, admin or probe,admin' "$T/tc.err" &&
	ok "--scopes probe,root: exit 2 naming \"root\" and the allowed scopes" ||
	not_ok "--scopes probe,root names root and the allowed scopes" "$(cat "$T/tc.err")"
"$GSZ_BIN" token create --name --scopes probe --database-url "$DATABASE_URL" >"$T/tc.out" 2>"$T/tc.err"
[ $? = 2 ] && [ ! -s "$T/tc.out" ] && grep -q 'needs --name NAME' "$T/tc.err" &&
	! "$GSZ_BIN" token list --database-url "$DATABASE_URL" 2>/dev/null | grep -q '^--scopes ' &&
	ok "token create --name --scopes probe: exit 2, no token named \"--scopes\"" ||
	not_ok "token create --name --scopes probe is refused" "$(cat "$T/tc.out" "$T/tc.err")"
# review s16c F8: revoke takes a leading - for an option, so create refuses it
"$GSZ_BIN" token create --name=-x --scopes probe --database-url "$DATABASE_URL" >"$T/tc.out" 2>"$T/tc.err"
[ $? = 2 ] && [ ! -s "$T/tc.out" ] && grep -q 'not starting with -' "$T/tc.err" &&
	ok "token create --name=-x: exit 2 (revoke could not name it)" ||
	not_ok "token create --name=-x is refused" "$(cat "$T/tc.out" "$T/tc.err")"
"$GSZ_BIN" token create --name "x-$suffix" --scopes --database-url "$DATABASE_URL" >/dev/null 2>"$T/tc.err"
[ $? = 2 ] && grep -q -- '--scopes needs a value' "$T/tc.err" &&
	ok "token create --scopes --database-url ...: --scopes needs a value" ||
	not_ok "token create --scopes with no value" "$(cat "$T/tc.err")"
"$GSZ_BIN" serve --listen --log-level debug >/dev/null 2>"$T/tc.err"
[ $? = 2 ] && grep -q 'option "--listen" needs a value' "$T/tc.err" &&
	ok "serve --listen --log-level debug: --listen needs a value" ||
	not_ok "serve --listen --log-level debug is refused" "$(cat "$T/tc.err")"
for args in "serve --help" "migrate --help" "maintain -h" "token --help" "token create --help" \
	"token revoke --help" "token list --help"; do
	# shellcheck disable=SC2086 # the words of $args
	"$GSZ_BIN" $args >"$T/tc.out" 2>"$T/tc.err"
	[ $? = 0 ] && grep -q '^usage: gpusizerd' "$T/tc.out" && grep -q -- '--database-url' "$T/tc.out" && [ ! -s "$T/tc.err" ] &&
		ok "gpusizerd $args: usage on stdout, exit 0" ||
		not_ok "gpusizerd $args: usage on stdout, exit 0" "$(head -c 300 "$T/tc.err")"
done

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
# review s15: Authorization is a singleton (which of two counted depended on
# their order); a field value's trailing white space is not the token's
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "Authorization: Bearer $probe" -d "$gpu"
check_problem "two Authorization headers: 400" 400
grep -q 'more than one Authorization header' "$T/body" && ok "the 400 says two Authorization headers" ||
	not_ok "the 400 says two Authorization headers" "$(body)"
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $probe " -d "$gpu"
check_problem "a probe token with a trailing space is that token: 403, not 401" 403
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$gpu"
check "PUT with an admin token creates: 201" 201 '.name == "'"$name"'" and .bf16_tflops == 200 and .max_gpus_per_node == 8 and .fp8_tflops == null'
[ "$(header Location)" = "/v1/gpus/$name" ] && ok "201 carries Location" || not_ok "201 carries Location" "$(header Location)"
req GET "/v1/gpus/$name"
check "the created GPU reads back" 200 '.price_per_gpu_hour == 1.25'
# review s18c F5: an 8-bit rate under the 16-bit one is no part's
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.fp8_tflops = 100 | .int8_tops = 150')"
check_problem "PUT with fp8_tflops and int8_tops under bf16_tflops: 400 naming both" 400 fp8_tflops
jq -e '[.errors[].field] == ["fp8_tflops", "int8_tops"]' "$T/body" >/dev/null && ok "... int8_tops named too" ||
	not_ok "... int8_tops named too" "$(body)"
# review s18d F11: a 32-bit rate above the 16-bit one, an 8-bit one beside none
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.fp32_tflops = 90000 | .tf32_tflops = 400')"
check "PUT with fp32_tflops and tf32_tflops above bf16_tflops: 400 naming both" 400 '[.errors[].field] == ["tf32_tflops", "fp32_tflops"]'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.fp8_tflops = -5 | .fp64_tflops = 300')"
check "PUT with a negative fp8_tflops and fp64 above the 16-bit peak: each named once" 400 '[.errors[].field] == ["fp8_tflops", "fp64_tflops"]'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.bf16_tflops = null | .fp16_tflops = null | .fp8_tflops = 400')"
check "PUT with fp8_tflops and no 16-bit rate: 400 naming fp8_tflops" 400 '[.errors[].field] == ["fp8_tflops"]'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 2.5')"
check "PUT again replaces: 200" 200 '.price_per_gpu_hour == 2.5'
# review s15 F10: optimistic concurrency. A GET's ETag is the record's
# version; a PUT with If-Match replaces only that version (412 otherwise,
# nothing written), * only an existing record
req GET "/v1/gpus/$name"
etag=$(header ETag)
[[ $etag == \"*\" ]] && ok "GET /v1/gpus/{name} carries an ETag" || not_ok "GET /v1/gpus/{name} carries an ETag" "'$etag'"
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: $etag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 2.75')"
check "PUT with the current ETag in If-Match: 200" 200 '.price_per_gpu_hour == 2.75'
[ -n "$(header ETag)" ] && [ "$(header ETag)" != "$etag" ] && ok "the PUT answers the new version's ETag" ||
	not_ok "the PUT answers the new version's ETag" "$(header ETag) vs $etag"
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: $etag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 9')"
check_problem "PUT with a stale ETag: 412" 412
req GET "/v1/gpus/$name"
check "the stale PUT wrote nothing" 200 '.price_per_gpu_hour == 2.75'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H 'If-Match: "nope"' -d "$gpu"
check_problem "If-Match with a tag this server never gives: 412" 412
# a list holds when the record is at any of its strong tags (RFC 9110
# 13.1.1); a weak tag never matches (strong comparison)
req GET "/v1/gpus/$name"
etag=$(header ETag)
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: \"2020-01-01T00:00:00+00:00\", $etag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 2.8')"
check "If-Match: a list holding the current ETag: 200" 200 '.price_per_gpu_hour == 2.8'
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: \"2020-01-01T00:00:00+00:00\", $etag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 9')"
check_problem "If-Match: a list of stale tags only: 412" 412
etag=$(curl -sS -D - -o /dev/null "$GSZ_URL/v1/gpus/$name" | grep -i '^etag:' | cut -d' ' -f2- | tr -d '\r')
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: W/$etag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 9')"
check_problem "If-Match: the current tag, weak: 412" 412
# strong comparison is of the tag's characters: the same instant written
# another way is another tag (review s16c F6: it matched)
zetag=$(printf '%s' "$etag" | sed 's/+00:00"$/Z"/')
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: $zetag" -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 9')"
[ "$zetag" != "$etag" ] && check_problem "If-Match: the current instant spelled with Z ($zetag): 412" 412 ||
	not_ok "the ETag ends in +00:00 ($etag)"
req GET "/v1/gpus/$name"
check "the refused list and weak PUTs wrote nothing" 200 '.price_per_gpu_hour == 2.8'
# a GET with If-None-Match naming the current version: 304, no content,
# the ETag; any other tag: the record (RFC 9110 13.1.2, weak comparison)
rm -f "$T/body" # curl writes no file for a response without content
req GET "/v1/gpus/$name" -H "If-None-Match: \"x\", W/$etag"
[ "$STATUS" = 304 ] && [ ! -s "$T/body" ] && [ "$(header ETag)" = "$etag" ] &&
	ok "GET with If-None-Match listing the current tag: 304, no content, the ETag" ||
	not_ok "GET with If-None-Match listing the current tag: 304, no content, the ETag" "$STATUS $(header ETag) $(head -c 200 "$T/body")"
req GET "/v1/gpus/$name" -H 'If-None-Match: "2020-01-01T00:00:00+00:00"'
check "GET with If-None-Match naming another version: 200, the record" 200 '.price_per_gpu_hour == 2.8'
req PUT "/v1/gpus/$name-new" -H "Authorization: Bearer $admin" -H 'If-Match: *' -d "$gpu"
check_problem "If-Match: * on a record that does not exist: 412, nothing created" 412
req GET "/v1/gpus/$name-new"
check_problem "and it does not exist" 404
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H 'If-Match: *' -H 'If-Match: *' -d "$gpu"
check_problem "two If-Match headers: 400" 400
req GET "/v1/gpus/$name" -H 'If-None-Match: "x"' -H 'If-None-Match: *'
check_problem "two If-None-Match headers: 400 (the second went unseen)" 400
L=$(for i in $(seq 1 20); do printf '"2020-01-01T00:00:%02d.000000+00:00", ' "$i"; done)
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H "If-Match: $L\"2020-01-02T00:00:00+00:00\"" -d "$gpu"
check_problem "If-Match listing more tags than compared: 400, not a false 412" 400
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H 'If-Match: *' -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 2.5')"
check "If-Match: * on an existing record: 200" 200 '.price_per_gpu_hour == 2.5'
# review s15b G3: If-None-Match: * creates only
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H 'If-None-Match: *' -d "$(echo "$gpu" | jq '.price_per_gpu_hour = 7')"
check_problem "If-None-Match: * on an existing record: 412, nothing written" 412
req GET "/v1/gpus/$name"
check "the create-only PUT wrote nothing" 200 '.price_per_gpu_hour == 2.5'
req PUT "/v1/gpus/$name-inm" -H "Authorization: Bearer $admin" -H 'If-None-Match: *' -d "$gpu"
check "If-None-Match: * on a new name creates it: 201" 201
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -H 'If-None-Match: "x"' -d "$gpu"
check_problem "If-None-Match with a tag on a PUT: 400" 400
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq 'del(.memory_gib) | .bf16_tflops = -1 | .bogus = 1')"
check_problem "PUT validation names each bad field" 400 memory_gib
jq -e '[.errors[].field] | (index("bf16_tflops") != null) and (index("bogus") != null)' "$T/body" >/dev/null &&
	ok "all bad fields reported at once" || not_ok "all bad fields reported at once" "$(body)"
req PUT "/v1/gpus/Bad%20Name" -H "Authorization: Bearer $admin" -d "$gpu"
check_problem "PUT with an invalid name is 400" 400 name
req PUT "/v1/gpus/$name" -H "Authorization: Bearer $admin" -d "$(echo "$gpu" | jq '.name = "other"')"
check_problem "PUT with a body name differing from the path is 400" 400 name

# Expect: 100-continue: a refused write is answered before the body is
# invited (no "100 Continue" first), and the body is never sent.
head -c 200000 /dev/zero | tr '\0' ' ' >"$T/big-body"
out=$(curl -sS -o "$T/body" -D "$T/headers" -w '%{http_code} %{size_upload}' --max-time 10 -X PUT \
	-H 'Expect: 100-continue' -H 'Content-Type: application/json' --data-binary @"$T/big-body" \
	"$GSZ_URL/v1/gpus/$name" 2>"$T/curl.err") || out="000 ?"
[ "$out" = "401 0" ] && ! grep -qi '^HTTP/1.1 100' "$T/headers" &&
	ok "curl -H 'Expect: 100-continue' PUT without a token: 401, no 100 Continue, 0 bytes uploaded" ||
	not_ok "curl -H 'Expect: 100-continue' PUT without a token: 401, no 100 Continue, 0 bytes uploaded" \
		"status+uploaded: $out; $(tr '\r\n' '  ' <"$T/headers")"
expect100="Host: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\nExpect: 100-continue\r\n"
raw_one_problem "raw PUT /v1/gpus with Expect and no token: the 401 is the only answer (no 100 Continue)" 401 \
	"PUT /v1/gpus/$name HTTP/1.1\r\n$expect100\r\n"
grep -aqi '^WWW-Authenticate: Bearer' "$T/raw" && ok "that early 401 carries WWW-Authenticate" ||
	not_ok "that early 401 carries WWW-Authenticate" "$(tr '\r\n' '  ' <"$T/raw")"
raw_one_problem "raw POST /v1/benchmarks with Expect and no token: only a 401" 401 \
	"POST /v1/benchmarks HTTP/1.1\r\n$expect100\r\n"
raw_one_problem "raw PUT /v1/gpus with Expect and a probe token: only a 403" 403 \
	"PUT /v1/gpus/$name HTTP/1.1\r\nAuthorization: Bearer $probe\r\n$expect100\r\n"
raw_one_problem "raw PUT /v1/gpus with Expect and a body over the cap: only a 413" 413 \
	"PUT /v1/gpus/$name HTTP/1.1\r\nAuthorization: Bearer $admin\r\nHost: x\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n"
raw_one_problem "raw PUT with Expect and an XML body type: only a 415" 415 \
	"PUT /v1/gpus/$name HTTP/1.1\r\nAuthorization: Bearer $admin\r\nHost: x\r\nContent-Type: application/xml\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n"
out=$(curl -sS -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 10 -X PUT -H 'Expect: 100-continue' \
	-H "Authorization: Bearer $admin" -H 'Content-Type: application/json' --data-binary "$gpu" \
	"$GSZ_URL/v1/gpus/$name" 2>"$T/curl.err") || out=000
[ "$out" = 200 ] && grep -qi '^HTTP/1.1 100' "$T/headers" &&
	ok "an authorised PUT with Expect gets 100 Continue, then its 200" ||
	not_ok "an authorised PUT with Expect gets 100 Continue, then its 200" "$out: $(tr '\r\n' '  ' <"$T/headers")"

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

#!/usr/bin/env bash
# Hostile input on every endpoint: 4xx problem+json naming the problem,
# never a 5xx, never a crash, never a hang.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/hostile.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
admin=$(create_token "hostile-$RANDOM$RANDOM" admin,probe)
auth=(-H "Authorization: Bearer $admin")

gpu='{"display_name":"Fuzz GPU","vendor":"Acme","architecture":"Test","memory_gib":48,"memory_bandwidth_gbps":1000,"bf16_tflops":200,"intra_node_link":"pcie","intra_node_gbps":32,"source":"fuzz","notes":"n"}'
corpus PUT /v1/gpus/fuzz-gpu "$gpu" "${auth[@]}"
for f in tests/api/bodies/*.json; do
	[ -f "$f" ] || continue
	ep=$(basename "$f" .json | tr '_' '/')
	corpus POST "/v1/$ep" "$(cat "$f")" "${auth[@]}"
done

# errors[] is capped (issue 15 item 9): 80,000 unknown keys in an 880 KB
# body made a 4.1 MB answer listing each. Now the first 100 are listed and
# errors_total counts them all (the unknown keys plus the body's other
# errors, counted on a body with one unknown key).
req POST /v1/sizing/training -H 'Content-Type: application/json' --data-binary '{"k00000":1}'
others=$(jq '(.errors | length) - 1' "$T/body")
jq -e 'has("errors_total") | not' "$T/body" >/dev/null && ok "a short errors[] has no errors_total" ||
	not_ok "a short errors[] has no errors_total" "$(body)"
jq -cn '[range(80000) | {key: "k\(. + 100000)", value: 1}] | from_entries' >"$T/unknown.json"
req POST /v1/sizing/training -H 'Content-Type: application/json' --data-binary @"$T/unknown.json"
size=$(stat -c %s "$T/body")
check_problem "80,000 unknown keys: a 400 validation problem" 400 k100000
[ "$size" -lt 65536 ] && ok "80,000 unknown keys: the answer is under 64 KB ($size bytes)" ||
	not_ok "80,000 unknown keys: the answer is under 64 KB" "$size bytes"
jq -e --argjson t $((80000 + others)) '(.errors | length) == 100 and .errors_total == $t' "$T/body" >/dev/null &&
	ok "80,000 unknown keys: errors[] lists 100, errors_total is the true count ($((80000 + others)))" ||
	not_ok "80,000 unknown keys: errors[] lists 100, errors_total is the true count ($((80000 + others)))" \
		"$(jq -c '{n: (.errors | length), errors_total}' "$T/body")"
jq -c '{training: ., gpus: ["h100-sxm5-80gb"]}' "$T/unknown.json" >"$T/unknown-compare.json"
req POST /v1/sizing/compare -H 'Content-Type: application/json' --data-binary @"$T/unknown-compare.json"
jq -e '(.errors | length) == 100 and .errors_total > 80000 and (.errors[0].field | startswith("training."))' "$T/body" >/dev/null &&
	ok "a nested job's 80,000 unknown keys are counted in the outer errors_total" ||
	not_ok "a nested job's 80,000 unknown keys are counted in the outer errors_total" \
		"$STATUS $(jq -c '{n: (.errors | length), errors_total, first: .errors[0]}' "$T/body" 2>/dev/null)"

# Query strings.
for q in 'limit=abc' 'limit=0' 'limit=501' 'limit=-5' 'limit=1e3' 'since=yesterday' 'since=2026-13-01' \
	'cursor=zz' 'cursor=00' 'cursor=4142' 'kind=bogus' "model=$(head -c 200 /dev/zero | tr '\0' 'm')" \
	'limit=%FF' 'kind=%00'; do
	req GET "/v1/recommendations?$q"
	expect_4xx "GET /v1/recommendations?${q:0:40}"
done
# review s17b F9: an offset's '+' typed into the URL is a space: said so
req GET "/v1/recommendations?since=2026-11-27T00:00:00+01:00"
check_problem "since with an unencoded +: 400 saying to send %2B" 400 since
jq -e '.detail | contains("%2B01:00")' "$T/body" >/dev/null && ok "... and the hint is there" || not_ok "... and the hint is there" "$(jq -r .detail "$T/body")"
# review s17b F7: a cursor of PostgreSQL's special times, or of a time
# that does not parse, is one the server never made: 400 naming cursor
hx() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
for c in 'infinity|15649895-5691-4627-b525-fca267f5d0e1' 'now|15649895-5691-4627-b525-fca267f5d0e1' \
	'epoch|15649895-5691-4627-b525-fca267f5d0e1' '2026-99-99 00:00:00+00|15649895-5691-4627-b525-fca267f5d0e1' \
	'2026-11-27 01:09:01.123456+00|not-a-uuid' '2026-11-27T01:09:01Z|15649895-5691-4627-b525-fca267f5d0e1'; do
	req GET "/v1/recommendations?limit=2&cursor=$(hx "$c")"
	check_problem "a forged cursor ($c): 400 naming cursor" 400 cursor
done
req GET "/v1/recommendations?limit=2&cursor=$(hx '2026-11-27 01:09:01.12+00|15649895-5691-4627-b525-fca267f5d0e1')"
check "a cursor of the server's own form is taken" 200 '.items | type == "array"'
req GET "/v1/recommendations?model=x%27%3B%20DROP%20TABLE%20recommendations%3B--"
# a value that names nothing stored and nothing in the catalog is a 400
# quoting it (review s15), never SQL
check_problem "injection in a filter is just a value: a 400 quoting it" 400 model
grep -qF "DROP TABLE recommendations;--" "$T/body" && ok "the 400 quotes the value as given" ||
	not_ok "the 400 quotes the value as given" "$(body)"
req GET "/v1/recommendations?limit=1"
check "and the table is still there" 200 '.items | type == "array"'
req GET /v1/recommendations/not-a-uuid
expect_4xx "recommendation id that is not a UUID"
req GET /v1/recommendations/00000000-0000-4000-8000-000000000000
check_problem "unknown recommendation id is 404" 404
req GET /v1/gpus/%FF%FE
expect_4xx "invalid UTF-8 in a path parameter"
req GET /v1/gpus/h100-sxm5-80gb%00junk
check_problem "a %00 in the path is a 400, not a truncated lookup" 400
req GET "/v1/recommendations?since=2026-02-31"
check_problem "since on a day that does not exist is a 400" 400 since
req POST /v1/sizing/training -H 'Content-Type: application/xml' -d '<job/>'
check_problem "an XML body is 415" 415
req POST /v1/sizing/training -H 'Content-Type: application/problem+json' -d '{}'
[ "$STATUS" != 415 ] && ok "application/*+json bodies are accepted as JSON" || not_ok "application/*+json bodies are accepted as JSON"
req GET "/v1/gpus/x%27%3B%20DROP%20TABLE%20gpus%3B--"
check_problem "injection in a path parameter is a 404" 404
req GET /v1/gpus
check "the catalog survived every injection attempt" 200 '(.items | length) >= 15'

# review s17b F5: integers written as whole reals are echoed, stored and
# listed as integers (a typed client fails on 2048.0); reals stay reals
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":2048.0,"gpu":"h100","max_gpus":8.0,"top":1e0,"global_batch_size":64.0,"price_per_gpu_hour":2.5}'
rid=$(jq -r .id "$T/body")
grep -q '"seq_len":2048,' "$T/body" && grep -q '"max_gpus":8,' "$T/body" && grep -q '"top":1,' "$T/body" &&
	grep -q '"price_per_gpu_hour":2.5' "$T/body" && ! grep -q '"seq_len":2048\.0' "$T/body" &&
	ok "whole reals come back as integers in the answer (request echo, basis)" ||
	not_ok "whole reals come back as integers in the answer" "$(grep -o '"request":{[^}]*}' "$T/body")"
req GET "/v1/recommendations/$rid"
grep -q '"seq_len":2048,' "$T/body" && ! grep -q '2048\.0' "$T/body" &&
	ok "and in the stored recommendation" || not_ok "and in the stored recommendation" "$(grep -o '"request":{[^}]*}' "$T/body")"

# HTTP framing that libmicrohttpd 0.9.75 would accept or hang on.
line=$(raw_http "POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
[[ $line == *" 400 "* ]] && ok "Content-Length with Transfer-Encoding is 400" || not_ok "Content-Length with Transfer-Encoding is 400" "$line"
line=$(raw_http "POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n")
[[ $line == *" 400 "* ]] && ok "Transfer-Encoding: gzip is 400, not a hang" || not_ok "Transfer-Encoding: gzip is 400, not a hang" "$line"
# Request smuggling (RFC 9112 6.3): two Content-Lengths frame the body two
# ways; the bytes past the first length must never become a request.
smuggled='GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'
raw_one_problem "two different Content-Lengths: one 400, then close (no smuggled request)" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\n{\"a\":$smuggled"
grep -aq '^{"status":"ok"}' "$T/raw" && not_ok "the smuggled GET /healthz is never answered" "$(tr '\r\n' '  ' <"$T/raw")" ||
	ok "the smuggled GET /healthz is never answered"
raw_one_problem "two identical Content-Lengths are refused too: 400, then close" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}$smuggled"
raw_one_problem "two Content-Lengths on a GET: 400, then close" 400 \
	"GET /v1/gpus HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 38\r\n\r\n$smuggled"
raw_one_problem "two Transfer-Encoding headers: 400, then close" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$smuggled"
# review s17b F1: chunked with a Content-Length (either order): a front end
# framing by the length forwards what follows the chunks as this request;
# RFC 9112 6.1 says close after the 400, so it is never run
for order in 'Transfer-Encoding: chunked\r\nContent-Length: 50' 'Content-Length: 4\r\nTransfer-Encoding: chunked'; do
	raw_one_problem "${order%%:*} first, chunked with a Content-Length: one 400, then close (no smuggled request)" 400 \
		"POST /v1/sizing/inference HTTP/1.1\r\nHost: x\r\n$order\r\n\r\n0\r\n\r\n$smuggled"
	grep -aq '^{"status":"ok"}' "$T/raw" && not_ok "the GET /healthz after the chunked body is never answered" "$(tr '\r\n' '  ' <"$T/raw")" ||
		ok "the GET /healthz after the chunked body is never answered"
done

# Request-line and header edges (issue 15 item 5): answered by us, as
# problem+json. "Connection: close" so that each exchange ends with one
# answer and a closed connection.
cc='Host: x\r\nConnection: close\r\n\r\n'
raw_one_problem "a raw NUL in the path is a 400, not a cut path (was 200 for /healthz)" 400 "GET /healthz\0junk HTTP/1.1\r\n$cc"
raw_one_problem "a raw NUL in a path parameter is a 400, not a lookup of the part before it" 400 \
	"GET /v1/gpus/h100-sxm5-80gb\0junk HTTP/1.1\r\n$cc"
raw_one_problem "a raw NUL in the query string is a 400" 400 "GET /v1/gpus?limit=1\0junk HTTP/1.1\r\n$cc"
raw_one_problem "a space inside the request target is a 400 (was: closed without an answer)" 400 "GET /v1/gpus /x HTTP/1.1\r\n$cc"
raw_one_problem "two spaces before the version are a 400 (a space in the target)" 400 "GET /healthz  HTTP/1.1\r\n$cc"
raw_one_problem "a request without Host is a 400 problem (was MHD's HTML, headers twice)" 400 "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"
raw_one_problem "two Host headers are a 400" 400 "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n"
raw_one_problem "white space before a header's colon is a 400, then close" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length : 38\r\n\r\n$smuggled"
raw_exchange "GET /healthz HTTP/1.0\r\n\r\n"
head -n 1 "$T/raw" | grep -aq '^HTTP/1\.1 200 ' && ok "HTTP/1.0 without Host is still served" ||
	not_ok "HTTP/1.0 without Host is still served" "$(head -n 1 "$T/raw")"
req GET /v1/gpus%2Fh100-sxm5-80gb
check_problem "an encoded slash (%2F) in the path is a 400, not routed as a separator (was 200)" 400
jq -e '.status == 400 and (has("instance") | not)' "$T/body" >/dev/null && ok "that 400 names no (decoded) instance" ||
	not_ok "that 400 names no (decoded) instance" "$(body)"
req GET /v1/gpus/h100-sxm5-80gb%2f
check_problem "a lower-case %2f in the path is a 400 too" 400
req GET "/v1/recommendations?model=meta-llama%2FLlama-3.1-8B"
check_problem "%2F in a query value is decoded as usual (a name nothing has: 400)" 400 model
grep -qF 'meta-llama/Llama-3.1-8B' "$T/body" && ok "the 400 quotes the decoded value" ||
	not_ok "the 400 quotes the decoded value" "$(body)"
q=$(seq -f 'p%g=1' 1 16 | paste -sd '&')
req GET "/v1/gpus?$q"
check "16 query parameters are served" 200
q=$(seq -f 'p%g=1' 1 17 | paste -sd '&')
req GET "/v1/gpus?$q"
check_problem "17 query parameters are a 400 naming query" 400 query
q=$(seq -f 'p%g=1' 1 1500 | paste -sd '&')
req GET "/v1/gpus?$q"
check_problem "1,500 query parameters are a 400 naming query (was: closed without an answer)" 400 query
jq -e '.errors[0].message | contains("has 1500")' "$T/body" >/dev/null && ok "the 400 counts all 1,500 parameters" ||
	not_ok "the 400 counts all 1,500 parameters" "$(body)"
q=$(head -c 6000 /dev/zero | tr '\0' '&')
req GET "/v1/gpus?x=1$q"
check_problem "6,000 empty query parameters are a 400 too" 400 query

# What libmicrohttpd 0.9.75 answers itself, before the application sees
# the request (documented in docs/API.md): a Content-Length that is not a
# number gets its HTML 400 (413 when it overflows 64 bits), with its header
# block sent twice (a 0.9.75 bug), and the connection is closed; a header
# line without a colon, or a request line without a version, gets its HTML
# 400 and a close. Never a hang, never a second request.
mhd_own() { # NAME STATUS REQUEST
	local closed=yes
	raw_exchange "$3" || closed=no
	if [ "$closed" = yes ] && head -n 1 "$T/raw" | grep -aq "^HTTP/1\.1 $2 " &&
		! grep -a '^HTTP/1\.[01] ' "$T/raw" | grep -avq " $2 " &&
		! grep -aq '"status":"ok"' "$T/raw"; then
		ok "$1"
	else
		not_ok "$1" "closed=$closed: $(head -c 300 "$T/raw" | tr '\r\n' '  ')"
	fi
}
mhd_own "MHD itself: Content-Length: abc is an HTML 400 and a close" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n$smuggled"
mhd_own "MHD itself: Content-Length: 5, 5 is an HTML 400 and a close" 400 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\n{}   $smuggled"
mhd_own "MHD itself: a 64-bit-overflowing Content-Length is an HTML 413 and a close" 413 \
	"POST /v1/sizing/training HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n$smuggled"
mhd_own "MHD itself: a header line without a colon is an HTML 400 and a close" 400 \
	"GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n$smuggled"
mhd_own "MHD itself: a request line without a version is an HTML 400 and a close" 400 "GET /healthz\r\n\r\n$smuggled"
mhd_own "MHD itself: a 140 KB request target (past its 128 KiB pool) is an HTML 414 and a close" 414 \
	"GET /v1/gpus?x=$(head -c 140000 /dev/zero | tr '\0' 'a') HTTP/1.1\r\nHost: x\r\n\r\n"
mhd_own "MHD itself: a 140 KB header is an HTML 431 and a close" 431 \
	"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: $(head -c 140000 /dev/zero | tr '\0' 'h')\r\n\r\n"
# review s19a F4: malformed chunked framing and HTTP versions other than
# 1.x are answered by libmicrohttpd too (docs/API.md lists them)
mhd_own "MHD itself: a chunk size past 2^64 is an HTML 413 and a close" 413 \
	"POST /v1/sizing/inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n"
mhd_own "MHD itself: a negative chunk size is an HTML 400 and a close" 400 \
	"POST /v1/sizing/inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n{}\r\n0\r\n\r\n"
mhd_own "MHD itself: HTTP/2.0 (a prior-knowledge client) is an HTML 505 and a close" 505 \
	"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"
# review s17b F2: within the pool the limits are ours, answered with a
# problem and a close; near the old 64 KiB pool a request got no answer
# while its handler ran
raw_one_problem "a 70 KB request target: our 414 problem, then close" 414 \
	"GET /v1/gpus?x=$(head -c 70000 /dev/zero | tr '\0' 'a') HTTP/1.1\r\nHost: x\r\n\r\n"
raw_one_problem "a 70 KB header: our 431 problem, then close" 431 \
	"POST /v1/sizing/inference HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Big: $(head -c 70000 /dev/zero | tr '\0' 'h')\r\n\r\n{}"
raw_one_problem "101 header fields: 431 problem, then close (872 small ones had no answer)" 431 \
	"GET /healthz HTTP/1.1\r\nHost: x\r\n$(for i in $(seq 1 100); do printf 'X-H%d: v\\r\\n' "$i"; done)\r\n"
pad_body='{"model":"llama-2-7b","prompt_tokens":10,"output_tokens":10,"gpu":"h100","top":1}'
raw_exchange "POST /v1/sizing/inference HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${#pad_body}\r\nX-Pad: $(head -c 64900 /dev/zero | tr '\0' 'a')\r\n\r\n$pad_body"
head -n 1 "$T/raw" | grep -aq '^HTTP/1\.1 201 ' && ok "a sizing POST with a 65 KB header gets its 201 (it was stored and never answered)" ||
	not_ok "a sizing POST with a 65 KB header gets its 201" "$(head -c 200 "$T/raw" | tr '\r\n' '  ')"
line=$(raw_http "GARBAGE\r\n\r\n")
[[ -z $line || $line == *" 400 "* ]] && ok "a garbage request line is refused" || not_ok "a garbage request line is refused" "$line"
req GET /healthz -H "X-Big: $(head -c 70000 /dev/zero | tr '\0' 'h')"
[[ $STATUS =~ ^4 ]] && ok "a 70 KB header is refused with 4xx" || not_ok "a 70 KB header is refused with 4xx" "$STATUS"
check_alive "daemon alive after framing attacks"

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

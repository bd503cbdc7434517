# hostile.sh - the bad-input corpus, applied to any endpoint with a body.
# Sourced by t_badinput.sh after lib.sh.

# expect_4xx NAME: a 4xx problem+json (never 5xx, never a hang).
expect_4xx() {
	local ct
	ct=$(header Content-Type)
	if [[ $STATUS =~ ^4[0-9][0-9]$ ]] && [ "$ct" = "application/problem+json" ] &&
		jq -e '.type and .title and .status and .detail' "$T/body" >/dev/null 2>&1; then
		ok "$1"
	else
		not_ok "$1" "status $STATUS ct '$ct': $(head -c 300 "$T/body")"
	fi
}

# expect_not_5xx NAME: anything but a server error; a 4xx must be a problem.
expect_not_5xx() {
	if [[ $STATUS =~ ^2 ]]; then
		ok "$1"
	else
		expect_4xx "$1"
	fi
}

# corpus METHOD PATH VALID_BODY [curl args...]: malformed, truncated,
# wrongly typed, out-of-range, huge, deep, invalid UTF-8 and injection
# bodies, each one a check; then the daemon must still answer.
corpus() {
	local m=$1 p=$2 valid=$3
	shift 3
	local tag="$m $p"
	printf '%s' "$valid" >"$T/valid.json"

	req "$m" "$p" "$@" --data-binary ''
	expect_4xx "$tag: empty body"
	req "$m" "$p" "$@" --data-binary '{'
	expect_4xx "$tag: malformed JSON"
	req "$m" "$p" "$@" --data-binary "$(head -c $(( ${#valid} / 2 )) "$T/valid.json")"
	expect_4xx "$tag: truncated JSON"
	for b in '[]' '"x"' '1' 'null' 'true'; do
		req "$m" "$p" "$@" --data-binary "$b"
		expect_4xx "$tag: body $b is not an object"
	done
	req "$m" "$p" "$@" --data-binary '{"a":NaN}'
	expect_4xx "$tag: NaN literal"
	req "$m" "$p" "$@" --data-binary '{"a":Infinity}'
	expect_4xx "$tag: Infinity literal"
	req "$m" "$p" "$@" --data-binary '{"a":1e400}'
	expect_4xx "$tag: number overflowing a double"
	req "$m" "$p" "$@" --data-binary '{"a":123456789012345678901234567890}'
	expect_4xx "$tag: integer overflowing int64"
	req "$m" "$p" "$@" --data-binary '{"a":1,"a":2}'
	expect_4xx "$tag: duplicate keys"
	printf '{"a":"\xff\xfe"}' >"$T/bad-utf8.json"
	req "$m" "$p" "$@" --data-binary @"$T/bad-utf8.json"
	expect_4xx "$tag: invalid UTF-8"
	printf '{"a":"\\u0000"}' >"$T/nul.json"
	req "$m" "$p" "$@" --data-binary @"$T/nul.json"
	expect_4xx "$tag: NUL escape"
	head -c 20000 /dev/zero | tr '\0' '[' >"$T/deep.json"
	req "$m" "$p" "$@" --data-binary @"$T/deep.json"
	expect_4xx "$tag: 20000-deep nesting"
	head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' ' ' >"$T/big.json"
	req "$m" "$p" "$@" --data-binary @"$T/big.json"
	[ "$STATUS" = 413 ] && expect_4xx "$tag: 2 MiB body is 413" || not_ok "$tag: 2 MiB body is 413" "got $STATUS"
	req "$m" "$p" "$@" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big.json"
	[ "$STATUS" = 413 ] && expect_4xx "$tag: 2 MiB chunked body is 413" || not_ok "$tag: 2 MiB chunked body is 413" "got $STATUS"
	req "$m" "$p" "$@" -H 'Content-Type: multipart/form-data; boundary=x' --data-binary "$valid"
	expect_4xx "$tag: multipart body is 415"

	# Every top-level field, replaced by each hostile value.
	local keys k v
	keys=$(jq -r 'keys[]' "$T/valid.json")
	for k in $keys; do
		for v in '"x"' '-1' '0' '1e300' '-1e300' '0.5' 'null' '[]' '{}' 'true' \
			"\"'; DROP TABLE gpus; --\"" '"\u202e\ud83d\ude00"' "\"$(head -c 3000 /dev/zero | tr '\0' 'A')\""; do
			jq -c --arg k "$k" --argjson v "$v" '.[$k] = $v' "$T/valid.json" >"$T/mut.json"
			req "$m" "$p" "$@" -H 'Content-Type: application/json' --data-binary @"$T/mut.json"
			expect_not_5xx "$tag: $k = $(printf '%.24s' "$v")"
		done
	done
	req "$m" "$p" "$@" -H 'Content-Type: application/json' --data-binary "$(jq -c '.zzz_unknown = 1' "$T/valid.json")"
	expect_4xx "$tag: unknown field is rejected"
	check_alive "$tag: daemon alive after the corpus"
}

# raw_http REQUEST: sends bytes on a fresh TCP connection, prints the
# status line (empty on a hang past 5 s).
raw_http() {
	local port=${GSZ_URL##*:}
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf '%b' "$1" >&3
	timeout 5 head -n 1 <&3 | tr -d '\r'
	exec 3<&-
}

# raw_exchange REQUEST: sends bytes (printf %b escapes) on a fresh TCP
# connection and reads until the server closes it; what came back is in
# $T/raw. Fails when the connection is still open after 5 s.
raw_exchange() {
	local port=${GSZ_URL##*:} rc=0
	exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
	# In a subshell: a server that answers and closes before the whole
	# request is written raises SIGPIPE, which must not end the script.
	(printf '%b' "$1" >&3) 2>/dev/null
	# A reset after the answer (unread bytes at close) still ends cat.
	timeout 5 cat <&3 >"$T/raw" 2>/dev/null || rc=$?
	exec 3<&-
	[ $rc != 124 ]
}

# raw_one_problem NAME WANT_STATUS REQUEST: exactly one response comes
# back, a WANT_STATUS problem+json, and then the server closes the
# connection (nothing after the answer is read as a request).
raw_one_problem() {
	local name=$1 want=$2 closed=yes n ct
	raw_exchange "$3" || closed=no
	n=$(grep -ac '^HTTP/1\.[01] [0-9][0-9][0-9] ' "$T/raw")
	ct=$(sed -n '1,/^\r$/p' "$T/raw" | grep -ai '^content-type:' | tr -d '\r' | cut -d' ' -f2-)
	if [ "$closed" != yes ]; then
		not_ok "$name" "the connection stayed open: $(head -c 300 "$T/raw" | tr '\r\n' '  ')"
	elif [ "$n" != 1 ]; then
		not_ok "$name" "$n responses: $(head -c 600 "$T/raw" | tr '\r\n' '  ')"
	elif ! head -n 1 "$T/raw" | grep -aq "^HTTP/1\.1 $want "; then
		not_ok "$name" "status line $(head -n 1 "$T/raw" | tr -d '\r'), want $want"
	elif [ "$ct" != application/problem+json ]; then
		not_ok "$name" "content-type '$ct'"
	elif ! sed '1,/^\r$/d' "$T/raw" | jq -e --argjson s "$want" '.status == $s and (.detail | type) == "string"' >/dev/null 2>&1; then
		not_ok "$name" "not a problem body: $(sed '1,/^\r$/d' "$T/raw" | head -c 300)"
	else
		ok "$name"
	fi
}

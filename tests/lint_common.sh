# lint_common.sh - what tests/lint.sh and deploy/lint.sh share, sourced by both: PASS, FAIL and
# SKIP lines gathered into a summary, the apt-get fallback for a missing tool, and the summary.
# The caller sets strict (LINT_STRICT=1: a SKIP fails too) before lint_summary.
summary=()
failed=0
skipped=0

say() { printf '%s\n' "$*"; }
section() { printf '\n== %s\n' "$*"; }
pass() { summary+=("PASS  $1${2:+  ($2)}"); say "PASS $1${2:+: $2}"; }
fail() { summary+=("FAIL  $1${2:+  ($2)}"); say "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
skip() { summary+=("SKIP  $1${2:+  ($2)}"); say "SKIP $1${2:+: $2}"; skipped=$((skipped + 1)); }

# need CMD DEBIAN_PACKAGE: succeeds when CMD exists, installing the package first when run as root.
need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		say "installing $2 (apt-get)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1; }
	fi
	command -v "$1" >/dev/null 2>&1
}

# lint_summary NAME: every check's line, then the count; the status is the script's.
lint_summary() {
	printf '\n== %s summary\n' "$1"
	printf '  %s\n' "${summary[@]}"
	if [ "$strict" = 1 ] && [ "$skipped" -gt 0 ]; then
		say "$1: $failed failed, $skipped skipped (LINT_STRICT=1: skips fail)"
		return 1
	fi
	say "$1: $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# npm_ci DIR SECONDS: `npm ci --prefix DIR`, its output in DIR/npm-ci.log; up to three tries, as a
# registry's transient error (a reset, a 5xx) is not a finding about this repository.
npm_ci() {
	local dir=$1 secs=$2 try
	for try in 1 2 3; do
		timeout "$secs" npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >"$dir/npm-ci.log" 2>&1 && return 0
		[ "$try" = 3 ] || { say "npm ci failed (try $try of 3); again in $((try * 10)) s"; sleep $((try * 10)); }
	done
	return 1
}

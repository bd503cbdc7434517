#!/usr/bin/env bash
# The examples of docs/API.md marked "_After `make demo`_", run as written
# against a daemon on a fresh database after deploy/dev/demo.sh, in page
# order, and compared line by line with the documented output (issue 16:
# the page's figures reproduced only after posting the probe fixture, and
# it did not say so). Timestamps, dates and ISO weeks are the run's own, so
# they are compared as placeholders. Also the page's /readyz answer (its
# migration count) against the daemon's.
#
# A command is a "$ " line and its 4-space continuations; the lines after
# it, up to the next command or the end of the block, are its output.
. "$(dirname "$0")/lib.sh"
own_database gsz_docs_demo
start_daemon || { not_ok "daemon starts"; exit 1; }
export GPUSIZER=$GSZ_URL
work=$T/docs
mkdir -p "$work"
api=$TOP/docs/API.md

# /readyz as documented: the number of migrations this checkout has.
want=$(awk '/^\$ curl -s \$GPUSIZER\/readyz$/ { getline; print; exit }' "$api")
got=$(curl -s "$GSZ_URL/readyz")
n_files=$(find "$TOP/migrations" -name '[0-9]*.sql' | wc -l)
[ -n "$want" ] && [ "$want" = "$got" ] && jq -e --argjson n "$n_files" '.migrations == $n' <<<"$got" >/dev/null &&
	ok "docs/API.md: /readyz as the daemon answers it ($got)" ||
	not_ok "docs/API.md: /readyz as the daemon answers it" "documented '$want', daemon '$got', $n_files migrations"

if GPUSIZER_URL=$GSZ_URL GPUSIZERD=$GSZ_BIN "$TOP/deploy/dev/demo.sh" >"$T/demo.out" 2>&1; then
	ok "make demo"
else
	not_ok "make demo" "$(tail -n 5 "$T/demo.out" | tr '\n' '|')"
fi

# The marked console blocks, one file each: the paragraph just before the
# fence starts with "_After `make demo`_".
awk -v dir="$work" '
	/^```console/ { if (first ~ /^_After `make demo`_/) { n++; f = sprintf("%s/block%02d", dir, n); inb = 1 }
			else skip = 1
			first = ""; next }
	(inb || skip) && /^```/ { inb = 0; skip = 0; next }
	inb { print > f; next }
	skip { next }
	!NF { blank = 1; next }
	{ if (blank || first == "") first = $0; blank = 0 }
' "$api"

# Both sides alike: no CR (CSV lines end in CRLF), runs of blanks as one
# (tables align with spaces), and the run's own times, dates and weeks.
norm() {
	tr -d '\r' | tr -s ' \t' ' ' | sed -E \
		-e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2})/<time>/g' \
		-e 's/[0-9]{4}-W[0-9]{2}/<week>/g' -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}/<date>/g'
}

blocks=0
for b in "$work"/block*; do
	[ -f "$b" ] || continue
	blocks=$((blocks + 1))
	check_console_block "$b" "docs/API.md after make demo: " norm
done
[ "$blocks" -ge 7 ] && ok "docs/API.md marks its examples that need make demo ($blocks blocks)" ||
	not_ok "docs/API.md marks its examples that need make demo" "$blocks blocks"

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

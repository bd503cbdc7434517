#!/usr/bin/env bash
# The worked serving examples of docs/API.md (the inference and compare
# sections), run as written against a daemon on a fresh database (datasheet
# rates: no probe data) and compared line by line with the documented
# output. A command is a "$ " line and its 4-space continuations; the
# lines after it, up to the next command or the end of the block, are its
# expected output.
. "$(dirname "$0")/lib.sh"
own_database gsz_docs
start_daemon || { not_ok "daemon starts"; exit 1; }
export GPUSIZER=$GSZ_URL
work=$T/docs
mkdir -p "$work"

# the console blocks of the two sections, one file per block
awk -v dir="$work" '
	/^### `POST \/v1\/sizing\/(inference|compare)`/ { on = 1; next }
	/^##/ { on = 0 }
	on && /^```console/ { n++; f = sprintf("%s/block%02d", dir, n); inb = 1; next }
	inb && /^```/ { inb = 0; next }
	inb { print > f }
' "$TOP/docs/API.md"

# documented tables align columns with spaces; compare fields
fields() { tr -s ' \t' ' '; }

blocks=0
for b in "$work"/block*; do
	[ -f "$b" ] || continue
	# a block about a GPU the reader added first (example-48gb, by the
	# catalog PUT earlier in API.md) is not self-contained: skipped
	grep -q 'example-' "$b" && continue
	blocks=$((blocks + 1))
	check_console_block "$b" "docs/API.md: " fields
done
[ "$blocks" -ge 4 ] && ok "the serving sections of docs/API.md have worked examples ($blocks blocks)" ||
	not_ok "the serving sections of docs/API.md have worked examples" "$blocks"

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"

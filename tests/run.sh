#!/usr/bin/env bash
# run.sh - `make test`: every test, under AddressSanitizer and
# UndefinedBehaviorSanitizer, against a real PostgreSQL and the real daemon.
#
# 1. unit tests (engine, probe logic, storage helpers) as plain binaries;
# 2. a private PostgreSQL cluster in a temporary directory (as the
#    "postgres" user when run as root: PostgreSQL refuses root);
# 3. tests/api/*.sh, each starting gpusizerd on a free port over HTTP.
# Every check prints a TAP line; the last line is "N passed, N failed, N
# skipped" (CI reads its "N passed, N failed" prefix). A check that cannot
# run here prints "ok - NAME # SKIP why" (TAP's SKIP directive) and counts
# as skipped, not passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export TOP=$top
log=$(mktemp -d "${TMPDIR:-/tmp}/gsz-test.XXXXXX")
chmod 755 "$log"
results=$log/results.tap
: >"$results"
fail_hard() { echo "$1" >&2; echo "0 passed, 1 failed"; exit 1; }

make -s deps >/dev/null || fail_hard "make deps failed"
jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs" SAN=1 build/san/gpusizerd unit >"$log/build.log" 2>&1 ||
	{ cat "$log/build.log" >&2; fail_hard "build failed"; }
# The probe itself whenever a CUDA toolkit is here (probe.mk skips it
# with a notice otherwise); its report path is tested against the daemon.
make -s probe >>"$log/build.log" 2>&1 ||
	{ cat "$log/build.log" >&2; fail_hard "probe build failed"; }
if ls tests/unit/test_probe*.c >/dev/null 2>&1; then
	make -s SAN=1 probe-unit >>"$log/build.log" 2>&1 ||
		{ cat "$log/build.log" >&2; fail_hard "probe unit build failed"; }
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_tap() { # NAME CMD...: runs a TAP-printing command, records its lines
	local name=$1
	shift
	echo "# --- $name"
	local out=$log/$(echo "$name" | tr '/ ' '__').out rc=0
	"$@" >"$out" 2>&1 || rc=$?
	cat "$out"
	grep -E '^(ok|not ok) ' "$out" | sed "s|^ok |ok [$name] |; s|^not ok |not ok [$name] |" >>"$results"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$out"; then
		echo "not ok [$name] exited $rc without a failing check" | tee -a "$results"
	fi
}

# ONLY=pattern runs just the API tests whose name matches (development).
only=${ONLY:-}
[ -z "$only" ] && for t in build/san/tests/test_*; do
	[ -x "$t" ] && run_tap "unit/$(basename "$t")" "$t"
done
# The probe's unit binaries named by their sources (not a glob of build/,
# where a binary whose source was split or removed would still run).
for src in tests/unit/test_probe*.c; do
	t=build/$(basename "$src" .c)
	[ -x "$t" ] && run_tap "unit/$(basename "$t")" "$t"
done
# (run with sh: probe_nodevice.sh was committed without its x bit and
# silently never ran)
[ -f tests/probe_nodevice.sh ] && run_tap "probe/nodevice" sh tests/probe_nodevice.sh
[ -f tests/gpu_check_nogpu.sh ] && run_tap "probe/gpu_check" sh tests/gpu_check_nogpu.sh

# A private PostgreSQL for the API tests.
pgdir=$log/pg
pgport=$(( 20000 + RANDOM % 20000 ))
if DATABASE_URL=$(deploy/dev/pg.sh start "$pgdir" "$pgport" 2>"$log/pg.err"); then
	export DATABASE_URL GSZ_PGDIR=$pgdir GSZ_PGPORT=$pgport
	export GSZ_BIN=$top/build/san/gpusizerd
	for t in tests/api/t_*.sh; do
		[ -n "$only" ] && [[ $t != *$only* ]] && continue
		run_tap "api/$(basename "$t" .sh)" bash "$t"
	done
	deploy/dev/pg.sh stop "$pgdir"
else
	cat "$log/pg.err" >&2
	echo "not ok [postgres] could not start a private PostgreSQL" | tee -a "$results"
fi

skipped=$(grep -ciE '^ok .*# SKIP' "$results")
passed=$(( $(grep -c '^ok ' "$results") - skipped ))
failed=$(grep -c '^not ok ' "$results")
if [ "$failed" -gt 0 ]; then
	echo "# failures:"
	grep '^not ok ' "$results" | sed 's/^/#   /'
fi
if [ "$skipped" -gt 0 ]; then
	echo "# skipped:"
	grep -iE '^ok .*# SKIP' "$results" | sed 's/^/#   /'
fi
[ -n "${KEEP_LOGS:-}" ] && echo "# logs kept in $log" || rm -rf "$log"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

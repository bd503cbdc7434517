#!/usr/bin/env bash
# run.sh - `make fuzz`: builds every libFuzzer harness of the request
# parsers (tests/fuzz/fuzz_*.c, clang -fsanitize=fuzzer,address,undefined),
# replays the regression inputs, then fuzzes each harness for a bounded
# time. TAP lines; the last line is "N passed, N failed".
#
#   tests/fuzz/run.sh                    all harnesses, FUZZ_SECONDS each
#   tests/fuzz/run.sh fuzz_body fuzz_util   some of them
#   FUZZ_SECONDS=300 tests/fuzz/run.sh   longer (default 30)
#   FUZZ_SECONDS=0 tests/fuzz/run.sh     build and replay regressions only
#   FUZZ_PARALLEL=2 tests/fuzz/run.sh    harnesses at once (default 1)
#
# Inputs: tests/fuzz/corpus/<harness>/ (seeds, committed) and
# tests/fuzz/regressions/<harness>/ (minimised findings, committed; each
# must run clean). The working corpus grows in build/fuzz/corpus/<harness>/
# and persists between runs; crashes land in build/fuzz/artifacts/<harness>/.
# A finding is turned into a regression input with
#   build/fuzz/<harness> -minimize_crash=1 -runs=20000 \
#       -exact_artifact_path=tests/fuzz/regressions/<harness>/<name> <crash file>
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
secs=${FUZZ_SECONDS:-30}
par=${FUZZ_PARALLEL:-1}
out=build/fuzz
export FUZZ_CC=${FUZZ_CC:-clang}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
results=$(mktemp "${TMPDIR:-/tmp}/gsz-fuzz.XXXXXX")
trap 'rm -f "$results"' EXIT

# libFuzzer: clang and its runtime, installed when missing (as root; three tries, as a mirror's
# transient error is not a finding)
have_fuzzer() {
	command -v "$FUZZ_CC" >/dev/null &&
		echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' |
		"$FUZZ_CC" -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null
}
if ! have_fuzzer && [ "$FUZZ_CC" = clang ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	for t in 1 2 3; do
		echo "# installing clang libclang-rt-dev (apt-get, try $t of 3)"
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clang libclang-rt-dev; } >/dev/null 2>&1 &&
			break
		[ "$t" = 3 ] || sleep $((t * 10))
	done
fi
if ! have_fuzzer; then
	echo "not ok - $FUZZ_CC with libFuzzer (-fsanitize=fuzzer) is available (Debian: clang-14, libclang-rt-14-dev)"
	echo "0 passed, 1 failed"
	exit 1
fi
make -s deps >/dev/null 2>&1 || true
if ! make -s -f tests/fuzz/fuzz.mk -j"$(nproc 2>/dev/null || echo 2)" >"$out.build.log" 2>&1; then
	grep -E 'error|undefined reference' "$out.build.log" | head -n 20 | sed 's/^/# /'
	echo "not ok - fuzz harnesses build (see $out.build.log; a new storage module needs a stub in tests/fuzz/stubs/)"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "ok - fuzz harnesses build" | tee -a "$results"

all=""
for f in tests/fuzz/fuzz_*.c; do all="$all $(basename "$f" .c)"; done
harnesses=${*:-$all}

# 1. Regressions: each committed input must run clean.
for h in $harnesses; do
	for f in tests/fuzz/regressions/"$h"/*; do
		[ -f "$f" ] || continue
		if "$out/$h" "$f" >"$out/$h.replay.log" 2>&1; then
			echo "ok - regression $h/$(basename "$f")" | tee -a "$results"
		else
			echo "not ok - regression $h/$(basename "$f")" | tee -a "$results"
			grep -m3 -E 'fuzz contract|ERROR: |runtime error|SUMMARY' "$out/$h.replay.log" | sed 's/^/#   /'
		fi
	done
done

# 2. Bounded fuzzing.
fuzz_one() {
	local h=$1
	local log=$out/$h.log dict=()
	mkdir -p "$out/corpus/$h" "$out/artifacts/$h"
	[ -f tests/fuzz/json.dict ] && case $h in
	fuzz_body | fuzz_sizing | fuzz_bench | fuzz_probe_report) dict=(-dict=tests/fuzz/json.dict) ;;
	esac
	"$out/$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${dict[@]}" -artifact_prefix="$out/artifacts/$h/" \
		"$out/corpus/$h" "tests/fuzz/corpus/$h" >"$log" 2>&1
	local rc=$? runs cov
	runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$')
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+')
	if [ $rc = 0 ]; then
		echo "ok - $h: ${secs} s, ${runs:-?} runs, coverage ${cov:-?} edges, no crash" >>"$results"
		echo "ok - $h: ${secs} s, ${runs:-?} runs, coverage ${cov:-?} edges, no crash"
	else
		{
			echo "not ok - $h: finding (exit $rc), see $log"
			grep -m4 -E 'fuzz contract|ERROR: |runtime error|SUMMARY|Test unit written' "$log" | sed 's/^/#   /'
		} | tee -a "$results"
	fi
}
if [ "$secs" -gt 0 ]; then
	running=0
	for h in $harnesses; do
		fuzz_one "$h" &
		running=$((running + 1))
		if [ "$running" -ge "$par" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
fi

passed=$(grep -c '^ok ' "$results")
failed=$(grep -c '^not ok ' "$results")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

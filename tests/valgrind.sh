#!/usr/bin/env bash
# valgrind.sh - resource hygiene (issue 7, part 5): API tests against a
# plain (non-sanitizer) build of gpusizerd run under
#   valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9
# Every daemon and CLI process the tests start (serve, token create/revoke)
# runs under valgrind; its report goes to one file per process. The run
# fails on any memory error or definite leak in any process, and on any
# failing API check (a daemon that exits 9 fails its "clean exit" check).
#
#   tests/valgrind.sh                      the default subset (below)
#   VALGRIND_TESTS="t_basic t_auth" tests/valgrind.sh
#   KEEP_LOGS=1 tests/valgrind.sh          keep the valgrind reports
#
# Thread-per-connection under valgrind is slow (valgrind runs one thread at
# a time), so the default subset skips the load and slow-client scripts;
# each script has VALGRIND_SCRIPT_TIMEOUT seconds (default 600).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export TOP=$top
command -v valgrind >/dev/null || { echo "not ok - valgrind is not installed"; echo "0 passed, 1 failed"; exit 1; }
tests=${VALGRIND_TESTS:-t_basic t_auth t_access t_sizing t_benchmarks t_badinput t_faults t_dbrestart t_migrations}
log=$(mktemp -d "${TMPDIR:-/tmp}/gsz-valgrind.XXXXXX")
chmod 755 "$log"
results=$log/results.tap
: >"$results"

make -s deps >/dev/null || { echo "not ok - make deps"; exit 1; }
make -s build/gpusizerd >"$log/build.log" 2>&1 || { cat "$log/build.log"; echo "not ok - build"; exit 1; }

# The wrapper the API tests run as GSZ_BIN.
mkdir -p "$log/vg"
chmod 777 "$log/vg"
cat >"$log/gpusizerd" <<EOF
#!/bin/sh
exec valgrind --leak-check=full --errors-for-leak-kinds=definite \\
	--error-exitcode=9 --show-leak-kinds=definite --track-origins=yes \\
	--num-callers=30 --log-file="$log/vg/vg.%p.log" "$top/build/gpusizerd" "\$@"
EOF
chmod 755 "$log/gpusizerd"

pgdir=$log/pg
pgport=$((20000 + RANDOM % 20000))
DATABASE_URL=$(deploy/dev/pg.sh start "$pgdir" "$pgport" 2>"$log/pg.err") ||
	{ cat "$log/pg.err"; echo "not ok - could not start a private PostgreSQL"; exit 1; }
export DATABASE_URL GSZ_PGDIR=$pgdir GSZ_PGPORT=$pgport GSZ_BIN=$log/gpusizerd

t0=$(date +%s)
for t in $tests; do
	f=tests/api/$t.sh
	[ -f "$f" ] || { echo "not ok [$t] no such script" | tee -a "$results"; continue; }
	echo "# --- $t (under valgrind)"
	s0=$(date +%s)
	timeout "${VALGRIND_SCRIPT_TIMEOUT:-600}" bash "$f" >"$log/$t.out" 2>&1
	rc=$?
	cat "$log/$t.out"
	grep -E '^(ok|not ok) ' "$log/$t.out" | sed "s|^ok |ok [$t] |; s|^not ok |not ok [$t] |" >>"$results"
	[ $rc = 124 ] && echo "not ok [$t] timed out under valgrind" | tee -a "$results"
	echo "# $t: $(($(date +%s) - s0)) s"
done
deploy/dev/pg.sh stop "$pgdir"

# One verdict per valgrind report (one per process). A process killed by
# SIGKILL (t_faults does that on purpose) leaves no summary; its report is
# still searched for errors found before the kill.
procs=0; clean=0; killed=0
for r in "$log"/vg/vg.*.log; do
	[ -e "$r" ] || continue
	procs=$((procs + 1))
	errs=$(grep -oE 'ERROR SUMMARY: [0-9,]+ errors' "$r" | tail -n 1 | grep -oE '[0-9,]+' | tr -d ,)
	def=$(grep -oE 'definitely lost: [0-9,]+ bytes' "$r" | tail -n 1 | grep -oE '[0-9,]+' | tr -d ,)
	what=$(grep -m1 -oE '(Invalid (read|write|free)|Conditional jump|Syscall param|Mismatched free|[0-9,]+ bytes in [0-9,]+ blocks are definitely lost).*' "$r")
	if [ -z "$errs" ]; then
		killed=$((killed + 1))
		[ -z "$what" ] && { clean=$((clean + 1)); continue; }
		errs="?"
	fi
	if [ "$errs" = 0 ] && [ "${def:-0}" = 0 ]; then
		clean=$((clean + 1))
	else
		echo "not ok [valgrind] $(basename "$r") ($(grep -m1 -oE 'Command: .*' "$r" | cut -c10-90)): $errs errors, ${def:-0} bytes definitely lost: $what" | tee -a "$results"
		grep -m 16 -E '==[0-9]+== +(at|by) ' "$r" | sed 's/^/#   /'
	fi
done
if [ "$procs" -gt 0 ] && [ "$clean" = "$procs" ]; then
	echo "ok [valgrind] $procs processes under valgrind ($killed killed on purpose): 0 errors, 0 bytes definitely lost" | tee -a "$results"
elif [ "$procs" = 0 ]; then
	echo "not ok [valgrind] no valgrind report was written" | tee -a "$results"
fi

skipped=$(grep -ciE '^ok .*# SKIP' "$results")
passed=$(( $(grep -c '^ok ' "$results") - skipped ))
failed=$(grep -c '^not ok ' "$results")
[ "$failed" -gt 0 ] && { echo "# failures:"; grep '^not ok ' "$results" | sed 's/^/#   /'; }
echo "# valgrind run: $(($(date +%s) - t0)) s for: $tests"
[ -n "${KEEP_LOGS:-}" ] && echo "# logs kept in $log" || rm -rf "$log"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

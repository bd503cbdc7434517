#!/bin/sh
# The probe's no-GPU exit path: on a machine without an NVIDIA driver or
# GPU, `gpusizer-probe --quick` must print exactly one line on stderr,
# "gpusizer-probe: FATAL: no usable NVIDIA GPU (...)", write a JSON report
# with status "no_device" on stdout, and exit 3 (docs/PROBE.md).
# Also: `--list` prints the registry of measurements and exits 0.
# Usage: sh tests/probe_nodevice.sh [build/gpusizer-probe]
# Prints TAP-style "ok"/"not ok" lines; skips (as ok # SKIP) with a reason.
bin=${1:-build/gpusizer-probe}
name=probe_nodevice

if [ ! -x "$bin" ]; then
	echo "ok - $name # SKIP $bin not built (nvcc not found at build time)"
	exit 0
fi
# --list prints the registry of measurements and needs no GPU.
list_out=$("$bin" --list 2>/tmp/probe_list_err.$$)
list_rc=$?
list_err=$(head -n 1 /tmp/probe_list_err.$$)
rm -f /tmp/probe_list_err.$$
list_fail=""
[ "$list_rc" -eq 0 ] || list_fail="exit code $list_rc, want 0"
[ -z "$list_err" ] || list_fail="$list_fail; stderr: $list_err"
for m in gemm hbm host_copy p2p_bw p2p_latency nccl_allreduce; do
	printf '%s\n' "$list_out" | grep -q "^$m " || list_fail="$list_fail; $m not listed"
done
printf '%s\n' "$list_out" | grep -q 'metrics: gemm_tflops,gemm_sweep_tflops' ||
	list_fail="$list_fail; gemm's metrics not listed"
if [ -z "$list_fail" ]; then
	echo "ok - probe_list (--list prints the registry without a GPU)"
else
	echo "# $list_fail"
	echo "not ok - probe_list (--list prints the registry without a GPU)"
fi

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	echo "ok - $name # SKIP a GPU is present here; the no-device path cannot be exercised"
	[ -z "$list_fail" ]
	exit $?
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" --quick >"$tmp/out" 2>"$tmp/err"
rc=$?
fail=0
if [ "$rc" -ne 3 ]; then
	echo "# exit code $rc, want 3"
	fail=1
fi
lines=$(wc -l <"$tmp/err")
if [ "$lines" -ne 1 ]; then
	echo "# stderr has $lines lines, want 1:"
	sed 's/^/#   /' "$tmp/err"
	fail=1
fi
if ! grep -q '^gpusizer-probe: FATAL: no usable NVIDIA GPU (' "$tmp/err"; then
	echo "# stderr lacks the FATAL line: $(cat "$tmp/err")"
	fail=1
fi
if command -v python3 >/dev/null 2>&1; then
	if ! python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "no_device", r["status"]
assert r["schema_version"] == 1
assert r["mode"] == "quick"
assert r["results"] == [] and r["gpus"] == []
assert r["error"]["code"]
assert r["node"].get("gpu_uuids") is None
' "$tmp/out"; then
		echo "# stdout is not a no_device report"
		fail=1
	fi
elif ! grep -q '"status": "no_device"' "$tmp/out"; then
	echo "# stdout is not a no_device report"
	fail=1
fi
if [ $fail -eq 0 ]; then
	echo "ok - $name"
else
	echo "not ok - $name"
	exit 1
fi
[ -z "$list_fail" ] || exit 1

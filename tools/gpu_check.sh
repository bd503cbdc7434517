#!/usr/bin/env bash
# gpu_check.sh - `make gpu-check`: validate gpusizer-probe on a GPU machine.
#
# 1. Builds the probe for this machine's GPUs only (compute capability from
#    nvidia-smi --query-gpu=compute_cap; never -arch=native).
# 2. Runs `--quick` and the full probe (extra arguments for the full run in
#    $GPU_CHECK_FULL_ARGS, e.g. "--sustain-s 10" or "--isolated").
# 3. When PyTorch with CUDA is importable, measures the reference on GPU 0
#    (tools/gpu_check_ref.py: torch.matmul BF16, torch._scaled_mm FP8 at the
#    shapes the probe measured, device and pinned host copies at its sizes).
# 4. Prints probe vs reference per metric with the ratio; the goal is
#    >= 95 % of the reference on the same card in the same run
#    (tools/gpu_check_compare.py).
#
# GPU_CHECK_PROBE=PATH uses a probe built elsewhere (nothing is built here);
# GPU_CHECK_TIMEOUT_S=N ends each probe run after N seconds (`timeout`), so
# a hung measurement cannot take the whole check with it.
#
# Without a GPU it prints "gpu-check: skipped: no GPU (...)" and exits 0, so
# it can be called anywhere. Exit 1 when a probe run fails or a figure is
# below the goal. Everything lands in $GPU_CHECK_DIR (build/gpu-check):
# the reports, the reference, the table, and report copies with the host
# name scrubbed (*.scrubbed.json) ready to commit as fixtures.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=${GPU_CHECK_DIR:-build/gpu-check}
smi=${NVIDIA_SMI:-nvidia-smi}

skip() {
	echo "gpu-check: skipped: no GPU ($1)"
	exit 0
}

command -v "$smi" >/dev/null 2>&1 || skip "$smi not found"
caps=$("$smi" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null) ||
	skip "$smi reports no usable GPU: $("$smi" -L 2>&1 | head -n 1)"
archs=$(printf '%s\n' "$caps" | tr -d ' .\r' | grep -E '^[0-9]+$' | sort -u | tr '\n' ' ')
archs=${archs% }
[ -n "$archs" ] || skip "$smi lists no GPU"

mkdir -p "$out"
echo "gpu-check: GPUs: $("$smi" --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')"
bin=${GPU_CHECK_PROBE:-}
if [ -n "$bin" ]; then
	[ -x "$bin" ] || {
		echo "gpu-check: FAILED: GPU_CHECK_PROBE=$bin is not an executable"
		exit 1
	}
	echo "gpu-check: using the probe built at $bin"
else
	echo "gpu-check: building for compute capability $archs"
	bin=$out/gpusizer-probe
	make -s -f probe/probe.mk probe PROBE_ARCHS="$archs" \
		PROBE_OBJDIR="$out/obj" PROBE_BIN="$bin" || {
		echo "gpu-check: FAILED: the probe does not build"
		exit 1
	}
	[ -x "$bin" ] || {
		echo "gpu-check: FAILED: no nvcc to build the probe (set CUDA_HOME or NVCC)"
		exit 1
	}
fi
limit=()
[ -n "${GPU_CHECK_TIMEOUT_S:-}" ] && limit=(timeout -k 5 "$GPU_CHECK_TIMEOUT_S")

fail=0
run_probe() { # NAME ARGS...: the report in $out/NAME.json, log in NAME.log
	local name=$1 rc
	shift
	echo "gpu-check: gpusizer-probe $*"
	"${limit[@]}" "$bin" "$@" --output "$out/$name.json" 2>"$out/$name.log"
	rc=$?
	[ "$rc" -eq 124 ] && echo "gpu-check: $name: stopped after GPU_CHECK_TIMEOUT_S=$GPU_CHECK_TIMEOUT_S s"
	echo "gpu-check: $name: exit $rc ($(grep -c ' failed: \| skipped: ' "$out/$name.log") results not ok; log $out/$name.log)"
	# 0 ok, 2 partial (e.g. one GPU: no NCCL, no P2P) both ran.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
		echo "gpu-check: FAILED: $name exited $rc"
		tail -n 5 "$out/$name.log" | sed 's/^/    /'
		fail=1
	fi
	grep ' failed: ' "$out/$name.log" | sed 's/^/    /'
}
run_probe quick --quick
# shellcheck disable=SC2086
run_probe full --full ${GPU_CHECK_FULL_ARGS:-}

for r in quick full; do
	[ -s "$out/$r.json" ] || continue
	python3 - "$out/$r.json" "$out/$r.scrubbed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["node"]["hostname"] = "gpu-check-node"
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
done

ref=$out/reference.json
rm -f "$ref"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "gpu-check: PyTorch reference on GPU 0"
	"${limit[@]}" python3 tools/gpu_check_ref.py "$out/quick.json" "$out/full.json" >"$ref" 2>"$out/reference.log" || {
		echo "gpu-check: FAILED: the PyTorch reference did not run (log $out/reference.log)"
		tail -n 5 "$out/reference.log" | sed 's/^/    /'
		rm -f "$ref"
		fail=1
	}
else
	echo "gpu-check: no PyTorch with CUDA here (python3 -c 'import torch' fails): probe figures only"
fi

python3 tools/gpu_check_compare.py "$out/quick.json" "$out/full.json" "$ref" | tee "$out/table.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail=1
[ $fail -eq 0 ] && echo "gpu-check: ok" || echo "gpu-check: FAILED (see above)"
exit $fail

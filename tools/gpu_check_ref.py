#!/usr/bin/env python3
"""PyTorch reference for `make gpu-check` (tools/gpu_check.sh).

Measures on GPU 0, at exactly the shapes and sizes the probe's reports
measured GPU 0 at:
  * gemm_tflops bf16: torch.matmul of bf16 (m x k) @ (k x n), 2mnk / t
  * gemm_tflops fp8_e4m3: torch._scaled_mm e4m3 x e4m3 -> bf16, scales 1.0
    (mamf-finder's FP8 method), 2mnk / t
  * hbm_copy_ce_gbps: dst.copy_(src) on the device (a contiguous same-type
    copy; PyTorch issues cudaMemcpyAsync: the copy engine), bytes once
  * hbm_copy_gbps: torch.bitwise_not(src, out=dst) on int32, PyTorch's
    elementwise kernel, which reads and writes the same bytes on the SMs
    as the probe's copy kernel, bytes once
  * h2d_pinned_gbps, d2h_pinned_gbps: copies between a pinned host tensor and
    the device, bytes once
Each figure is the median of 5 samples, each sample a batch of operations
lasting >= 50 ms timed with CUDA events after a warm-up (the probe's
statistic). Inputs are random (torch.randn), never zeros.

Usage: gpu_check_ref.py QUICK.json FULL.json > reference.json
Output: {"device": ..., "torch": ..., "cuda": ..., "results": [{"metric",
"dtype", "shape" | "size_bytes", "median", "samples", "unit"}]}
"""
import json
import statistics
import sys
import time

import torch

DEV = torch.device("cuda", 0)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def wanted(reports):
    """(metric, dtype, shape, size) measured ok on GPU 0 by the probe."""
    keys = set()
    for rep in reports:
        if not rep:
            continue
        for r in rep.get("results", []):
            if r.get("gpu_index") != 0 or r.get("status") != "ok":
                continue
            m = r["metric"]
            if m == "gemm_tflops" and r.get("dtype") in ("bf16", "fp8_e4m3"):
                s = r["shape"]
                keys.add((m, r["dtype"], (s["m"], s["n"], s["k"]), None))
            elif m in ("hbm_copy_ce_gbps", "hbm_copy_gbps",
                       "h2d_pinned_gbps", "d2h_pinned_gbps"):
                keys.add((m, None, None, r["size_bytes"]))
    return sorted(keys, key=str)


def time_ms(fn, target_ms=50.0, samples=5):
    """Median ms per call over `samples` batches of >= target_ms each."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize(DEV)
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize(DEV)
    one = max((time.perf_counter() - t0) * 1e3, 1e-3)
    loops = max(1, min(10000, int(target_ms / one + 0.5)))
    out = []
    for _ in range(samples):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(loops):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / loops)
    return out


def warm_up(seconds):
    x = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    t0 = time.time()
    while time.time() - t0 < seconds:
        torch.matmul(x, x)
    torch.cuda.synchronize(DEV)


def gemm(dtype, m, n, k):
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
    if dtype == "bf16":
        def fn():
            torch.matmul(a, b)
    else:
        # _scaled_mm wants A row-major and B column-major (TN), dims % 16.
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=DEV)

        def fn():
            try:
                torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                 out_dtype=torch.bfloat16)
            except TypeError:  # torch < 2.4: scales optional
                torch._scaled_mm(a8, b8, out_dtype=torch.bfloat16)
    ms = time_ms(fn)
    return [2.0 * m * n * k / (t * 1e-3) / 1e12 for t in ms]


def copy(metric, size):
    n = size // 4
    if metric in ("hbm_copy_ce_gbps", "hbm_copy_gbps"):
        src = torch.randint(-2**31, 2**31 - 1, (n,), device=DEV,
                            dtype=torch.int32)
        dst = torch.empty_like(src)
        if metric == "hbm_copy_ce_gbps":
            def fn():
                dst.copy_(src)
        else:
            # The probe's hbm_copy_gbps is a copy by the SMs; PyTorch's
            # copy_ of a contiguous tensor is the copy engine
            # (cudaMemcpyAsync), so the SM reference is an elementwise
            # kernel that reads and writes the same bytes.
            def fn():
                torch.bitwise_not(src, out=dst)
    else:
        host = torch.randint(-2**31, 2**31 - 1, (n,),
                             dtype=torch.int32).pin_memory()
        dev = torch.empty(n, device=DEV, dtype=torch.int32)
        if metric == "h2d_pinned_gbps":
            def fn():
                dev.copy_(host, non_blocking=True)
        else:
            def fn():
                host.copy_(dev, non_blocking=True)
    ms = time_ms(fn)
    return [size / (t * 1e-3) / 1e9 for t in ms]


def main():
    reports = [load(p) for p in sys.argv[1:]]
    keys = wanted(reports)
    warm_up(10.0)
    results = []
    for metric, dtype, shape, size in keys:
        try:
            if shape:
                s = gemm(dtype, *shape)
                unit = "TFLOP/s"
            else:
                s = copy(metric, size)
                unit = "GB/s"
            err = None
        except Exception as e:  # report, do not hide
            s, unit, err = [], None, "%s: %s" % (type(e).__name__, e)
        res = {"metric": metric, "dtype": dtype, "unit": unit,
               "median": statistics.median(s) if s else None,
               "samples": s, "error": err}
        if shape:
            res["shape"] = {"m": shape[0], "n": shape[1], "k": shape[2]}
        else:
            res["size_bytes"] = size
        print("reference: %s %s %s: %s" % (metric, dtype or "",
                                           shape or size,
                                           err or "%.4g" % res["median"]),
              file=sys.stderr)
        results.append(res)
    json.dump({"device": torch.cuda.get_device_name(DEV),
               "torch": torch.__version__, "cuda": torch.version.cuda,
               "results": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

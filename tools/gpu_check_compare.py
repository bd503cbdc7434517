#!/usr/bin/env python3
"""Side-by-side table of `make gpu-check` (tools/gpu_check.sh).

For GPU 0 of each probe report (quick, full): the probe's median beside the
PyTorch reference at the same shape or size, and the ratio probe/reference
against the goal of >= 95 % (docs/PROBE.md "Validating on a GPU machine").
Without a reference (no PyTorch) the probe's figures are listed with their
efficiency against the limit.

Usage: gpu_check_compare.py QUICK.json FULL.json [REFERENCE.json]
Exit 1 when a compared figure is below the goal, a report is missing or
unreadable, or the reference failed for a figure; else 0.
"""
import json
import sys

GOAL = 0.95
METRICS = ("gemm_tflops", "hbm_copy_ce_gbps", "hbm_copy_gbps",
           "h2d_pinned_gbps", "d2h_pinned_gbps")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def key(r):
    shape = r.get("shape")
    if shape:
        return (r["metric"], r.get("dtype"), (shape["m"], shape["n"],
                                              shape["k"]))
    return (r["metric"], r.get("dtype"), r.get("size_bytes"))


def fmt(v):
    return "-" if v is None else "%.4g" % v


def main(argv):
    names = ("quick", "full")
    reports = [load(p) for p in argv[1:3]]
    ref = load(argv[3]) if len(argv) > 3 else None
    refs = {}
    for r in (ref or {}).get("results", []):
        refs[key(r)] = r
    bad = 0
    if ref:
        print("reference: %s, torch %s, CUDA %s (GPU 0)" %
              (ref.get("device"), ref.get("torch"), ref.get("cuda")))
    print("%-6s %-18s %-9s %-18s %11s %11s %7s  %s" %
          ("run", "metric", "dtype", "shape/size", "probe", "reference",
           "ratio", "verdict"))
    for name, rep in zip(names, reports):
        if rep is None:
            print("%-6s (no report)" % name)
            bad = 1
            continue
        for r in rep.get("results", []):
            if r.get("gpu_index") != 0 or r["metric"] not in METRICS:
                continue
            if r["metric"] == "gemm_tflops" and \
                    r.get("dtype") not in ("bf16", "fp8_e4m3"):
                continue
            k = key(r)
            where = "x".join(str(x) for x in k[2]) if isinstance(
                k[2], tuple) else "%d MiB" % ((k[2] or 0) >> 20)
            if r.get("status") != "ok":
                print("%-6s %-18s %-9s %-18s %11s %11s %7s  %s: %s" %
                      (name, k[0], k[1] or "", where, "-", "-", "-",
                       r.get("status"), r.get("reason")))
                continue
            p = r.get("median")
            x = refs.get(k)
            if x is None:
                eff = r.get("efficiency")
                verdict = "no reference" + (
                    "; %.0f %% of %s limit" % (100 * eff, r.get(
                        "limit_basis")) if eff is not None else "")
                print("%-6s %-18s %-9s %-18s %11s %11s %7s  %s" %
                      (name, k[0], k[1] or "", where, fmt(p), "-", "-",
                       verdict))
                continue
            m = x.get("median")
            if not m:
                print("%-6s %-18s %-9s %-18s %11s %11s %7s  %s" %
                      (name, k[0], k[1] or "", where, fmt(p), "-", "-",
                       "reference failed: %s" % x.get("error")))
                bad = 1
                continue
            ratio = p / m
            ok = ratio >= GOAL
            bad |= not ok
            note = "" if not r.get("concurrent") else \
                " (probe ran all GPUs at once, the reference GPU 0 alone)"
            print("%-6s %-18s %-9s %-18s %11s %11s %6.1f%%  %s%s" %
                  (name, k[0], k[1] or "", where, fmt(p), fmt(m),
                   100 * ratio, "ok" if ok else "BELOW GOAL (95 %)", note))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

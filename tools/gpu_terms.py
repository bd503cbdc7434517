#!/usr/bin/env python3
"""Measure, on one GPU, the engine's per-kernel terms (docs/MODEL.md §4a, §5).

Nothing here is fitted: each figure is printed beside what the engine
assumes so a reader can see where the model holds. Parts (each in its own
try block; a failing part does not stop the others):

  gemm  GEMM shape factor: torch.matmul (bf16) and torch._scaled_mm
        (fp8 e4m3 -> bf16, scales 1.0) with one dimension x in 16..8192
        and the other two 8192, x in each of M, N, K. The rate is over the
        8192^3 rate measured just before and after each sweep (same clock
        regime). The engine: x / (x + 128) bf16, x / (x + 256) fp8
        (engine/gemm.c).
  attn  Fused attention: SDPA with the FLASH_ATTENTION backend (PyTorch's
        FlashAttention-2) and CUDNN_ATTENTION, bf16, causal and not, head
        dim 64 and 128, 16K tokens per batch, hidden 2048 (the FA2/FA3
        papers' benchmark setup). Forward FLOPs 4*b*s^2*h*d (half with the
        causal mask), backward 2.5x forward (as the papers count).
  step  Whole training steps of Hugging Face transformers' LlamaForCausalLM
        (attn_implementation="sdpa"), randomly initialised, fp32 weights
        under torch.autocast(bf16) (the Trainer's bf16=True), AdamW
        (fused); full fine-tuning and PEFT LoRA. Median step time over the
        steps after warm-up, and torch.cuda.max_memory_allocated /
        max_memory_reserved over the timed steps.

  step2 A second set of steps (STEP2 below), chosen after the LoRA adapter
        terms were written from the first set: their out-of-sample check.
  layers The linear GEMMs of whole transformer layers (Llama 3 8B at TP 1-8,
        70B at TP 4 and 8, 405B at TP 8; 4,096 tokens), each family's
        forward, input-gradient and weight-gradient GEMM, BF16 and (three of
        the cases) FP8: the engine's per-layer GEMM time against them.

  saved What autograd saves in one forward of the Hugging Face model (saved
        tensor hooks), per decoder layer and sub-module, bytes per token:
        the activation memory the eager stack holds, measured directly.

  sustain One 8192^3 GEMM run back to back for SUSTAIN_S seconds (BF16, then
        FP8 for a third of that), its rate, SM clock, board power,
        temperature and clock-throttle reasons recorded every 5 s: how much
        of the burst rate a power-limited part keeps when it never idles
        (MODEL.md §4a, "GEMM clock derate").
  loss  The eager loss path of Hugging Face transformers and torchtitan:
        bf16 logits -> .float() -> F.cross_entropy, forward and backward
        (to the bf16 logits' gradient), timed as one; and an elementwise
        bf16 -> fp32 copy of the same logits beside it, so its bytes per
        logit can be read against the card's own streaming rate.
  elementwise  The memory-bound kernels of a Llama layer, forward and
        backward, eager and compiled (torch.compile, Inductor's Triton
        kernels): RMSNorm, SwiGLU, rotary on Q and K, the residual add, at
        Llama 3 8B's widths and 8,192 tokens, the kernels' own time
        (torch.profiler: a small compiled function's Python wrappers
        would otherwise be timed too). Each time beside the bytes
        the engine counts for that kernel (docs/MODEL.md §4 table): the
        rate it implies, against the engine's 0.85 x datasheet HBM.
  step3 Steps on an 80 GB card (STEP3 below): configurations chosen before
        any was run or scored, each within what the H200 rows used of
        memory, so that they fit an H100 80 GB.

  experts The routed experts' GEMMs of a mixture-of-experts layer (public
        configs: Qwen3-30B-A3B, Qwen3-235B-A22B, DeepSeek-V3, Mixtral 8x7B)
        at EP 8, 4,096 and 16,384 tokens a GPU, uniform routing (each local
        expert gets tokens*k*ep/E rows, as the engine assumes): gate+up and
        down, forward, input-gradient and weight-gradient, BF16, as one
        torch._grouped_mm call per GEMM (the grouped kernel Megatron-Core's
        TEGroupedMLP and torchtitan use) and as a loop of torch.matmul over
        the experts (SequentialMLP). Each rate beside the 8192^3 rate
        measured just before, so it reads against the engine's shape factor
        of the expert GEMM's smallest dimension (engine/gemm.c).

Usage: gpu_terms.py OUT.json [gemm,attn,step,step2,step3,layers,saved,sustain,loss,elementwise,experts]
Each sample is a batch of calls lasting >= 50 ms timed with CUDA events;
figures are medians of 5 samples after a warm-up. Inputs are random.
"""
import json
import statistics
import sys
import time
import traceback

import torch

DEV = torch.device("cuda", 0)
RESULTS = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "gemm": [], "attn": [], "step": [], "errors": []}
OUT = sys.argv[1]
PARTS = (sys.argv[2] if len(sys.argv) > 2 else "gemm,attn,step").split(",")

try:
    import pynvml
    pynvml.nvmlInit()
    NVH = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # telemetry is optional
    NVH = None


def clock_mhz():
    if NVH is None:
        return None
    try:
        return pynvml.nvmlDeviceGetClockInfo(NVH, pynvml.NVML_CLOCK_SM)
    except Exception:
        return None


def save():
    with open(OUT, "w") as f:
        json.dump(RESULTS, f, indent=1)


def timed(fn, min_s=0.05, samples=5):
    """Median seconds per call of fn over `samples` samples of >= min_s."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 0.02 or n < 2:
        fn()
        n += 1
        torch.cuda.synchronize()
    per = (time.perf_counter() - t0) / n
    reps = max(1, int(min_s / max(per, 1e-7)))
    out = []
    for _ in range(samples):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3 / reps)
    return statistics.median(out)


def gemm_fn(dtype, m, n, k):
    if dtype == "bf16":
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        return lambda: torch.matmul(a, b)
    a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device=DEV)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16)


def gemm_tflops(dtype, m, n, k):
    try:
        fn = gemm_fn(dtype, m, n, k)
        s = timed(fn)
    except Exception as e:
        RESULTS["errors"].append(f"gemm {dtype} {m}x{n}x{k}: {e!r}")
        return float("nan")
    return 2.0 * m * n * k / s / 1e12


def warm_clocks(n=8192, seconds=5):
    """n^3 BF16 GEMMs back to back for `seconds`: the card at its
    sustained clock, so what is timed next and its reference share one
    regime."""
    fn = gemm_fn("bf16", n, n, n)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
    torch.cuda.synchronize()


def part_gemm():
    big = 8192
    xs = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    # warm the card to its sustained clock so the sweep and its reference
    # share one regime
    warm_clocks(big)
    for dtype, half in (("bf16", 128.0), ("fp8", 256.0)):
        for pos in ("M", "N", "K"):
            ref0 = gemm_tflops(dtype, big, big, big)
            rows = []
            for x in xs:
                m, n, k = (x if pos == "M" else big, x if pos == "N" else big,
                           x if pos == "K" else big)
                rows.append((x, m, n, k, gemm_tflops(dtype, m, n, k), clock_mhz()))
            ref1 = gemm_tflops(dtype, big, big, big)
            ref = 0.5 * (ref0 + ref1)
            for x, m, n, k, tf, mhz in rows:
                RESULTS["gemm"].append({
                    "dtype": dtype, "min_dim_in": pos, "x": x, "m": m, "n": n,
                    "k": k, "tflops": round(tf, 1), "ref_8192_tflops": round(ref, 1),
                    "factor": round(tf / ref, 4),
                    "engine_factor": round(x / (x + half), 4), "sm_mhz": mhz})
                print(f"gemm {dtype} {pos}={x:5d} {tf:8.1f} TFLOP/s "
                      f"factor {tf / ref:.3f} engine {x / (x + half):.3f}", flush=True)
            save()


def part_attn():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    tokens, hidden = 16384, 2048
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        for d in (64, 128):
            h = hidden // d
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                b = tokens // s
                for causal in (True, False):
                    try:
                        q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16,
                                               requires_grad=True) for _ in range(3))
                        with sdpa_kernel(backend):
                            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            tf = timed(fwd)
                            o = fwd()
                            g = torch.randn_like(o)
                            bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
                            tb = timed(bwd)
                        flops = 4.0 * b * s * s * h * d * (0.5 if causal else 1.0)
                        row = {"backend": backend.name, "head_dim": d, "seq": s, "batch": b,
                               "heads": h, "causal": causal,
                               "fwd_tflops": round(flops / tf / 1e12, 1),
                               "bwd_tflops": round(2.5 * flops / tb / 1e12, 1),
                               "sm_mhz": clock_mhz()}
                        RESULTS["attn"].append(row)
                        print("attn", row, flush=True)
                        del q, k, v, o, g
                    except Exception as e:
                        RESULTS["errors"].append(f"attn {backend.name} d{d} s{s} causal={causal}: {e!r}")
                        print("attn error", backend.name, d, s, causal, repr(e)[:300], flush=True)
                save()


def llama_cfg(name):
    from transformers import LlamaConfig
    common = dict(vocab_size=128256, rms_norm_eps=1e-5, rope_theta=500000.0,
                  max_position_embeddings=8192, attention_bias=False, mlp_bias=False)
    shapes = {
        # Llama 3.2 1B / 3B and Llama 3 8B as published (config.json)
        "llama-3.2-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                             num_attention_heads=32, num_key_value_heads=8,
                             tie_word_embeddings=True),
        "llama-3.2-3b": dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                             num_attention_heads=24, num_key_value_heads=8,
                             tie_word_embeddings=True),
        "llama-3-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=8,
                           tie_word_embeddings=False),
        # Mistral 7B v0.1's shapes (config.json; its 4,096-token sliding window
        # equals full causal attention at the lengths run here)
        "mistral-7b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=8,
                           tie_word_embeddings=False, vocab_size=32000),
    }
    return LlamaConfig(**{**common, **shapes[name]})


def one_step_config(model_name, method, seq, mb, ckpt, rank=16, steps=8, warm=3):
    from transformers import LlamaForCausalLM
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    cfg = llama_cfg(model_name)
    cfg._attn_implementation = "sdpa"
    with torch.device(DEV):
        if method == "full":
            model = LlamaForCausalLM(cfg)  # fp32 weights (Trainer, bf16=True)
        else:
            model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method == "lora":
        from peft import LoraConfig, get_peft_model
        if ckpt:
            model.enable_input_require_grads()
        model = get_peft_model(model, LoraConfig(
            r=rank, lora_alpha=2 * rank, lora_dropout=0.0, task_type="CAUSAL_LM",
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                            "up_proj", "down_proj"]))
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=DEV)
    weights_mib = torch.cuda.memory_allocated() / 2**20

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    row = {"model": model_name, "method": method, "seq": seq, "micro_batch": mb,
           "lora_rank": rank if method == "lora" else None,
           "grad_checkpointing": ckpt, "params": sum(p.numel() for p in model.parameters()),
           "trainable": sum(p.numel() for p in params),
           "step_s": round(statistics.median(times), 5),
           "step_s_min": round(min(times), 5), "tokens_per_s": round(mb * seq / statistics.median(times)),
           "weights_mib": round(weights_mib), "peak_allocated_mib": round(torch.cuda.max_memory_allocated() / 2**20),
           "peak_reserved_mib": round(torch.cuda.max_memory_reserved() / 2**20),
           "sm_mhz": clock_mhz()}
    del model, opt, params
    torch.cuda.empty_cache()
    return row


# The second set (2026-11-26, second call): chosen before any was scored, after
# the LoRA adapter terms were written from the first set, so they test those
# terms out of sample: another rank, longer sequences, a larger micro-batch,
# another model.
STEP2 = [
    ("llama-3-8b", "lora", 2048, 4, False, 64),
    ("llama-3-8b", "lora", 8192, 1, True, 16),
    ("llama-3-8b", "lora", 2048, 8, True, 16),
    ("llama-3.2-3b", "lora", 4096, 4, False, 16),
    ("mistral-7b", "lora", 4096, 2, False, 16),
    ("llama-3.2-1b", "full", 2048, 8, False, 16),
    ("llama-3.2-3b", "full", 8192, 1, True, 16),
]


def part_step2():
    run_steps(STEP2)


# The third set (2026-11-26, an H100 80 GB): fixed before the run. Five repeat
# H200 configurations (the same rows on another part) and three new ones.
STEP3 = [
    ("llama-3.2-1b", "full", 2048, 4, False, 16),
    ("llama-3.2-1b", "full", 8192, 1, False, 16),
    ("llama-3.2-1b", "full", 4096, 4, True, 16),
    ("llama-3.2-3b", "full", 4096, 2, True, 16),
    ("llama-3.2-3b", "full", 8192, 1, True, 16),
    ("llama-3-8b", "lora", 4096, 4, True, 16),
    ("llama-3-8b", "lora", 8192, 1, True, 16),
    ("llama-3-8b", "lora", 2048, 2, False, 16),
]


def part_step3():
    run_steps(STEP3)


def kernel_time(fn, iters=20):
    """Seconds of GPU kernel time per call of fn (torch.profiler, the sum
    of the device kernels' durations): what the kernels take, without the
    gaps a compiled function's Python wrappers leave between them."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
    total_us = sum(getattr(k, "self_device_time_total", 0.0) or getattr(k, "self_cuda_time_total", 0.0)
                   for k in prof.key_averages())
    return total_us / 1e6 / iters


def part_elementwise():
    RESULTS.setdefault("elementwise", [])
    tokens, h, f, heads, kv, d = 8192, 4096, 14336, 32, 8, 128
    bf = torch.bfloat16

    def rmsnorm(x, w):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + 1e-5)).to(bf) * w

    def swiglu(gu):
        g, u = gu.chunk(2, dim=-1)
        return torch.nn.functional.silu(g) * u

    def rotary(q, cos, sin):
        q1, q2 = q.chunk(2, dim=-1)
        return q * cos + torch.cat((-q2, q1), dim=-1) * sin

    def residual(a, b):
        return a + b

    pos = torch.arange(tokens, device=DEV, dtype=torch.float32)[:, None]
    inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=DEV, dtype=torch.float32) / d))
    ang = torch.cat((pos * inv, pos * inv), dim=-1)
    cos, sin = ang.cos().to(bf)[:, None, :], ang.sin().to(bf)[:, None, :]
    # (name, fn, inputs, bytes the engine counts forward + backward, 2-byte values)
    cases = [
        ("rmsnorm", rmsnorm, lambda: (torch.randn(tokens, h, device=DEV, dtype=bf, requires_grad=True),
                                      torch.ones(h, device=DEV, dtype=bf, requires_grad=True)),
         (2 + 3) * h * 2),
        ("swiglu", swiglu, lambda: (torch.randn(tokens, 2 * f, device=DEV, dtype=bf, requires_grad=True),),
         (3 + 5) * f * 2),
        ("rotary_qk", rotary, lambda: (torch.randn(tokens, heads + kv, d, device=DEV, dtype=bf,
                                                   requires_grad=True), cos, sin),
         2 * 2 * (heads + kv) * d * 2),
        # autograd passes an add's gradient through without a kernel: the
        # forward's 3h alone is timed
        ("residual_fwd", residual, lambda: (torch.randn(tokens, h, device=DEV, dtype=bf, requires_grad=True),
                                            torch.randn(tokens, h, device=DEV, dtype=bf, requires_grad=True)),
         3 * h * 2),
    ]
    engine_gbps = 0.85 * {"H100": 3350.0, "H200": 4800.0}.get(
        "H200" if "H200" in RESULTS["device"] else "H100", 3350.0)
    for name, fn, mk, bytes_per_token in cases:
        for mode in ("eager", "compiled"):
            try:
                f_run = torch.compile(fn) if mode == "compiled" else fn
                args = mk()
                out = f_run(*args)
                g = torch.randn_like(out)
                leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]

                def step():
                    o = f_run(*args)
                    return torch.autograd.grad(o, leaves, g)

                t = kernel_time(step)
                gbps = tokens * bytes_per_token / t / 1e9
                row = {"kernel": name, "mode": mode, "tokens": tokens, "ms": round(t * 1e3, 4),
                       "engine_bytes_per_token": bytes_per_token,
                       "implied_gbps": round(gbps, 1),
                       "engine_gbps": engine_gbps,
                       "time_over_engine": round(engine_gbps / gbps, 3),
                       "sm_mhz": clock_mhz()}
                RESULTS["elementwise"].append(row)
                print("elementwise", row, flush=True)
            except Exception:
                RESULTS["errors"].append(f"elementwise {name} {mode}: {traceback.format_exc()[-800:]}")
                print("elementwise error", name, mode, traceback.format_exc()[-800:], flush=True)
            save()


def part_loss():
    import torch.nn.functional as F
    RESULTS.setdefault("loss", [])
    for n, v in ((8192, 128256), (16384, 128256), (8192, 32000), (16384, 32000)):
        try:
            logits = torch.randn(n, v, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            labels = torch.randint(0, v, (n,), device=DEV)

            def path():
                loss = F.cross_entropy(logits.float(), labels)
                return torch.autograd.grad(loss, logits)

            t_path = timed(path)
            # the same bytes as the upcast alone: read 2 B, write 4 B per logit
            t_up = timed(lambda: logits.detach().float())
            copy_gbps = n * v * 6 / t_up / 1e9
            row = {"tokens": n, "vocab": v, "path_ms": round(t_path * 1e3, 3),
                   "upcast_ms": round(t_up * 1e3, 3), "upcast_gbps": round(copy_gbps, 1),
                   "bytes_per_logit_at_upcast_rate": round(t_path * copy_gbps * 1e9 / (n * v), 1),
                   "sm_mhz": clock_mhz()}
            RESULTS["loss"].append(row)
            print("loss", row, flush=True)
            del logits, labels
            torch.cuda.empty_cache()
        except Exception as e:
            RESULTS["errors"].append(f"loss {n}x{v}: {e!r}")
            print("loss error", n, v, repr(e)[:300], flush=True)
        save()


SUSTAIN_S = 90.0


def throttle_reasons():
    if NVH is None:
        return None
    try:
        return int(pynvml.nvmlDeviceGetCurrentClocksEventReasons(NVH))
    except Exception:
        try:
            return int(pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(NVH))
        except Exception:
            return None


def board_state():
    if NVH is None:
        return {}
    out = {"sm_mhz": clock_mhz(), "throttle": throttle_reasons()}
    try:
        out["power_w"] = pynvml.nvmlDeviceGetPowerUsage(NVH) / 1000.0
        out["temp_c"] = pynvml.nvmlDeviceGetTemperature(NVH, pynvml.NVML_TEMPERATURE_GPU)
        out["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(NVH) / 1000.0
    except Exception:
        pass
    return out


def part_sustain():
    RESULTS.setdefault("sustain", [])
    n = 8192
    for dtype, seconds in (("bf16", SUSTAIN_S), ("fp8", SUSTAIN_S / 3.0)):
        fn = gemm_fn(dtype, n, n, n)
        per = timed(fn, min_s=0.05, samples=1)  # the first sample is the burst
        burst = 2.0 * n ** 3 / per / 1e12
        row0 = {"dtype": dtype, "t_s": 0.0, "tflops": round(burst, 1), **board_state()}
        RESULTS["sustain"].append(row0)
        print("sustain", row0, flush=True)
        reps = max(1, int(0.25 / per))
        t0 = time.perf_counter()
        next_mark = 5.0
        while time.perf_counter() - t0 < seconds:
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(reps):
                fn()
            b.record()
            b.synchronize()
            el = time.perf_counter() - t0
            if el >= next_mark:
                s = a.elapsed_time(b) / 1e3 / reps
                row = {"dtype": dtype, "t_s": round(el, 1),
                       "tflops": round(2.0 * n ** 3 / s / 1e12, 1), **board_state()}
                RESULTS["sustain"].append(row)
                print("sustain", row, flush=True)
                next_mark += 5.0
        del fn
        save()


def layer_shapes():
    """(name, tp, tokens, family, pass, m, n, k) of a transformer layer's
    linear GEMMs: forward (tokens x out x in), input gradient (tokens x in
    x out) and weight gradient (out x in x tokens) per family, at TP t."""
    models = {  # h, heads, kv heads, head dim, f
        "llama-3-8b": (4096, 32, 8, 128, 14336),
        "llama-3-70b": (8192, 64, 8, 128, 28672),
        "llama-3.1-405b": (16384, 128, 8, 128, 53248),
    }
    cases = [("llama-3-8b", 1), ("llama-3-8b", 2), ("llama-3-8b", 4), ("llama-3-8b", 8),
             ("llama-3-70b", 4), ("llama-3-70b", 8), ("llama-3.1-405b", 8)]
    tokens = 4096
    for name, t in cases:
        h, a, k, d, f = models[name]
        fams = {"qkv": ((a + 2 * k) * d // t, h), "o": (h, a * d // t),
                "up": (2 * f // t, h), "down": (h, f // t)}
        for fam, (out, inp) in fams.items():
            yield (name, t, tokens, fam, "fwd", tokens, out, inp)
            yield (name, t, tokens, fam, "dgrad", tokens, inp, out)
            yield (name, t, tokens, fam, "wgrad", out, inp, tokens)


def part_layers():
    warm_clocks()
    RESULTS.setdefault("layers", [])
    for dtype in ("bf16", "fp8"):
        ref = gemm_tflops(dtype, 8192, 8192, 8192)
        for name, t, tokens, fam, ps, m, n, k in layer_shapes():
            if dtype == "fp8" and (name, t) not in (("llama-3-8b", 1), ("llama-3-70b", 8),
                                                  ("llama-3.1-405b", 8)):
                continue
            tf = gemm_tflops(dtype, m, n, k)
            row = {"dtype": dtype, "model": name, "tp": t, "tokens": tokens, "family": fam,
                   "pass": ps, "m": m, "n": n, "k": k, "tflops": round(tf, 1),
                   "ref_8192_tflops": round(ref, 1), "sm_mhz": clock_mhz()}
            RESULTS["layers"].append(row)
            print("layer", row, flush=True)
        save()


def saved_bytes(model_name, method, seq, mb, rank=16):
    """What autograd saves in one forward, by decoder layer and sub-module:
    every tensor a backward node keeps (torch.autograd.graph
    saved_tensors_hooks), counted once per storage, parameters apart."""
    from transformers import LlamaForCausalLM
    torch.cuda.empty_cache()
    cfg = llama_cfg(model_name)
    cfg._attn_implementation = "sdpa"
    with torch.device(DEV):
        model = LlamaForCausalLM(cfg)
        if method != "full":
            model = model.to(torch.bfloat16)
    if method == "lora":
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(
            r=rank, lora_alpha=2 * rank, lora_dropout=0.0, task_type="CAUSAL_LM",
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                            "up_proj", "down_proj"]))
    model.train()
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    stack = []
    names = {m: n for n, m in model.named_modules()}

    def pre(m, *_):
        stack.append(names[m])

    def post(m, *_):
        stack.pop()

    hooks = []
    for m in model.modules():
        hooks.append(m.register_forward_pre_hook(pre))
        hooks.append(m.register_forward_hook(post))
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        ptr = st.data_ptr()
        if ptr not in seen:
            # autocast's 16-bit copies of fp32 weights: cast from a parameter
            # (the cast's only input is the parameter's AccumulateGrad node);
            # a weight-shaped activation (tokens equal to a dimension) is not one
            fn = t.grad_fn
            wcopy = (ptr not in params and fn is not None and
                     type(fn).__name__ == "ToCopyBackward0" and
                     any(f is not None and type(f).__name__ == "AccumulateGrad"
                         for f, _ in fn.next_functions))
            seen[ptr] = (stack[-1] if stack else "", st.nbytes(), str(t.dtype),
                         ptr in params or wcopy, wcopy)
        return t

    ids = torch.randint(0, cfg.vocab_size, (mb, seq), device=DEV)
    before = torch.cuda.memory_allocated()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(input_ids=ids, labels=ids)
    after = torch.cuda.memory_allocated()
    for h in hooks:
        h.remove()
    # the backward: its peak over the forward's end, and the gradients it
    # leaves (allocated by it: no gradient existed before)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    out.loss.backward()
    torch.cuda.synchronize()
    bwd_peak = torch.cuda.max_memory_allocated()
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters()
                if p.grad is not None)
    tokens = mb * seq
    per_layer, per_mod, other = {}, {}, {}
    wcopies = sum(v[1] for v in seen.values() if v[4])
    for name, nbytes, dtype, is_param, _ in seen.values():
        if is_param:
            continue
        parts = name.split(".")
        if "layers" in parts:
            i = parts.index("layers")
            layer = int(parts[i + 1])
            sub = ".".join(parts[i + 2:]) or "(layer)"
            per_layer[layer] = per_layer.get(layer, 0) + nbytes
            if layer == 1:
                key = f"{sub} {dtype}"
                per_mod[key] = per_mod.get(key, 0) + nbytes
        else:
            key = f"{name or '(top)'} {dtype}"
            other[key] = other.get(key, 0) + nbytes
    row = {"model": model_name, "method": method, "seq": seq, "micro_batch": mb,
           "tokens": tokens, "hidden": cfg.hidden_size,
           "layer_bytes_per_token": {k: round(v / tokens, 1) for k, v in sorted(per_layer.items())[:3]},
           "layer1_by_module_bytes_per_token": {k: round(v / tokens, 1) for k, v in
                                                sorted(per_mod.items(), key=lambda x: -x[1])},
           "outside_layers_bytes_per_token": {k: round(v / tokens, 1) for k, v in
                                              sorted(other.items(), key=lambda x: -x[1])[:12]},
           "weight_copies_bytes": wcopies,
           "allocated_by_forward_bytes": after - before,
           "allocated_after_forward_bytes": after,
           "backward_peak_over_forward_end_bytes": bwd_peak - after,
           "gradient_bytes": grads}
    del out, model
    torch.cuda.empty_cache()
    return row


def part_saved():
    RESULTS.setdefault("saved", [])
    # 3,072 tokens: no activation shares a weight's shape
    for c in [("llama-3.2-1b", "full", 1536, 2), ("llama-3-8b", "lora", 1536, 2),
              ("llama-3.2-3b", "full", 1536, 2)]:
        try:
            row = saved_bytes(*c)
            RESULTS["saved"].append(row)
            print("saved", json.dumps(row), flush=True)
        except Exception:
            RESULTS["errors"].append(f"saved {c}: {traceback.format_exc()[-1500:]}")
            print("saved error", c, traceback.format_exc()[-1500:], flush=True)
        save()


def part_step():
    run_steps([
        ("llama-3.2-1b", "full", 2048, 4, False),
        ("llama-3.2-1b", "full", 4096, 2, False),
        ("llama-3.2-1b", "full", 8192, 1, False),
        ("llama-3.2-1b", "full", 4096, 4, True),
        ("llama-3.2-3b", "full", 4096, 2, False),
        ("llama-3.2-3b", "full", 4096, 2, True),
        ("llama-3-8b", "lora", 2048, 4, False),
        ("llama-3-8b", "lora", 4096, 4, True),
    ])


def run_steps(configs):
    import transformers
    RESULTS["transformers"] = transformers.__version__
    try:
        import peft
        RESULTS["peft"] = peft.__version__
    except Exception:
        pass
    for c in configs:
        try:
            row = one_step_config(*c)
            RESULTS["step"].append(row)
            print("step", row, flush=True)
        except Exception as e:
            RESULTS["errors"].append(f"step {c}: {e!r}")
            print("step error", c, traceback.format_exc()[-1500:], flush=True)
            torch.cuda.empty_cache()
        save()


# (name, hidden, expert ffn width, experts, top-k): the models' published
# configs (Hugging Face config.json: hidden_size, moe_intermediate_size or
# intermediate_size, num_experts / n_routed_experts, num_experts_per_tok).
EXPERT_MODELS = [
    ("qwen3-30b-a3b", 2048, 768, 128, 8),
    ("qwen3-235b-a22b", 4096, 1536, 128, 8),
    ("deepseek-v3", 7168, 2048, 256, 8),
    ("mixtral-8x7b", 4096, 14336, 8, 2),
]


def grouped_fns(rows, e_local, h, f2, f):
    """The six expert GEMMs of one layer as torch._grouped_mm calls:
    (family, pass, m, n, k per expert, fn)."""
    bf = torch.bfloat16
    offs = torch.arange(1, e_local + 1, device=DEV, dtype=torch.int32) * rows
    x = torch.randn(rows * e_local, h, device=DEV, dtype=bf)
    w1 = torch.randn(e_local, f2, h, device=DEV, dtype=bf).transpose(-2, -1)  # (E, h, 2f)
    g1 = torch.randn(rows * e_local, f2, device=DEV, dtype=bf)
    a = torch.randn(rows * e_local, f, device=DEV, dtype=bf)
    w2 = torch.randn(e_local, h, f, device=DEV, dtype=bf).transpose(-2, -1)  # (E, f, h)
    g2 = torch.randn(rows * e_local, h, device=DEV, dtype=bf)
    w1t = torch.randn(e_local, h, f2, device=DEV, dtype=bf).transpose(-2, -1)  # (E, 2f, h)
    w2t = torch.randn(e_local, f, h, device=DEV, dtype=bf).transpose(-2, -1)  # (E, h, f)
    xt = x.t().contiguous().t()  # column-major copy for the weight gradients
    at = a.t().contiguous().t()
    g1c = g1.t().contiguous().t()
    g2c = g2.t().contiguous().t()
    gm = torch._grouped_mm
    # each GEMM with the layouts to try, in order (the kernel accepts some
    # strides only; the first that runs is timed)
    return [
        ("gate_up", "fwd", rows, f2, h, [lambda: gm(x, w1, offs=offs)]),
        ("gate_up", "dgrad", rows, h, f2, [lambda: gm(g1, w1t, offs=offs)]),
        ("gate_up", "wgrad", h, f2, rows, [lambda: gm(xt.t(), g1, offs=offs),
                                           lambda: gm(xt.t(), g1c, offs=offs)]),
        ("down", "fwd", rows, h, f, [lambda: gm(a, w2, offs=offs)]),
        ("down", "dgrad", rows, f, h, [lambda: gm(g2, w2t, offs=offs)]),
        ("down", "wgrad", f, h, rows, [lambda: gm(at.t(), g2, offs=offs),
                                       lambda: gm(at.t(), g2c, offs=offs)]),
    ]


def first_running(alts):
    """The first of alts that runs (the error of the last otherwise)."""
    err = None
    for f in alts:
        try:
            f()
            torch.cuda.synchronize()
            return f
        except Exception as e:
            err = e
    raise err


def loop_fn(rows, e_local, m, n, k):
    """One expert GEMM family as a loop of torch.matmul over the experts."""
    bf = torch.bfloat16
    a = [torch.randn(m, k, device=DEV, dtype=bf) for _ in range(e_local)]
    b = [torch.randn(k, n, device=DEV, dtype=bf) for _ in range(e_local)]

    def run():
        for i in range(e_local):
            torch.matmul(a[i], b[i])
    return run


def part_experts():
    warm_clocks()
    RESULTS.setdefault("experts", [])
    ep = 8
    for name, h, f, experts, topk in EXPERT_MODELS:
        e_local = experts // ep
        for tokens in (4096, 16384):
            rows = tokens * topk * ep // experts
            ref = gemm_tflops("bf16", 8192, 8192, 8192)
            try:
                fns = grouped_fns(rows, e_local, h, 2 * f, f)
            except Exception as e:  # no grouped kernel: the loop alone
                RESULTS["errors"].append(f"experts {name} {tokens}: {e!r}")
                f2 = 2 * f
                fns = [("gate_up", "fwd", rows, f2, h, []), ("gate_up", "dgrad", rows, h, f2, []),
                       ("gate_up", "wgrad", h, f2, rows, []), ("down", "fwd", rows, h, f, []),
                       ("down", "dgrad", rows, f, h, []), ("down", "wgrad", f, h, rows, [])]
            for fam, ps, m, n, k, g in fns:
                flops = 2.0 * m * n * k * e_local
                row = {"model": name, "ep": ep, "tokens": tokens, "experts_local": e_local,
                       "rows_per_expert": rows, "family": fam, "pass": ps, "m": m, "n": n,
                       "k": k, "ref_8192_tflops": round(ref, 1), "sm_mhz": clock_mhz()}
                for how, alts in (("grouped", g), ("loop", None)):
                    if how == "grouped" and not alts:
                        row["grouped_tflops"] = None
                        continue
                    try:
                        f_run = (first_running(alts) if alts else
                                 loop_fn(rows, e_local, m, n, k))
                        s = timed(f_run)
                        row[how + "_tflops"] = round(flops / s / 1e12, 1)
                    except Exception as e:
                        RESULTS["errors"].append(f"experts {name} {tokens} {fam} {ps} {how}: {e!r}")
                        row[how + "_tflops"] = None
                    f_run = None
                RESULTS["experts"].append(row)
                print("experts", row, flush=True)
            del fns
            torch.cuda.empty_cache()
            save()


for part in PARTS:
    t0 = time.perf_counter()
    try:
        {"gemm": part_gemm, "attn": part_attn, "step": part_step, "step2": part_step2,
         "layers": part_layers, "saved": part_saved, "sustain": part_sustain,
         "step3": part_step3, "loss": part_loss,
         "elementwise": part_elementwise, "experts": part_experts}[part]()
    except Exception:
        RESULTS["errors"].append(f"{part}: {traceback.format_exc()[-1500:]}")
        print(part, "failed:", traceback.format_exc()[-1500:], flush=True)
    print(f"part {part}: {time.perf_counter() - t0:.1f} s", flush=True)
    save()

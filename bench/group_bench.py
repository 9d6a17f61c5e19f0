#!/usr/bin/python3
"""Per-group, 4-bit and fp8 quantization: qgen's JIT kernels (best ISA) on
a 4096 x 4096 fp32 weight, one thread, medians, with peers measured in the
same run: a copy of the floats (numpy, the memory-bound floor) and torch
1.13's quantize_per_channel to qint8 along the rows (torch has no per-group,
4-bit or fp8 quantize; it is the nearest call it has). One row reads the
weight as bfloat16. Each qgen row is
checked equal in bytes to qgen's reference before it is timed.

usage: PYTHONPATH=<build>/python bench/group_bench.py [--quick]
"""
import sys

import numpy as np
import torch

import qgen
import timing

torch.set_num_threads(1)
RUNS = 3 if "--quick" in sys.argv else 7
ROWS, COLS = 4096, 4096


def spec(base, **over):
    return qgen.Spec.from_dict({"name": "g", "base": base}, **over)


def main():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((ROWS, COLS)) * 0.02).astype(np.float32)
    n = w.size
    out = np.empty_like(w)
    rows = []
    rows.append(("copy of the floats (numpy)", lambda: np.copyto(out, w)))
    tw = torch.from_numpy(w)
    ts = torch.from_numpy(np.abs(w).max(axis=1) / 127.5 + 1e-8).to(torch.float64)
    tz = torch.zeros(ROWS, dtype=torch.int64)
    rows.append(("torch quantize_per_channel, qint8, per row", lambda: torch.quantize_per_channel(tw, ts, tz, 0, torch.qint8)))
    cases = [("qgen quantize, qint8 per tensor", spec("onnx.int8"), None),
             ("qgen quantize, qint8 per group of 32 (last axis)",
              spec("onnx.int8", qscheme="per_group_symmetric", ch_axis=1, channel_len=COLS, group_size=32), None),
             ("qgen quantize, qint4 per tensor", spec("onnx.int4"), None),
             ("qgen quantize, torchao.int4_weight_g32", spec("torchao.int4_weight_g32", channel_len=COLS), None),
             ("qgen quantize, torchao.int4_weight_g128", spec("torchao.int4_weight_g128", channel_len=COLS), None),
             ("qgen quantize, torchao.int4_weight_g32, bfloat16 weight",
              spec("torchao.int4_weight_g32", channel_len=COLS, float_type="bfloat16"), "bfloat16"),
             ("qgen quantize_dynamic, torchao.int4_weight_g32 (qparams too)",
              spec("torchao.int4_weight_g32", channel_len=COLS), "dynamic"),
             ("qgen quantize, fp8_e4m3fn per tensor (onnx.fp8_e4m3fn)", spec("onnx.fp8_e4m3fn"), None),
             ("qgen quantize, fp8_e4m3fn per group of 32 (last axis)",
              spec("onnx.fp8_e4m3fn", qscheme="per_group_symmetric", ch_axis=1, channel_len=COLS, group_size=32), None),
             ("qgen fake_quant, fp8_e4m3fn per tensor", spec("onnx.fp8_e4m3fn"), "fake_quant"),
             ("qgen fake_quant, qint8 per tensor", spec("onnx.int8", qscheme="per_tensor_symmetric"), "fake_quant")]
    for label, sp, kind in cases:
        k, r = qgen.Kernels(sp), qgen.Reference(sp)
        if kind == "dynamic":
            got, want = k.quantize_dynamic(w), r.quantize_dynamic(w)
            same = all(np.array_equal(a, b) for a, b in zip(got, want))
            run = (lambda k=k: k.quantize_dynamic(w))
        elif kind == "fake_quant":
            s = np.array([np.abs(w).max() / 100], np.float32)
            z = np.zeros(1, np.int32)
            same = all(np.array_equal(a, b) for a, b in zip(k.fake_quant(w, s, z), r.fake_quant(w, s, z)))
            run = (lambda k=k, s=s, z=z: k.fake_quant(w, s, z, out=out))
        else:
            x = torch.from_numpy(w).bfloat16() if kind == "bfloat16" else w
            count = qgen._lib.lib().qg_qparams_count(sp._ptr, n, 1) if sp.per_group else 1
            s = (rng.uniform(0.5, 1.5, count) * np.abs(w).max() / 7).astype(np.float32)
            z = np.zeros(count, np.int32)
            same = np.array_equal(np.asarray(k.quantize(x, s, z)), np.asarray(r.quantize(x, s, z)))
            run = (lambda k=k, s=s, z=z, x=x: k.quantize(x, s, z))
        if not same:
            raise SystemExit(f"group_bench: {label}: kernels and reference differ; expected the same bytes")
        rows.append((f"{label} [{k.isa}]", run))
    times = [(label, timing.median_seconds(fn, RUNS, 0.05)) for label, fn in rows]
    t_copy = times[0][1]
    print(f"{ROWS} x {COLS} fp32 weight, one thread, medians of {RUNS} runs\n")
    print("| operation | Gelem/s | time / copy time |")
    print("| --- | ---: | ---: |")
    for label, t in times:
        print(f"| {label} | {n / t / 1e9:.3f} | {t / t_copy:.2f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Fake-quant of bfloat16 and float16 activations (float_type): qgen's JIT
kernels (best ISA) on a 1M-element tensor, one thread, medians, with peers
measured in the same run: torch 1.13's fake_quantize_per_tensor_affine on
float32 and float16 tensors (it refuses bfloat16 on the CPU; the row says
so) and a copy of the 16-bit tensor (numpy, the memory-bound floor). Each
qgen row is checked equal in bits to qgen's reference before it is timed.

usage: PYTHONPATH=<build>/python:bench bench/float_type_bench.py [--quick]
"""
import sys

import numpy as np
import torch

import qgen
import timing

torch.set_num_threads(1)
RUNS = 3 if "--quick" in sys.argv else 7
N = 1 << 20
SCALE, ZP = 0.02, 128


def main():
    rng = np.random.default_rng(0)
    x32 = (rng.standard_normal(N) * 1.5).astype(np.float32)
    tx = {"float32": torch.from_numpy(x32), "float16": torch.from_numpy(x32).half(),
          "bfloat16": torch.from_numpy(x32).bfloat16()}
    copy_src, copy_dst = tx["float16"].numpy(), np.empty(N, np.float16)
    rows = [("copy of a 16-bit tensor (numpy)", lambda: np.copyto(copy_dst, copy_src))]
    for ft in ("float32", "float16", "bfloat16"):
        t = tx[ft]
        try:
            torch.fake_quantize_per_tensor_affine(t, SCALE, ZP, 0, 255)
            rows.append((f"torch fake_quantize_per_tensor_affine, {ft}",
                         lambda t=t: torch.fake_quantize_per_tensor_affine(t, SCALE, ZP, 0, 255)))
        except RuntimeError:
            rows.append((f"torch fake_quantize_per_tensor_affine, {ft}: refused by torch 1.13", None))
    s, z = np.float32(SCALE), np.int32(ZP)
    for ft in ("float32", "float16", "bfloat16"):
        sp = {"name": "a", "dtype": "quint8", "float_type": ft}
        k, r = qgen.Kernels(sp), qgen.Reference(sp)
        t = tx[ft]
        got, want = k.fake_quant(t, s, z), r.fake_quant(t, s, z)
        if not all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in zip(got, want)):
            raise SystemExit(f"float_type_bench: {ft}: kernels and reference differ; expected the same bits")
        y = torch.empty_like(t)
        rows.append((f"qgen fake_quant, {ft} [{k.isa}]", lambda k=k, t=t, y=y: k.fake_quant(t, s, z, out=y)))
    times = [(label, timing.median_seconds(fn, RUNS, 0.05) if fn else None) for label, fn in rows]
    t_copy = times[0][1]
    torch32 = times[1][1]
    print(f"{N} elements, quint8 per tensor, one thread, medians of {RUNS} runs\n")
    print("| operation | Gelem/s | time / copy time | speed vs torch float32 |")
    print("| --- | ---: | ---: | ---: |")
    for label, t in times:
        if t is None:
            print(f"| {label} | - | - | - |")
        else:
            print(f"| {label} | {N / t / 1e9:.3f} | {t / t_copy:.2f} | {torch32 / t:.1f}x |")


if __name__ == "__main__":
    main()

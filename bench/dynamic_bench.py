#!/usr/bin/python3
"""Dynamic quantization: qgen's quantize_dynamic (JIT kernels, best ISA)
against torch 1.13's torch.quantize_per_tensor_dynamic, one thread, same
run, the same bytes out (checked before timing). Per tensor at 64K and 1M
elements; per token on 256 rows of 4096, where torch's path is its
per-tensor call on each row. Prints a markdown table of medians.

usage: PYTHONPATH=<build>/python bench/dynamic_bench.py [--quick]
"""
import sys

import numpy as np
import torch

import qgen
import timing

torch.set_num_threads(1)
RUNS = 3 if "--quick" in sys.argv else 7
# torch's rule (docs/semantics.md, "Dynamic quantization")
SPEC = {"name": "dyn", "dtype": "quint8", "train_qparams": "fused_op", "observer": {"type": "moving_average_minmax"}}


def cases(k):
    rng = np.random.default_rng(0)
    for label, shape, per_token in (("per tensor", (1 << 16,), False), ("per tensor", (1 << 20,), False),
                                    ("per token, 256 x 4096", (256, 4096), True)):
        x = (rng.standard_normal(shape) * 3 + 0.5).astype(np.float32)
        t = torch.from_numpy(x)
        if per_token:
            def ref(t=t):
                return [torch.quantize_per_tensor_dynamic(row, torch.quint8, False) for row in t]
        else:
            def ref(t=t):
                return [torch.quantize_per_tensor_dynamic(t, torch.quint8, False)]

        def ours(t=t, per_token=per_token):
            return k.quantize_dynamic(t, per_token=per_token)

        want = np.concatenate([r.int_repr().numpy().reshape(-1) for r in ref()])
        if not np.array_equal(ours()[0].numpy().reshape(-1), want):
            raise SystemExit(f"dynamic_bench: {label} {shape}: qgen and torch differ; expected the same bytes")
        yield f"{label}, {x.size} elements", x.size, ref, ours


def main():
    k = qgen.Kernels(SPEC)
    print(f"torch {torch.__version__} vs qgen ({k.isa}), one thread, medians of {RUNS} runs\n")
    print("| quantize_dynamic, quint8 | torch Gelem/s | qgen Gelem/s | qgen / torch |")
    print("| --- | ---: | ---: | ---: |")
    for label, n, ref, ours in cases(k):
        t_ref = timing.median_seconds(ref, RUNS, 0.05)
        t_our = timing.median_seconds(ours, RUNS, 0.05)
        print(f"| {label} | {n / t_ref / 1e9:.3f} | {n / t_our / 1e9:.3f} | {t_ref / t_our:.1f}x |")


if __name__ == "__main__":
    main()

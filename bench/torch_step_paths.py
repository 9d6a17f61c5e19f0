#!/usr/bin/python3
"""What one forward + backward of a qgen.torch module costs on each of its
two paths, torch.ops.qgen and the Python path (docs/python.md, "The torch
operator"), against torch's own module, on tensors small enough that the
cost is the call rather than the data: the default QAT activation module
at 1K elements, its per-channel weight module on a 64x64x3x3 conv weight,
and Horizon's module at 1K. The three are measured in turn, three rounds,
one thread; each figure a median in microseconds.

usage: PYTHONPATH=<build>/python:bench bench/torch_step_paths.py
"""
import torch
from torch.ao import quantization as tq

import qgen.torch as qt
import timing
from qgen.torch import horizon

torch.set_num_threads(1)
ROUNDS = 3
CASES = [
    ("default QAT activation, 1024 elements", (1024,), tq.get_default_qat_qconfig("fbgemm").activation,
     qt.get_default_qat_qconfig("fbgemm").activation),
    ("default QAT per-channel weight, 64x64x3x3", (64, 64, 3, 3), tq.get_default_qat_qconfig("fbgemm").weight,
     qt.get_default_qat_qconfig("fbgemm").weight),
    ("horizon qint8 activation, 1024 elements", (1024,), None, horizon.FakeQuantize),
]


def step_us(module, shape):
    x, dy = torch.randn(shape).requires_grad_(True), torch.randn(shape)

    def step():
        module(x).backward(dy)
        x.grad = None

    for _ in range(20):  # JIT kernels, first-step buffers
        step()
    return 1e6 * timing.median_seconds(step, 7, 0.05, max_reps=1 << 14)


def main():
    built = qt._ops.available
    if not built:
        print("torch.ops.qgen is not built here: only the Python path is measured")
    paths = ["torch", "torch.ops.qgen", "Python path"] if built else ["torch", "Python path"]
    times = {}
    for _ in range(ROUNDS):
        for name, shape, ref, ours in CASES:
            for path in paths:
                if path == "torch" and ref is None:
                    continue
                qt._ops.available = path == "torch.ops.qgen"
                module = ref() if path == "torch" else ours()
                times.setdefault((name, path), []).append(step_us(module, shape))
    qt._ops.available = built
    print("| module (forward + backward) | path | us, each round |")
    print("| --- | --- | --- |")
    for (name, path), us in times.items():
        print(f"| {name} | {path} | {', '.join(f'{t:.0f}' for t in us)} |")


if __name__ == "__main__":
    main()

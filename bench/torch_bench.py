#!/usr/bin/python3
"""qgen.torch's modules against torch 1.13's own, one thread, same run:
forward + backward of each fake-quant module on 1M activations and a
64-channel conv weight, and one whole QAT training step of
examples/torch-qat. Prints a markdown table of medians and ratios.

usage: PYTHONPATH=<build>/python bench/torch_bench.py [--quick]
(QGEN_TORCH_OPS=0 in the environment: qgen.torch's Python path instead of
torch.ops.qgen)

glibc gives large tensors back to the kernel when they are freed, so every
fresh 4 MB output faults its pages in again; set MALLOC_MMAP_THRESHOLD_ and
MALLOC_TRIM_THRESHOLD_ (or preload jemalloc) to see the kernels rather than
the page faults. The table says which environment it was measured in.
"""
import os
import pathlib
import sys

import torch
from torch.ao import quantization as tq
from torch.ao.quantization import _learnable_fake_quantize as tl

import qgen.torch as qt
import timing
from qgen.torch import horizon

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples" / "torch-qat"))
import qat_cnn  # noqa: E402

torch.set_num_threads(1)
QUICK = "--quick" in sys.argv
RUNS = 3 if QUICK else 7


def median_seconds(fn):
    """Median over RUNS of the time of one call, each run >= ~50 ms."""
    return timing.median_seconds(fn, RUNS, 0.05, max_reps=1 << 14)


def fwd_bwd(module, shape, dtype=torch.float32):
    x = torch.randn(shape).to(dtype).requires_grad_(True)
    dy = torch.randn(shape).to(dtype)

    def step():
        module(x).backward(dy)
        x.grad = None

    return step, x.numel()


class HorizonFormulaInTorch(torch.nn.Module):
    """The peer of qgen.torch.horizon.FakeQuantize: Horizon's documented
    formula in torch 1.13 ops (its plugin does not install here): torch's
    symmetric observer, clamp(floor(x / s + 0.5), -128, 127) * s, the
    gradient passed where the rounded value was in range."""

    def __init__(self):
        super().__init__()
        self.obs = tq.MovingAverageMinMaxObserver(dtype=torch.qint8, qscheme=torch.per_tensor_symmetric,
                                                  quant_min=-128, quant_max=127)

    def forward(self, x):
        self.obs(x.detach())
        s = self.obs.calculate_qparams()[0]
        t = torch.floor(x.detach() / s + 0.5)
        mask = ((t >= -128) & (t <= 127)).to(x.dtype)
        return torch.clamp(t, -128, 127) * s + (x - x.detach()) * mask


def module_rows():
    act, w = (1 << 20,), (64, 64, 3, 3)
    cases = [
        ("FusedMovingAvgObsFakeQuantize, activation (default QAT)", act,
         tq.get_default_qat_qconfig("fbgemm").activation, qt.get_default_qat_qconfig("fbgemm").activation),
        ("FusedMovingAvgObsFakeQuantize, per-channel weight", w,
         tq.get_default_qat_qconfig("fbgemm").weight, qt.get_default_qat_qconfig("fbgemm").weight),
        ("FakeQuantize, activation (version 0)", act,
         tq.get_default_qat_qconfig("fbgemm", 0).activation, qt.get_default_qat_qconfig("fbgemm", 0).activation),
        ("FakeQuantize, per-channel weight (version 0)", w,
         tq.get_default_qat_qconfig("fbgemm", 0).weight, qt.get_default_qat_qconfig("fbgemm", 0).weight),
        ("LearnableFakeQuantize, activation", act,
         lambda: tl._LearnableFakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255),
         lambda: qt.LearnableFakeQuantize(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255)),
        ("horizon FakeQuantize qint8, activation (torch: its formula in torch ops)", act,
         HorizonFormulaInTorch, horizon.FakeQuantize),
        ("FakeQuantize, float16 activation (version 0)", act,
         tq.get_default_qat_qconfig("fbgemm", 0).activation, qt.get_default_qat_qconfig("fbgemm", 0).activation,
         torch.float16),
        # small tensors: what a step costs besides its kernels
        ("FusedMovingAvgObsFakeQuantize, activation (default QAT)", (1024,),
         tq.get_default_qat_qconfig("fbgemm").activation, qt.get_default_qat_qconfig("fbgemm").activation),
        ("horizon FakeQuantize qint8, activation (torch: its formula in torch ops)", (1024,),
         HorizonFormulaInTorch, horizon.FakeQuantize),
    ]
    steps = [(c[0], fwd_bwd(c[2](), c[1], *c[4:]), fwd_bwd(c[3](), c[1], *c[4:])) for c in cases]
    for _ in range(2):  # warm up: JIT kernels, the heap at its working size
        for _, (ref_step, _), (our_step, _) in steps:
            for _ in range(5):
                ref_step()
                our_step()
    rows = []
    for name, (ref_step, n), (our_step, _) in steps:
        t_ref, t_our = median_seconds(ref_step), median_seconds(our_step)
        rows.append((f"{name}, {n} elements", n / t_ref / 1e9, n / t_our / 1e9, t_ref / t_our))
    return rows


def histogram_row():
    """HistogramObserver's forward on batches whose range grows a little
    each call (so every call merges histograms), 1M elements."""
    x = torch.randn(1 << 20) * 3
    rows = []
    for obs in (tq.HistogramObserver(), qt.HistogramObserver()):
        k = [0]

        def step(obs=obs):
            k[0] += 1
            obs(x * (1.0 + 1e-3 * k[0]))

        step()
        rows.append(median_seconds(step))
    n = x.numel()
    return (f"HistogramObserver forward (observer only), {n} elements", n / rows[0] / 1e9, n / rows[1] / 1e9,
            rows[0] / rows[1])


def qat_row():
    torch.manual_seed(0)
    base = qat_cnn.Net()
    x, target = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))
    times = []
    for qconfig in (tq.get_default_qat_qconfig("fbgemm"), qt.get_default_qat_qconfig("fbgemm")):
        m = qat_cnn.prepared(base, qconfig)
        opt = torch.optim.SGD(m.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x), target).backward()
            opt.step()

        times.append(median_seconds(step))
    return times


def main():
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "LD_PRELOAD")
                    if k in os.environ) or "glibc malloc defaults"
    path = "torch.ops.qgen" if qt._ops.available else "the Python path"
    print(f"torch {torch.__version__}, one thread, medians of {RUNS} runs; allocator: {env}; qgen.torch's step: {path}\n")
    print("| module (forward + backward) | torch Gelem/s | qgen Gelem/s | qgen / torch |")
    print("| --- | ---: | ---: | ---: |")
    for name, g_ref, g_our, ratio in module_rows() + [histogram_row()]:
        print(f"| {name} | {g_ref:.3f} | {g_our:.3f} | {ratio:.1f}x |")
    t_ref, t_our = qat_row()
    print(f"| QAT step of examples/torch-qat (batch 32), ms | {1e3 * t_ref:.2f} | {1e3 * t_our:.2f} | "
          f"{t_ref / t_our:.2f}x |")


if __name__ == "__main__":
    main()

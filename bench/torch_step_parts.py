#!/usr/bin/python3
"""Where the time of one forward + backward of qgen.torch's default QAT
activation module goes, on 1M elements, one thread: the whole step, its
kernels called alone on the same buffers (their data hot in the caches),
and each half of the step with the module's own buffers (x, y, dy, dx and
the mask: 16 MB that come and go every step). A step slower than its
kernels alone, with no Python work between them to account for it, is
paying for memory, not for code. Copies of 4 MB and 16 MB give this
machine's cached and uncached bandwidth in the same run.

usage: PYTHONPATH=<build>/python:bench bench/torch_step_parts.py
"""
import time

import torch

import qgen.torch as qt
import timing

torch.set_num_threads(1)
N = 1 << 20
RUNS = 7


def median_us(fn):
    return 1e6 * timing.median_seconds(fn, RUNS, 0.05, max_reps=1 << 12)


def main():
    module = qt.get_default_qat_qconfig("fbgemm").activation()
    x = torch.randn(N).requires_grad_(True)
    dy = torch.randn(N)

    def step():
        module(x).backward(dy)
        x.grad = None

    for _ in range(20):  # the JIT's kernels, the heap at its working size
        step()
    run = next(iter(module._qgen_steps.values()))
    xd, y = x.detach(), torch.empty(N)
    mask = torch.empty((N + 7) // 8, dtype=torch.uint8)
    run.fused(xd, y, mask, 1, True, True)

    halves = {"forward": 0.0, "backward": 0.0}

    def timed_step():
        t0 = time.perf_counter()
        out = module(x)
        t1 = time.perf_counter()
        out.backward(dy)
        t2 = time.perf_counter()
        x.grad = None
        halves["forward"] += t1 - t0
        halves["backward"] += t2 - t1

    reps = 200
    for _ in range(reps):
        timed_step()
    big_src, big_dst = torch.randn(4 * N), torch.empty(4 * N)
    rows = [
        ("module forward + backward", median_us(step)),
        ("  its forward (module(x)), mean of 200", 1e6 * halves["forward"] / reps),
        ("  its backward (y.backward(dy)), mean of 200", 1e6 * halves["backward"] / reps),
        ("fused observe + fake_quant kernel alone, hot buffers", median_us(
            lambda: run.fused(xd, y, mask, 1, True, True))),
        ("backward kernel alone, hot buffers", median_us(lambda: run.kernels.masked_backward(dy, mask))),
        ("copy of 4 MB (1M floats)", median_us(lambda: y.copy_(xd))),
        ("copy of 16 MB (4M floats)", median_us(lambda: big_dst.copy_(big_src))),
    ]
    print(f"torch {torch.__version__}, one thread, {N} elements\n")
    print("| what | us |")
    print("| --- | ---: |")
    for name, us in rows:
        print(f"| {name} | {us:.0f} |")


if __name__ == "__main__":
    main()

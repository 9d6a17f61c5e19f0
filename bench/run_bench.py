#!/usr/bin/python3
"""Runs bench_kernels (qgen kernels, XNNPACK, memcpy) and PyTorch 1.13 on
the same sizes, single thread, and prints a markdown table with the ratios.

usage: bench/run_bench.py BUILD_DIR [--quick] [--write docs/performance.md]
"""
import json
import subprocess
import sys

import torch

import timing

build = sys.argv[1]
quick = "--quick" in sys.argv
out_path = sys.argv[sys.argv.index("--write") + 1] if "--write" in sys.argv else None
torch.set_num_threads(1)
RUNS = 7


def rate(fn, n):
    """Elements per second: n over the median time of RUNS runs, each >= ~20 ms
    (RUNS is odd, so this is also the median of the runs' rates)."""
    return n / timing.median_seconds(fn, RUNS, 0.02)


proc = subprocess.run([build + "/bin/bench_kernels"] + (["--quick"] if quick else []), capture_output=True, text=True,
                      check=True)
rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
ours = {}
for r in rows:
    if "elem_per_s" in r:  # the paired_ratio rows are read by people, not here
        ours.setdefault((r["op"], r["n"]), {})[r["impl"]] = r["elem_per_s"]

torch_rates = {}
for n in sorted({r["n"] for r in rows}):
    x = torch.randn(n) * 3
    xc = x.view(64, n // 64)
    s = torch.rand(64) * 0.05 + 0.01
    z = torch.zeros(64, dtype=torch.int32)
    torch_rates[("fake_quant_per_tensor", n)] = rate(lambda: torch.fake_quantize_per_tensor_affine(x, 0.05, 3, -128, 127), n)
    torch_rates[("fake_quant_per_channel", n)] = rate(lambda: torch.fake_quantize_per_channel_affine(xc, s, z, 0, -128, 127), n)
    torch_rates[("quantize_qs8", n)] = rate(lambda: torch.quantize_per_tensor(x, 0.05, 3, torch.qint8), n)
    torch_rates[("observe_minmax", n)] = rate(lambda: torch.aminmax(x), n)


def g(v):
    return "%.0f" % (v / 1e6)


lines = ["| op | n | qgen (ISA) Melem/s | PyTorch 1.13 | x PyTorch | XNNPACK | x XNNPACK | memcpy | x memcpy |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
THREADED = "_2threads"
# rows whose XNNPACK column is another op's: XNNPACK has no 4-bit convert, so
# int4 per-group quantize stands beside its qs8 quantize of the same floats,
# and `nan: unchecked` quantize beside the same convert
XNNPACK_PEER = {"quantize_int4_g32": "quantize_qs8", "dequantize_int4_g32": "dequantize_qs8",
                "quantize_qs8_unchecked": "quantize_qs8"}
for (op, n), impls in sorted(ours.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    if op == "memcpy" or op.endswith(THREADED):
        continue
    best_isa = [k for k in impls if k not in ("xnnpack", "avx2")]
    isa = best_isa[0] if best_isa else "avx2"
    q = impls[isa]
    t = torch_rates.get((op, n))
    xn = impls.get("xnnpack") or ours.get((XNNPACK_PEER.get(op), n), {}).get("xnnpack")
    mc = ours[("memcpy", n)]["memcpy"]
    lines.append("| %s | %d | %s (%s) | %s | %s | %s | %s | %s | %.2f |" % (
        op, n, g(q), isa, g(t) if t else "-", "%.1f" % (q / t) if t else "-", g(xn) if xn else "-",
        "%.2f" % (q / xn) if xn else "-", g(mc), q / mc))
    if "avx2" in impls and isa != "avx2":
        a = impls["avx2"]
        lines.append("| %s | %d | %s (avx2) | %s | %s | - | - | %s | %.2f |" % (
            op, n, g(a), g(t) if t else "-", "%.1f" % (a / t) if t else "-", g(mc), a / mc))
table = "\n".join(lines)
print(table)

# The same kernels on two threads of the runtime's pool (qgen/parallel.h)
# against one call, and against memcpy on one thread.
lines = ["| op | n | 1 thread Melem/s | 2 threads Melem/s | x 1 thread | memcpy (1 thread) | x memcpy |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for (op, n), impls in sorted(ours.items(), key=lambda kv: (kv[0][0], kv[0][1])):
    if not op.endswith(THREADED):
        continue
    one = ours[(op[:-len(THREADED)], n)]
    isa = next(iter(impls))
    mc = ours[("memcpy", n)]["memcpy"]
    lines.append("| %s (%s) | %d | %s | %s | %.2f | %s | %.2f |" % (
        op[:-len(THREADED)], isa, n, g(one[isa]), g(impls[isa]), impls[isa] / one[isa], g(mc), impls[isa] / mc))
threads_table = "\n".join(lines)
print(threads_table)
jit = subprocess.run([build + "/bin/bench_jit"], capture_output=True, text=True, check=True).stdout
print(jit)
OWN_SECTIONS = ("## Threads", "## The JIT and the LLVM backend")


def other_sections(path):
    """The sections of the existing file that other benchmarks wrote (kept as they are)."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    parts = text.split("\n## ")[1:]
    return "".join("\n## " + p for p in parts if not ("## " + p).startswith(OWN_SECTIONS))


if out_path:
    kept = other_sections(out_path)
    cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout
    with open(out_path, "w") as f:
        f.write("# Performance\n\n")
        f.write("Generated kernels against PyTorch 1.13 (Debian's python3-torch, one thread), XNNPACK (Debian's\n"
                "libxnnpack-dev, convert operators f32->qs8 and qs8->f32) and memcpy, measured in the same run on\n"
                "this project's 2-core machine (%s). Each figure is the median of 7 runs of at least 20 ms;\n"
                "elements per second, n floats per call, buffers 64-byte aligned (as PyTorch's allocator gives\n"
                "them; see \"Alignment\" below). Reproduce with:\n\n"
                "    make build && bench/run_bench.py build --write docs/performance.md\n\n" % cpu.strip())
        f.write(table + "\n")
        f.write("\n## Threads\n\n"
                "The same generated kernels cut across two threads of the runtime's pool (`qg_parallel_*`,\n"
                "docs/threads.md), bit-identical to one call, in the same run. Goal at 16M elements: 2 threads at\n"
                "least 1.5x one thread, and fake_quant at least 1.0x memcpy on one thread.\n\n")
        f.write(threads_table + "\n")
        f.write("\n## The JIT and the LLVM backend\n\n"
                "`build/bin/bench_jit`, in the same run: compile latency of the in-process JIT (a fresh JIT per\n"
                "sample, so nothing is reused unless the row says so) and the speed of the LLVM backend's kernels\n"
                "against the C backend's for the same spec and ISA. Goals: cold <= 20 ms per op, <= 50 ms for the\n"
                "per-channel pack, disk-cache hit <= 2 ms, in-process hit <= 10 us, kernels within 5% of the C\n"
                "backend.\n\n")
        f.write(jit)
        f.write(kept)

"""Time to the first fake_quant through qgen.Kernels from a fresh process
with an empty JIT cache (docs/jit.md, "Lazy compile"): each sample is a new
python3 that imports qgen and numpy, loads the per-channel spec bench_w
(which loads libqgen and LLVM), then times qgen.Kernels(spec) plus one
fake_quant of 64 channels x 64, and the moment the compiled kernel is ready
(Kernels.prepare waits for the background compile). Prints medians in ms.

usage: PYTHONPATH=build/python python3 bench/jit_first_call.py [SAMPLES]"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

SPEC = pathlib.Path(__file__).with_name("specs") / "bench_w.json"

ONE = """
import json, sys, time
import numpy
import qgen
t0 = time.perf_counter()
spec = qgen.Spec.from_file(sys.argv[1])
t1 = time.perf_counter()
k = qgen.Kernels(spec)
x = numpy.linspace(-4, 4, 4096, dtype=numpy.float32).reshape(64, 64)
s = numpy.full(64, 0.05, numpy.float32)
z = numpy.zeros(64, numpy.int32)
y, m = k.fake_quant(x, s, z)
t2 = time.perf_counter()
k.prepare(["fake_quant"])
t3 = time.perf_counter()
y2, m2 = k.fake_quant(x, s, z)
assert (y == y2).all() and (m == m2).all(), "the reference's and the kernel's results differ"
print(json.dumps({"load": (t1 - t0) * 1e3, "first": (t2 - t1) * 1e3, "ready": (t3 - t1) * 1e3}))
"""


def main():
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    rows = []
    for _ in range(samples):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            out = subprocess.run([sys.executable, "-c", ONE, str(SPEC)], env=env, capture_output=True, text=True,
                                 check=True).stdout
            rows.append(json.loads(out))
    med = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    print(f"qgen.Kernels(spec) + first fake_quant, per-channel bench_w, empty cache, median of {samples} processes:")
    print(f"  loading the spec (libqgen and LLVM): {med['load']:.1f} ms")
    print(f"  Kernels(spec) + first fake_quant:    {med['first']:.1f} ms")
    print(f"  until the compiled kernel is ready:  {med['ready']:.1f} ms")


if __name__ == "__main__":
    main()

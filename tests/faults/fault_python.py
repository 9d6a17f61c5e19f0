"""qgen.torch's module step under fault injection, in one process (importing
torch takes longer than the step): QGEN_LIBRARY names the fault-injected
libqgen.so, whose qg_fault_arm and qg_fault_dump this drives.

An iteration makes a JIT pack for a spec of its own (so that every one
compiles), then the default QAT module and torch's, and steps both twice.
The second iteration is counted; then each allocation and I/O call site it
reached (the first call of each; --all: every call) fails in an iteration
of its own. Each must end with both steps equal to torch's, or with
QgenError and the module's buffers as the last good step left them; a
crash ends the process and fails the sweep.
usage: fault_python.py WORK_DIR [--all]"""
import ctypes
import os
import sys

import torch

import qgen
import qgen.torch as qt

lib = ctypes.CDLL(os.environ["QGEN_LIBRARY"])
lib.qg_fault_arm.argtypes = [ctypes.c_ulong, ctypes.c_ulong]
lib.qg_fault_dump.argtypes = [ctypes.c_char_p]


def iteration(i):
    """None when both steps equal torch's; the QgenError's message when the
    buffers were kept; else the problem, prefixed with 'PROBLEM'."""
    torch.manual_seed(i % 2)
    kept = None
    try:
        spec = qgen.Spec.from_dict({"name": f"fault_py{i}", "base": "torch.qnnpack.activation"})
        k = qgen.Kernels(spec)
        ours = qt.FusedMovingAvgObsFakeQuantize()
        theirs = torch.ao.quantization.FusedMovingAvgObsFakeQuantize()
        for step in range(2):
            x = torch.randn(4, 33) * (step + 1)
            kept = {n: b.clone() for n, b in ours.named_buffers()}
            if not torch.equal(ours(x), theirs(x)):
                return f"PROBLEM step {step} differs from torch's"
        y, _ = k.fake_quant(x, scale=[0.05], zero_point=[3])
        if not torch.equal(y, qgen.Reference(spec).fake_quant(x, scale=[0.05], zero_point=[3])[0]):
            return "PROBLEM fake_quant differs from the reference"
        return None
    except qgen.QgenError as e:
        if kept is not None and any(not torch.equal(b, kept[n]) for n, b in ours.named_buffers()):
            return f"PROBLEM QgenError ({e}) but the module's buffers changed"
        return str(e)
    except Exception as e:  # anything but QgenError is a problem, named with its call
        return f"PROBLEM {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def main():
    work, every = sys.argv[1], "--all" in sys.argv
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "python.log")
    iteration(0)  # the JIT and the modules' one-time set-up
    lib.qg_fault_arm(0, 0)
    problem = iteration(1)
    lib.qg_fault_dump(log.encode())
    if problem is not None:
        print(f"python_step: the iteration without a fault failed: {problem}")
        return 1
    calls = open(log).read().splitlines()
    problems, runs, raised = [], [0, 0], 0
    for kind, prefix in ((0, "alloc "), (1, "io ")):
        seq = [c for c in calls if c.startswith(prefix)]
        seen = set()
        for n, site in enumerate(seq, 1):
            if site in seen and not every:
                continue
            seen.add(site)
            runs[kind] += 1
            lib.qg_fault_arm(n if kind == 0 else 0, n if kind == 1 else 0)
            problem = iteration(1 + n * 2 + kind)
            lib.qg_fault_arm(0, 0)
            raised += problem is not None and not problem.startswith("PROBLEM")
            if problem is not None and problem.startswith("PROBLEM"):
                problems.append(f"{'QG_FAULT_ALLOC' if kind == 0 else 'QG_FAULT_IO'}={n} ({site}): {problem}")
    allocs = [c for c in calls if c.startswith("alloc ")]
    ios = [c for c in calls if c.startswith("io ")]
    print(f"{'python_step':28} {len(allocs):7} {len(set(allocs)):6} {runs[0]:7} {len(ios):5} {len(set(ios)):6} "
          f"{runs[1]:7}  {len(problems)} ({raised} raised QgenError)")
    for p in problems[:10]:
        print("    " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

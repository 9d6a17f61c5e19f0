"""qgen.torch's module step under fault injection (tests/faults/fault_sweep.py):
the default QAT module trains two steps through libqgen (QGEN_LIBRARY names
the fault-injected build). Exit 0 when both steps ran and agree with torch's
own module, 2 with one line when qgen raised QgenError; anything else (a
crash, another exception) fails the sweep."""
import sys

import torch

import qgen
import qgen.torch as qt

torch.manual_seed(0)
try:
    ours = qt.FusedMovingAvgObsFakeQuantize()
    theirs = torch.ao.quantization.FusedMovingAvgObsFakeQuantize()
    for step in range(2):
        x = torch.randn(4, 33) * (step + 1)
        if not torch.equal(ours(x), theirs(x)):
            print("fault_python: step differs from torch's", file=sys.stderr)
            sys.exit(1)
except qgen.QgenError as e:
    print(f"fault_python: {str(e).splitlines()[0]}", file=sys.stderr)
    sys.exit(2)

"""QAT of a small CNN twice, side by side: once with torch 1.13's fake-quant
modules, once with qgen's (one changed import), from the same initial
weights on the same generated data. Prints whether every loss, weight,
scale and zero point is bit-identical after each step, the time per step of
each, and the outputs of both converted (int8) models. Exits 1 on any
difference.

    PYTHONPATH=<build>/python python3 examples/torch-qat/qat_cnn.py [--steps N]
"""

import argparse
import copy
import sys
import time

import torch
from torch.ao import quantization as tq

import qgen.torch


class Net(torch.nn.Module):
    """Two conv-bn-relu blocks and a linear head."""

    def __init__(self, classes=10):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv1, self.bn1, self.relu1 = torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU()
        self.conv2, self.bn2, self.relu2 = torch.nn.Conv2d(16, 32, 3, stride=2), torch.nn.BatchNorm2d(32), torch.nn.ReLU()
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.fc = torch.nn.Linear(32 * 16, classes)

    def forward(self, x):
        x = self.relu1(self.bn1(self.conv1(self.quant(x))))
        x = self.relu2(self.bn2(self.conv2(x)))
        return self.dequant(self.fc(torch.flatten(self.pool(x), 1)))


def prepared(base, qconfig):
    m = copy.deepcopy(base)
    m.qconfig = qconfig
    m = tq.fuse_modules_qat(m, [["conv1", "bn1", "relu1"], ["conv2", "bn2", "relu2"]])
    return tq.prepare_qat(m.train())


def differences(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    if list(sa) != list(sb):
        return ["state_dict keys"]
    return [k for k in sa if sa[k].shape != sb[k].shape or not torch.equal(sa[k], sb[k])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--backend", default="fbgemm")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    base = Net()
    models = {
        "torch": prepared(base, tq.get_default_qat_qconfig(args.backend)),
        "qgen": prepared(base, qgen.torch.get_default_qat_qconfig(args.backend)),
    }
    opts = {k: torch.optim.SGD(m.parameters(), lr=0.02, momentum=0.9) for k, m in models.items()}
    gen = torch.Generator().manual_seed(1)
    seconds = {k: 0.0 for k in models}
    bad = 0
    for step in range(args.steps):
        x = torch.randn(args.batch, 3, 16, 16, generator=gen)
        target = torch.randint(0, 10, (args.batch,), generator=gen)
        losses = {}
        for k, m in models.items():
            t0 = time.perf_counter()
            opts[k].zero_grad()
            loss = torch.nn.functional.cross_entropy(m(x), target)
            loss.backward()
            opts[k].step()
            if step > 0:  # the first step includes qgen's JIT compile (or its disk-cache load)
                seconds[k] += time.perf_counter() - t0
            losses[k] = loss.detach()
        diff = differences(models["torch"], models["qgen"])
        same_loss = torch.equal(losses["torch"], losses["qgen"])
        bad += bool(diff) or not same_loss
        print(f"step {step:3d}  loss {losses['torch'].item():.6f}  "
              f"{'identical' if same_loss and not diff else 'DIFFERENT: ' + ', '.join(diff or ['loss'])}")
    timed = max(1, args.steps - 1)
    per_step = {k: 1e3 * v / timed for k, v in seconds.items()}
    print(f"time per step after the first: torch {per_step['torch']:.2f} ms, qgen {per_step['qgen']:.2f} ms "
          f"(qgen {per_step['torch'] / max(per_step['qgen'], 1e-9):.2f}x as fast)")
    converted = {k: tq.convert(m.eval()) for k, m in models.items()}
    x = torch.randn(4, 3, 16, 16, generator=gen)
    same = torch.equal(converted["torch"](x), converted["qgen"](x))
    print(f"converted int8 models: outputs {'identical' if same else 'DIFFERENT'}")
    bad += not same
    print("0 differences" if not bad else f"{bad} steps or checks differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

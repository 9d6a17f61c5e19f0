"""Drop-ins for torch.ao.quantization's QAT fake-quant modules and
observers, computed by qgen's JIT-compiled kernels: same constructors,
`with_args`, buffers, state_dict keys and switches as torch 1.13's (they
subclass torch's modules and keep their state in torch's buffers), with
bit-identical outputs, gradients and buffers. A QAT script switches by
changing one import:

    from qgen.torch import get_default_qat_qconfig
    model.qconfig = get_default_qat_qconfig("fbgemm")

Inputs must be float32 CPU tensors; non-contiguous ones (channels-last,
transposed) are made contiguous first, which copies them. Observers:
the min/max family and HistogramObserver (FakeQuantize modules take the
min/max family: a histogram's qparams are torch's own search).

qgen.torch.horizon.FakeQuantize takes the arguments of Horizon's QAT
module (docs/python.md)."""

if __name__ == "torch":  # found as PyTorch itself: the current directory is python/qgen
    raise ImportError(
        "this is qgen.torch, found as 'torch' because the current directory is inside the qgen package "
        "(python/qgen), where its torch/ shadows PyTorch; run from another directory"
    )

from .fake_quantize import FakeQuantize, FixedQParamsFakeQuantize, FusedMovingAvgObsFakeQuantize
from .learnable import LearnableFakeQuantize
from .observer import (
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
)
from .qconfig import get_default_qat_qconfig, get_default_qat_qconfig_mapping, swap_qconfig

__all__ = [
    "FakeQuantize",
    "FusedMovingAvgObsFakeQuantize",
    "FixedQParamsFakeQuantize",
    "LearnableFakeQuantize",
    "HistogramObserver",
    "MinMaxObserver",
    "MovingAverageMinMaxObserver",
    "PerChannelMinMaxObserver",
    "MovingAveragePerChannelMinMaxObserver",
    "get_default_qat_qconfig",
    "get_default_qat_qconfig_mapping",
    "swap_qconfig",
]

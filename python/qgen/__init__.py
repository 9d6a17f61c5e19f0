"""qgen from Python: specs, JIT-compiled kernels and (in qgen.torch)
drop-ins for torch.ao.quantization's fake-quant modules. The formulas are
those of docs/semantics.md, bit-exact with PyTorch 1.13."""

from ._lib import QgenError
from .kernels import Kernels, Reference
from .packing import pack4, unpack4
from .spec import Spec

__all__ = ["QgenError", "Kernels", "Reference", "Spec", "pack4", "unpack4"]

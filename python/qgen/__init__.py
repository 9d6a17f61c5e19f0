"""qgen from Python: specs, JIT-compiled kernels and (in qgen.torch)
drop-ins for torch.ao.quantization's fake-quant modules. The formulas are
those of docs/semantics.md, bit-exact with PyTorch 1.13."""

from ._lib import QgenError, SpecError
from .kernels import Kernels, Reference, jit_stats
from .packing import pack4, unpack4
from .spec import Spec

__version__ = "0.1.0"  # the project's version (CMakeLists.txt); tests/python checks they agree

__all__ = ["QgenError", "SpecError", "Kernels", "Reference", "jit_stats", "Spec", "pack4", "unpack4", "__version__"]

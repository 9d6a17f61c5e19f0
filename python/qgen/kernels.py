"""qgen.Kernels: a spec's kernels JIT-compiled into this process (disk
cached, best ISA of the CPU), called on numpy arrays and torch tensors
without copies. Inputs must be contiguous CPU arrays of the expected
dtype; anything else is refused with an error naming the argument."""

import atexit
import ctypes
import math
import threading
from typing import Any, Optional, Sequence, Tuple, Union

from . import _lib
from .spec import Spec

# 4-bit q arrays are the packed bytes (qgen.packing), uint8; fp8 q arrays
# are the formats' bits, uint8
_Q_NUMPY = {"qint8": "int8", "quint8": "uint8", "qint16": "int16", "qint32": "int32", "quint16": "uint16",
            "qint4": "uint8", "quint4": "uint8", "fp8_e4m3fn": "uint8", "fp8_e5m2": "uint8"}
_PACKED = ("qint4", "quint4")
# float tensors by float_type: (numpy dtype, torch dtype); numpy has no
# bfloat16, so its arrays hold the bits as uint16 (docs/semantics.md, "Float
# types")
_FLOAT = {"float32": ("float32", "float32"), "float16": ("float16", "float16"), "bfloat16": ("uint16", "bfloat16")}
_FLOAT_TYPE_ID = {"float32": 0, "bfloat16": 1, "float16": 2}
# qg_block_format
_BLOCK_ID = {"none": 0, "q8_0": 1, "q8_1": 2, "q4_0": 3, "q4_1": 4, "q5_0": 5, "q5_1": 6, "mxfp4": 7, "q4_K": 8,
             "q6_K": 9}
_jit = None
_jit_lock = threading.Lock()


def _settle_all():
    """Waits for the background compiles of every JIT this module made: the
    process must not exit under one (qgen/jit.h, qg_jit_settle)."""
    with _jit_lock:
        for jit in [_jit] + list(Kernels._jits.values()):
            if jit is not None:
                _lib.lib().qg_jit_settle(jit)


atexit.register(_settle_all)


def _the_jit():
    global _jit
    with _jit_lock:
        if _jit is None:
            L = _lib.lib()
            ptr, err = ctypes.c_void_p(), _lib.Error()
            opt = _lib.JitOptions(-1, None, False, False, True)  # QG_JIT_BEST_ISA, background compiles
            _lib.check(L.qg_jit_create(ctypes.byref(opt), ctypes.byref(ptr), ctypes.byref(err)), err)
            _jit = ptr
    return _jit


def _array_info(a, what, dtype):
    """(address, element count, shape) of a contiguous CPU array of `dtype`
    (a numpy dtype name), numpy or torch."""
    mod = type(a).__module__
    if mod.startswith("torch"):
        if a.device.type != "cpu":
            raise ValueError(f"{what}: a tensor on {a.device}; expected a CPU tensor")
        if not a.is_contiguous():
            raise ValueError(f"{what}: a non-contiguous tensor (strides {tuple(a.stride())}); expected .contiguous()")
        got = str(a.dtype).replace("torch.", "")
        if got != dtype:
            raise TypeError(f"{what}: dtype {got}; expected {dtype}")
        return a.data_ptr(), a.numel(), tuple(a.shape)
    if mod == "numpy":
        if not a.flags["C_CONTIGUOUS"]:
            raise ValueError(f"{what}: a non-contiguous array; expected numpy.ascontiguousarray()")
        if str(a.dtype) != dtype:
            raise TypeError(f"{what}: dtype {a.dtype}; expected {dtype}")
        return a.ctypes.data, a.size, tuple(a.shape)
    raise TypeError(f"{what}: a {type(a).__name__}; expected a numpy array or a torch tensor")


def layout(shape, per_channel, ch_axis, channels=None, what="x"):
    """(channels, inner) of an array of `shape`: per-channel data has
    `shape[ch_axis]` channels in runs of the product of the dims after it
    (docs/semantics.md, "Layouts"); per-tensor data is (1, 1). With `channels`
    the axis must have that many."""
    if not per_channel:
        return 1, 1
    if not shape:
        raise ValueError(f"{what}: a 0-d array for a per-channel spec; expected an array with a channel axis")
    axis = ch_axis + len(shape) if ch_axis < 0 else ch_axis
    if not 0 <= axis < len(shape):
        raise ValueError(f"ch_axis: {ch_axis} for an array of {len(shape)} dims")
    if channels is not None and shape[axis] != channels:
        raise ValueError(f"{what}: {shape[axis]} channels along axis {axis}; expected channel_len {channels} of the spec")
    return shape[axis], math.prod(shape[axis + 1 :])


def _empty_like(a, dtype, shape):
    if type(a).__module__.startswith("torch"):
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype))
    import numpy

    return numpy.empty(shape, dtype=dtype)


# an array argument: a numpy array or a torch tensor (CPU, contiguous)
Array = Any
# per-tensor or per-channel qparams: a number or a sequence of them
Params = Union[float, Sequence[float]]


def jit_stats(isa: Optional[str] = None) -> dict:
    """Where the kernels of the JIT behind Kernels(spec, isa) came from
    (qgen/jit.h's qg_jit_stats): compiled, disk_hits, memory_hits,
    corrupt_entries, cache_errors, lazy_tables, fallbacks."""
    jit = _the_jit() if isa is None else Kernels._jit_for(isa)
    st = _lib.JitStats()
    _lib.lib().qg_jit_get_stats(jit, ctypes.byref(st))
    return {name: getattr(st, name) for name, _ in _lib.JitStats._fields_}


class Kernels:
    """The kernels of `spec` (a Spec, or anything Spec.from_dict takes).
    `isa` forces one ISA by name ("avx2", ...); None picks the best. Each op
    starts its compile on its first call, on a thread of its own, and runs
    on the reference (bit-exact) until the compiled kernel is ready
    (docs/jit.md, "Lazy compile"); `eager`, or prepare(), compiles now and
    waits instead."""

    def __init__(self, spec: Union[Spec, dict], isa: Optional[str] = None, eager: bool = False) -> None:
        # specs no vector ISA serves (qint32, float zero points) get the JIT's
        # scalar kernels; self.isa says which ran
        self.spec = spec if isinstance(spec, Spec) else Spec.from_dict(spec)
        jit = _the_jit() if isa is None else self._jit_for(isa)
        L = _lib.lib()
        out, err = ctypes.POINTER(_lib.Kernels)(), _lib.Error()
        _lib.check(L.qg_jit_compile(jit, self.spec._ptr, 0, ctypes.byref(out), ctypes.byref(err)), err)
        self._jit = jit
        self._k = out.contents
        if eager:
            self.prepare()
        self.address = ctypes.addressof(self._k)  # the JIT's qg_kernels, alive while the process is
        self.isa = _lib.isas()[self._k.isa]
        self._block = _BLOCK_ID.get(self.spec.block, 0)
        self.q_dtype = "uint8" if self._block else _Q_NUMPY[self.spec["dtype"]]
        self._torch_dtype = None
        # the kernels as ctypes callables, made once: wrapping a pointer costs more than a small call
        self._calls = (_lib.FAKE_QUANT(self._k.fake_quant), _lib.BACKWARD(self._k.fake_quant_backward),
                       _lib.QUANTIZE(self._k.quantize), _lib.QUANTIZE(self._k.dequantize))

    _jits = {}

    def prepare(self, ops: Optional[Sequence[str]] = None) -> None:
        """Compiles `ops` (names such as "fake_quant"; None: all) now
        rather than on their first calls, or waits for their compiles."""
        names = ("quantize", "dequantize", "fake_quant", "fake_quant_backward", "observe", "requantize")
        bits = 0
        for op in ops or names:
            if op not in names:
                raise ValueError(f"ops: {op!r}; expected some of {', '.join(names)}")
            bits |= 1 << names.index(op)
        err = _lib.Error()
        _lib.check(_lib.lib().qg_jit_prepare(self._jit, ctypes.byref(self._k), bits, ctypes.byref(err)), err)

    def _f(self, a):
        """The dtype of float tensors beside `a` (numpy or torch)."""
        return _FLOAT[self.spec.float_type][1 if type(a).__module__.startswith("torch") else 0]

    @classmethod
    def _jit_for(cls, isa):
        names = _lib.isas()
        if isa not in names:
            raise ValueError(f"isa: {isa!r}; expected one of {', '.join(names)}")
        with _jit_lock:
            if isa not in cls._jits:
                L = _lib.lib()
                ptr, err = ctypes.c_void_p(), _lib.Error()
                opt = _lib.JitOptions(names.index(isa), None, False, False, True)
                _lib.check(L.qg_jit_create(ctypes.byref(opt), ctypes.byref(ptr), ctypes.byref(err)), err)
                cls._jits[isa] = ptr
        return cls._jits[isa]

    # ---- parameters ------------------------------------------------------

    def _inner(self, shape, inner):
        """Elements per channel run: given, or from the array's shape."""
        if inner is not None:
            return int(inner)
        spec = self.spec
        return layout(shape, spec.per_channel or spec.per_group, spec["ch_axis"], spec.channels)[1]

    def _qparams(self, scale, zero_point, inner, n):
        """qparams for n elements; per group, the values of ONNX's blocked
        scale tensor in its order (docs/semantics.md, "Layouts")."""
        import numpy

        C = self.spec.channels
        count = _lib.lib().qg_qparams_count(self.spec._ptr, n, inner) if self.spec.per_group else C
        s = numpy.ascontiguousarray(numpy.asarray(_to_numpy(scale), dtype=numpy.float32).reshape(-1))
        z = numpy.ascontiguousarray(numpy.asarray(_to_numpy(zero_point), dtype=numpy.int32).reshape(-1))
        if s.size != count or z.size != count:
            what = "the blocked scale tensor's size" if self.spec.per_group else "the spec's channels"
            raise ValueError(f"scale/zero_point: {s.size}/{z.size} values; expected {count} ({what})")
        qp = _lib.QParams(s.ctypes.data, z.ctypes.data, None, C, inner)
        err = _lib.Error()
        _lib.check(_lib.lib().qg_qparams_validate_n(self.spec._ptr, ctypes.byref(qp), n, ctypes.byref(err)), err)
        return qp, (s, z)  # the arrays live as long as qp is used

    # ---- ops -------------------------------------------------------------

    def fake_quant(self, x: Array, scale: Optional[Params] = None, zero_point: Optional[Params] = None,
                   inner: Optional[int] = None, out: Optional[Array] = None) -> Tuple[Array, Array]:
        """(y, mask): y = fake-quantized x, mask = 1 where x was in range
        (docs/semantics.md); mask is bytes, or packed bits with compat_mask.
        A block format takes no scale or zero point: y is x's rows through
        their blocks and back, the mask 1 where x is finite."""
        px, n, shape = _array_info(x, "x", self._f(x))
        y = _empty_like(x, self._f(x), shape) if out is None else out
        py, ny, _ = _array_info(y, "out", self._f(x))
        if ny != n:
            raise ValueError(f"out: {ny} elements; expected {n} as x")
        nmask = (n + 7) // 8 if self.spec["compat_mask"] else n
        mask = _empty_like(x, "uint8", (nmask,) if self.spec["compat_mask"] else shape)
        pm = _array_info(mask, "mask", "uint8")[0]
        if self._block:
            self._no_qparams(scale, zero_point)
            self._block_rows("x", n, shape[-1] if shape else 1)
            qp, keep = None, None
        else:
            qp, keep = self._qparams(scale, zero_point, self._inner(shape, inner), n)
        self._fake_quant(px, py, pm, n, qp)
        return y, mask

    def masked_backward(self, dy: Array, mask: Array) -> Array:
        """fake_quant_backward for autograd: dy a contiguous CPU tensor of
        the spec's float type and mask the forward's own, so the checks
        are one dtype test (anything else takes fake_quant_backward)."""
        if dy.dtype is not self._torch_float(dy):
            return self.fake_quant_backward(dy, mask)
        dx = dy.new_empty(dy.shape)
        self._backward(dy.data_ptr(), mask.data_ptr(), dx.data_ptr(), dy.numel())
        return dx

    def _torch_float(self, t):
        if getattr(self, "_torch_dtype", None) is None:  # once: torch is imported only where tensors are used
            import torch

            self._torch_dtype = getattr(torch, self._f(t))
        return self._torch_dtype

    def fake_quant_backward(self, dy: Array, mask: Array, out: Optional[Array] = None) -> Array:
        """dx = dy where mask is set, else 0."""
        pdy, n, shape = _array_info(dy, "dy", self._f(dy))
        pm, nm, _ = _array_info(mask, "mask", "uint8")
        want = (n + 7) // 8 if self.spec["compat_mask"] else n
        if nm != want:
            raise ValueError(f"mask: {nm} bytes; expected {want} for {n} elements")
        dx = _empty_like(dy, self._f(dy), shape) if out is None else out
        pdx, ndx, _ = _array_info(dx, "out", self._f(dy))
        if ndx != n:
            raise ValueError(f"out: {ndx} elements; expected {n} as dy")
        self._backward(pdy, pm, pdx, n)
        return dx

    def _q_like(self, x, shape, n):
        """An output q array: x's shape, or for 4-bit dtypes the (n + 1) // 2
        packed bytes, one dimension."""
        return _empty_like(x, self.q_dtype, ((n + 1) // 2,) if self.spec["dtype"] in _PACKED else shape)

    def quantize(self, x: Array, scale: Optional[Params] = None, zero_point: Optional[Params] = None,
                 inner: Optional[int] = None) -> Array:
        """q from x: round(x / s) + z clamped to the range, in the spec's
        dtype (4-bit dtypes: the packed bytes, one dimension). A block
        format takes no scale or zero point: x's rows (its last axis)
        become ggml's block bytes, a uint8 array (rows, bytes per row)."""
        if self._block:
            return self._quantize_blocks(x, scale, zero_point)
        px, n, shape = _array_info(x, "x", self._f(x))
        q = self._q_like(x, shape, n)
        qp, keep = self._qparams(scale, zero_point, self._inner(shape, inner), n)
        self._quantize(px, _array_info(q, "q", self.q_dtype)[0], n, qp)
        return q

    def dequantize(self, q: Array, scale: Optional[Params] = None, zero_point: Optional[Params] = None,
                   inner: Optional[int] = None, shape: Optional[Sequence[int]] = None) -> Array:
        """x from q; for 4-bit dtypes q holds packed bytes and `shape` gives
        the tensor's shape (default: two elements per byte, one dimension).
        A block format: q's rows of blocks decoded into an array of `shape`
        (default: (rows, elements per row))."""
        if self._block:
            return self._dequantize_blocks(q, scale, zero_point, shape)
        pq, n, shape_q = _array_info(q, "q", self.q_dtype)
        if self.spec["dtype"] in _PACKED:
            shape = tuple(shape) if shape is not None else (2 * n,)
            count = math.prod(shape)
            if (count + 1) // 2 != n:
                raise ValueError(f"shape: {shape} holds {count} elements; expected {2 * n - 1} or {2 * n} for {n} "
                                 "packed bytes")
            n = count
        else:
            shape = shape_q
        x = _empty_like(q, self._f(q), shape)
        qp, keep = self._qparams(scale, zero_point, self._inner(shape, inner), n)
        self._dequantize(pq, _array_info(x, "x", self._f(q))[0], n, qp)
        return x

    def quantize_dynamic(self, x: Array, per_token: bool = False) -> Tuple[Array, Array, Array]:
        """(q, scale, zero_point): x quantized with qparams from its own
        min/max by the spec's train_qparams rule (docs/semantics.md, "Dynamic
        quantization"), one scale and zero point for the tensor, or with
        per_token one per row along the last dimension. Per tensor with
        "fused_op" this is torch.quantize_per_tensor_dynamic; with onnx.uint8,
        ONNX's DynamicQuantizeLinear. A per-group spec groups each row (the
        last dimension, of channel_len elements): scale and zero_point then
        have x's shape with the last dimension ceil(channel_len / group_size)."""
        px, n, shape = _array_info(x, "x", "float32")
        per_row = per_token or self.spec.per_group
        row_len = (shape[-1] if shape else 1) if per_row else n
        rows = (n // row_len if row_len else 0) if per_row else 1
        q = self._q_like(x, shape, n)
        pshape = (rows,)
        if self.spec.per_group:
            G = self.spec.group_size
            pshape = tuple(shape[:-1]) + (-(-row_len // G),)
        scale, zero_point = _empty_like(x, "float32", pshape), _empty_like(x, "int32", pshape)
        err = _lib.Error()
        st = _lib.lib().qg_quantize_dynamic(self.spec._ptr, *self._dynamic_kernels(), px,
                                            _array_info(q, "q", self.q_dtype)[0], rows, row_len,
                                            _array_info(scale, "scale", "float32")[0],
                                            _array_info(zero_point, "zero_point", "int32")[0], ctypes.byref(err))
        _lib.check(st, err)
        return q, scale, zero_point

    # ---- ggml's block formats (docs/semantics.md, "Block formats"): no
    # qparams; q holds each row's blocks as ggml lays them out, shape (rows,
    # bytes per row)

    def _quantize_blocks(self, x, scale, zero_point):
        self._no_qparams(scale, zero_point)
        px, n, shape = _array_info(x, "x", self._f(x))
        rows, row_bytes = self._block_rows("x", n, shape[-1] if shape else 1)
        q = _empty_like(x, "uint8", (rows, row_bytes))
        self._block_quantize(px, _array_info(q, "q", "uint8")[0], n)
        return q

    def _block_quantize(self, px, pq, n):
        # the K-quants' kernels forward to the reference, which refuses rows
        # its rounding cannot take: called here directly, a refusal raises
        if _lib.lib().qg_block_elems(self._block) == 256:
            return _block_quantize_ref(self._block, px, pq, n)  # float32 rows: the JIT takes no others
        self._calls[2](px, pq, n, None)

    def _dequantize_blocks(self, q, scale, zero_point, shape):
        self._no_qparams(scale, zero_point)
        pq, n, shape_q = _array_info(q, "q", "uint8")
        L = _lib.lib()
        per_block = L.qg_block_row_bytes(self._block, L.qg_block_elems(self._block))
        if len(shape_q) != 2 or shape_q[1] % per_block:
            raise ValueError(f"q: shape {shape_q}; expected (rows, bytes per row) of whole {self.spec.block} "
                             f"blocks of {per_block} bytes")
        shape = tuple(shape) if shape is not None else (shape_q[0], shape_q[1] // per_block * L.qg_block_elems(self._block))
        count = math.prod(shape)
        if self._block_rows("shape", count, shape[-1] if shape else 1) != shape_q:
            raise ValueError(f"shape: {shape} is not the {shape_q[0]} rows of {shape_q[1]} bytes q holds")
        x = _empty_like(q, self._f(q), shape)
        self._dequantize(pq, _array_info(x, "x", self._f(q))[0], count, None)
        return x

    def _no_qparams(self, scale, zero_point):
        if scale is not None or zero_point is not None:
            raise ValueError(f"scale, zero_point: given for block {self.spec.block}; expected none (each block's "
                             "scale comes from the block)")

    def _block_rows(self, what, n, cols):
        """(rows, bytes per row) of n values in rows of `cols`."""
        row_bytes = _lib.lib().qg_block_row_bytes(self._block, cols)
        if cols % _lib.lib().qg_block_elems(self._block):
            raise ValueError(f"{what}: rows of {cols} elements (the last dimension); expected a multiple of "
                             f"{self.spec.block}'s block of {_lib.lib().qg_block_elems(self._block)}")
        return (n // cols if cols else 0), row_bytes

    # ---- the entry points the ops call -----------------------------------

    def _dynamic_kernels(self):
        return self._k.observe, self._k.quantize

    def _fake_quant(self, px, py, pm, n, qp):
        self._calls[0](px, py, pm, n, None if qp is None else ctypes.addressof(qp))

    def _backward(self, pdy, pm, pdx, n):
        self._calls[1](pdy, pm, pdx, n)

    def _quantize(self, px, pq, n, qp):
        self._calls[2](px, pq, n, ctypes.addressof(qp))

    def _dequantize(self, pq, px, n, qp):
        self._calls[3](pq, px, n, None if qp is None else ctypes.addressof(qp))


class Reference(Kernels):
    """The same ops computed by the runtime's scalar reference functions
    (qg_ref_*), the formulas of docs/semantics.md with no code generated:
    what the generated kernels are checked against, and what a conformance
    test compares a peer with."""

    def __init__(self, spec: Union[Spec, dict]) -> None:
        self.spec = spec if isinstance(spec, Spec) else Spec.from_dict(spec)
        self.isa = "reference"
        self._block = _BLOCK_ID.get(self.spec.block, 0)
        self.q_dtype = "uint8" if self._block else _Q_NUMPY[self.spec["dtype"]]

    def _block_quantize(self, px, pq, n):
        xf, keep = self._widened(px, n)
        _block_quantize_ref(self._block, xf, pq, n)

    def _dynamic_kernels(self):
        return None, None

    # 16-bit float types: the float32 reference between widening and
    # narrowing, which is what the op means (docs/semantics.md, "Float types")

    def _widened(self, p, n):
        """(address, keep-alive) of p's n floats as float32."""
        if self.spec.float_type == "float32":
            return p, None
        import numpy

        f = numpy.empty(n, dtype=numpy.float32)
        _lib.lib().qg_float_type_widen(_FLOAT_TYPE_ID[self.spec.float_type], p, f.ctypes.data, n)
        return f.ctypes.data, f

    def _narrow(self, f, p, n):
        if f is not None:
            _lib.lib().qg_float_type_narrow(_FLOAT_TYPE_ID[self.spec.float_type], f.ctypes.data, p, n)

    def _out(self, p, n):
        import numpy

        f = None if self.spec.float_type == "float32" else numpy.empty(n, dtype=numpy.float32)
        return (p if f is None else f.ctypes.data), f

    def _fake_quant(self, px, py, pm, n, qp):
        (x, kx), (y, fy) = self._widened(px, n), self._out(py, n)
        _lib.lib().qg_ref_fake_quant(self.spec._ptr, x, y, pm, n, None if qp is None else ctypes.byref(qp))
        self._narrow(fy, py, n)

    def _backward(self, pdy, pm, pdx, n):
        (dy, kdy), (dx, fdx) = self._widened(pdy, n), self._out(pdx, n)
        _lib.lib().qg_ref_fake_quant_backward(self.spec._ptr, dy, pm, dx, n)
        self._narrow(fdx, pdx, n)

    def _quantize(self, px, pq, n, qp):
        x, kx = self._widened(px, n)
        _lib.lib().qg_ref_quantize(self.spec._ptr, x, pq, n, ctypes.byref(qp))

    def _dequantize(self, pq, px, n, qp):
        x, fx = self._out(px, n)
        _lib.lib().qg_ref_dequantize(self.spec._ptr, pq, x, n, None if qp is None else ctypes.byref(qp))
        self._narrow(fx, px, n)


def _block_quantize_ref(block, px, pq, n):
    """The runtime's block reference on n float32 values: a row it refuses raises."""
    err = _lib.Error()
    _lib.check(_lib.lib().qg_block_quantize_ref(block, px, n, pq, ctypes.byref(err)), err)


def _to_numpy(v):
    if type(v).__module__.startswith("torch"):
        return v.detach().cpu().numpy()
    return v

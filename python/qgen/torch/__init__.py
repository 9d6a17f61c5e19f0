"""Drop-ins for torch.ao.quantization's QAT fake-quant modules, computed by
qgen's JIT-compiled kernels: same constructors, `with_args`, buffers,
state_dict keys and switches as torch 1.13's (they subclass torch's
modules and keep their state in torch's buffers), bit-identical outputs,
gradients and buffers. A QAT script switches by changing one import:

    from qgen.torch import get_default_qat_qconfig
    model.qconfig = get_default_qat_qconfig("fbgemm")

Inputs are made contiguous (channels-last tensors are copied); they must
be float32 CPU tensors. Observers: MinMaxObserver,
MovingAverageMinMaxObserver and their per-channel forms."""

import ctypes

import torch
from torch.ao import quantization as tq

from .. import _lib
from ..kernels import Kernels

__all__ = ["FakeQuantize", "FusedMovingAvgObsFakeQuantize", "get_default_qat_qconfig"]

_OBSERVERS = [  # most derived first
    (tq.MovingAveragePerChannelMinMaxObserver, "moving_average_per_channel_minmax"),
    (tq.PerChannelMinMaxObserver, "per_channel_minmax"),
    (tq.MovingAverageMinMaxObserver, "moving_average_minmax"),
    (tq.MinMaxObserver, "minmax"),
]
_DTYPES = {torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}


def _observer_type(obs):
    for cls, name in _OBSERVERS:
        if isinstance(obs, cls):
            return name
    raise TypeError(
        f"observer: {type(obs).__name__}; expected MinMaxObserver, MovingAverageMinMaxObserver or a per-channel form"
    )


def _spec_fields(module, channels, train_qparams):
    obs = module.activation_post_process
    if obs.dtype not in _DTYPES:
        raise TypeError(f"dtype: {obs.dtype}; expected torch.quint8, torch.qint8 or torch.qint32")
    fields = {
        "name": "torchfq",
        "dtype": _DTYPES[obs.dtype],
        "qscheme": str(obs.qscheme).replace("torch.", ""),
        "ch_axis": 0,
        "channel_len": channels,
        "reduce_range": bool(obs.reduce_range),
        "train_qparams": train_qparams,
        "fast_training": True,
        "observer": {"type": _observer_type(obs), "eps": float(obs.eps.item())},
    }
    if obs.has_customized_qrange:
        fields["quant_min"], fields["quant_max"] = int(obs.quant_min), int(obs.quant_max)
        fields["reduce_range"] = False
    if hasattr(obs, "averaging_constant"):
        fields["observer"]["averaging_constant"] = float(obs.averaging_constant)
    return fields


class _Step:
    """One module's kernels and runtime observer for a channel count."""

    def __init__(self, fields):
        self.fields = fields
        self.kernels = Kernels(fields)
        L = _lib.lib()
        self.obs, err = ctypes.c_void_p(), _lib.Error()
        _lib.check(L.qg_observer_create(self.kernels.spec._ptr, ctypes.byref(self.obs), ctypes.byref(err)), err)

    def __reduce__(self):  # deepcopy and pickle build a fresh one: the state is in torch's buffers
        return (_Step, (self.fields,))

    def __del__(self):
        if getattr(self, "obs", None) and _lib._lib is not None:
            _lib._lib.qg_observer_destroy(self.obs)


def _per_channel_values(t, channels, fill, dtype):
    """A buffer's values as `channels` contiguous CPU values; an empty or
    single-valued buffer (before the first step) is broadcast."""
    t = t.detach().reshape(-1).to(dtype)
    if t.numel() == channels:
        return t.contiguous().clone()
    if t.numel() == 0:
        return torch.full((channels,), fill, dtype=dtype)
    if t.numel() == 1:
        return t.expand(channels).contiguous().clone()
    raise ValueError(f"buffer: {t.numel()} values; expected {channels} (one per channel) or 1")


class _StepFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, module):
        y, mask = module._qgen_run(x)
        ctx.module = module
        ctx.save_for_backward(mask)
        return y

    @staticmethod
    def backward(ctx, dy):
        (mask,) = ctx.saved_tensors
        kernels = ctx.module._qgen_last.kernels
        return kernels.fake_quant_backward(dy.contiguous(), mask).view_as(dy), None


class _QgenStepMixin:
    """forward() through qg_fused_train_step_with on JIT kernels, with the
    state in torch's buffers: pushed into the runtime observer before the
    step, read back after (docs/semantics.md, "The fused training step")."""

    _qgen_train_qparams = "observer"

    def _qgen_step(self, channels):
        steps = self.__dict__.setdefault("_qgen_steps", {})
        if channels not in steps:
            steps[channels] = _Step(_spec_fields(self, channels, self._qgen_train_qparams))
        return steps[channels]

    def _qgen_run(self, x):
        obs = self.activation_post_process
        per_channel = self.is_per_channel
        axis = self.ch_axis + x.dim() if self.ch_axis < 0 else self.ch_axis
        C = x.size(axis) if per_channel else 1
        inner = 1
        if per_channel:
            for d in x.shape[axis + 1 :]:
                inner *= d
        step = self._qgen_step(C)
        self._qgen_last = step
        L = _lib.lib()
        mn = _per_channel_values(obs.min_val, C, float("inf"), torch.float32)
        mx = _per_channel_values(obs.max_val, C, float("-inf"), torch.float32)
        s = _per_channel_values(self.scale, C, 1.0, torch.float32)
        z = _per_channel_values(self.zero_point, C, 0, torch.int32)
        err = _lib.Error()
        _lib.check(L.qg_observer_restore(step.obs, mn.data_ptr(), mx.data_ptr(), s.data_ptr(), z.data_ptr(),
                                         ctypes.byref(err)), err)
        L.qg_observer_enable(step.obs, bool(self.observer_enabled[0] == 1), bool(self.fake_quant_enabled[0] == 1))
        y = torch.empty_like(x)
        mask = torch.empty(x.shape, dtype=torch.uint8)
        k = step.kernels._k
        _lib.check(L.qg_fused_train_step_with(step.obs, k.observe, k.fake_quant, x.data_ptr(), y.data_ptr(),
                                              mask.data_ptr(), x.numel(), inner, s.data_ptr(), z.data_ptr(),
                                              ctypes.byref(err)), err)
        L.qg_observer_minmax(step.obs, mn.data_ptr(), mx.data_ptr())
        with torch.no_grad():
            self._qgen_store(obs, mn, mx, s, z, per_channel)
        return y, mask

    def _qgen_store(self, obs, mn, mx, s, z, per_channel):
        if self.observer_enabled[0] == 1:
            if per_channel:
                obs.min_val.resize_(mn.shape)
                obs.max_val.resize_(mx.shape)
                obs.min_val.copy_(mn)
                obs.max_val.copy_(mx)
            else:
                obs.min_val.copy_(mn[0])
                obs.max_val.copy_(mx[0])
        if self.scale.shape != s.shape and (per_channel or self.scale.numel() != 1):
            self.scale.resize_(s.shape)
            self.zero_point.resize_(z.shape)
        self.scale.copy_(s if self.scale.numel() == s.numel() else s[0])
        self.zero_point.copy_(z if self.zero_point.numel() == z.numel() else z[0])

    def forward(self, X):
        if not isinstance(X, torch.Tensor):
            raise TypeError(f"X: a {type(X).__name__}; expected a torch.Tensor")
        if X.device.type != "cpu":
            raise ValueError(f"X: a tensor on {X.device}; expected a CPU tensor (qgen runs on the CPU)")
        if X.dtype != torch.float32:
            raise TypeError(f"X: dtype {X.dtype}; expected torch.float32")
        return _StepFunction.apply(X.contiguous(), self)


class FakeQuantize(_QgenStepMixin, tq.FakeQuantize):
    """torch.ao.quantization.FakeQuantize on qgen's kernels: the observer's
    calculate_qparams sets the qparams (train_qparams "observer")."""

    _qgen_train_qparams = "observer"


class FusedMovingAvgObsFakeQuantize(_QgenStepMixin, tq.FusedMovingAvgObsFakeQuantize):
    """torch.ao.quantization.FusedMovingAvgObsFakeQuantize (the default QAT
    module) on qgen's kernels: ATen's ChooseQuantizationParams from the
    running min/max (train_qparams "fused_op")."""

    _qgen_train_qparams = "fused_op"


_SWAP = {tq.FakeQuantize: FakeQuantize, tq.FusedMovingAvgObsFakeQuantize: FusedMovingAvgObsFakeQuantize}


def _swap(factory):
    cls, kwargs = factory.p.func, factory.p.keywords
    if cls not in _SWAP:
        raise TypeError(f"qconfig: {cls.__name__}; expected FakeQuantize or FusedMovingAvgObsFakeQuantize")
    return _SWAP[cls].with_args(**kwargs)


def get_default_qat_qconfig(backend="fbgemm", version=1):
    """torch's get_default_qat_qconfig(backend, version) with qgen's modules."""
    qc = tq.get_default_qat_qconfig(backend, version)
    return tq.QConfig(activation=_swap(qc.activation), weight=_swap(qc.weight))

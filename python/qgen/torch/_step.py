"""What qgen's torch modules share: the spec a torch observer describes,
the JIT kernels and runtime observer of one channel count, and buffers
moved between torch and the runtime."""

import ctypes

import torch
from torch.ao import quantization as tq

from .. import _lib
from ..kernels import Kernels

_OBSERVERS = [  # most derived first
    (tq.MovingAveragePerChannelMinMaxObserver, "moving_average_per_channel_minmax"),
    (tq.PerChannelMinMaxObserver, "per_channel_minmax"),
    (tq.MovingAverageMinMaxObserver, "moving_average_minmax"),
    (tq.MinMaxObserver, "minmax"),
]
_DTYPES = {torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}


def observer_type(obs):
    for cls, name in _OBSERVERS:
        if isinstance(obs, cls):
            return name
    raise TypeError(
        f"observer: {type(obs).__name__}; expected MinMaxObserver, MovingAverageMinMaxObserver or a per-channel form"
    )


def dtype_name(dtype):
    if dtype not in _DTYPES:
        raise TypeError(f"dtype: {dtype}; expected torch.quint8, torch.qint8 or torch.qint32")
    return _DTYPES[dtype]


def spec_fields(obs, channels, train_qparams="observer"):
    """The spec (docs/spec.md) of torch observer `obs` over `channels`
    channels; the kernels are called with the layout's `inner`, so ch_axis
    is 0 here."""
    fields = {
        "name": "torchfq",
        "dtype": dtype_name(obs.dtype),
        "qscheme": str(obs.qscheme).replace("torch.", ""),
        "ch_axis": 0,
        "channel_len": channels,
        "reduce_range": bool(obs.reduce_range),
        "train_qparams": train_qparams,
        "fast_training": True,
        "observer": {"type": observer_type(obs), "eps": float(obs.eps.item())},
    }
    if obs.has_customized_qrange:
        fields["quant_min"], fields["quant_max"] = int(obs.quant_min), int(obs.quant_max)
        fields["reduce_range"] = False
    if hasattr(obs, "averaging_constant"):
        fields["observer"]["averaging_constant"] = float(obs.averaging_constant)
    return fields


class Step:
    """One module's kernels and runtime observer for one spec."""

    def __init__(self, fields):
        self.fields = fields
        self.kernels = Kernels(fields)
        L = _lib.lib()
        self.obs, err = ctypes.c_void_p(), _lib.Error()
        _lib.check(L.qg_observer_create(self.kernels.spec._ptr, ctypes.byref(self.obs), ctypes.byref(err)), err)

    def __reduce__(self):  # deepcopy and pickle build a fresh one: the state is in torch's buffers
        return (Step, (self.fields,))

    def __del__(self):
        if getattr(self, "obs", None) and _lib._lib is not None:
            _lib._lib.qg_observer_destroy(self.obs)


def cached_step(module, key, fields):
    steps = module.__dict__.setdefault("_qgen_steps", {})
    if key not in steps:
        steps[key] = Step(fields)
    return steps[key]


def layout(x, per_channel, ch_axis):
    """(channels, inner) of x: elements per run of one channel."""
    if not per_channel:
        return 1, 1
    if x.dim() == 0:
        raise ValueError("X: a 0-d tensor for a per-channel module; expected a tensor with a channel axis")
    axis = ch_axis + x.dim() if ch_axis < 0 else ch_axis
    if not 0 <= axis < x.dim():
        raise ValueError(f"ch_axis: {ch_axis} for a tensor of {x.dim()} dims")
    inner = 1
    for d in x.shape[axis + 1 :]:
        inner *= d
    return x.size(axis), inner


def per_channel_values(t, channels, fill, dtype):
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


def push_state(step, min_val, max_val, scale, zero_point, channels):
    """torch's buffers into the runtime observer; returns the contiguous
    copies the step writes back into."""
    mn = per_channel_values(min_val, channels, float("inf"), torch.float32)
    mx = per_channel_values(max_val, channels, float("-inf"), torch.float32)
    s = per_channel_values(scale, channels, 1.0, torch.float32)
    z = per_channel_values(zero_point, channels, 0, torch.int32)
    err = _lib.Error()
    _lib.check(_lib.lib().qg_observer_restore(step.obs, mn.data_ptr(), mx.data_ptr(), s.data_ptr(), z.data_ptr(),
                                              ctypes.byref(err)), err)
    return mn, mx, s, z


def store_minmax(obs, mn, mx, per_channel):
    """The runtime observer's min/max into torch observer `obs`'s buffers
    (per-channel buffers take the channel count, as torch's do)."""
    with torch.no_grad():
        if per_channel:
            obs.min_val.resize_(mn.shape)
            obs.max_val.resize_(mx.shape)
            obs.min_val.copy_(mn)
            obs.max_val.copy_(mx)
        else:
            obs.min_val.copy_(mn[0])
            obs.max_val.copy_(mx[0])


def check_input(X):
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"X: a {type(X).__name__}; expected a torch.Tensor")
    if X.device.type != "cpu":
        raise ValueError(f"X: a tensor on {X.device}; expected a CPU tensor (qgen runs on the CPU)")
    if X.dtype != torch.float32:
        raise TypeError(f"X: dtype {X.dtype}; expected torch.float32")


class MaskedFakeQuant(torch.autograd.Function):
    """y from a forward that also gave the byte mask; dx = dy where the
    mask is set, by the generated backward kernel."""

    @staticmethod
    def forward(ctx, x, run):
        y, mask, kernels = run(x)
        ctx.kernels = kernels
        ctx.save_for_backward(mask)
        return y

    @staticmethod
    def backward(ctx, dy):
        (mask,) = ctx.saved_tensors
        return ctx.kernels.fake_quant_backward(dy.contiguous(), mask).view_as(dy), None

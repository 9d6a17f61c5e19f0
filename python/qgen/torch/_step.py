"""What qgen's torch modules share: the spec a torch observer describes,
the JIT kernels and runtime observer of one channel count, and buffers
moved between torch and the runtime."""

import ctypes
import itertools

import torch
from torch.ao import quantization as tq

from .. import _lib
from ..kernels import Kernels, layout

_OBSERVERS = [  # most derived first
    (tq.MovingAveragePerChannelMinMaxObserver, "moving_average_per_channel_minmax"),
    (tq.PerChannelMinMaxObserver, "per_channel_minmax"),
    (tq.MovingAverageMinMaxObserver, "moving_average_minmax"),
    (tq.MinMaxObserver, "minmax"),
]
_DTYPES = {torch.quint8: "quint8", torch.qint8: "qint8", torch.qint32: "qint32"}
# X's dtypes, as the spec's float_type (docs/semantics.md, "Float types")
FLOAT_TYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


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


def spec_fields(obs, channels, train_qparams="observer", float_type="float32"):
    """The spec (docs/spec.md) of torch observer `obs` over `channels`
    channels of X's `float_type`; the kernels are called with the layout's
    `inner`, so ch_axis is 0 here. Float zero points are refused: torch
    keeps them in a float buffer the runtime's training state does not
    take."""
    if obs.qscheme == torch.per_channel_affine_float_qparams:
        raise ValueError(
            "qscheme: torch.per_channel_affine_float_qparams; expected integer zero points (qgen.torch does not "
            "serve float zero points, used for embeddings)"
        )
    fields = {
        "name": "torchfq",
        "dtype": dtype_name(obs.dtype),
        "qscheme": str(obs.qscheme).replace("torch.", ""),
        "ch_axis": 0,
        "channel_len": channels,
        "reduce_range": bool(obs.reduce_range),
        "train_qparams": train_qparams,
        "fast_training": True,
        "compat_mask": True,  # the mask lives only between forward and backward: 1 bit per element
        "float_type": float_type,
        "observer": {"type": observer_type(obs), "eps": float(obs.eps.item())},
    }
    if obs.has_customized_qrange:
        fields["quant_min"], fields["quant_max"] = int(obs.quant_min), int(obs.quant_max)
        fields["reduce_range"] = False
    if hasattr(obs, "averaging_constant"):
        fields["observer"]["averaging_constant"] = float(obs.averaging_constant)
    return fields


_TOKENS = itertools.count(1)


class Step:
    """One module's kernels and runtime observer for one spec, with the
    module's state as the runtime last saw it: `stamp` names the torch
    buffers (address and version) the runtime observer holds, and `token`
    marks the scale buffer this step wrote last, so a step pushes them
    again only when something else wrote them (load_state_dict, an
    optimizer, a user, another step of the same module)."""

    def __init__(self, fields):
        self.fields = fields
        self.kernels = Kernels(fields)
        L = _lib.lib()
        self.obs, self.err = ctypes.c_void_p(), _lib.Error()
        _lib.check(L.qg_observer_create(self.kernels.spec._ptr, ctypes.byref(self.obs), ctypes.byref(self.err)),
                   self.err)
        C = fields["channel_len"]
        self.mn, self.mx = torch.empty(C), torch.empty(C)
        self.s, self.z = torch.empty(C), torch.empty(C, dtype=torch.int32)
        self.stamp = None
        self.token = next(_TOKENS)  # marks the buffers this step wrote last (pull)
        self.direct = (False, False, False)  # in_place of (min/max, scale, zero_point), as of the stamp
        self._observe = None

    @staticmethod
    def stamp_of(buffers):
        return tuple((b.data_ptr(), b._version) for b in buffers)

    def push(self, min_val, max_val, scale, zero_point):
        """torch's buffers into the runtime observer (per_channel_values'
        broadcast of buffers not yet sized)."""
        C = self.fields["channel_len"]
        self.mn.copy_(per_channel_values(min_val, C, float("inf"), torch.float32, "min_val"))
        self.mx.copy_(per_channel_values(max_val, C, float("-inf"), torch.float32, "max_val"))
        self.s.copy_(per_channel_values(scale, C, 1.0, torch.float32, "scale"))
        self.z.copy_(per_channel_values(zero_point, C, 0, torch.int32, "zero_point"))
        _lib.check(_lib.lib().qg_observer_restore(self.obs, self.mn.data_ptr(), self.mx.data_ptr(), self.s.data_ptr(),
                                                  self.z.data_ptr(), ctypes.byref(self.err)), self.err)

    def sync(self, obs, scale, zero_point):
        """Pushes the module's buffers into the runtime observer when
        something other than this step wrote them since."""
        buffers = (obs.min_val, obs.max_val, scale, zero_point)
        if self.stamp != self.stamp_of(buffers) or getattr(scale, "_qgen_writer", None) != self.token:
            self.push(*buffers)
            self.direct = self.direct_of(*buffers)

    def direct_of(self, min_val, max_val, scale, zero_point):
        """Which buffers the runtime writes in place (in_place); they keep
        that while their stamp stands (a resize or a new tensor changes it)."""
        C = self.fields["channel_len"]
        return (in_place(min_val, C, torch.float32) and in_place(max_val, C, torch.float32),
                in_place(scale, C, torch.float32), in_place(zero_point, C, torch.int32))

    def observe(self, x, inner):
        """The generated observe kernel on x (the runtime observer's min/max)."""
        if self._observe is None:
            self._observe = _lib.OBSERVE(self.kernels._k.observe)
        observe = self._observe
        _lib.check(observe(x.data_ptr(), x.numel(), inner, self.obs, ctypes.addressof(self.err)), self.err)

    def qparams(self):
        """The observer's qparams (its calculate_qparams) into self.s, self.z."""
        _lib.check(_lib.lib().qg_observer_qparams(self.obs, self.s.data_ptr(), self.z.data_ptr(), None,
                                                  ctypes.byref(self.err)), self.err)

    def fused(self, x, y, mask, inner, observe_on, fake_quant_on, scale=None, zero_point=None):
        """qg_fused_train_step_with on the JIT kernels (docs/semantics.md,
        "The fused training step"): y and mask may be x and None when fake
        quant is off. The new qparams land in the module's `scale` and
        `zero_point` buffers where the runtime may write them in place
        (in_place), else in self.s and self.z for pull to copy."""
        L = _lib.lib()
        L.qg_observer_enable(self.obs, observe_on, fake_quant_on)
        k = self.kernels._k
        s = scale if scale is not None and self.direct[1] else self.s
        z = zero_point if zero_point is not None and self.direct[2] else self.z
        step = L.qg_fused_train_step_with if self.fields["float_type"] == "float32" else L.qg_fused_train_step16_with
        _lib.check(step(self.obs, k.observe, k.fake_quant, x.data_ptr(), y.data_ptr(),
                        mask.data_ptr() if mask is not None else None, x.numel(), inner, s.data_ptr(),
                        z.data_ptr(), ctypes.byref(self.err)), self.err)

    def pull(self, obs, scale, zero_point, observed, by_fused=True):
        """The runtime's values back into the module's buffers (min/max only
        when the step observed), and the stamp of what it now holds. Buffers
        the runtime can write in place take its values through their own
        memory (with `by_fused`, fused wrote scale and zero_point there
        already); the others are copied from self.mn, self.mx, self.s and
        self.z."""
        direct = self.direct
        with torch.no_grad():
            if observed:
                if direct[0]:
                    _lib.lib().qg_observer_minmax(self.obs, obs.min_val.data_ptr(), obs.max_val.data_ptr())
                else:
                    _lib.lib().qg_observer_minmax(self.obs, self.mn.data_ptr(), self.mx.data_ptr())
                    store(obs.min_val, self.mn)
                    store(obs.max_val, self.mx)
            if not (by_fused and direct[1]):
                store(scale, self.s)
            if not (by_fused and direct[2]):
                store(zero_point, self.z)
        buffers = (obs.min_val, obs.max_val, scale, zero_point)
        self.stamp = self.stamp_of(buffers)
        if not all(direct):  # a copy may have sized a buffer that can now be written in place
            self.direct = self.direct_of(*buffers)
        # in-place writes leave versions as they were: another step of the
        # same module (horizon's fused and separate ones) learns of them here
        scale._qgen_writer = self.token

    def before_operator(self, scale):
        """torch.ops.qgen.train_step pushes the buffers itself and writes
        them in place: no Step (this one or another of the module) may take
        the stamp or the scale mark it leaves as its own."""
        self.stamp = None
        scale._qgen_writer = None

    def __reduce__(self):  # deepcopy and pickle build a fresh one: the state is in torch's buffers
        return (Step, (self.fields,))

    def __del__(self):
        if getattr(self, "obs", None) and _lib._lib is not None:
            _lib._lib.qg_observer_destroy(self.obs)


def cached_step(module, key, make_fields):
    steps = module.__dict__.setdefault("_qgen_steps", {})
    if key not in steps:
        steps[key] = Step(make_fields())
    return steps[key]


def layout_of(x, per_channel, ch_axis):
    """(channels, inner) of tensor X (qgen.kernels.layout)."""
    return layout(tuple(x.shape), per_channel, ch_axis, what="X")


def per_channel_values(t, channels, fill, dtype, name="buffer"):
    """A buffer's values as `channels` contiguous CPU values; an empty or
    single-valued buffer (before the first step) is broadcast."""
    t = t.detach().reshape(-1).to(dtype)
    if t.numel() == channels:
        return t.contiguous().clone()
    if t.numel() == 0:
        return torch.full((channels,), fill, dtype=dtype)
    if t.numel() == 1:
        return t.expand(channels).contiguous().clone()
    raise ValueError(f"{name}: {t.numel()} values; expected {channels} (one per channel) or 1")


def in_place(t, channels, dtype):
    """Whether the runtime may write torch buffer t's values through its
    own memory: `channels` contiguous CPU values of `dtype` (a buffer not
    yet sized, or of another type, goes through store). Such writes leave
    the buffer's version as it was, as the stamp expects of values the
    runtime holds."""
    return t.dtype == dtype and t.numel() == channels and t.device.type == "cpu" and t.is_contiguous()


def store(dst, src):
    """A runtime value (C values) into torch buffer `dst`: per-channel
    buffers take the channel count, as torch's do; single ones stay 0-d or
    1-element."""
    if dst.numel() == src.numel():
        dst.copy_(src.view(dst.shape))
    elif dst.dim() == 0 or (dst.numel() == 1 and src.numel() == 1):
        dst.copy_(src.view(dst.shape))
    else:
        dst.resize_(src.shape)
        dst.copy_(src)


def check_input(X, float_types=tuple(FLOAT_TYPES)):
    """X's float_type name, once X is a CPU tensor of one of `float_types`."""
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"X: a {type(X).__name__}; expected a torch.Tensor")
    if X.device.type != "cpu":
        raise ValueError(f"X: a tensor on {X.device}; expected a CPU tensor (qgen runs on the CPU)")
    if X.dtype not in float_types:
        raise TypeError(f"X: dtype {X.dtype}; expected {' or '.join(map(str, float_types))}")
    return FLOAT_TYPES[X.dtype]


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
        return ctx.kernels.masked_backward(dy.contiguous(), mask).view_as(dy), None

"""qgen.torch.horizon.FakeQuantize: the constructor of Horizon's QAT
fake-quant module over qgen's kernels of the horizon.qint8 / horizon.qint16
presets (docs/spec.md): symmetric, zero point 0, t = fl(x / scale),
y = fl(clamp(floor(fl(t + 0.5)), qmin, qmax) * scale) (docs/semantics.md,
"Rounding" and "Fake quant"). torch has no qint16 dtype: the module takes
the dtype as "qint8" / "qint16" (or torch.qint8) and keeps qint16's
observer as torch's qint32 observer over -32768..32767, whose formulas are
the same."""

import torch
from torch.ao import quantization as tq

from . import _ops, _step
from .observer import MovingAverageMinMaxObserver

__all__ = ["FakeQuantize", "MovingAverageMinMaxObserver"]

_RANGES = {"qint8": (-128, 127), "qint16": (-32768, 32767)}
_OBSERVER_DTYPE = {"qint8": torch.qint8, "qint16": torch.qint32}


def _dtype_name(dtype):
    name = {torch.qint8: "qint8"}.get(dtype, dtype)
    if name not in _RANGES:
        raise ValueError(f"dtype: {dtype!r}; expected 'qint8' or 'qint16' (Horizon's fake quant is symmetric)")
    return name


def _per_channel(observer_cls):
    probe = observer_cls.p.func if hasattr(observer_cls, "p") else observer_cls  # with_args partials
    return isinstance(probe, type) and issubclass(probe, tq.PerChannelMinMaxObserver)


class _HorizonFakeQuant(torch.autograd.Function):
    """y (or x itself, in place) from a forward that also gave the mask;
    dx = dy where the mask is set, through the generated backward kernel
    (the mask packed into bits with compat_mask)."""

    @staticmethod
    def forward(ctx, x, run, in_place):
        xc = x.contiguous()
        y = xc if in_place else torch.empty_like(xc)
        mask, kernels = run(xc, y)
        ctx.kernels = kernels
        ctx.save_for_backward(mask)
        if not in_place:
            return y
        if y.data_ptr() != x.data_ptr():  # x was not contiguous
            x.copy_(y)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, dy):
        (mask,) = ctx.saved_tensors
        return ctx.kernels.masked_backward(dy.contiguous(), mask).view_as(dy), None, None


class FakeQuantize(tq.FakeQuantizeBase):
    """Horizon's FakeQuantize arguments: `observer` (a min/max observer
    class, per-channel for channel_len > 1), `saturate` (the gradient is 0
    outside the range; None: the dtype's default, True), `in_place` (the
    output is written into the input), `compat_mask` (the saved gradient
    mask is packed 1 bit per element when saturating), `channel_len`,
    `fast_training` (observe, new qparams and fake quant in one fused
    step; False: three calls, same numbers) and the observer's own keyword
    arguments, `dtype` among them ("qint8" by default)."""

    def __init__(
        self,
        observer=MovingAverageMinMaxObserver,
        saturate=None,
        in_place=False,
        compat_mask=True,
        channel_len=1,
        fast_training=True,
        **observer_kwargs,
    ):
        super().__init__()
        self.dtype = _dtype_name(observer_kwargs.pop("dtype", "qint8"))
        qmin, qmax = _RANGES[self.dtype]
        for key, want in (("quant_min", qmin), ("quant_max", qmax)):
            got = observer_kwargs.pop(key, want)
            if got != want:
                raise ValueError(f"{key}: {got}; expected {want}, the range of {self.dtype}")
        if not isinstance(channel_len, int) or channel_len < 1:
            raise ValueError(f"channel_len: {channel_len!r}; expected an integer >= 1")
        per_channel = _per_channel(observer)
        if channel_len > 1 and not per_channel:
            raise ValueError(f"channel_len: {channel_len} with a per-tensor observer; expected 1, or a per-channel one")
        qscheme = torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric
        if observer_kwargs.get("qscheme", qscheme) != qscheme:
            raise ValueError(f"qscheme: {observer_kwargs['qscheme']}; expected {qscheme} (Horizon's is symmetric)")
        observer_kwargs["qscheme"] = qscheme
        try:
            self.activation_post_process = observer(
                dtype=_OBSERVER_DTYPE[self.dtype], quant_min=qmin, quant_max=qmax, **observer_kwargs
            )
        except TypeError as e:  # PlaceholderObserver and the like keep no range
            name = getattr(observer, "__name__", repr(observer))
            raise TypeError(
                f"observer: {name} does not take quant_min, quant_max and qscheme ({e}); expected an observer "
                "that keeps a range: MinMaxObserver, MovingAverageMinMaxObserver, their per-channel forms or "
                "HistogramObserver"
            ) from None
        self.quant_min, self.quant_max, self.qscheme = qmin, qmax, qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", 0)
        self.is_per_channel = per_channel
        self.saturate = True if saturate is None else bool(saturate)
        self.in_place, self.compat_mask = bool(in_place), bool(compat_mask)
        self.channel_len, self.fast_training = channel_len, bool(fast_training)
        self.register_buffer("scale", torch.ones(channel_len, dtype=torch.float32))
        self.register_buffer("zero_point", torch.zeros(channel_len, dtype=torch.int32))

    # ---- the spec and its kernels ---------------------------------------

    def _qgen_fields(self):
        obs = self.activation_post_process
        fields = _step.spec_fields(obs, self.channel_len)
        fields.update(
            name="horizonfq",
            dtype=self.dtype,
            quant_min=self.quant_min,
            quant_max=self.quant_max,
            rounding="half_up",
            scale_op="div",
            saturate=self.saturate,
            compat_mask=self.compat_mask,
            in_place=True,
        )
        return fields

    def _qgen_layout(self, x):
        C, inner = _step.layout_of(x, self.is_per_channel, self.ch_axis)
        if C != self.channel_len:
            raise ValueError(f"channel_len: {self.channel_len}; the input has {C} channels along axis {self.ch_axis}")
        return inner

    def _qgen_step(self):
        # one runtime observer per way of stepping: each is pushed the
        # buffers when the other (or anything else) changed them
        return _step.cached_step(self, "fused" if self.fast_training else "separate", self._qgen_fields)

    def _qgen_run(self, x, y=None):
        """(mask, kernels): observes x and takes new qparams when the
        observer is on; with y, also y = fake_quant(x) and the mask for
        backward (else the mask is None)."""
        inner = self._qgen_layout(x)
        step = self._qgen_step()
        obs = self.activation_post_process
        step.sync(obs, self.scale, self.zero_point)
        observe_on = self.observer_enabled.item() == 1
        mask = None
        if self.fast_training:
            if y is not None:
                mask = torch.empty((x.numel() + 7) // 8 if self.compat_mask else x.numel(), dtype=torch.uint8)
            step.fused(x, x if y is None else y, mask, inner, observe_on, y is not None, self.scale, self.zero_point)
        else:
            if observe_on:
                step.observe(x, inner)
                step.qparams()
            if y is not None:
                mask = step.kernels.fake_quant(x, step.s, step.z, inner=inner, out=y)[1]
        step.pull(obs, self.scale, self.zero_point, observe_on, self.fast_training)
        return mask, step.kernels

    # ---- the module -------------------------------------------------------

    def _qgen_op(self, X):
        """The fused step as torch.ops.qgen.train_step (train_step_ in
        place), which pushes the buffers every call (Step.before_operator)."""
        inner = self._qgen_layout(X)
        step = self._qgen_step()
        step.before_operator(self.scale)
        obs = self.activation_post_process
        return _ops.train_step(X, obs.min_val, obs.max_val, self.scale, self.zero_point, step.obs.value,
                               step.kernels.address, self.channel_len, inner, self.observer_enabled.item() == 1, True,
                               self.compat_mask, in_place=self.in_place)

    def forward(self, X):
        """Observe (when on), new qparams, fake quant (when on): Horizon's
        module's step, as one fused step with fast_training."""
        _step.check_input(X, (torch.float32,))
        if X.numel() == 0:  # as torch's modules: the state as it was, y empty (X itself in place)
            return X if self.in_place else X.clone()
        if self.fake_quant_enabled.item() != 1:
            if self.observer_enabled.item() == 1:  # the observer and qparams move, the data passes
                self._qgen_run(X.detach().contiguous())
            return X
        if _ops.available and self.fast_training and X.is_contiguous():
            return self._qgen_op(X)
        return _HorizonFakeQuant.apply(X, self._qgen_run, self.in_place)

    def calculate_qparams(self):
        """(scale, zero_point) of the observer as it stands."""
        return self.activation_post_process.calculate_qparams()

    def set_qparams(self, scale, zero_point=None):
        """Sets the qparams (per channel, or one value for all); with the
        observer off they stay. The scheme is symmetric: zero points are 0."""
        s = torch.as_tensor(scale, dtype=torch.float32).detach().reshape(-1)
        if s.numel() not in (1, self.channel_len):
            raise ValueError(f"scale: {s.numel()} values; expected {self.channel_len} (channel_len) or 1")
        if not bool((s > 0).all()) or not bool(torch.isfinite(s).all()):
            raise ValueError(f"scale: {s.tolist()}; expected finite values > 0")
        if zero_point is not None and bool((torch.as_tensor(zero_point) != 0).any()):
            raise ValueError(f"zero_point: {torch.as_tensor(zero_point).tolist()}; expected 0 (the scheme is symmetric)")
        with torch.no_grad():
            self.scale.copy_(s.expand(self.channel_len))
            self.zero_point.zero_()

    def extra_repr(self):
        """The arguments that differ between instances, for repr()."""
        return (
            f"dtype={self.dtype}, qscheme={self.qscheme}, quant_min={self.quant_min}, quant_max={self.quant_max}, "
            f"saturate={self.saturate}, in_place={self.in_place}, compat_mask={self.compat_mask}, "
            f"channel_len={self.channel_len}, fast_training={self.fast_training}, "
            f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
            f"scale={self.scale}, zero_point={self.zero_point}"
        )

"""LearnableFakeQuantize: torch's _LearnableFakeQuantize (LSQ, learnable
scale and zero point): the forward is the spec's JIT fake-quant kernel with
the zero point rounded as torch rounds it, the gradients the runtime's LSQ
(docs/semantics.md, "LSQ"). x's gradient is bit-exact;
the scale and zero-point gradients are sums that torch takes in its own
fp32 order, so they agree within the 1e-5 relative that page grants. Torch
contracts `z + x * inv` into an FMA on CPUs that have one; qgen does not
(docs/semantics.md), so an element on that knife edge can round apart."""

import ctypes

import torch
from torch.ao.quantization import _learnable_fake_quantize as tl

from .. import _lib
from ..kernels import Kernels
from ..spec import Spec
from . import _step


def _kernels_of(spec):
    """The spec's JIT kernels, compiled once per spec object."""
    k = getattr(spec, "_qgen_kernels", None)
    if k is None:
        k = spec._qgen_kernels = Kernels(spec)
    return k


class _Lsq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, zero_point, spec, channels, inner, grad_factor):
        s = scale.detach().to(torch.float32).contiguous()
        zf = zero_point.detach().to(torch.float32).contiguous()
        # torch's forward: the zero point rounded half to even, then clamped
        # (qg_ref_lsq_forward does the same before its fake quant)
        z = torch.round(zf).clamp(spec["quant_min"], spec["quant_max"]).to(torch.int32)
        y = torch.empty_like(x)
        k = _kernels_of(spec)
        qp, _keep = k._qparams(s, z, inner, x.numel())
        k._fake_quant(x.data_ptr(), y.data_ptr(), None, x.numel(), qp)
        ctx.save_for_backward(x, s, zf)
        ctx.meta = (spec, channels, inner, grad_factor, scale.shape, zero_point.shape)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, s, zf = ctx.saved_tensors
        spec, channels, inner, grad_factor, s_shape, z_shape = ctx.meta
        dy = dy.contiguous()
        dx = torch.empty_like(x)
        ds = torch.zeros(channels, dtype=torch.float64)
        dz = torch.zeros(channels, dtype=torch.float64)
        grads = _lib.LsqGrads(dx.data_ptr(), ds.data_ptr(), dz.data_ptr())
        _lib.lib().qg_lsq_backward(spec._ptr, x.data_ptr(), dy.data_ptr(), x.numel(), s.data_ptr(),
                                                 zf.data_ptr(), channels, inner, grad_factor, ctypes.byref(grads))
        return dx, ds.to(torch.float32).reshape(s_shape), dz.to(torch.float32).reshape(z_shape), None, None, None, None


class LearnableFakeQuantize(tl._LearnableFakeQuantize):
    """torch.ao.quantization._learnable_fake_quantize._LearnableFakeQuantize
    with its fake quant and gradients computed by qgen."""

    def _qgen_spec(self, channels):
        per_channel = self.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
        fields = {
            "name": "torchlsq",
            "dtype": _step.dtype_name(self.activation_post_process.dtype),
            "qscheme": "per_channel_affine" if per_channel else "per_tensor_affine",
            "quant_min": int(self.quant_min),
            "quant_max": int(self.quant_max),
            "channel_len": channels,
        }
        if per_channel:
            fields["observer"] = {"type": "per_channel_minmax"}
        specs = self.__dict__.setdefault("_qgen_specs", {})
        if channels not in specs:
            specs[channels] = Spec.from_dict(fields)
        return specs[channels]

    def forward(self, X):
        """X fake-quantized with the learnable scale and zero point (the
        runtime's LSQ forward); backward gives torch's gradients."""
        _step.check_input(X, (torch.float32,))
        # the static branch is torch's: the observer, then its qparams
        if self.static_enabled.item() == 1:
            self.activation_post_process(X.detach())
            _scale, _zero_point = self.activation_post_process.calculate_qparams()
            self.scale.data.copy_(_scale.to(self.scale.device))
            self.zero_point.data.copy_(_zero_point.to(self.zero_point.device))
        else:
            self.scale.data.clamp_(min=self.eps.item())
        if self.fake_quant_enabled.item() != 1:
            return X
        if self.qscheme in (torch.per_channel_symmetric, torch.per_tensor_symmetric):
            self.zero_point.data.zero_()
        grad_factor = 1.0 / (X.numel() * self.quant_max) ** 0.5 if self.use_grad_scaling else 1.0
        per_channel = self.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
        C, inner = _step.layout_of(X, per_channel, self.ch_axis)
        if C != self.scale.numel():
            raise ValueError(f"X: {C} channels along ch_axis {self.ch_axis}; expected channel_len {self.scale.numel()}")
        return _Lsq.apply(X.contiguous(), self.scale, self.zero_point, self._qgen_spec(C), C, inner, grad_factor)

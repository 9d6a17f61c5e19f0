"""FakeQuantize, FusedMovingAvgObsFakeQuantize and FixedQParamsFakeQuantize
on qgen's kernels, subclassing torch's so that constructors, with_args,
buffers, state_dict keys, switches and repr are torch's own."""

import torch
from torch.ao import quantization as tq

from ..kernels import Kernels
from . import _ops, _step


class _TrainStep:
    """forward() through qg_fused_train_step_with on JIT kernels, with the
    state in torch's buffers: pushed into the runtime observer before the
    step, read back after (docs/semantics.md, "The fused training step")."""

    _qgen_train_qparams = "observer"

    def _qgen_step(self, x):
        """(step, channels, inner) for x: the Step of x's channel count and
        float type."""
        obs = self.activation_post_process
        C, inner = _step.layout_of(x, self.is_per_channel, self.ch_axis)
        ft = _step.FLOAT_TYPES[x.dtype]
        step = _step.cached_step(self, (C, ft), lambda: _step.spec_fields(obs, C, self._qgen_train_qparams, ft))
        return step, C, inner

    def _qgen_run(self, x):
        obs = self.activation_post_process
        step, C, inner = self._qgen_step(x)
        step.sync(obs, self.scale, self.zero_point)
        observe_on = self.observer_enabled.item() == 1
        y = torch.empty_like(x)
        mask = torch.empty((x.numel() + 7) // 8, dtype=torch.uint8)  # packed (spec_fields)
        step.fused(x, y, mask, inner, observe_on, self.fake_quant_enabled.item() == 1, self.scale, self.zero_point)
        step.pull(obs, self.scale, self.zero_point, observe_on)
        return y, mask, step.kernels

    def _qgen_op(self, x):
        """The step as torch.ops.qgen.train_step, which pushes the buffers
        into the runtime observer on every call (Step.before_operator)."""
        obs = self.activation_post_process
        step, C, inner = self._qgen_step(x)
        step.before_operator(self.scale)
        return _ops.train_step(x, obs.min_val, obs.max_val, self.scale, self.zero_point, step.obs.value,
                               step.kernels.address, C, inner, self.observer_enabled.item() == 1,
                               self.fake_quant_enabled.item() == 1, True)

    def forward(self, X):
        _step.check_input(X)
        if X.numel() == 0:  # torch's modules leave their state as it was and return an empty y
            return X.clone()
        if _ops.available:
            return self._qgen_op(X.contiguous())
        return _step.MaskedFakeQuant.apply(X.contiguous(), self._qgen_run)


class FakeQuantize(_TrainStep, tq.FakeQuantize):
    """torch.ao.quantization.FakeQuantize on qgen's kernels: the observer's
    calculate_qparams sets the qparams (train_qparams "observer")."""

    _qgen_train_qparams = "observer"


class FusedMovingAvgObsFakeQuantize(_TrainStep, tq.FusedMovingAvgObsFakeQuantize):
    """torch.ao.quantization.FusedMovingAvgObsFakeQuantize (the default QAT
    module) on qgen's kernels: ATen's ChooseQuantizationParams from the
    running min/max (train_qparams "fused_op")."""

    _qgen_train_qparams = "fused_op"


class FixedQParamsFakeQuantize(tq.FixedQParamsFakeQuantize):
    """torch.ao.quantization.FixedQParamsFakeQuantize on qgen's kernels:
    fake quant with the observer's fixed scale and zero point."""

    def _qgen_run(self, x):
        fields = {
            "name": "torchfixed",
            "dtype": _step.dtype_name(self.dtype),
            "qscheme": str(self.qscheme).replace("torch.", ""),
            "quant_min": int(self.quant_min),
            "quant_max": int(self.quant_max),
            "float_type": _step.FLOAT_TYPES[x.dtype],
        }
        key = tuple(fields.values())
        kernels = self.__dict__.setdefault("_qgen_kernels", {})
        if key not in kernels:
            kernels[key] = Kernels(fields)
        y, mask = kernels[key].fake_quant(x, self.scale, self.zero_point)
        return y, mask, kernels[key]

    def forward(self, X):
        """X fake-quantized with the fixed qparams (the JIT's kernel)."""
        _step.check_input(X)
        if self.fake_quant_enabled.item() != 1:
            return X
        return _step.MaskedFakeQuant.apply(X.contiguous(), self._qgen_run)

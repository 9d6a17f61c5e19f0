"""FakeQuantize, FusedMovingAvgObsFakeQuantize and FixedQParamsFakeQuantize
on qgen's kernels, subclassing torch's so that constructors, with_args,
buffers, state_dict keys, switches and repr are torch's own."""

import ctypes

import torch
from torch.ao import quantization as tq

from .. import _lib
from ..kernels import Kernels
from . import _step


class _TrainStep:
    """forward() through qg_fused_train_step_with on JIT kernels, with the
    state in torch's buffers: pushed into the runtime observer before the
    step, read back after (docs/semantics.md, "The fused training step")."""

    _qgen_train_qparams = "observer"

    def _qgen_run(self, x):
        obs = self.activation_post_process
        C, inner = _step.layout_of(x, self.is_per_channel, self.ch_axis)
        step = _step.cached_step(self, C, lambda: _step.spec_fields(obs, C, self._qgen_train_qparams))
        L = _lib.lib()
        buffers = (obs.min_val, obs.max_val, self.scale, self.zero_point)
        if step.stamp != step.stamp_of(buffers):
            step.push(*buffers)
        observe_on = self.observer_enabled.item() == 1
        L.qg_observer_enable(step.obs, observe_on, self.fake_quant_enabled.item() == 1)
        y = torch.empty_like(x)
        mask = torch.empty(x.shape, dtype=torch.uint8)
        k = step.kernels._k
        _lib.check(L.qg_fused_train_step_with(step.obs, k.observe, k.fake_quant, x.data_ptr(), y.data_ptr(),
                                              mask.data_ptr(), x.numel(), inner, step.s.data_ptr(),
                                              step.z.data_ptr(), ctypes.byref(step.err)), step.err)
        with torch.no_grad():
            if observe_on:
                L.qg_observer_minmax(step.obs, step.mn.data_ptr(), step.mx.data_ptr())
                _step.store(obs.min_val, step.mn)
                _step.store(obs.max_val, step.mx)
            _step.store(self.scale, step.s)
            _step.store(self.zero_point, step.z)
        step.stamp = step.stamp_of((obs.min_val, obs.max_val, self.scale, self.zero_point))
        return y, mask, step.kernels

    def forward(self, X):
        _step.check_input(X)
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
        }
        key = (fields["dtype"], fields["qscheme"], fields["quant_min"], fields["quant_max"])
        kernels = self.__dict__.setdefault("_qgen_kernels", {})
        if key not in kernels:
            kernels[key] = Kernels(fields)
        y, mask = kernels[key].fake_quant(x, self.scale, self.zero_point)
        return y, mask, kernels[key]

    def forward(self, X):
        _step.check_input(X)
        if self.fake_quant_enabled[0] != 1:
            return X
        return _step.MaskedFakeQuant.apply(X.contiguous(), self._qgen_run)

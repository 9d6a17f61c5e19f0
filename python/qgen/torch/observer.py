"""torch's min/max observers with the reduction done by qgen's generated
observe kernel and the running state folded by the runtime
(docs/semantics.md, "Observers"); calculate_qparams stays torch's."""

import ctypes

import torch
from torch.ao import quantization as tq

from .. import _lib
from . import _step

OBSERVE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
                           ctypes.c_void_p)


class _Observe:
    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        _step.check_input(x_orig)
        x = x_orig.detach().contiguous()
        per_channel = hasattr(self, "ch_axis")
        C, inner = _step.layout(x, per_channel, getattr(self, "ch_axis", 0))
        step = _step.cached_step(self, C, _step.spec_fields(self, C))
        zero = torch.zeros(1, dtype=torch.int32)
        mn, mx, _, _ = _step.push_state(step, self.min_val, self.max_val, torch.ones(1), zero, C)
        err = _lib.Error()
        observe = OBSERVE(step.kernels._k.observe)
        _lib.check(observe(x.data_ptr(), x.numel(), inner, step.obs, ctypes.addressof(err)), err)
        _lib.lib().qg_observer_minmax(step.obs, mn.data_ptr(), mx.data_ptr())
        _step.store_minmax(self, mn, mx, per_channel)
        return x_orig


class MinMaxObserver(_Observe, tq.MinMaxObserver):
    pass


class MovingAverageMinMaxObserver(_Observe, tq.MovingAverageMinMaxObserver):
    pass


class PerChannelMinMaxObserver(_Observe, tq.PerChannelMinMaxObserver):
    pass


class MovingAveragePerChannelMinMaxObserver(_Observe, tq.MovingAveragePerChannelMinMaxObserver):
    pass

"""torch's min/max observers with the reduction done by qgen's generated
observe kernel and the running state folded by the runtime
(docs/semantics.md, "Observers"); calculate_qparams stays torch's."""

import torch
from torch.ao import quantization as tq

from .. import _lib
from . import _step

class _Observe:
    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        ft = _step.check_input(x_orig)
        x = x_orig.detach().contiguous()
        per_channel = hasattr(self, "ch_axis")
        C, inner = _step.layout_of(x, per_channel, getattr(self, "ch_axis", 0))
        step = _step.cached_step(self, (C, ft), lambda: _step.spec_fields(self, C, float_type=ft))
        if step.stamp != step.stamp_of((self.min_val, self.max_val)):
            step.push(self.min_val, self.max_val, torch.ones(1), torch.zeros(1, dtype=torch.int32))
        step.observe(x, inner)
        _lib.lib().qg_observer_minmax(step.obs, step.mn.data_ptr(), step.mx.data_ptr())
        with torch.no_grad():
            _step.store(self.min_val, step.mn)
            _step.store(self.max_val, step.mx)
        step.stamp = step.stamp_of((self.min_val, self.max_val))
        return x_orig


class MinMaxObserver(_Observe, tq.MinMaxObserver):
    pass


class MovingAverageMinMaxObserver(_Observe, tq.MovingAverageMinMaxObserver):
    pass


class PerChannelMinMaxObserver(_Observe, tq.PerChannelMinMaxObserver):
    pass


class MovingAveragePerChannelMinMaxObserver(_Observe, tq.MovingAveragePerChannelMinMaxObserver):
    pass

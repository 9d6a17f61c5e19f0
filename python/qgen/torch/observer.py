"""torch's min/max and histogram observers with the reduction done by
qgen's generated observe kernel and the running state folded by the
runtime (docs/semantics.md, "Observers"); calculate_qparams stays torch's."""

import ctypes

import torch
from torch.ao import quantization as tq

from .. import _lib
from . import _step

class _Observe:
    def forward(self, x_orig):
        """Observes x_orig (the histogram updated as torch's forward does)
        and returns it unchanged."""
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
    """torch.ao.quantization.MinMaxObserver with its min/max taken by qgen's
    kernels: the same buffers, arguments and qparams, bit for bit."""


class MovingAverageMinMaxObserver(_Observe, tq.MovingAverageMinMaxObserver):
    """torch.ao.quantization.MovingAverageMinMaxObserver with its min/max taken by qgen's
    kernels: the same buffers, arguments and qparams, bit for bit."""


class PerChannelMinMaxObserver(_Observe, tq.PerChannelMinMaxObserver):
    """torch.ao.quantization.PerChannelMinMaxObserver with its min/max taken by qgen's
    kernels: the same buffers, arguments and qparams, bit for bit."""


class MovingAveragePerChannelMinMaxObserver(_Observe, tq.MovingAveragePerChannelMinMaxObserver):
    """torch.ao.quantization.MovingAveragePerChannelMinMaxObserver with its min/max taken by qgen's
    kernels: the same buffers, arguments and qparams, bit for bit."""


class HistogramObserver(tq.HistogramObserver):
    """torch.ao.quantization.HistogramObserver with forward's histogram
    update (histc, _adjust_min_max, _combine_histograms) done by the
    runtime, its histc bounds truncated by int() as torch 1.13's forward
    passes them (observer.histc_range "int"); calculate_qparams, buffers
    and state_dict are torch's. NaN and +-inf inputs are refused, naming
    the element."""

    def _qgen_fields(self):
        fields = {
            "name": "torchhist",
            "channel_len": 1,
            "dtype": _step.dtype_name(self.dtype),
            "qscheme": str(self.qscheme).replace("torch.", ""),
            "reduce_range": bool(self.reduce_range),
            "observer": {"type": "histogram", "bins": int(self.bins), "upsample_rate": int(self.upsample_rate),
                         "eps": float(self.eps.item()), "histc_range": "int"},
        }
        if self.has_customized_qrange:
            fields["quant_min"], fields["quant_max"] = int(self.quant_min), int(self.quant_max)
            fields["reduce_range"] = False
        return fields

    def forward(self, x_orig):
        """Observes x_orig (the histogram updated as torch's forward does)
        and returns it unchanged."""
        if x_orig.numel() == 0:
            return x_orig
        _step.check_input(x_orig, (torch.float32,))
        x = x_orig.detach().contiguous()
        step = _step.cached_step(self, "histogram", self._qgen_fields)
        L, err = _lib.lib(), step.err
        buffers = (self.histogram, self.min_val, self.max_val)
        if self.histogram.numel() != self.bins:
            raise ValueError(f"histogram: {self.histogram.numel()} bins; expected {self.bins} (the observer's bins)")
        if step.stamp != step.stamp_of(buffers):
            hist = self.histogram.detach().to(torch.float32).contiguous()
            _lib.check(L.qg_observer_restore_histogram(step.obs, hist.data_ptr(), float(self.min_val),
                                                       float(self.max_val), ctypes.byref(err)), err)
        step.observe(x, 1)
        hist = torch.empty(self.bins)
        mn, mx = ctypes.c_float(), ctypes.c_float()
        L.qg_observer_histogram(step.obs, hist.data_ptr(), ctypes.byref(mn), ctypes.byref(mx))
        with torch.no_grad():
            self.histogram.copy_(hist)
            self.min_val.fill_(mn.value)
            self.max_val.fill_(mx.value)
        step.stamp = step.stamp_of(buffers)
        return x_orig

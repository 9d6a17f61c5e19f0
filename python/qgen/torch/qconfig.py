"""torch's default QAT qconfigs with qgen's modules in place of torch's."""

from torch.ao import quantization as tq

from . import fake_quantize as fq

_SWAP = {
    tq.FakeQuantize: fq.FakeQuantize,
    tq.FusedMovingAvgObsFakeQuantize: fq.FusedMovingAvgObsFakeQuantize,
    tq.FixedQParamsFakeQuantize: fq.FixedQParamsFakeQuantize,
}


def _swap(factory):
    """qgen's module for a torch fake-quant factory; observers that quantize
    nothing (ReuseInputObserver, PlaceholderObserver, ...) stay torch's."""
    p = getattr(factory, "p", None)
    cls = getattr(p, "func", None)
    if cls in _SWAP:
        return _SWAP[cls].with_args(**p.keywords)
    if isinstance(cls, type) and issubclass(cls, tq.FakeQuantizeBase):
        raise TypeError(f"qconfig: {cls.__name__}; expected a fake-quant module qgen serves ({', '.join(c.__name__ for c in _SWAP)})")
    return factory


def swap_qconfig(qc):
    """A torch QConfig with each fake-quant factory replaced by qgen's."""
    return tq.QConfig(activation=_swap(qc.activation), weight=_swap(qc.weight))


def get_default_qat_qconfig(backend="fbgemm", version=1):
    """torch's get_default_qat_qconfig(backend, version) with qgen's modules."""
    return swap_qconfig(tq.get_default_qat_qconfig(backend, version))


def _swap_for_fx(qc):
    # prepare_qat_fx accepts only torch's own FixedQParamsFakeQuantize for
    # the fixed-qparams ops (sigmoid, tanh, ...): those stay torch's
    if qc is None or getattr(getattr(qc.activation, "p", None), "func", None) is tq.FixedQParamsFakeQuantize:
        return qc
    return swap_qconfig(qc)


def get_default_qat_qconfig_mapping(backend="fbgemm"):
    """torch's get_default_qat_qconfig_mapping(backend) (FX) with qgen's
    modules, but for the fixed-qparams ops, which FX requires to be torch's."""
    src = tq.get_default_qat_qconfig_mapping(backend)
    out = tq.QConfigMapping()
    if src.global_qconfig is not None:
        out.set_global(_swap_for_fx(src.global_qconfig))
    for kind, qc in src.object_type_qconfigs.items():
        out.set_object_type(kind, _swap_for_fx(qc))
    for name, qc in src.module_name_qconfigs.items():
        out.set_module_name(name, _swap_for_fx(qc))
    return out

#!/usr/bin/python3
"""Reference outputs from PyTorch 1.13 for qgen's conformance suite.

Writes OUTDIR/manifest.json and .npy files. Each manifest case names an op,
a qgen spec, the inputs and what torch (or, where torch has no such mode,
torch tensor ops or numpy written from docs/semantics.md) returned. The C driver
(test_conformance.c) runs libqgen_rt's reference on the same inputs and
compares bit for bit, with a relative tolerance only for sums.

Float values in the manifest are stored as their uint32 bit patterns so that
nothing is lost in JSON.

Two places where torch 1.13's x86 build contracts a multiply and an add into
an FMA, which docs/semantics.md forbids: the float-zero-point per-channel fake
quant (x * inv + z) and the LSQ backward (z + x * inv). There the generator
keeps only the inputs on which the contracted and the uncontracted results
agree, and records how many it dropped ("fma_filtered").
"""
import json
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
torch.manual_seed(0)
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20261122)
cases = []
F32 = np.float32
SHORT_LENGTHS = list(range(0, 68))
BIG = 1 << 20


def bits(v):
    return [int(b) for b in np.asarray(v, dtype=F32).reshape(-1).view(np.uint32)]


_saved = {}


def save(name, arr):
    arr = np.ascontiguousarray(arr)
    path = name + ".npy"
    np.save(os.path.join(OUT, path), arr)
    _saved[name] = arr
    return path


def f32(v):
    return float(F32(v))


TORCH_DTYPE = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
NP_DTYPE = {"quint8": np.uint8, "qint8": np.int8, "qint16": np.int16, "qint32": np.int32}


# ---- input construction ---------------------------------------------------


def ulp_steps(v, k):
    """v moved k ulps (k may be negative), elementwise."""
    out = v.copy()
    direction = F32(np.inf) if k > 0 else F32(-np.inf)
    for _ in range(abs(k)):
        out = np.nextafter(out, direction).astype(F32)
    return out


def edge_inputs(s, z, qmin, qmax, n_random):
    """Ties and k+0.5 +-1,2 ulp, exact grid points, saturation at both ends,
    zeros and tiny values, then random values across the range."""
    s64 = float(F32(s))
    lo, hi = qmin - z - 4, qmax - z + 4
    if hi - lo > 1200:
        ks = np.concatenate([np.arange(lo, lo + 300), np.arange(hi - 300, hi), rng.integers(lo, hi, 600)])
    else:
        ks = np.arange(lo, hi, dtype=np.int64)
    grid = (ks * s64).astype(F32)
    ties = ((ks + 0.5) * s64).astype(F32)
    parts = [grid, ties] + [ulp_steps(ties, d) for d in (-2, -1, 1, 2)]
    span = (qmax - qmin) * s64
    sat = np.array([span * m for m in (1, 1.5, 2, 10, 1000)], dtype=F32)
    parts += [sat, -sat, np.array([0.0, -0.0, 1e-38, -1e-38, 1e-45, -1e-45], dtype=F32)]
    parts.append(rng.normal(0, span / 4, n_random).astype(F32))
    x = np.concatenate(parts).astype(F32)
    inv = F32(1) / F32(s)
    keep = np.abs(x.astype(np.float64) * float(inv)) < 2.0**31
    x = x[keep]
    return rng.permutation(x)


def sized(x, n):
    """x repeated or cut to exactly n elements."""
    reps = -(-n // max(len(x), 1))
    return np.tile(x, reps)[:n].astype(F32)


def segments_array(x):
    """Concatenation of prefixes of lengths 0..67 of x (so each length is
    computed by torch on its own), then the list of lengths."""
    return np.concatenate([x[:n] for n in SHORT_LENGTHS]).astype(F32), SHORT_LENGTHS


# ---- per-tensor fake quant, quantize, dequantize, backward ----------------


def spec_pt(name, dtype, qmin, qmax, reduce_range=False, qscheme="per_tensor_affine", **extra):
    sp = {"name": name, "dtype": dtype, "qscheme": qscheme, "quant_min": qmin, "quant_max": qmax}
    if reduce_range:
        sp["reduce_range"] = True
    sp.update(extra)
    return sp


def torch_fq_pt(x, s, z, qmin, qmax):
    y, m = torch.ops.aten.fake_quantize_per_tensor_affine_cachemask(torch.from_numpy(x), float(F32(s)), int(z), qmin, qmax)
    return y.numpy(), m.numpy().astype(np.uint8)


def packed(mask_u8):
    return np.packbits(mask_u8.astype(np.uint8), bitorder="little")


def per_tensor_config(name, dtype, s, z, qmin, qmax, big, reduce_range=False, given=None):
    gmin, gmax = given if given else (qmin, qmax)
    spec = spec_pt(name, dtype, gmin, gmax, reduce_range)
    base = edge_inputs(s, z, qmin, qmax, 3000)
    xs, lengths = segments_array(base)
    ys, ms = [], []
    off = 0
    for n in lengths:  # torch on each length on its own
        y, m = torch_fq_pt(xs[off:off + n].copy(), s, z, qmin, qmax)
        ys.append(y)
        ms.append(m)
        off += n
    y = np.concatenate(ys).astype(F32)
    m = np.concatenate(ms).astype(np.uint8)
    qp = {"scale": bits([s]), "zero_point": [int(z)]}
    xf, yf, mf = save(name + "_x", xs), save(name + "_y", y), save(name + "_m", m)
    cases.append(dict(op="fake_quant", id=name, spec=spec, x=xf, y=yf, mask=mf, segments=lengths, **qp))
    # Packed masks per segment, LSB first.
    off, packs = 0, []
    for n in lengths:
        packs.append(packed(m[off:off + n]))
        off += n
    spec_c = dict(spec, compat_mask=True)
    cases.append(dict(op="fake_quant", id=name + "_packed", spec=spec_c, x=xf, y=yf,
                      mask=save(name + "_mp", np.concatenate(packs).astype(np.uint8)), segments=lengths, **qp))
    # Backward: dx = mask ? dy : 0 (torch's dy * mask, with +0.0 where masked).
    dy = rng.normal(0, 1, len(xs)).astype(F32)
    dx_torch = (torch.from_numpy(dy) * torch.from_numpy(m.astype(bool))).numpy()
    dx = np.where(m.astype(bool), dy, F32(0)).astype(F32)
    assert np.array_equal(dx_torch, dx), "torch backward differs in value"
    cases.append(dict(op="fake_quant_backward", id=name + "_bw", spec=spec, dy=save(name + "_dy", dy), mask=mf,
                      dx=save(name + "_dx", dx), segments=lengths))
    cases.append(dict(op="fake_quant_backward", id=name + "_bw_packed", spec=spec_c, dy=name + "_dy.npy",
                      mask=name + "_mp.npy", dx=name + "_dx.npy", segments=lengths))
    # Quantize / dequantize. torch.quantize_per_tensor has quint8, qint8 and
    # qint32 but always clamps to the dtype's full range; for qint16 and for
    # narrower ranges q is read back from torch's fake-quant output instead:
    # q - z = rint(y / s), exact for these ranges.
    full = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}
    if dtype in TORCH_DTYPE and full[dtype] == (qmin, qmax):
        qt = torch.quantize_per_tensor(torch.from_numpy(xs), float(F32(s)), int(z), TORCH_DTYPE[dtype])
        q = qt.int_repr().numpy().astype(NP_DTYPE[dtype])
        dq = qt.dequantize().numpy()
    else:
        q = (np.rint(y.astype(np.float64) / float(F32(s))) + z).astype(NP_DTYPE[dtype])
        if dtype in TORCH_DTYPE:
            dq = torch.from_numpy(q.astype(np.int64) - z).float().mul(float(F32(s))).numpy()
        else:
            dq = y
    qf = save(name + "_q", q)
    cases.append(dict(op="quantize", id=name + "_q", spec=spec, x=xf, q=qf, segments=lengths, **qp))
    cases.append(dict(op="dequantize", id=name + "_dq", spec=spec, q=qf, x=save(name + "_dqx", dq), segments=lengths,
                      **qp))
    if big:
        xb = sized(np.concatenate([base, rng.normal(0, (qmax - qmin) * s / 3, BIG).astype(F32)]), BIG)
        keep = np.abs(xb.astype(np.float64) * float(F32(1) / F32(s))) < 2.0**31
        xb = xb[keep]
        yb, mb = torch_fq_pt(xb, s, z, qmin, qmax)
        cases.append(dict(op="fake_quant", id=name + "_1M", spec=spec, x=save(name + "_xb", xb), y=save(name + "_yb", yb),
                          mask=save(name + "_mb", mb), segments=[len(xb)], **qp))


per_tensor_config("pt_quint8", "quint8", 0.0371, 3, 0, 255, big=True)
per_tensor_config("pt_qint8_pow2", "qint8", 0.0625, 0, -128, 127, big=True)
per_tensor_config("pt_quint8_rr", "quint8", 0.1, 64, 0, 127, big=False, reduce_range=True, given=(0, 255))
per_tensor_config("pt_qint8_rr", "qint8", 0.02, -5, -64, 63, big=False, reduce_range=True, given=(-128, 127))
per_tensor_config("pt_qint16", "qint16", 0.001, 0, -32768, 32767, big=True)
per_tensor_config("pt_qint8_custom", "qint8", 0.00214854861, 0, -100, 100, big=False)
per_tensor_config("pt_qint32", "qint32", 0.001, 0, -(2**31), 2**31 - 1, big=False)


# ---- other roundings and the division scale op ----------------------------
# torch has no mode for these; the reference is torch tensor ops spelling the
# documented formula (Horizon: clamp(floor(x / s + 0.5)) * s), or numpy.


def mode_config(name, dtype, s, z, qmin, qmax, rounding, scale_op, extra_x=None):
    spec = spec_pt(name, dtype, qmin, qmax, rounding=rounding, scale_op=scale_op)
    x = edge_inputs(s, z, qmin, qmax, 3000)
    if extra_x is not None:
        x = np.concatenate([extra_x, x]).astype(F32)
    xt = torch.from_numpy(x)
    s32 = float(F32(s))
    t = xt / s32 if scale_op == "div" else xt * float(F32(1) / F32(s))
    if rounding == "half_up":
        r = torch.floor(t + 0.5)
    elif rounding == "half_even":
        r = torch.round(t)
    else:  # half_away, exactly: trunc, then step away when |frac| >= 0.5
        tn = t.numpy()
        tr = np.trunc(tn)
        r = torch.from_numpy((tr + np.sign(tn) * (np.abs(tn - tr) >= 0.5)).astype(F32))
    v = r.double() + z
    m = ((v >= qmin) & (v <= qmax)).numpy().astype(np.uint8)
    q = torch.clamp(v, qmin, qmax)
    y = ((q - z) * s32).float().numpy()
    qp = {"scale": bits([s]), "zero_point": [int(z)]}
    xf = save(name + "_x", x)
    cases.append(dict(op="fake_quant", id=name, spec=spec, x=xf, y=save(name + "_y", y), mask=save(name + "_m", m),
                      segments=[len(x)], source="torch tensor ops" if rounding != "half_away" else "numpy", **qp))
    cases.append(dict(op="quantize", id=name + "_q", spec=spec, x=xf,
                      q=save(name + "_q", q.numpy().astype(NP_DTYPE[dtype])), segments=[len(x)], **qp))


# The case docs/semantics.md names, where x * (1/s) and x / s round differently.
div_case = np.array([0.273939937], dtype=F32)
s_div = F32(0.00214854861)
cand = rng.uniform(-0.3, 0.3, 400000).astype(F32)
differs = np.rint(cand * (F32(1) / s_div)) != np.rint(cand / s_div)
div_extra = np.concatenate([div_case, cand[differs][:500]]).astype(F32)
assert np.rint(div_case * (F32(1) / s_div))[0] != np.rint(div_case / s_div)[0]
mode_config("horizon_qint8", "qint8", 0.0625, 0, -128, 127, "half_up", "div")
mode_config("horizon_qint16", "qint16", 0.00214854861, 0, -32768, 32767, "half_up", "div", div_extra)
mode_config("div_even_quint8", "quint8", 0.00214854861, 7, 0, 255, "half_even", "div", div_extra)
mode_config("mulinv_even_quint8", "quint8", 0.00214854861, 7, 0, 255, "half_even", "mul_inv", div_extra)
mode_config("away_qint8", "qint8", 0.0625, 0, -128, 127, "half_away", "mul_inv")


# ---- per channel -------------------------------------------------------------


def layout(shape, axis):
    axis = axis % len(shape)
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64)) if axis + 1 < len(shape) else 1
    return shape[axis], inner


def per_channel_config(name, dtype, qscheme, shape, axis, qmin, qmax):
    ch, inner = layout(shape, axis)
    scales = (rng.uniform(0.002, 0.05, ch)).astype(F32)
    if qscheme == "per_channel_symmetric":
        zps = np.zeros(ch, dtype=np.int64)
    else:
        zps = rng.integers(qmin, qmax + 1, ch)
    spec = {"name": name, "dtype": dtype, "qscheme": qscheme, "ch_axis": axis, "channel_len": ch,
            "quant_min": qmin, "quant_max": qmax}
    n = int(np.prod(shape))
    # Per element, values around its own channel's grid, ties included.
    x = np.empty(shape, dtype=F32)
    xv = np.moveaxis(x, axis, 0)
    for c in range(ch):
        e = edge_inputs(scales[c], zps[c], qmin, qmax, 200)
        xv[c] = sized(e, xv[c].size).reshape(xv[c].shape)
    xt = torch.from_numpy(x)
    st, zt = torch.from_numpy(scales), torch.from_numpy(zps.astype(np.int32))
    y, m = torch.ops.aten.fake_quantize_per_channel_affine_cachemask(xt, st, zt, axis % len(shape), qmin, qmax)
    qp = {"scale": bits(scales), "zero_point": [int(v) for v in zps], "channels": ch, "inner": inner}
    xf = save(name + "_x", x.reshape(-1))
    cases.append(dict(op="fake_quant", id=name, spec=spec, x=xf, y=save(name + "_y", y.numpy().reshape(-1)),
                      mask=save(name + "_m", m.numpy().astype(np.uint8).reshape(-1)), segments=[n], **qp))
    if dtype in TORCH_DTYPE:
        qt = torch.quantize_per_channel(xt, st.double(), torch.from_numpy(zps), axis % len(shape), TORCH_DTYPE[dtype])
        q = qt.int_repr().numpy().reshape(-1)
        qf = save(name + "_q", q)
        cases.append(dict(op="quantize", id=name + "_q", spec=spec, x=xf, q=qf, segments=[n], **qp))
        cases.append(dict(op="dequantize", id=name + "_dq", spec=spec, q=qf,
                          x=save(name + "_dqx", qt.dequantize().numpy().reshape(-1)), segments=[n], **qp))


per_channel_config("pc_qint8_sym_axis0", "qint8", "per_channel_symmetric", (64, 16384), 0, -128, 127)
per_channel_config("pc_quint8_last", "quint8", "per_channel_affine", (1000, 3), -1, 0, 255)
per_channel_config("pc_quint8_inner", "quint8", "per_channel_affine", (4, 3, 7), 1, 0, 255)
per_channel_config("pc_qint8_len1", "qint8", "per_channel_affine", (2, 1, 5, 5), 1, -128, 127)
per_channel_config("pc_qint16_last", "qint16", "per_channel_symmetric", (50, 64), 1, -32768, 32767)


def float_qparams_config(name, shape, axis):
    ch, inner = layout(shape, axis)
    scales = rng.uniform(0.005, 0.05, ch).astype(F32)
    zf = rng.uniform(0, 200, ch).astype(F32)
    x = np.empty(shape, dtype=F32)
    xv = np.moveaxis(x, axis, 0)
    for c in range(ch):
        xv[c] = rng.normal(0, 2, xv[c].shape).astype(F32)
    # Drop elements where torch's contracted fma(x, inv, z) rounds otherwise
    # than fl(fl(x * inv) + z): replace them by values that agree.
    inv = (F32(1) / scales).astype(F32)
    shp = [1] * len(shape)
    shp[axis] = ch
    invb, zb = inv.reshape(shp), zf.reshape(shp)
    plain = np.rint((x * invb).astype(F32) + zb)
    fused = np.rint((x.astype(np.float64) * invb.astype(np.float64) + zb.astype(np.float64)).astype(F32))
    bad = plain != fused
    filtered = int(bad.sum())
    x[bad] = 0.0
    y, m = torch.ops.aten.fake_quantize_per_channel_affine_cachemask(
        torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zf), axis, 0, 255)
    spec = {"name": name, "dtype": "quint8", "qscheme": "per_channel_affine_float_qparams", "ch_axis": axis,
            "channel_len": ch, "observer": {"type": "per_channel_minmax"}}
    cases.append(dict(op="fake_quant", id=name, spec=spec, x=save(name + "_x", x.reshape(-1)),
                      y=save(name + "_y", y.numpy().reshape(-1)), mask=save(name + "_m", m.numpy().astype(np.uint8).reshape(-1)),
                      segments=[x.size], scale=bits(scales), zero_point=[0] * ch, zero_point_float=bits(zf), channels=ch,
                      inner=inner, fma_filtered=filtered))


float_qparams_config("fqp_quint8_axis0", (8, 4999), 0)
float_qparams_config("fqp_quint8_axis1", (300, 5), 1)


# ---- observers ---------------------------------------------------------------
O = torch.ao.quantization.observer
QS = {"per_tensor_affine": torch.per_tensor_affine, "per_tensor_symmetric": torch.per_tensor_symmetric,
      "per_channel_affine": torch.per_channel_affine, "per_channel_symmetric": torch.per_channel_symmetric,
      "per_channel_affine_float_qparams": torch.per_channel_affine_float_qparams}
OBS_CLASS = {"minmax": O.MinMaxObserver, "moving_average_minmax": O.MovingAverageMinMaxObserver,
             "per_channel_minmax": O.PerChannelMinMaxObserver,
             "moving_average_per_channel_minmax": O.MovingAveragePerChannelMinMaxObserver}


def observer_config(name, obs_type, dtype, qscheme, batches, qrange=None, reduce_range=False, averaging=None,
                    axis=0, channel_len=1):
    kw = dict(dtype=TORCH_DTYPE["qint32" if dtype == "qint16" else dtype], qscheme=QS[qscheme], reduce_range=reduce_range)
    spec = {"name": name, "dtype": dtype, "qscheme": qscheme, "observer": {"type": obs_type}}
    if qrange:
        kw.update(quant_min=qrange[0], quant_max=qrange[1])
        spec.update(quant_min=qrange[0], quant_max=qrange[1])
    if reduce_range:
        spec["reduce_range"] = True
    if averaging is not None:
        kw["averaging_constant"] = averaging
        spec["observer"]["averaging_constant"] = averaging
    if "per_channel" in obs_type:
        kw["ch_axis"] = axis
        spec.update(ch_axis=axis, channel_len=channel_len)
    obs = OBS_CLASS[obs_type](**kw)
    steps = []
    for i, b in enumerate(batches):
        obs(torch.from_numpy(b))
        s, z = obs.calculate_qparams()
        ch, inner = layout(b.shape, axis) if "per_channel" in obs_type else (1, 1)
        steps.append(dict(x=save("%s_b%d" % (name, i), b.reshape(-1)), inner=inner, min=bits(obs.min_val),
                          max=bits(obs.max_val), scale=bits(s.numpy()),
                          zero_point=[int(v) for v in z.numpy()] if qscheme != "per_channel_affine_float_qparams" else [],
                          zero_point_float=bits(z.numpy()) if qscheme == "per_channel_affine_float_qparams" else []))
    cases.append(dict(op="observe", id=name, spec=spec, steps=steps))


def batch(shape, loc=0.0, sd=2.0):
    return rng.normal(loc, sd, shape).astype(F32)


pt_batches = [batch((0,)), batch((67,), 0.5, 3), batch((1000,), -1, 1), batch((5,), 4, 0.1), batch((3, 7), 0, 10)]
for dt, qs, qr, rr in [("quint8", "per_tensor_affine", None, False), ("qint8", "per_tensor_symmetric", None, False),
                       ("quint8", "per_tensor_symmetric", None, False), ("quint8", "per_tensor_symmetric", (0, 255), False),
                       ("qint8", "per_tensor_affine", None, True), ("quint8", "per_tensor_affine", (0, 255), True),
                       ("qint16", "per_tensor_affine", (-32768, 32767), False),
                       ("qint8", "per_tensor_affine", (-100, 27), False)]:
    tag = "%s_%s%s%s" % (dt, qs.split("_")[-1], "_rr" if rr else "", "_custom" if qr else "")
    observer_config("obs_minmax_" + tag, "minmax", dt, qs, pt_batches, qr, rr)
    observer_config("obs_ma_" + tag, "moving_average_minmax", dt, qs, pt_batches, qr, rr)
observer_config("obs_ma_quint8_c03", "moving_average_minmax", "quint8", "per_tensor_affine", pt_batches, averaging=0.3)
observer_config("obs_minmax_const", "minmax", "quint8", "per_tensor_affine", [np.full(3, 2.0, F32)])
pc_batches0 = [batch((3, 50)), batch((3, 1)), batch((3, 9), 1, 5)]
pc_batches_last = [batch((40, 64)), batch((7, 64), 2, 1)]
pc_batches_inner = [batch((2, 5, 4, 4)), batch((1, 5, 4, 4), -1, 3)]
for obs_type in ("per_channel_minmax", "moving_average_per_channel_minmax"):
    short = "pcminmax" if obs_type == "per_channel_minmax" else "pcma"
    observer_config("obs_%s_qint8_sym_axis0" % short, obs_type, "qint8", "per_channel_symmetric", pc_batches0, axis=0,
                    channel_len=3)
    observer_config("obs_%s_quint8_aff_last" % short, obs_type, "quint8", "per_channel_affine", pc_batches_last,
                    axis=1, channel_len=64)
    observer_config("obs_%s_qint8_aff_inner_rr" % short, obs_type, "qint8", "per_channel_affine", pc_batches_inner,
                    reduce_range=True, axis=1, channel_len=5)
    observer_config("obs_%s_quint8_len1" % short, obs_type, "quint8", "per_channel_affine", [batch((1, 30)), batch((1, 3))],
                    axis=0, channel_len=1)
observer_config("obs_pcminmax_floatqp", "per_channel_minmax", "quint8", "per_channel_affine_float_qparams",
                pc_batches0, axis=0, channel_len=3)


# ---- histogram (single batch, integer min and max: torch's int() cannot bite)


def histogram_config(name, dtype, qscheme, x, reduce_range=False):
    obs = O.HistogramObserver(bins=2048, dtype=TORCH_DTYPE[dtype], qscheme=QS[qscheme], reduce_range=reduce_range)
    obs(torch.from_numpy(x))
    s, z = obs.calculate_qparams()
    spec = {"name": name, "dtype": dtype, "qscheme": qscheme, "observer": {"type": "histogram"}}
    if reduce_range:
        spec["reduce_range"] = True
    cases.append(dict(op="histogram", id=name, spec=spec, x=save(name + "_x", x), scale=bits(s.numpy()),
                      zero_point=[int(v) for v in z.numpy()]))


def int_bounded(n, lo, hi, sd):
    x = np.clip(rng.normal((lo + hi) / 2, sd, n), lo, hi).astype(F32)
    x[0], x[1] = lo, hi
    return x


histogram_config("hist_quint8_affine", "quint8", "per_tensor_affine", int_bounded(20000, -4, 7, 1.5))
histogram_config("hist_qint8_sym", "qint8", "per_tensor_symmetric", int_bounded(20000, -6, 6, 1.0))
histogram_config("hist_quint8_rr", "quint8", "per_tensor_affine", int_bounded(5000, 0, 20, 3.0), reduce_range=True)
histogram_config("hist_qint8_affine_outliers", "qint8", "per_tensor_affine",
                 np.concatenate([int_bounded(30000, -2, 2, 0.4), np.array([-50, 80], dtype=F32)]).astype(F32))


# ---- the fused training step: torch's QAT modules themselves ---------------
# FakeQuantize (train_qparams "observer") and FusedMovingAvgObsFakeQuantize
# ("fused_op", get_default_qat_qconfig's default), step by step: outputs,
# masks (the input's gradient), qparams and running min/max after every step.


def record_step(name, i, fq, b, axis, per_channel, compat, switches):
    xt = torch.from_numpy(b.copy()).requires_grad_()
    y = fq(xt)
    y.backward(torch.ones_like(y))
    m = xt.grad.numpy().astype(np.uint8).reshape(-1)
    o = fq.activation_post_process
    inner = layout(b.shape, axis)[1] if per_channel else 1
    return dict(x=save("%s_b%d" % (name, i), b.reshape(-1)), inner=inner,
                y=save("%s_y%d" % (name, i), y.detach().numpy().reshape(-1)),
                mask=save("%s_m%d" % (name, i), packed(m) if compat else m),
                scale=bits(fq.scale.numpy()), zero_point=[int(v) for v in fq.zero_point.numpy()],
                min=bits(o.min_val.numpy()), max=bits(o.max_val.numpy()), observer=switches[0], fake_quant=switches[1])


def set_switches(fq, switches):
    fq.enable_observer() if switches[0] else fq.disable_observer()
    fq.enable_fake_quant() if switches[1] else fq.disable_fake_quant()


def fused_config(name, dtype, qscheme, obs_type, batches, axis=0, qrange=None, reduce_range=False, compat=False):
    kw = dict(observer=OBS_CLASS[obs_type], dtype=TORCH_DTYPE[dtype], qscheme=QS[qscheme], reduce_range=reduce_range)
    spec = {"name": name, "dtype": dtype, "qscheme": qscheme, "observer": {"type": obs_type}, "fast_training": True,
            "compat_mask": compat}
    if qrange:
        kw.update(quant_min=qrange[0], quant_max=qrange[1])
        spec.update(quant_min=qrange[0], quant_max=qrange[1])
    if reduce_range:
        spec["reduce_range"] = True
    per_channel = "per_channel" in obs_type
    if per_channel:
        kw["ch_axis"] = axis
        spec.update(ch_axis=axis, channel_len=batches[0].shape[axis])
    fq = torch.ao.quantization.FakeQuantize(**kw)
    steps = [record_step(name, i, fq, b, axis, per_channel, compat, (True, True)) for i, b in enumerate(batches)]
    cases.append(dict(op="fused_train_step", id=name, spec=spec, steps=steps))


fused_config("fused_act_quint8_rr", "quint8", "per_tensor_affine", "moving_average_minmax",
             [batch((4, 33)), batch((4, 33), 1, 3), batch((2, 10), -2, 0.5), batch((67,), 0, 4)], qrange=(0, 255),
             reduce_range=True)
fused_config("fused_act_quint8_packed", "quint8", "per_tensor_affine", "moving_average_minmax",
             [batch((3, 21)), batch((1, 45), 1, 3), batch((9,), 2, 2)], qrange=(0, 255), compat=True)
fused_config("fused_w_qint8_pc", "qint8", "per_channel_symmetric", "moving_average_per_channel_minmax",
             [batch((6, 3, 3, 3)), batch((6, 3, 3, 3), 0.1, 0.5), batch((6, 3, 3, 3), 0, 2)], axis=0,
             qrange=(-128, 127))


def qat_module(preset):
    """The module a QAT script gets: get_default_qat_qconfig(backend, version)."""
    parts = preset.split(".")
    version = 0 if parts[2] == "v0" else 1
    qc = torch.ao.quantization.get_default_qat_qconfig(parts[1], version)
    return getattr(qc, parts[-1])()


# A stream of its own, so that these runs leave the other cases' data as it was.
qat_rng = np.random.default_rng(20261123)


def varied_batch(shape, kind):
    """A batch of a run: random data of varied scale and offset, or one of the
    shapes of data that move qparams in their own way."""
    sd = float(np.exp(qat_rng.uniform(np.log(0.01), np.log(50.0))))
    x = qat_rng.normal(qat_rng.uniform(-3, 3) * sd, sd, shape).astype(F32)
    if kind == "zeros":
        x.reshape(-1)[::3] = 0.0
    elif kind == "positive":
        x = np.abs(x)
    elif kind == "negative":
        x = -np.abs(x)
    elif kind == "all_zero":
        x = np.zeros(shape, F32)
    elif kind == "tiny":
        x = (x * F32(1e-6)).astype(F32)
    return x


# Observer and fake quant switched as a training script does (torch's
# enable_/disable_observer, enable_/disable_fake_quant); both on at first.
SWITCHES = [(True, True)] * 6 + [(False, True), (True, False), (False, False), (True, True), (False, True),
                                  (True, True)]
KINDS = ["plain", "zeros", "plain", "positive", "negative", "plain", "plain", "tiny", "plain", "zeros", "plain",
         "plain"]


def qat_run(preset, tag, shape, first=None, compat=False):
    name = "qat_%s_%s" % (preset.replace(".", "_"), tag)
    fq = qat_module(preset)
    per_channel = fq.is_per_channel
    spec = {"name": name, "base": preset, "compat_mask": compat}
    if per_channel:
        spec["channel_len"] = shape[0]
    steps = []
    for i, (switches, kind) in enumerate(zip(SWITCHES, KINDS)):
        set_switches(fq, switches)
        b = varied_batch(shape, first if i == 0 and first else kind)
        steps.append(record_step(name, i, fq, b, 0, per_channel, compat, switches))
    cases.append(dict(op="fused_train_step", id=name, spec=spec, steps=steps, module=type(fq).__name__))


for backend in ("fbgemm", "x86", "qnnpack", "onednn"):
    for version in ("", ".v0"):
        act, wt = "torch.%s%s.activation" % (backend, version), "torch.%s%s.weight" % (backend, version)
        qat_run(act, "a", (4, 37))
        qat_run(act, "b", (67,), compat=True)
        qat_run(act, "c", (2, 3, 5, 7), first="positive")
        qat_run(wt, "a", (8, 3, 3, 3))
        qat_run(wt, "b", (5, 1), compat=True)  # channels of one element
        qat_run(wt, "c", (3, 17), first="negative")
        qat_run(wt, "d", (6, 4), first="all_zero")


# ---- LSQ -----------------------------------------------------------------


def lsq_config(name, qscheme, x, scale, zf, qmin, qmax, grad_factor, axis=0):
    per_channel = qscheme.startswith("per_channel")
    shp = [1] * x.ndim
    if per_channel:
        shp[axis] = len(scale)
    inv = (F32(1) / scale).astype(F32).reshape(shp)
    # zero point as torch's backward sees it
    if per_channel:
        zb = np.clip(np.rint(zf), qmin, qmax).astype(F32).reshape(shp)
    else:
        zb = np.trunc(np.clip(zf + F32(0.5), qmin, qmax)).astype(F32).reshape(shp)
    plain = np.rint((zb + (x * inv).astype(F32)).astype(F32))
    fused = np.rint((x.astype(np.float64) * inv.astype(np.float64) + zb.astype(np.float64)).astype(F32))
    bad = plain != fused
    filtered = int(bad.sum())
    x = np.where(bad, F32(0), x).astype(F32)
    xt = torch.from_numpy(x).requires_grad_()
    st = torch.from_numpy(scale.copy()).requires_grad_()
    zt = torch.from_numpy(zf.copy()).requires_grad_()
    dy = rng.normal(0, 1, x.shape).astype(F32)
    if per_channel:
        y = torch._fake_quantize_learnable_per_channel_affine(xt, st, zt, axis, qmin, qmax, grad_factor)
    else:
        y = torch._fake_quantize_learnable_per_tensor_affine(xt, st, zt, qmin, qmax, grad_factor)
    y.backward(torch.from_numpy(dy))
    ch, inner = layout(x.shape, axis) if per_channel else (1, 1)
    spec = {"name": name, "dtype": "quint8" if qmin == 0 else "qint8", "qscheme": qscheme, "quant_min": qmin,
            "quant_max": qmax}
    if per_channel:
        spec.update(ch_axis=axis, channel_len=ch, observer={"type": "per_channel_minmax"})
    dx_select = np.where(xt.grad.numpy() != 0, dy, F32(0)).astype(F32)
    assert np.array_equal(dx_select, xt.grad.numpy()), "torch LSQ dx differs in value from the select"
    cases.append(dict(op="lsq", id=name, spec=spec, x=save(name + "_x", x.reshape(-1)), dy=save(name + "_dy", dy.reshape(-1)),
                      y=save(name + "_y", y.detach().numpy().reshape(-1)), dx=save(name + "_dx", dx_select.reshape(-1)),
                      scale=bits(scale), zero_point_float=bits(zf), channels=ch, inner=inner, grad_factor=bits([grad_factor]),
                      ds=[float(v) for v in st.grad.numpy().astype(np.float64)],
                      dz=[float(v) for v in zt.grad.numpy().astype(np.float64)], fma_filtered=filtered))


for zf0 in (3.3, 4.5, 120.7):
    lsq_config("lsq_pt_quint8_z%s" % str(zf0).replace(".", "_"), "per_tensor_affine", rng.normal(0, 2, 5000).astype(F32),
               np.array([0.02], F32), np.array([zf0], F32), 0, 255, 1.0)
lsq_config("lsq_pt_qint8_g", "per_tensor_affine", rng.normal(0, 2, 3000).astype(F32), np.array([0.03], F32),
           np.array([-3.7], F32), -128, 127, float(F32(1.0 / np.sqrt(3000 * 127))))
lsq_config("lsq_pc_quint8", "per_channel_affine", rng.normal(0, 2, (4, 700)).astype(F32),
           np.array([0.02, 0.01, 0.05, 0.03], F32), np.array([3.3, 4.5, 100.2, 0.0], F32), 0, 255, 1.0)
lsq_config("lsq_pc_qint8_last", "per_channel_affine", rng.normal(0, 2, (300, 3)).astype(F32),
           np.array([0.02, 0.01, 0.05], F32), np.array([-3.5, 2.5, 0.4], F32), -128, 127, 0.5, axis=1)


# ---- presets: torch's QAT qconfigs -----------------------------------------
OBS_NAME = {"MovingAverageMinMaxObserver": "moving_average_minmax",
            "MovingAveragePerChannelMinMaxObserver": "moving_average_per_channel_minmax"}
DT_NAME = {torch.quint8: "quint8", torch.qint8: "qint8"}
QS_NAME = {v: k for k, v in QS.items()}
for backend, version in [(b, v) for b in ("fbgemm", "x86", "qnnpack", "onednn") for v in (1, 0)]:
    qc = torch.ao.quantization.get_default_qat_qconfig(backend, version)
    for role, factory in (("activation", qc.activation), ("weight", qc.weight)):
        fq = factory()
        o = fq.activation_post_process
        preset = "torch.%s%s.%s" % (backend, "" if version else ".v0", role)
        cases.append(dict(op="preset", id=preset, preset=preset,
                          dtype=DT_NAME[fq.dtype], qscheme=QS_NAME[fq.qscheme], quant_min=int(fq.quant_min),
                          quant_max=int(fq.quant_max), observer=OBS_NAME[type(o).__name__],
                          averaging_constant=bits([o.averaging_constant]), eps=bits([float(o.eps)]),
                          ch_axis=int(getattr(fq, "ch_axis", 0)), fused=type(fq).__name__ == "FusedMovingAvgObsFakeQuantize"))


# ---- the PTQ conv bias case ----------------------------------------------------
import torch.ao.nn.quantized as nnq  # noqa: E402

ENGINE = torch.backends.quantized.engine  # Debian builds torch without fbgemm
s_in, s_w, s_out = F32(0.02), F32(0.01), F32(1 / 510.0)
conv = nnq.Conv2d(5, 2, 3)
conv.set_weight_bias(torch.quantize_per_tensor(torch.zeros(2, 5, 3, 3), float(s_w), 0, torch.qint8),
                     torch.tensor([0.5, 0.5]))
conv.scale, conv.zero_point = float(s_out), 0
xq = torch.quantize_per_tensor(torch.rand(1, 5, 6, 6), float(s_in), 0, torch.quint8)
yq = conv(xq)
cases.append(dict(op="conv_bias", id="ptq_conv_bias", engine=ENGINE, spec={"name": "conv_out", "dtype": "quint8"},
                  s_in=bits([s_in]), s_w=bits([s_w, s_w]), s_out=bits([s_out]), z_out=0, bias=bits([0.5, 0.5]),
                  out_shape=list(yq.shape), q=[int(v) for v in yq.int_repr().reshape(-1)],
                  y=bits(yq.dequantize().numpy().reshape(-1))))

with open(os.path.join(OUT, "manifest.json.tmp"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f, indent=1)
os.replace(os.path.join(OUT, "manifest.json.tmp"), os.path.join(OUT, "manifest.json"))
print("reference: %d cases written to %s (torch %s)" % (len(cases), OUT, torch.__version__))

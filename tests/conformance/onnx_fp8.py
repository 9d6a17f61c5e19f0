"""Conformance with ONNX Runtime for the fp8 formats: QuantizeLinear and
DequantizeLinear (opset 21) to and from FLOAT8E4M3FN and FLOAT8E5M2, with
saturate on and off, per tensor, per axis and blocked, run by ONNX
Runtime's CPU provider through npm's onnxruntime-node, against qgen's
onnx.fp8_* presets: the reference and the JIT kernels of every ISA this
CPU runs (docs/onnx.md).

onnxruntime-node has no fp8 tensors, so every fp8 value crosses its API as
float32: q through a Cast to FLOAT (exact: each code has its own value but
the NaNs), the DequantizeLinear input as an fp8 initializer of raw codes,
and the fake-quant result as DequantizeLinear(QuantizeLinear(x)). q is
compared as the value of its code, so two NaN codes compare equal; every
other difference is one.

Usage: onnx_fp8.py <onnxruntime-node dir> [work dir]"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_runtime as conf  # noqa: E402  (its layouts and scales)

F32 = np.float32
# ONNX's fp8 element types by value (python3-onnx 1.12 predates their names)
FORMATS = {"fp8_e4m3fn": (17, 3, 7, 448.0, False), "fp8_e5m2": (19, 2, 15, 57344.0, True)}
PRESETS = {"fp8_e4m3fn": "onnx.fp8_e4m3fn", "fp8_e5m2": "onnx.fp8_e5m2"}
ROUNDS = 2


def decode(codes, fmt):
    """The fp8 codes' values, from the OCP definition (not qgen's code)."""
    _, man, bias, _, has_inf = FORMATS[fmt]
    c = codes.astype(np.int64)
    e, m, neg = (c >> man) & ((1 << (7 - man)) - 1), c & ((1 << man) - 1), (c & 0x80) != 0
    v = np.where(e == 0, m * 2.0 ** (1 - bias - man), (2**man + m) * 2.0 ** (e - bias - man))
    mag = c & 0x7F
    if has_inf:
        v = np.where(mag == 0x7C, np.inf, np.where(mag > 0x7C, np.nan, v))
    else:
        v = np.where(mag == 0x7F, np.nan, v)
    return np.where(neg, -v, v).astype(F32)


def model(fmt, shape, axis, block, saturate, qin):
    """q = Cast(QuantizeLinear(x)), fq = DequantizeLinear(QuantizeLinear(x)),
    y = DequantizeLinear(qin), qin and the zero point fp8 initializers."""
    et = FORMATS[fmt][0]
    pshape = conf.param_shape(shape, axis, block)
    attrs = {} if axis is None else {"axis": axis}
    if block is not None:
        attrs["block_size"] = block
    zp = TensorProto(name="zp", data_type=et, dims=pshape, raw_data=bytes(int(np.prod(pshape))))
    w = TensorProto(name="qin", data_type=et, dims=list(shape), raw_data=qin.tobytes())
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q8"], saturate=int(saturate), **attrs),
            helper.make_node("Cast", ["q8"], ["q"], to=TensorProto.FLOAT),
            helper.make_node("DequantizeLinear", ["q8", "scale", "zp"], ["fq"], **attrs),
            helper.make_node("DequantizeLinear", ["qin", "scale", "zp"], ["y"], **attrs),
        ],
        "qdq_fp8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
         helper.make_tensor_value_info("scale", TensorProto.FLOAT, pshape)],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(shape)) for k in ("q", "fq", "y")],
        initializer=[zp, w],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="qgen-conformance")
    m.ir_version = 10
    return m


def data(rng, fmt, shape, axis, block, s):
    """x around each element's fp8 grid: codes' values, ties between
    neighbouring codes and the floats beside them, overflow, specials."""
    n = int(np.prod(shape))
    sc = s[conf.param_index(shape, axis, block)].astype(np.float64)
    codes = rng.integers(0, 256, n)
    v, w = decode(codes, fmt).astype(np.float64), decode(codes + 1, fmt).astype(np.float64)
    with np.errstate(invalid="ignore"):
        tie = np.where(np.isfinite(v) & np.isfinite(w) & (np.sign(v) == np.sign(w)), (v + w) / 2, v)
    mx = FORMATS[fmt][3]
    kind = rng.random(n)
    t = np.where(kind < 0.25, v, tie)
    t = np.where((kind >= 0.7) & (kind < 0.8), rng.choice([-1, 1], n) * mx * rng.uniform(0.95, 1.2, n), t)
    t = np.where(kind >= 0.8, rng.uniform(-mx, mx, n) * rng.choice([1.0, 1e-3], n), t)
    with np.errstate(invalid="ignore", over="ignore"):
        x = (t * sc).astype(F32)
    near = (kind >= 0.5) & (kind < 0.7)
    x[near] = np.nextafter(x[near], np.where(rng.random(near.sum()) < 0.5, -np.inf, np.inf).astype(F32))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4028235e38, -3.4028235e38, 1e-40, -1e-45], F32)
    x[: len(special)] = special
    return x.reshape(shape)


def same_values(what, got, want, x):
    """Bit for bit, NaN equal to NaN."""
    g, w = np.ravel(got).astype(F32), np.ravel(want).astype(F32)
    bad = np.nonzero((g.view(np.uint32) != w.view(np.uint32)) & ~(np.isnan(g) & np.isnan(w)))[0]
    return [f"{what}[{i}]: input {np.ravel(x)[i]!r}: got {g[i]!r}, ONNX Runtime {w[i]!r}" for i in bad[:5]] + (
        [f"{what}: {len(bad)} elements differ"] if len(bad) > 5 else [])


def ort_deviation(fmt, x, q_ref, q_ort):
    """Where ONNX Runtime 1.30's saturate=0 conversion departs from the ONNX
    text, which qgen follows (docs/onnx.md): finite values that overflow
    e4m3fn become NaN in ONNX but +-448 in ORT when |x / s| is in [480, 496),
    and e5m2 overflow that rounds to 2^16 becomes +-inf in ONNX but NaN in
    ORT. Only those exact answers are excused."""
    v = decode(q_ref, fmt).reshape(x.shape)
    finite = np.isfinite(x)
    if fmt == "fp8_e4m3fn":
        return finite & np.isnan(v) & (np.abs(q_ort) == 448.0) & (np.signbit(q_ort) == np.signbit(x))
    return finite & np.isinf(v) & np.isnan(q_ort)


def main():
    dirs = conf.work_dir("onnx_fp8", "qgen-onnx-fp8-")
    if not dirs:
        return 1
    ort_dir, work = dirs
    rng = np.random.default_rng(20261124)
    cases, manifest = [], []
    for fmt in FORMATS:
        for saturate in (True, False):
            for lname, shape, axis, block in conf.LAYOUTS:
                pdims = conf.param_shape(shape, axis, block)
                for r in range(ROUNDS):
                    tag = f"{fmt}_{'sat' if saturate else 'nosat'}_{lname}_{r}"
                    s = conf.scales(rng, int(np.prod(pdims)))
                    x = data(rng, fmt, shape, axis, block, s)
                    qin = rng.integers(0, 256, shape).astype(np.uint8)
                    qin.reshape(-1)[:256] = np.arange(min(256, qin.size))  # every code once, where it fits
                    path = os.path.join(work, f"{tag}.onnx")
                    onnx.save(model(fmt, shape, axis, block, saturate, qin), path)
                    files = {k: os.path.join(work, f"{tag}.{k}") for k in ("x", "scale", "q", "fq", "y")}
                    x.tofile(files["x"]), s.tofile(files["scale"])
                    manifest.append({
                        "model": path,
                        "inputs": {"x": {"type": "float32", "dims": list(shape), "file": files["x"]},
                                   "scale": {"type": "float32", "dims": pdims, "file": files["scale"]}},
                        "outputs": {k: files[k] for k in ("q", "fq", "y")},
                    })
                    cases.append((tag, fmt, saturate, shape, axis, block, s, x, qin, files))
    if not conf.run_ort(ort_dir, work, manifest):
        return 1
    failures, compared, overflowed = [], 0, 0
    excused, told_apart = dict.fromkeys(FORMATS, 0), 0
    for tag, fmt, saturate, shape, axis, block, s, x, qin, files in cases:
        q_ort, fq_ort, y_ort = (np.fromfile(files[k], F32).reshape(shape) for k in ("q", "fq", "y"))
        inner = 1 if axis is None else int(np.prod(shape[axis + 1:]))
        zeros = np.zeros(s.size, np.int32)
        overflowed += int(np.count_nonzero(np.isinf(q_ort) | np.isnan(q_ort)))
        dev, want_q, want_fq = np.zeros(shape, bool), q_ort, fq_ort
        for ops in conf.qgen_ops(PRESETS[fmt], shape, axis, block, symmetric=True, saturate=saturate):
            q = ops.quantize(x, s, zeros, inner=inner)
            fq, _ = ops.fake_quant(x, s, zeros, inner=inner)
            y = ops.dequantize(qin, s, zeros, inner=inner)
            qv = decode(q, fmt).reshape(shape)
            if ops.isa == "reference" and not saturate:
                # where ORT departs from the ONNX text, the kernels answer
                # to the reference instead
                dev = ort_deviation(fmt, x, q, q_ort)
                excused[fmt] += int(dev.sum())
                want_q, want_fq = np.where(dev, qv, q_ort), np.where(dev, fq, fq_ort)
            diffs = (same_values("q", qv, want_q, x) + same_values("fake_quant", fq, want_fq, x) +
                     same_values("y", y, y_ort, qin))
            compared += 3
            if diffs:
                failures.append(f"{tag} ({ops.isa}):\n  " + "\n  ".join(diffs))
        # the control: x * fl(1/s) instead of x / s must differ somewhere
        (ref,) = conf.qgen_ops(PRESETS[fmt], shape, axis, block, symmetric=True, reference_only=True,
                               saturate=saturate, scale_op="mul_inv")
        qc = decode(ref.quantize(x, s, zeros, inner=inner), fmt).reshape(shape)
        told_apart += int(np.count_nonzero((qc != q_ort) & ~(np.isnan(qc) & np.isnan(q_ort)) & ~dev))
    print(f"onnx_fp8: with saturate=0, {excused['fp8_e4m3fn']} e4m3fn overflows where ONNX Runtime answers +-448 "
          f"and {excused['fp8_e5m2']} e5m2 overflows where it answers NaN are compared with qgen's reference "
          "instead (the ONNX text says NaN and +-inf, which qgen computes)")
    print(f"onnx_fp8: control scale_op mul_inv: {told_apart} elements differ from ONNX Runtime")
    if told_apart == 0:
        failures.append("control scale_op mul_inv: no element differs; expected the data to tell it from x / s")
    for f in failures:
        print(f"onnx_fp8: {f}", file=sys.stderr)
    print(f"onnx_fp8: {len(cases)} cases, {compared} comparisons of qgen (reference and kernels) with ONNX Runtime, "
          f"{overflowed} NaN or inf results of ONNX Runtime among them, {len(failures)} with differences")
    if overflowed == 0:
        print("onnx_fp8: no NaN or inf from ONNX Runtime; expected the data to reach overflow and NaN", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

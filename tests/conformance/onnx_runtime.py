"""Conformance with ONNX Runtime: QuantizeLinear, DequantizeLinear and
DynamicQuantizeLinear (opset 21) run by ONNX Runtime's CPU provider, as
npm's onnxruntime-node ships it, against qgen's onnx.* presets (dynamic
quantization with onnx.uint8): the reference functions and the
JIT kernels of every ISA this CPU runs, compared bit for bit
(docs/onnx.md). Models are built with Debian's python3-onnx; the data are
random, of varied scale and zero point, with ties, near-ties, saturation,
infinities, signed zeros and subnormals.

Usage: onnx_runtime.py <onnxruntime-node dir> [work dir]
Exit status 0 when every case agrees, 1 at the first list of differences."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

import qgen

HERE = os.path.dirname(os.path.abspath(__file__))
# ONNX's 4-bit element types (python3-onnx 1.12 predates their names)
INT4, UINT4 = 22, 21
# qgen dtype -> (ONNX element type, numpy dtype, onnxruntime-node type name)
DTYPES = {
    "qint8": (TensorProto.INT8, np.int8, "int8"),
    "quint8": (TensorProto.UINT8, np.uint8, "uint8"),
    "qint16": (TensorProto.INT16, np.int16, "int16"),
    "quint16": (TensorProto.UINT16, np.uint16, "uint16"),
    # 4-bit tensors cannot cross onnxruntime-node's API: the graph casts
    # them from and to 8 bits (exact for 4-bit values)
    "qint4": (INT4, np.int8, "int8"),
    "quint4": (UINT4, np.uint8, "uint8"),
}
PRESETS = {"qint8": "onnx.int8", "quint8": "onnx.uint8", "qint16": "onnx.int16", "quint16": "onnx.uint16",
           "qint4": "onnx.int4", "quint4": "onnx.uint4"}
IO_TYPE = {INT4: TensorProto.INT8, UINT4: TensorProto.UINT8}
# (name, shape, axis, block_size): per tensor, per axis along the first, a
# middle and the last dimension, and blocked (qgen's per-group qschemes)
# along each, with a short last block where the axis is not a multiple
LAYOUTS = [("tensor", (1031,), None, None), ("axis0", (4, 67), 0, None), ("axis1", (2, 5, 23), 1, None),
           ("last", (3, 7, 9), 2, None), ("block0", (10, 6), 0, 4), ("block1", (2, 11, 5), 1, 3),
           ("block_last", (3, 40), 1, 8), ("block_last_short", (4, 37), 1, 16)]
ROUNDS = 3  # random draws of scales, zero points and data per dtype and layout
HOST_ISAS = ("scalar", "avx2", "avx512")
F32 = np.float32


def param_shape(shape, axis, block):
    """The scale's shape: none per tensor, the axis per axis, the input's
    shape with the axis in blocks when blocked."""
    if axis is None:
        return []
    if block is None:
        return [shape[axis]]
    return [-(-d // block) if k == axis else d for k, d in enumerate(shape)]


def model(dtype, shape, axis, block):
    """x -> QuantizeLinear -> q and qin -> DequantizeLinear -> y, with the
    scale and zero point as inputs (so nothing is folded ahead of the run)."""
    et = DTYPES[dtype][0]
    io = IO_TYPE.get(et, et)
    pshape = param_shape(shape, axis, block)
    attrs = {} if axis is None else {"axis": axis}
    if block is not None:
        attrs["block_size"] = block
    casts = []
    names = {"qin": "qin", "zero_point": "zero_point", "q": "q"}
    if io != et:
        names = {"qin": "qin4", "zero_point": "zp4", "q": "q4"}
        casts = [helper.make_node("Cast", ["qin"], ["qin4"], to=et), helper.make_node("Cast", ["zero_point"], ["zp4"], to=et)]
    graph = helper.make_graph(
        casts + [
            helper.make_node("QuantizeLinear", ["x", "scale", names["zero_point"]], [names["q"]], **attrs),
            helper.make_node("DequantizeLinear", [names["qin"], "scale", names["zero_point"]], ["y"], **attrs),
        ] + ([helper.make_node("Cast", ["q4"], ["q"], to=io)] if io != et else []),
        "qdq",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
            helper.make_tensor_value_info("qin", io, list(shape)),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, pshape),
            helper.make_tensor_value_info("zero_point", io, pshape),
        ],
        [helper.make_tensor_value_info("q", io, list(shape)), helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="qgen-conformance")
    m.ir_version = 10  # opset 21's IR; python3-onnx 1.12 would write 8
    return m


def packed_model(et, packed, n):
    """y = DequantizeLinear(w) of a 4-bit initializer whose raw bytes are
    qgen's packing: ONNX Runtime reads them by ONNX's nibble order."""
    w = TensorProto(name="w", data_type=et, dims=[n], raw_data=packed.tobytes())  # make_tensor knows no 4-bit types
    one = helper.make_tensor("s", TensorProto.FLOAT, [], [1.0])
    graph = helper.make_graph([helper.make_node("DequantizeLinear", ["w", "s"], ["y"])], "packed", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], initializer=[w, one])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="qgen-conformance")
    m.ir_version = 10
    return m


def dynamic_model(shape):
    """x -> DynamicQuantizeLinear -> (y, y_scale, y_zero_point): uint8, per
    tensor, the scale and zero point from x's own min/max."""
    graph = helper.make_graph(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zero_point"])],
        "dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, list(shape)),
         helper.make_tensor_value_info("y_scale", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y_zero_point", TensorProto.UINT8, [])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="qgen-conformance")
    m.ir_version = 10
    return m


def dynamic_data(rng, n, kind):
    """Data for DynamicQuantizeLinear: of one sign or both, of a random
    magnitude and offset, a constant tensor, with or without exact zeros."""
    mag = 10.0 ** rng.uniform(-4, 3)
    x = rng.standard_normal(n) * mag
    if kind == 1:
        x = np.abs(x) + mag
    elif kind == 2:
        x = -np.abs(x) - mag
    elif kind == 3:
        x = np.full(n, rng.uniform(-1, 1) * mag)
    elif kind == 4:
        x = x + rng.uniform(-5, 5) * mag
        x[:: 7] = 0.0
    elif kind == 5:
        x = np.zeros(n)
    return x.astype(F32)


def scales(rng, channels):
    """Powers of two (so x = (k + 0.5) * s is an exact tie of x / s) and
    arbitrary floats over eight decades, `channels` values in all."""
    out = np.empty(channels, F32)
    for c in range(channels):
        if rng.random() < 0.4:
            out[c] = F32(2.0 ** -int(rng.integers(-2, 14)))
        else:
            out[c] = F32(10.0 ** rng.uniform(-5, 3))
    return out


def param_index(shape, axis, block):
    """Each element's index into the flattened scale tensor."""
    n = int(np.prod(shape))
    if axis is None:
        return np.zeros(n, np.int64)
    idx = np.indices(shape).reshape(len(shape), -1)
    if block is None:
        return idx[axis]
    idx[axis] //= block
    return np.ravel_multi_index(tuple(idx), param_shape(shape, axis, block))


def data(rng, shape, axis, block, s, z, qmin, qmax):
    """x of `shape` whose element with parameters c is drawn around c's
    grid: uniform over the range and past it, ties and their neighbours,
    small values, and special values."""
    n = int(np.prod(shape))
    ch = param_index(shape, axis, block)
    sc, zc = s[ch].astype(np.float64), z[ch].astype(np.float64)
    lo, hi = qmin - zc, qmax - zc
    kind = rng.random(n)
    t = rng.uniform(lo - 20, hi + 20)
    tie = np.floor(rng.uniform(lo - 2, hi + 2)) + 0.5
    t = np.where(kind < 0.35, tie, t)
    t = np.where((kind >= 0.35) & (kind < 0.45), rng.uniform(-3, 3, n), t)
    x = (t * sc).astype(F32)
    near = (kind >= 0.45) & (kind < 0.6)
    x[near] = np.nextafter((tie[near] * sc[near]).astype(F32), np.where(rng.random(near.sum()) < 0.5, -np.inf, np.inf).astype(F32))
    special = np.array([0.0, -0.0, np.inf, -np.inf, 3.4028235e38, -3.4028235e38, 1e30, -1e30, 1e-40, -1e-40, 1.4e-45, -1.4e-45], F32)
    pick = kind >= 0.96
    x[pick] = rng.choice(special, pick.sum())
    x[: len(special)] = special  # every special value in every case
    return x.reshape(shape)


def qgen_ops(base, shape, axis, block, symmetric=False, reference_only=False, **changes):
    """The preset `base` for this layout, per tensor, per axis or blocked
    (affine or symmetric qschemes), with `changes`: its reference, and its
    kernels on each ISA this CPU runs unless reference_only. Only an ISA
    the CPU lacks is left out, and said so."""
    kind = "symmetric" if symmetric else "affine"
    over = dict(changes)
    if axis is not None and block is None:
        over.update({"qscheme": f"per_channel_{kind}", "ch_axis": axis, "channel_len": shape[axis],
                     "observer.type": "per_channel_minmax"})
    elif axis is not None:
        over.update({"qscheme": f"per_group_{kind}", "ch_axis": axis, "channel_len": shape[axis], "group_size": block})
    spec = qgen.Spec.from_dict({"name": "onnx_conf", "base": base}, **over)
    ops = [qgen.Reference(spec)]
    if reference_only:
        return ops
    for isa in HOST_ISAS:
        try:
            ops.append(qgen.Kernels(spec, isa=isa))
        except qgen.QgenError as e:
            if "does not run" not in str(e):
                raise
            print(f"{base}: {isa} not run ({e})")
    return ops


def differences(what, got, want, x, limit=5):
    g, w = np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8)
    if g.shape == w.shape and np.array_equal(g, w):
        return []
    gf, wf = np.ravel(got), np.ravel(want)
    bad = np.nonzero(gf.view(np.uint8 if gf.itemsize == 1 else f"u{gf.itemsize}") !=
                     wf.view(np.uint8 if wf.itemsize == 1 else f"u{wf.itemsize}"))[0]
    return [f"{what}[{i}]: input {np.ravel(x)[i]!r}: got {gf[i]!r}, ONNX Runtime {wf[i]!r}" for i in bad[:limit]] + (
        [f"{what}: {len(bad)} elements differ"] if len(bad) > limit else [])


def work_dir(who, prefix):
    """The onnxruntime-node directory and the work directory from argv, or
    None with the reason printed."""
    ort_dir = sys.argv[1]
    if not os.path.isfile(os.path.join(ort_dir, "package.json")):
        print(f"{who}: {ort_dir}: no onnxruntime-node here; expected scripts/install-deps.sh to have installed it",
              file=sys.stderr)
        return None
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix=prefix)
    os.makedirs(work, exist_ok=True)
    return ort_dir, work


def run_ort(ort_dir, work, manifest):
    """Runs the manifest's models on ONNX Runtime (ort_run.js); False with
    its output printed when that fails."""
    with open(os.path.join(work, "manifest.json"), "w") as f:
        json.dump({"cases": manifest}, f)
    run = subprocess.run([os.environ.get("QGEN_NODE", "node"), os.path.join(HERE, "ort_run.js"), os.path.abspath(ort_dir),
                          os.path.join(work, "manifest.json")], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr, file=sys.stderr)
        return False
    print(run.stdout.strip())
    return True


def main():
    dirs = work_dir("onnx_runtime", "qgen-onnx-")
    if not dirs:
        return 1
    ort_dir, work = dirs
    rng = np.random.default_rng(20261123)
    cases, manifest = [], []
    for dtype, (et, npt, ort_type) in DTYPES.items():
        qmin, qmax = np.iinfo(npt).min, np.iinfo(npt).max
        if et in IO_TYPE:
            qmin, qmax = (-8, 7) if et == INT4 else (0, 15)
        for lname, shape, axis, block in LAYOUTS:
            pdims = param_shape(shape, axis, block)
            channels = int(np.prod(pdims))
            path = os.path.join(work, f"{dtype}_{lname}.onnx")
            onnx.save(model(dtype, shape, axis, block), path)
            for r in range(ROUNDS):
                tag = f"{dtype}_{lname}_{r}"
                s = scales(rng, channels)
                z = rng.integers(qmin, qmax, channels, endpoint=True).astype(npt)
                if r == 0:
                    z[0] = qmin if channels > 1 else z[0]
                    z[-1] = qmax if channels > 2 else z[-1]
                x = data(rng, shape, axis, block, s, z, qmin, qmax)
                qin = rng.integers(qmin, qmax, shape, endpoint=True).astype(npt)
                qin.reshape(-1)[:2] = (qmin, qmax)
                files = {k: os.path.join(work, f"{tag}.{k}") for k in ("x", "qin", "scale", "zp", "q", "y")}
                x.tofile(files["x"]), qin.tofile(files["qin"]), s.tofile(files["scale"]), z.tofile(files["zp"])
                manifest.append({
                    "model": path,
                    "inputs": {"x": {"type": "float32", "dims": list(shape), "file": files["x"]},
                               "qin": {"type": ort_type, "dims": list(shape), "file": files["qin"]},
                               "scale": {"type": "float32", "dims": pdims, "file": files["scale"]},
                               "zero_point": {"type": ort_type, "dims": pdims, "file": files["zp"]}},
                    "outputs": {"q": files["q"], "y": files["y"]},
                })
                cases.append((tag, dtype, shape, axis, block, s, z, x, qin, files))
    # DynamicQuantizeLinear against qgen's dynamic quantization with onnx.uint8
    dyn_cases = []
    for r in range(18):
        shape = (int(rng.integers(1, 3000)),)
        tag = f"dynamic_{r}"
        path = os.path.join(work, f"{tag}.onnx")
        onnx.save(dynamic_model(shape), path)
        x = dynamic_data(rng, shape[0], r % 6)
        files = {k: os.path.join(work, f"{tag}.{k}") for k in ("x", "y", "s", "z")}
        x.tofile(files["x"])
        manifest.append({"model": path, "inputs": {"x": {"type": "float32", "dims": list(shape), "file": files["x"]}},
                         "outputs": {"y": files["y"], "y_scale": files["s"], "y_zero_point": files["z"]}})
        dyn_cases.append((tag, x, files))
    # qgen's 4-bit packing read by ONNX Runtime: odd and even counts
    layout_cases = []
    for dtype, et in (("qint4", INT4), ("quint4", UINT4)):
        for n in (37, 64):
            tag = f"packed_{dtype}_{n}"
            values = rng.integers(-8, 8, n) if dtype == "qint4" else rng.integers(0, 16, n)
            packed = qgen.pack4(values)
            path = os.path.join(work, f"{tag}.onnx")
            onnx.save(packed_model(et, packed, n), path)
            manifest.append({"model": path, "inputs": {}, "outputs": {"y": os.path.join(work, f"{tag}.y")}})
            layout_cases.append((tag, dtype, values, packed, os.path.join(work, f"{tag}.y")))
    if not run_ort(ort_dir, work, manifest):
        return 1

    failures, compared = [], 0
    # Controls: the data must tell the preset's choices apart, or agreeing
    # would prove nothing. Each changed spec must differ from ONNX Runtime
    # somewhere in the run.
    controls = {"scale_op mul_inv": {"scale_op": "mul_inv"}, "rounding half_away": {"rounding": "half_away"},
                "rounding half_up": {"rounding": "half_up"}}
    told_apart = dict.fromkeys(controls, 0)
    ort_wrapped = 0
    for tag, dtype, shape, axis, block, s, z, x, qin, files in cases:
        npt = DTYPES[dtype][1]
        q_ort = np.fromfile(files["q"], npt).reshape(shape)
        y_ort = np.fromfile(files["y"], F32).reshape(shape)
        inner = 1 if axis is None else int(np.prod(shape[axis + 1 :]))
        # ORT 1.30's blocked QuantizeLinear along an axis that is not the
        # last, and its 4-bit QuantizeLinear per axis or blocked, convert
        # x / scale to an integer before they saturate, so values past the
        # int32 range (inf, 1e30) wrap (docs/onnx.md): there the kernels
        # are compared with qgen's reference instead, and the elements counted
        wraps = np.zeros(x.shape, bool)
        packed = dtype in ("qint4", "quint4")
        if (block is not None and inner > 1) or (packed and axis is not None):
            with np.errstate(over="ignore", invalid="ignore"):
                t = np.abs(x.astype(np.float64) / s.reshape(-1)[param_index(shape, axis, block)].reshape(shape))
            wraps = ~(t < 2.0**31) & ~np.isnan(x)
            ort_wrapped += int(wraps.sum())
        q_ref = None
        for ops in qgen_ops(PRESETS[dtype], shape, axis, block):
            if packed:  # qgen's packed bytes, compared as values
                q = qgen.unpack4(ops.quantize(x, s, z.astype(np.int32), inner=inner), x.size, dtype == "qint4")
                q = q.reshape(shape)
                y = ops.dequantize(qgen.pack4(qin), s, z.astype(np.int32), inner=inner, shape=shape)
            else:
                q = ops.quantize(x, s, z.astype(np.int32), inner=inner)
                y = ops.dequantize(qin, s, z.astype(np.int32), inner=inner)
            # where ORT wraps, the kernels answer to qgen's reference (the first of ops)
            q_ref = q if q_ref is None else q_ref
            diffs = differences("q", q, np.where(wraps, q_ref, q_ort), x) + differences("y", y, y_ort, qin)
            compared += 2
            if diffs:
                failures.append(f"{tag} ({ops.isa}):\n  " + "\n  ".join(diffs))
        for name, change in controls.items():
            (ref,) = qgen_ops(PRESETS[dtype], shape, axis, block, reference_only=True, **change)
            qc = ref.quantize(x, s, z.astype(np.int32), inner=inner)
            if packed:
                qc = qgen.unpack4(qc, x.size, dtype == "qint4").reshape(shape)
            told_apart[name] += int(np.count_nonzero(qc != q_ort))
    for tag, x, files in dyn_cases:
        q_ort = np.fromfile(files["y"], np.uint8)
        s_ort, z_ort = np.fromfile(files["s"], F32), np.fromfile(files["z"], np.uint8).astype(np.int32)
        for ops in qgen_ops(PRESETS["quint8"], x.shape, None, None):
            q, s, z = ops.quantize_dynamic(x)
            diffs = differences("y", q, q_ort, x) + differences("y_zero_point", z, z_ort, [x.min()])
            if not x.any():
                # all zeros: ONNX's formula divides by zero; ORT answers 1.0,
                # qgen the observers' eps floor (docs/onnx.md)
                if not (s[0] == np.finfo(F32).eps and s_ort[0] == 1.0):
                    diffs.append(f"y_scale of zeros: got {s[0]!r}, ONNX Runtime {s_ort[0]!r}; expected eps and 1.0")
            else:
                diffs += differences("y_scale", s, s_ort, [x.min()])
            compared += 3
            if diffs:
                failures.append(f"{tag} ({ops.isa}):\n  " + "\n  ".join(diffs))
    print(f"onnx_runtime: {ort_wrapped} elements past the int32 range in blocked cases along a non-last axis "
          "and 4-bit per-axis cases, where ORT wraps, compared with qgen's reference instead")
    for tag, dtype, values, packed, yfile in layout_cases:
        y_ort = np.fromfile(yfile, F32)
        spec = qgen.Spec.from_dict({"name": "onnx_conf", "base": PRESETS[dtype]})
        y = qgen.Reference(spec).dequantize(packed, np.ones(1, F32), np.zeros(1, np.int32), shape=(len(values),))
        diffs = differences("y", values.astype(F32), y_ort, values) + differences("y", y, y_ort, values)
        compared += 2
        if diffs:
            failures.append(f"{tag}:\n  " + "\n  ".join(diffs))
    for name, count in told_apart.items():
        print(f"onnx_runtime: control {name}: {count} elements differ from ONNX Runtime")
        if count == 0:
            failures.append(f"control {name}: no element differs; expected the data to tell it from the preset")
    for f in failures:
        print(f"onnx_runtime: {f}", file=sys.stderr)
    print(f"onnx_runtime: {len(cases) + len(dyn_cases) + len(layout_cases)} cases, {compared} comparisons of qgen (reference and kernels) with ONNX Runtime, "
          f"{len(failures)} with differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Writes the ONNX models bench/wasm_bench.mjs runs in onnxruntime-web:
per-tensor quint8 QuantizeLinear, DequantizeLinear and the pair of them
(what fake_quant computes, docs/semantics.md), opset 21, over a 1-D tensor
of any length, with the scale and zero point as initializers.
Usage: python3 bench/ort_web_models.py OUT_DIR SCALE ZERO_POINT"""

import os
import sys

import onnx
from onnx import TensorProto, helper


def save(path, nodes, x, y, inits):
    graph = helper.make_graph(nodes, os.path.basename(path), [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="qgen-bench")
    onnx.save(model, path)


def main():
    out, scale, zero_point = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    s = helper.make_tensor("s", TensorProto.FLOAT, [], [scale])
    z = helper.make_tensor("z", TensorProto.UINT8, [], [zero_point])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    q = helper.make_tensor_value_info("q", TensorProto.UINT8, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])
    quant = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])
    save(os.path.join(out, "quantize.onnx"), [quant], x, q, [s, z])
    save(os.path.join(out, "dequantize.onnx"), [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], q, y, [s, z])
    pair = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["t"]), helper.make_node("DequantizeLinear", ["t", "s", "z"], ["y"])]
    save(os.path.join(out, "fake_quant.onnx"), pair, x, y, [s, z])


if __name__ == "__main__":
    main()

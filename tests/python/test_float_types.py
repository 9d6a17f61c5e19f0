"""bfloat16 and float16 tensors (docs/semantics.md, "Float types").

float16: torch 1.13's own fake-quant ops, the ones its FakeQuantize module
calls (fake_quantize_per_tensor_affine, fake_quantize_per_channel_affine),
run on float16 tensors of varied scale and offset, against qgen's JIT
kernels on every x86 ISA this CPU runs and the reference, bit for bit.
bfloat16: torch 1.13's CPU fake-quant refuses bfloat16 tensors (checked
below, so the day it accepts them this test says so); qgen's kernels are
compared with the float32 op rounded by torch's own bfloat16 conversion."""

import unittest

import numpy as np
import torch

import qgen



def kernels(spec):
    """The JIT kernels of every x86 ISA this CPU runs, then the reference."""
    ks = []
    for isa in ("scalar", "avx2", "avx512"):
        try:
            ks.append(qgen.Kernels(spec, isa=isa))
        except qgen.QgenError as e:
            if "does not run" not in str(e):
                raise
    return ks + [qgen.Reference(spec)]


def bits(t):
    return t.view(torch.int16).numpy().view(np.uint16)


def data(rng, n, scale, zp, qmin, qmax, dtype):
    """Values across and past the range, ties of the grid, -0.0. No
    infinities: torch converts t to int64 before clamping, which for inf is
    out of range (it gives qmin for +inf on x86), so the float32
    conformance does not compare them either."""
    lo, hi = (qmin - zp) * scale, (qmax - zp) * scale
    x = rng.uniform(lo * 1.3, hi * 1.3, n)
    k = rng.integers(qmin - zp - 3, qmax - zp + 3, n)
    x[::5] = (k[::5] + 0.5) * scale  # ties (exact where the type holds them)
    x[1::7] = k[1::7] * scale
    x[2::97] = hi * 40.0  # saturates
    x[3::101] = lo * 40.0 - 1.0
    x[4::89] = -0.0
    return torch.from_numpy(x.astype(np.float32)).to(dtype)


class Float16(unittest.TestCase):
    def test_per_tensor_against_torch(self):
        rng = np.random.default_rng(1)
        cases = 0
        for dtype, qmin, qmax in (("quint8", 0, 255), ("qint8", -128, 127)):
            spec = {"name": "h", "dtype": dtype, "float_type": "float16"}
            ks = kernels(spec)
            for _ in range(12):
                scale = float(np.float32(2.0 ** rng.uniform(-9, 1)))
                zp = int(rng.integers(qmin, qmax + 1))
                n = int(rng.integers(1, 3000))
                x = data(rng, n, scale, zp, qmin, qmax, torch.float16)
                want = torch.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
                self.assertEqual(want.dtype, torch.float16)
                for k in ks:
                    y, _ = k.fake_quant(x, np.float32(scale), np.int32(zp))
                    diff = int(np.sum(bits(y) != bits(want)))
                    self.assertEqual(diff, 0, f"{k.isa} {dtype} scale {scale} zp {zp} n {n}")
                    cases += 1
        self.assertGreater(cases, 40)

    def test_per_channel_against_torch(self):
        rng = np.random.default_rng(2)
        spec = {"name": "hc", "dtype": "qint8", "qscheme": "per_channel_affine", "ch_axis": 1, "channel_len": 6,
                "float_type": "float16", "observer": {"type": "per_channel_minmax"}}
        ks = kernels(spec)
        for _ in range(6):
            scale = (2.0 ** rng.uniform(-8, 0, 6)).astype(np.float32)
            zp = rng.integers(-20, 20, 6).astype(np.int32)
            x = data(rng, 4 * 6 * 33, float(scale.mean()), 0, -128, 127, torch.float16).reshape(4, 6, 33)
            want = torch.fake_quantize_per_channel_affine(x, torch.from_numpy(scale), torch.from_numpy(zp), 1, -128,
                                                          127)
            for k in ks:
                y, _ = k.fake_quant(x, scale, zp)
                self.assertEqual(int(np.sum(bits(y) != bits(want))), 0, k.isa)

    def test_round_trips_and_types(self):
        spec = {"name": "h2", "dtype": "quint8", "float_type": "float16"}
        k = qgen.Kernels(spec)
        x = np.linspace(-3, 3, 101).astype(np.float16)
        q = k.quantize(x, np.float32(0.03), np.int32(100))
        y = k.dequantize(q, np.float32(0.03), np.int32(100))
        self.assertEqual(y.dtype, np.float16)
        fq, _ = k.fake_quant(x, np.float32(0.03), np.int32(100))
        self.assertTrue(np.array_equal(y.view(np.uint16), fq.view(np.uint16)))
        with self.assertRaisesRegex(TypeError, "x: dtype float32; expected float16"):
            k.fake_quant(x.astype(np.float32), np.float32(0.03), np.int32(100))


class BFloat16(unittest.TestCase):
    def test_torch_refuses_bfloat16(self):
        x = torch.zeros(4, dtype=torch.bfloat16)
        with self.assertRaises(RuntimeError):
            torch.fake_quantize_per_tensor_affine(x, 0.1, 0, 0, 255)

    def test_against_float32_op_rounded_by_torch(self):
        rng = np.random.default_rng(3)
        spec = {"name": "b", "dtype": "quint8", "float_type": "bfloat16"}
        ks = kernels(spec)
        for _ in range(10):
            scale = float(np.float32(2.0 ** rng.uniform(-9, 1)))
            zp = int(rng.integers(0, 256))
            x = data(rng, int(rng.integers(1, 3000)), scale, zp, 0, 255, torch.bfloat16)
            want = torch.fake_quantize_per_tensor_affine(x.float(), scale, zp, 0, 255).to(torch.bfloat16)
            dy = torch.from_numpy(rng.standard_normal(x.numel()).astype(np.float32)).to(torch.bfloat16)
            for k in ks:
                y, mask = k.fake_quant(x, np.float32(scale), np.int32(zp))
                self.assertEqual(y.dtype, torch.bfloat16)
                self.assertEqual(int(np.sum(bits(y) != bits(want))), 0, k.isa)
                dx = k.fake_quant_backward(dy, mask)
                want_dx = torch.where(torch.from_numpy(mask.numpy() != 0), dy, torch.zeros_like(dy))
                self.assertEqual(int(np.sum(bits(dx) != bits(want_dx))), 0, k.isa)


if __name__ == "__main__":
    unittest.main()

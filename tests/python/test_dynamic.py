"""qgen's dynamic quantization against torch 1.13's own code path:
torch.quantize_per_tensor_dynamic on the whole tensor, and the same call on
each row for per-token quantization (docs/semantics.md, "Dynamic
quantization"). The reference and the JIT kernels of every ISA this CPU
runs must give torch's bytes, its scale (as float32) and its zero point."""

import itertools
import unittest

import numpy as np
import torch

import qgen

DTYPES = {"quint8": torch.quint8, "qint8": torch.qint8}


def data(rng, shape):
    """Normal data of a random magnitude and offset, with a constant row,
    a zero row and rows of one sign when there are rows to spare."""
    scale = 10.0 ** rng.uniform(-4, 3)
    x = rng.standard_normal(shape) * scale + rng.uniform(-3, 3) * scale
    x = x.astype(np.float32)
    if x.ndim == 2 and x.shape[0] >= 4:
        x[0] = np.float32(rng.uniform(-1, 1))
        x[1] = 0.0
        x[2] = np.abs(x[2])
        x[3] = -np.abs(x[3])
    return x


def ops_for(dtype, reduce_range):
    spec = qgen.Spec.from_dict({"name": "dyn", "dtype": dtype, "reduce_range": reduce_range,
                                "train_qparams": "fused_op",
                                "observer": {"type": "moving_average_minmax"}})
    out = [qgen.Reference(spec), qgen.Kernels(spec), qgen.Kernels(spec, isa="scalar")]
    for isa in ("avx2", "avx512"):
        try:
            out.append(qgen.Kernels(spec, isa=isa))
        except qgen.QgenError as e:
            if "cpu" not in str(e).lower():
                raise
            print(f"test_dynamic: {isa} not run: {e}")  # an ISA this CPU lacks; not counted
    return out


class DynamicQuantization(unittest.TestCase):
    def check(self, x, dtype, reduce_range, per_token):
        rows = x.reshape(-1, x.shape[-1]) if per_token else x.reshape(1, -1)
        want = [torch.quantize_per_tensor_dynamic(torch.from_numpy(r.copy()), DTYPES[dtype], reduce_range)
                for r in rows]
        want_q = np.concatenate([w.int_repr().numpy().reshape(-1) for w in want])
        want_s = np.array([w.q_scale() for w in want], np.float32)
        want_z = np.array([w.q_zero_point() for w in want], np.int32)
        for ops in ops_for(dtype, reduce_range):
            with self.subTest(isa=ops.isa, dtype=dtype, reduce_range=reduce_range, shape=x.shape):
                q, s, z = ops.quantize_dynamic(x, per_token=per_token)
                self.assertEqual(q.shape, x.shape)
                np.testing.assert_array_equal(s.view(np.uint32), want_s.view(np.uint32))
                np.testing.assert_array_equal(z, want_z)
                np.testing.assert_array_equal(q.reshape(-1), want_q)

    def test_per_tensor(self):
        rng = np.random.default_rng(1)
        for dtype, rr in itertools.product(DTYPES, (False, True)):
            for shape in ((1,), (7,), (1000,), (3, 5, 17), (4099,)):
                for _ in range(3):
                    self.check(data(rng, shape), dtype, rr, per_token=False)

    def test_per_token(self):
        rng = np.random.default_rng(2)
        for dtype, rr in itertools.product(DTYPES, (False, True)):
            for shape in ((5, 1), (9, 33), (2, 3, 100), (6, 257)):
                self.check(data(rng, shape), dtype, rr, per_token=True)

    def test_scale_is_torchs_double_rounded_once(self):
        # torch keeps the scale as a double; qgen's float32 scale is that
        # double rounded to float32, and quantizing with either gives the same q
        x = np.array([-1.0, 2.0], np.float32)
        spec = {"dtype": "qint8", "train_qparams": "fused_op", "observer": {"type": "moving_average_minmax"}}
        q, s, z = qgen.Reference(spec).quantize_dynamic(x)
        t = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), torch.qint8, False)
        self.assertEqual((float(s[0]), int(z[0])), (float(np.float32(t.q_scale())), t.q_zero_point()))
        np.testing.assert_array_equal(q, t.int_repr().numpy())

    def test_rule_follows_train_qparams(self):
        # the observers' fp32 rule (train_qparams "observer", ONNX's
        # DynamicQuantizeLinear) and ATen's (torch's dynamic op) differ on
        # tiny ranges: ATen raises scales below 6.1e-5 to 6.1e-5
        x = np.array([-1e-3, 2e-3], np.float32)
        fused = qgen.Reference({"dtype": "quint8", "train_qparams": "fused_op",
                                "observer": {"type": "moving_average_minmax"}})
        plain = qgen.Reference({"dtype": "quint8", "observer": {"type": "minmax"}})
        self.assertEqual(float(fused.quantize_dynamic(x)[1][0]), float(np.float32(6.1e-5)))
        want = (np.float32(2e-3) - np.float32(-1e-3)) / np.float32(255)  # fp32 throughout
        self.assertEqual(float(plain.quantize_dynamic(x)[1][0]), float(want))

    def test_bad_input(self):
        k = qgen.Kernels({"dtype": "quint8", "observer": {"type": "minmax"}})
        x = np.ones((3, 4), np.float32)
        x[2, 1] = np.nan
        with self.assertRaisesRegex(qgen.QgenError, "row 2: .*NaN"):
            k.quantize_dynamic(x, per_token=True)
        with self.assertRaisesRegex(qgen.QgenError, "row 0: .*NaN"):
            k.quantize_dynamic(x)
        with self.assertRaisesRegex(qgen.QgenError, "row_len: 0"):
            k.quantize_dynamic(np.ones((0,), np.float32))
        with self.assertRaisesRegex(TypeError, "x: dtype float64"):
            k.quantize_dynamic(np.ones(4))
        pc = qgen.Reference({"dtype": "qint8", "qscheme": "per_channel_symmetric", "channel_len": 2,
                             "observer": {"type": "per_channel_minmax"}})
        with self.assertRaisesRegex(qgen.QgenError, "qscheme: per_channel_symmetric"):
            pc.quantize_dynamic(np.ones((2, 2), np.float32))


if __name__ == "__main__":
    unittest.main()

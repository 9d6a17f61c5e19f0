#!/usr/bin/env python3
"""qgen run and qgen.Reference with the ggml.* presets against ggml's own
reference.

For each block format: random float32 matrices of varied magnitude go
through `qgen run --op quantize`; the .npy it writes must hold, row for row,
the bytes ggml's quantize_row_<fmt>_ref writes (npm's libggml-base.so,
loaded with ctypes). `--op dequantize` of those bytes must give ggml's
dequantize_row_<fmt> floats, `--op fake_quant` the two in turn, a float16
input its widened values' bytes; rows that are not whole blocks are refused
with exit 2 naming the block. qgen.Reference(spec).quantize(x) and
.dequantize(q, shape) give the same bytes and floats in this process.

Usage: ggml_cli.py QGEN LIBGGML_BASE_SO WORKDIR
"""
import ctypes
import os
import subprocess
import sys
import unittest

import numpy as np

import qgen

QGEN, LIB, WORK = sys.argv[1:4]
ggml = ctypes.CDLL(LIB)

# format: (block elements, bytes per block, ggml has dequantize_row_<fmt>;
# q8_1's d and codes go through q8_0's)
FORMATS = {
    "q8_0": (32, 34, True),
    "q8_1": (32, 36, False),
    "q4_0": (32, 18, True),
    "q4_1": (32, 20, True),
    "q5_0": (32, 22, True),
    "q5_1": (32, 24, True),
    "mxfp4": (32, 17, True),
    "q4_K": (256, 144, True),
    "q6_K": (256, 210, True),
}


def ggml_quantize(fmt, x):
    elems, nbytes, _ = FORMATS[fmt]
    fn = getattr(ggml, f"quantize_row_{fmt}_ref")
    out = np.zeros((x.shape[0], x.shape[1] // elems * nbytes), np.uint8)
    for r in range(x.shape[0]):
        row = np.ascontiguousarray(x[r], np.float32)
        fn(row.ctypes.data_as(ctypes.c_void_p), out[r].ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(row.size))
    return out


def ggml_dequantize(fmt, q, cols):
    if not FORMATS[fmt][2]:  # q8_1 (d, s, qs[32]) as q8_0 (d, qs[32])
        blocks = q.reshape(q.shape[0], -1, 36)
        q, fmt = np.ascontiguousarray(np.concatenate([blocks[:, :, :2], blocks[:, :, 4:]], axis=2)).reshape(
            q.shape[0], -1), "q8_0"
    fn = getattr(ggml, f"dequantize_row_{fmt}")
    y = np.zeros((q.shape[0], cols), np.float32)
    for r in range(q.shape[0]):
        qr = np.ascontiguousarray(q[r])
        fn(qr.ctypes.data_as(ctypes.c_void_p), y[r].ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(cols))
    return y


def run(*args):
    return subprocess.run([QGEN, "run", *args], capture_output=True, text=True)


def path(name):
    return os.path.join(WORK, name)


def rows(seed, shape, kquant=False):
    """Rows of varied magnitude; the K-quants' within fp16's range of scales."""
    rng = np.random.default_rng(seed)
    spread = 3 if kquant else 20
    scale = 10.0 ** rng.uniform(-spread, spread, size=(shape[0], 1))
    x = (rng.standard_normal(shape) * scale + rng.uniform(-1, 1, size=(shape[0], 1)) * scale).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block
    x[1, 32:64] = x[1, 32]  # a constant block
    x[2, 5] = np.float32(2.0) * (np.float32(1.0) - np.float32(2.0**-24))  # amax just below 2
    return x


class BlockFormatsCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)

    def test_quantize_dequantize_fake_quant(self):
        for k, fmt in enumerate(FORMATS):
            with self.subTest(fmt=fmt):
                cols = 512 if FORMATS[fmt][0] == 256 else 96
                x = rows(k, (6, cols), kquant=cols == 512)
                np.save(path("x.npy"), x)
                p = run("--spec", f"ggml.{fmt}", "--op", "quantize", "--in", path("x.npy"), "--out", path("q.npy"))
                self.assertEqual(p.returncode, 0, p.stderr)
                q = np.load(path("q.npy"))
                self.assertEqual(q.dtype, np.uint8)
                np.testing.assert_array_equal(q, ggml_quantize(fmt, x))
                p = run("--spec", f"ggml.{fmt}", "--op", "dequantize", "--in", path("q.npy"), "--shape", f"2,3,{cols}",
                        "--out", path("y.npy"))
                self.assertEqual(p.returncode, 0, p.stderr)
                y = np.load(path("y.npy"))
                self.assertEqual(y.shape, (2, 3, cols))
                np.testing.assert_array_equal(y.reshape(6, cols).view(np.uint32),
                                              ggml_dequantize(fmt, q, cols).view(np.uint32))
                p = run("--spec", f"ggml.{fmt}", "--op", "fake_quant", "--in", path("x.npy"), "--out", path("f.npy"))
                self.assertEqual(p.returncode, 0, p.stderr)
                np.testing.assert_array_equal(np.load(path("f.npy")).view(np.uint32), y.reshape(6, cols).view(np.uint32))

    def test_spec_check_names_the_format(self):
        p = subprocess.run([QGEN, "spec", "check", "ggml.q6_K"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ggml block format q6_K, blocks of 256 along the last axis", p.stdout)

    def test_float16_input(self):
        x = rows(7, (3, 64)).clip(-6e4, 6e4).astype(np.float16)
        np.save(path("h.npy"), x)
        p = run("--spec", "ggml.q4_0", "--set", "float_type=float16", "--op", "quantize", "--in", path("h.npy"),
                "--out", path("qh.npy"))
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(path("qh.npy")), ggml_quantize("q4_0", x.astype(np.float32)))

    def test_refusals(self):
        np.save(path("odd.npy"), np.ones((2, 48), np.float32))
        p = run("--spec", "ggml.q4_0", "--op", "quantize", "--in", path("odd.npy"), "--out", path("o.npy"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("rows of 48 elements", p.stderr)
        self.assertIn("multiple of q4_0's block of 32", p.stderr)
        self.assertFalse(os.path.exists(path("o.npy")))
        np.save(path("q.npy"), np.zeros((2, 36), np.uint8))
        p = run("--spec", "ggml.q4_0", "--op", "dequantize", "--in", path("q.npy"), "--shape", "3,64", "--out",
                path("o.npy"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("expected 2 rows of 36 bytes", p.stderr)
        p = run("--spec", "ggml.q8_0", "--op", "quantize", "--in", path("odd.npy"), "--out", path("o.npy"),
                "--scale", "0.5")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--scale: given with block q8_0", p.stderr)
        p = run("--spec", "ggml.q8_0", "--op", "lsq_forward", "--in", path("odd.npy"), "--out", path("o.npy"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("expected quantize, dequantize or fake_quant", p.stderr)
        big = np.ones((2, 256), np.float32)
        big[1, 7] = np.inf  # reads as FLT_MAX: the K-quants' codes leave nearest_int's range
        np.save(path("big.npy"), big)
        p = run("--spec", "ggml.q4_K", "--op", "quantize", "--in", path("big.npy"), "--out", path("o.npy"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("row 1", p.stderr)
        self.assertIn("block 0 (elements 0 to 255)", p.stderr)


class BlockFormatsPython(unittest.TestCase):
    def test_reference_equals_ggml(self):
        for k, fmt in enumerate(FORMATS):
            with self.subTest(fmt=fmt):
                cols = 512 if FORMATS[fmt][0] == 256 else 96
                x = rows(100 + k, (4, cols), kquant=cols == 512)
                ref = qgen.Reference(qgen.Spec.preset(f"ggml.{fmt}"))
                q = ref.quantize(x.reshape(2, 2, cols))
                self.assertEqual((q.dtype, q.shape), (np.uint8, (4, cols // FORMATS[fmt][0] * FORMATS[fmt][1])))
                np.testing.assert_array_equal(q, ggml_quantize(fmt, x))
                y = ref.dequantize(q, shape=(2, 2, cols))
                self.assertEqual(y.shape, (2, 2, cols))
                np.testing.assert_array_equal(y.reshape(4, cols).view(np.uint32),
                                              ggml_dequantize(fmt, q, cols).view(np.uint32))

    def test_reference_refusals(self):
        ref = qgen.Reference(qgen.Spec.preset("ggml.q5_1"))
        with self.assertRaisesRegex(ValueError, "rows of 40 elements.*multiple of q5_1's block of 32"):
            ref.quantize(np.ones((2, 40), np.float32))
        with self.assertRaisesRegex(ValueError, "expected none"):
            ref.quantize(np.ones((2, 32), np.float32), 0.5, 0)
        with self.assertRaisesRegex(ValueError, "not the 2 rows of 24 bytes"):
            ref.dequantize(np.zeros((2, 24), np.uint8), shape=(3, 32))

    def test_kernels_equal_ggml(self):
        """The JIT's kernels on every x86 ISA here: q8_0's generated quantize
        and dequantize, the other formats' forwarders; the rows hold ties,
        zero blocks, denormal and huge blocks (rows())."""
        for isa in ("scalar", "avx2", "avx512"):
            for k, fmt in enumerate(FORMATS):
                with self.subTest(isa=isa, fmt=fmt):
                    cols = 512 if FORMATS[fmt][0] == 256 else 96
                    x = rows(200 + k, (4, cols), kquant=cols == 512)
                    try:
                        kern = qgen.Kernels(qgen.Spec.preset(f"ggml.{fmt}"), isa=isa)
                    except qgen.QgenError as e:  # a CPU without the ISA
                        self.assertIn(isa, str(e))
                        continue
                    q = kern.quantize(x)
                    np.testing.assert_array_equal(q, ggml_quantize(fmt, x))
                    y = kern.dequantize(q, shape=(4, cols))
                    np.testing.assert_array_equal(y.view(np.uint32), ggml_dequantize(fmt, q, cols).view(np.uint32))
                    f, mask = kern.fake_quant(x)
                    np.testing.assert_array_equal(f.view(np.uint32), y.view(np.uint32))
                    self.assertTrue(mask.all())


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[4:], verbosity=2)

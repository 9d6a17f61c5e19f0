"""The package's own surface: its version is the project's, and libqgen's
errors come as QgenError, a RuntimeError, with bad specs and arguments as
SpecError, also a ValueError."""

import inspect
import pathlib
import re
import subprocess
import sys
import unittest

import qgen
import qgen.torch
import qgen.torch.horizon


class Package(unittest.TestCase):
    def test_version_is_the_projects(self):
        cmake = pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt"
        project = re.search(r"project\(qgen VERSION ([0-9.]+)", cmake.read_text()).group(1)
        self.assertEqual(qgen.__version__, project)

    def test_error_classes(self):
        with self.assertRaises(qgen.SpecError) as caught:
            qgen.Spec.from_dict({"name": "a", "dtype": "qint9"})
        self.assertIsInstance(caught.exception, ValueError)
        self.assertIsInstance(caught.exception, RuntimeError)
        self.assertIsInstance(caught.exception, qgen.QgenError)
        self.assertEqual(caught.exception.status, "QG_ERR_INVALID")
        self.assertIn("qint9", str(caught.exception))
        with self.assertRaises(qgen.QgenError) as io:
            qgen.Spec.from_file("/nonexistent/spec.json")
        self.assertNotIsInstance(io.exception, ValueError)

    def test_kernels_compile_each_op_from_its_first_call(self):
        import numpy

        # a spec of this test's own: no other test compiled it in this process
        spec = {"dtype": "qint8", "qscheme": "per_channel_symmetric", "channel_len": 3, "ch_axis": 0,
                "quant_min": -99, "quant_max": 99}
        made = lambda s: s["compiled"] + s["disk_hits"]
        before = qgen.jit_stats()
        k = qgen.Kernels(spec)
        after = qgen.jit_stats()
        self.assertEqual(after["lazy_tables"], before["lazy_tables"] + 1)
        self.assertEqual(made(after), made(before))  # nothing yet
        x = numpy.linspace(-3, 3, 12, dtype=numpy.float32).reshape(3, 4)
        y, _ = k.fake_quant(x, [0.05, 0.1, 0.2], [0, 0, 0])  # on the reference while fake_quant compiles
        r, _ = qgen.Reference(spec).fake_quant(x, [0.05, 0.1, 0.2], [0, 0, 0])
        self.assertTrue(numpy.array_equal(y, r))
        k.prepare(["fake_quant"])  # waits for the compile the first call started
        first = qgen.jit_stats()
        self.assertEqual(made(first), made(before) + 1)  # fake_quant alone
        y, _ = k.fake_quant(x, [0.05, 0.1, 0.2], [0, 0, 0])  # the compiled kernel
        self.assertTrue(numpy.array_equal(y, r))
        k.prepare(["quantize"])
        self.assertEqual(made(qgen.jit_stats()), made(first) + 1)
        with self.assertRaises(ValueError):
            k.prepare(["quantise"])
        qgen.Kernels(dict(spec, quant_min=-98), eager=True)
        self.assertEqual(made(qgen.jit_stats()), made(first) + 1 + 6)  # every op, now
        self.assertEqual(qgen.jit_stats()["fallbacks"], 0)

    def test_exit_right_after_a_first_call(self):
        """A process that exits while its first call's compile runs in the
        background: the package's atexit handler waits for the compile, so
        LLVM's static objects are not torn down under it (docs/jit.md)."""
        import os
        import tempfile

        script = ("import numpy, qgen\n"
                  "k = qgen.Kernels({'dtype': 'qint8', 'qscheme': 'per_channel_symmetric', 'channel_len': 5})\n"
                  "y, m = k.fake_quant(numpy.ones((5, 7), numpy.float32), [0.1] * 5, [0] * 5)\n"
                  "assert (y == 1).all(), y\n")
        for _ in range(3):
            with tempfile.TemporaryDirectory() as cache:  # an empty cache: the compile is LLVM's
                env = dict(os.environ, XDG_CACHE_HOME=cache)
                p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)

    def test_preset_cut_short_suggests_the_name_it_begins(self):
        with self.assertRaises(qgen.SpecError) as caught:
            qgen.Spec.preset("torch.fbgemm.act")
        self.assertIn("did you mean torch.fbgemm.activation", str(caught.exception))


    def test_inside_the_package_torch_is_not_shadowed_silently(self):
        inside = pathlib.Path(qgen.__file__).parent
        p = subprocess.run([sys.executable, "-c", "import torch"], cwd=inside, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("current directory is inside the qgen package", p.stderr)

    def test_every_public_name_documented(self):
        """A docstring on every public class, function and method of qgen,
        qgen.torch and qgen.torch.horizon; type hints on qgen's own API."""
        undocumented, unannotated = [], []
        for mod in (qgen, qgen.torch, qgen.torch.horizon):
            for name in mod.__all__:
                obj = getattr(mod, name)
                if isinstance(obj, str):
                    continue
                if not (obj.__doc__ or "").strip():
                    undocumented.append(f"{mod.__name__}.{name}")
                members = vars(obj).items() if inspect.isclass(obj) else [(None, obj)]
                for member, f in members:
                    if member is not None and (member.startswith("_") or not callable(getattr(obj, member, None))):
                        if not isinstance(f, property):
                            continue
                    fn = f.fget if isinstance(f, property) else getattr(f, "__func__", f)
                    if not inspect.isfunction(fn):
                        continue
                    where = f"{mod.__name__}.{name}" + (f".{member}" if member else "")
                    if member and not (fn.__doc__ or "").strip():
                        undocumented.append(where)
                    if mod is qgen:
                        sig = inspect.signature(fn)
                        bare = [p for k, p in sig.parameters.items()
                                if k not in ("self", "cls") and p.annotation is inspect.Parameter.empty
                                and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
                        if bare or sig.return_annotation is inspect.Signature.empty:
                            unannotated.append(where)
        self.assertEqual(undocumented, [])
        self.assertEqual(unannotated, [])
        self.assertTrue((pathlib.Path(qgen.__file__).parent / "py.typed").exists())


if __name__ == "__main__":
    unittest.main()

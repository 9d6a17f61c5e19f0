"""The package's own surface: its version is the project's, and libqgen's
errors come as QgenError, a RuntimeError, with bad specs and arguments as
SpecError, also a ValueError."""

import pathlib
import re
import unittest

import qgen


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

    def test_preset_cut_short_suggests_the_name_it_begins(self):
        with self.assertRaises(qgen.SpecError) as caught:
            qgen.Spec.preset("torch.fbgemm.act")
        self.assertIn("did you mean torch.fbgemm.activation", str(caught.exception))


if __name__ == "__main__":
    unittest.main()

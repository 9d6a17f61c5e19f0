"""Puts libqgen.so inside the package being built (wheel or install): the
library of an existing build or install, never a new build. Looked for in
this order: QGEN_LIBRARY; the libdir of pkg-config's qgen-jit (an install);
a build tree beside the sources (../build*/python/libqgen.so, the newest).
pyproject.toml holds the rest."""
import glob
import os
import pathlib
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent


def find_library():
    env = os.environ.get("QGEN_LIBRARY")
    if env:
        return pathlib.Path(env)
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "qgen-jit"], capture_output=True, text=True,
                                check=True).stdout.strip()
        if (pathlib.Path(libdir) / "libqgen.so").exists():
            return pathlib.Path(libdir) / "libqgen.so"
    except (OSError, subprocess.CalledProcessError):
        pass
    built = sorted(glob.glob(str(HERE.parent / "build*" / "python" / "libqgen.so")), key=os.path.getmtime)
    if built:
        return pathlib.Path(built[-1])
    raise SystemExit("qgen: libqgen.so not found; expected QGEN_LIBRARY to name it, pkg-config to know qgen-jit "
                     "(an installed qgen), or a build tree beside the sources (cmake -B build && cmake --build build)")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = find_library().resolve()  # the file, not the symlink chain
        dest = pathlib.Path(self.build_lib) / "qgen" / "libqgen.so"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lib, dest)
        print(f"qgen: libqgen.so from {lib}")


setup(cmdclass={"build_py": BuildWithLibrary})

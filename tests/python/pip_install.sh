#!/bin/sh
# The Python package installed as Python packages are, offline: from the
# source tree (`pip install ./python`) and from a wheel (`pip wheel`), each
# into a fresh venv that sees Debian's torch and setuptools; then a JIT
# kernel and qgen.torch's default QAT module run there, against the
# reference and torch. The sources are copied first, so that setuptools'
# build directories stay out of the tree.
# usage: pip_install.sh PYTHON SOURCE_DIR LIBQGEN WORK_DIR
#   (PYTHON: Debian's python3, whose site packages hold torch and setuptools)
set -eu
python=$1 src=$2 lib=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/python" "$work/src"
rm -rf "$work/src/build" "$work/src/qgen.egg-info"
check='
import torch, qgen, qgen.torch as qt
assert qgen.__file__.startswith(__import__("sys").prefix), qgen.__file__
spec = qgen.Spec.preset("torch.fbgemm.activation")
x = torch.randn(1000) * 3
y, _ = qgen.Kernels(spec).fake_quant(x, scale=[0.05], zero_point=[60])
assert torch.equal(y, qgen.Reference(spec).fake_quant(x, scale=[0.05], zero_point=[60])[0])
ours, theirs = qt.FusedMovingAvgObsFakeQuantize(), torch.ao.quantization.FusedMovingAvgObsFakeQuantize()
assert all(torch.equal(ours(x * k), theirs(x * k)) for k in (1, 2))
print("qgen", qgen.__version__, "from", qgen.__file__, "agrees")
'
for how in source wheel; do
  venv=$work/venv-$how
  "$python" -m venv --system-site-packages "$venv"
  if [ $how = source ]; then
    QGEN_LIBRARY=$lib "$venv/bin/pip" install --no-build-isolation --no-index --no-deps "$work/src" >"$work/$how.log" 2>&1
  else
    QGEN_LIBRARY=$lib "$venv/bin/pip" wheel --no-build-isolation --no-index --no-deps -w "$work/dist" "$work/src" \
      >"$work/$how.log" 2>&1
    "$venv/bin/pip" install --no-index --no-deps "$work"/dist/qgen-*.whl >>"$work/$how.log" 2>&1
  fi || { cat "$work/$how.log"; echo "pip install from the $how failed"; exit 1; }
  # a clean environment: no QGEN_LIBRARY, no PYTHONPATH, another directory
  (cd "$work" && env -u QGEN_LIBRARY -u PYTHONPATH QGEN_TORCH_OPS=0 XDG_CACHE_HOME="$work/cache" \
    "$venv/bin/python" -c "$check") || { echo "the $how install does not work"; exit 1; }
done

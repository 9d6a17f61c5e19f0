#!/usr/bin/env bash
# Installs the Debian 12 packages qgen needs, only those missing.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  # build
  cmake make gcc pkg-config
  # style test: Debian 12's clang-format (14), the version .clang-format is written for
  clang-format git
  # libraries
  libjansson-dev libxxhash-dev libcunit1-dev
  # LLVM 19: C API, libclang, cross compilers and linker
  llvm-19-dev libclang-19-dev clang-19 lld-19 libclang-rt-19-dev
  # foreign ISAs: qemu-user (cross libc and compilers: below, from targets/arch/)
  qemu-user
  # reference and benchmark peers
  python3 python3-numpy python3-torch libxnnpack-dev libpthreadpool-dev
  # pip install ./python and its wheel, offline, into venvs (tests/python/pip_install.sh)
  python3-pip python3-venv python3-setuptools python3-wheel
  # torch's C++ headers and CMake package, for torch.ops.qgen (python/torch_ops)
  libtorch-dev g++
  # ONNX models for the ONNX Runtime conformance tests (the runtime itself: npm, below)
  python3-onnx
  # qgen compare's html report, rendered in a headless browser by the tests
  chromium fonts-dejavu-core
)

# each architecture's own packages, one JSON array on one line
here=$(cd "$(dirname "$0")/.." && pwd)
for f in "$here"/targets/arch/*.json; do
  for p in $(sed -n 's/.*"debian_packages": \[\(.*\)\].*/\1/p' "$f" | tr -d '",'); do
    packages+=("$p")
  done
done

# Node.js and npm for onnxruntime-node, unless the machine has them already
# (a NodeSource nodejs carries its own npm and conflicts with Debian's)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "install-deps: missing packages (${missing[*]}) and not root; install them as root" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

"$here/scripts/install-npm-peers.sh"

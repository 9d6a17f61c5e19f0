#!/usr/bin/env bash
# Installs the peers the tests and benchmarks run that ship through npm,
# each into its own folder of .deps/:
#   onnxruntime/  onnxruntime-node, whose package carries libonnxruntime.so
#                 (the ONNX Runtime conformance tests, docs/onnx.md);
#   ggml/         @node-llama-cpp/linux-x64, whose package carries
#                 libggml-base.so (ggml's reference quantizers) and
#                 libggml-cpu-<level>.so (its SIMD kernels): the block
#                 formats' oracle and benchmark peer (docs/semantics.md);
#   ortweb/       onnxruntime-web, ONNX Runtime's wasm build: the peer of
#                 bench/wasm_bench.mjs (docs/wasm.md).
# --ignore-scripts skips their install scripts, which only fetch GPU
# builds. Idempotent: a package already there at its version is kept.
# Usage: scripts/install-npm-peers.sh [deps-dir]   (default: <repo>/.deps)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
deps=${1:-$here/.deps}

install_one() { # folder package version
  local dir=$deps/$1 pkg=$deps/$1/node_modules/$2/package.json
  if [ -f "$pkg" ] && grep -q "\"version\": \"$3\"" "$pkg"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-npm-peers: npm not found; expected Node.js and npm (scripts/install-deps.sh installs them)" >&2
    exit 1
  fi
  echo "install-npm-peers: $2@$3 into $dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error "$2@$3"
}

install_one onnxruntime onnxruntime-node 1.30.0
install_one ggml @node-llama-cpp/linux-x64 3.22.1
install_one ortweb onnxruntime-web 1.30.0

#!/usr/bin/env bash
# Installs ONNX Runtime's CPU library for the conformance tests: npm's
# onnxruntime-node, whose package carries libonnxruntime.so and the Node
# binding over it. --ignore-scripts skips its install script, which only
# fetches GPU providers. Idempotent: nothing happens when that version is
# already there.
# Usage: scripts/install-onnxruntime.sh [dir]   (default: <repo>/.deps/onnxruntime)
set -euo pipefail

version=1.30.0
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here/.deps/onnxruntime}
pkg=$dir/node_modules/onnxruntime-node/package.json

if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "install-onnxruntime: npm not found; expected Node.js and npm (scripts/install-deps.sh installs them)" >&2
  exit 1
fi
echo "install-onnxruntime: onnxruntime-node@$version into $dir"
mkdir -p "$dir"
npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error "onnxruntime-node@$version"

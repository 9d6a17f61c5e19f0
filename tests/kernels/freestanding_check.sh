#!/bin/sh
# The wasm kernels build with no C library (docs/wasm.md): every test
# spec's generated wasm C compiled by clang for bare wasm32 (no sysroot, no
# libc headers), and the object's undefined symbols only the runtime's
# (qg_*), the spec's own and the linker's (__stack_pointer,
# __indirect_function_table): no memcpy, memset or other libc call.
# Usage: freestanding_check.sh CLANG NM INCLUDE_DIR GEN_DIR WORK_DIR
set -eu
clang=$1 nm=$2 include=$3 gen=$4 work=$5
mkdir -p "$work"
count=0
for src in "$gen"/*/*_wasm.c; do
  spec=$(basename "$(dirname "$src")")
  obj=$work/$spec.o
  "$clang" --target=wasm32 -O2 -Werror -I "$include" -I "$(dirname "$src")" -c "$src" -o "$obj"
  other=$("$nm" -u "$obj" | awk '{print $NF}' |
    grep -v -E "^(qg_[a-z0-9_]+|${spec}_[a-z0-9_]+|__stack_pointer|__indirect_function_table)$" || true)
  if [ -n "$other" ]; then
    echo "freestanding_check: $src calls outside qgen: $other" >&2
    exit 1
  fi
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "freestanding_check: no wasm files under $gen" >&2; exit 1; }
echo "freestanding_check: $count wasm files build with no C library and call nothing outside qgen"

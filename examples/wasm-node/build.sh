#!/bin/sh
# Builds kernels.wasm from spec.json: qgen's C for wasm (and scalar, the
# portable reference the run compares with), compiled by clang for wasm32
# (the wasm kernels with no C library headers at all) and linked with no
# libc and no imports, so a page can load it as well
# as node. Usage: build.sh QGEN OUT_DIR
set -eu
qgen=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
"$qgen" generate --spec "$here/spec.json" -o "$out/gen"
include=$(dirname "$(dirname "$qgen")")/include
[ -f "$include/qgen/kernel_support.h" ] || include="$here/../../include"
# the wasm kernels are freestanding: no C library headers (no sysroot)
clang-19 --target=wasm32 -O2 -I "$out/gen" -I "$include" -c "$out/gen/act_wasm.c" -o "$out/act_wasm.o"
# the scalar reference takes <math.h> from wasi-libc's headers; its
# object still calls nothing outside the module
clang-19 --target=wasm32-wasi -O2 -I "$out/gen" -I "$include" -c "$out/gen/act_scalar.c" -o "$out/act_scalar.o"
exports=""
for op in quantize dequantize fake_quant; do
  for isa in wasm scalar; do exports="$exports --export=act_${op}__$isa"; done
done
wasm-ld-19 --no-entry $exports --export=__heap_base "$out/act_wasm.o" "$out/act_scalar.o" -o "$out/kernels.wasm"
echo "$out/kernels.wasm"

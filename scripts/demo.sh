#!/usr/bin/env bash
# `make demo`: the default spec resolved, its kernels generated for every
# ISA, built for this machine (x86: scalar, AVX2, AVX-512) and cross-built
# for aarch64 (NEON) and riscv64 (RVV), run (the foreign ones under qemu)
# and checked against the reference, then the runtime's own report.
set -euo pipefail
build=${1:-build}
spec=${QGEN_DEMO_SPEC:-examples/specs/act_quint8.json}
qgen="$build/bin/qgen"
out="$build/demo"
name=$("$qgen" spec show "$spec" | sed -n 's/^  "name": "\(.*\)",$/\1/p')

"$qgen" spec check "$spec"
rm -rf "$out" && mkdir -p "$out"
"$qgen" generate --spec "$spec" --targets all -o "$out/gen"
echo "generated: $(cd "$out/gen" && ls | tr '\n' ' ')"

flags=(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -ffp-contract=off -Iinclude -I"$out/gen" -DDEMO_SPEC="$name" -DDEMO_HEADER="\"$name.h\"")
runtime=(runtime/*.c)
xx=(-I"$out/xxhash")
mkdir -p "$out/xxhash" && cp "$(dirname "$(find /usr/include -maxdepth 1 -name xxhash.h)")/xxhash.h" "$out/xxhash/"

build_for() { # arch compiler...; LDFLAGS for the link
  local arch=$1; shift
  local cc=("$@")
  local objs=()
  for isa_file in "$out/gen/${name}"_*.c; do
    local isa=${isa_file##*_}; isa=${isa%.c}
    local extra=()
    case "$arch/$isa" in
      x86_64/avx2) extra=(-mavx2 -mbmi2) ;;
      x86_64/avx512) extra=(-mavx512f -mavx512bw -mavx512vl -mavx512dq) ;;
      riscv64/rvv) extra=(-march=rv64gcv) ;;
    esac
    "${cc[@]}" "${flags[@]}" "${extra[@]}" -c "$isa_file" -o "$out/$arch-$isa.o"
    objs+=("$out/$arch-$isa.o")
  done
  local has=()
  case $arch in
    x86_64) has=(-DDEMO_HAS_AVX2 -DDEMO_HAS_AVX512) ;;
    aarch64) has=(-DDEMO_HAS_NEON) ;;
    riscv64) has=(-DDEMO_HAS_RVV) ;;
  esac
  "${cc[@]}" "${flags[@]}" "${has[@]}" "${xx[@]}" examples/demo/kernel_demo.c "${runtime[@]}" "${objs[@]}" \
    -o "$out/kernel_demo-$arch" ${LDFLAGS:-} -lm
}

echo "x86_64, this machine:"
build_for x86_64 cc
"$out/kernel_demo-x86_64" --time
echo "aarch64 NEON, under qemu-aarch64 (correctness only):"
LDFLAGS=-fuse-ld=lld build_for aarch64 clang-19 --target=aarch64-linux-gnu
qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/kernel_demo-aarch64"
for vlen in 128 1024; do
  echo "riscv64 RVV at VLEN $vlen, under qemu-riscv64 (correctness only):"
  [ -f "$out/kernel_demo-riscv64" ] || LDFLAGS=-fuse-ld=lld build_for riscv64 clang-19 --target=riscv64-linux-gnu -march=rv64gc
  qemu-riscv64 -L /usr/riscv64-linux-gnu -cpu "rv64,v=true,vlen=$vlen,vext_spec=v1.0,rvv_ta_all_1s=on,rvv_ma_all_1s=on" \
    "$out/kernel_demo-riscv64"
done
echo
"$build/bin/qgen_demo" "$spec"
echo
echo "Both backends (C and LLVM) side by side, fake_quant on every ISA (qgen compare; docs/compare.md):"
"$build/bin/qgen" compare --spec "$spec" --ops fake_quant --format md | sed -n '3,100p' | grep '^|'

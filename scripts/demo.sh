#!/usr/bin/env bash
# `make demo`: the default spec resolved, its kernels generated for every
# ISA, built for this machine and cross-built for the other architectures
# of the ISA table (`qgen targets`), run (the foreign ones under qemu)
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

flags=(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -pthread -ffp-contract=off -Iinclude -I"$out/gen" -DDEMO_SPEC="$name" -DDEMO_HEADER="\"$name.h\"")
runtime=(runtime/*.c)
xx=(-I"$out/xxhash" -I"$build/generated") # qg_isa_facts.h: the runtime's ISA facts, from targets/
mkdir -p "$out/xxhash" && cp "$(dirname "$(find /usr/include -maxdepth 1 -name xxhash.h)")/xxhash.h" "$out/xxhash/"

# The ISA table (targets/): per ISA its architecture, flags and runner.
. scripts/targets.sh
targets_load "$qgen" "$out/targets.tsv"
host=$(target_host)

build_for() { # arch compiler...; LDFLAGS for the link
  local arch=$1; shift
  local cc=("$@")
  local objs=()
  # no ISA flags: each generated file sets its own target
  for isa_file in "$out/gen/${name}"_*.c; do
    local isa=${isa_file##*_}; isa=${isa%.c}
    "${cc[@]}" "${flags[@]}" -c "$isa_file" -o "$out/$arch-$isa.o"
    objs+=("$out/$arch-$isa.o")
  done
  local list=""
  for isa in $(target_isas_of "$arch"); do list+="X($isa, QG_ISA_${isa^^}) "; done
  "${cc[@]}" "${flags[@]}" -DDEMO_ISAS="$list" "${xx[@]}" examples/demo/kernel_demo.c "${runtime[@]}" "${objs[@]}" \
    -o "$out/kernel_demo-$arch" ${LDFLAGS:-} -lm
}

echo "$host, this machine:"
build_for "$host" cc
"$out/kernel_demo-$host" --time | tee "$out/native.txt" | grep -v '^dispatch:'
for arch in $(target_archs); do
  [ "$arch" = "$host" ] && continue
  isa=$(target_isas_of "$arch" | head -1)
  read -r -a base <<< "$(target_field "$isa" 6) $(target_field "$isa" 7)"
  read -r -a run <<< "$(target_runner "$arch" scripts/wasi-run.mjs)"
  link=$(target_field "$isa" 14)
  if [ "${run[0]:-}" = node ]; then # wasm32 has no threads (docs/wasm.md)
    host_flags=("${flags[@]}") && flags=()
    for f in "${host_flags[@]}"; do [ "$f" = -pthread ] || flags+=("$f"); done
    LDFLAGS="-fuse-ld=lld $link" build_for "$arch" clang-19 "${base[@]}"
    flags=("${host_flags[@]}")
  else
    LDFLAGS="-fuse-ld=lld $link" build_for "$arch" clang-19 "${base[@]}"
  fi
  while IFS='|' read -r label _ cpu; do
    echo "$arch, $label, under ${run[0]} (correctness only):"
    "${run[@]}" ${cpu:+-cpu "$cpu"} "$out/kernel_demo-$arch"
  done < <(target_runs "$arch")
done
echo
# The generated kernels beside PyTorch 1.13 on the same op, size and
# qparams, one thread each, measured now (medians of 7).
read -r _ isa qgen_rate scale zp channels qmin qmax < <(grep '^dispatch:' "$out/native.txt")
torch_rate=$(/usr/bin/python3 - "$scale" "$zp" "$qmin" "$qmax" "$channels" <<'PY'
import statistics, sys, time
import torch
torch.set_num_threads(1)
scale, zp, qmin, qmax, ch = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
n = 1 << 20
x = torch.randn(n) * 2
if ch > 1:
    x = x.reshape(ch, n // ch)
    s, z = torch.full((ch,), scale), torch.full((ch,), zp, dtype=torch.int32)
    op = lambda: torch.fake_quantize_per_channel_affine(x, s, z, 0, qmin, qmax)
else:
    op = lambda: torch.fake_quantize_per_tensor_affine(x, scale, zp, qmin, qmax)
op()
times = []
for _ in range(7):
    t0 = time.perf_counter(); op(); times.append(time.perf_counter() - t0)
print("%.1f" % (n / statistics.median(times) * 1e-6))
PY
)
echo "fake_quant of 2^20 floats, one thread, this run:"
echo "  qgen ($isa kernels, with the gradient mask): $qgen_rate Melem/s"
echo "  PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)') fake_quantize_per_$([ "$channels" -gt 1 ] && echo channel || echo tensor)_affine: $torch_rate Melem/s"
awk -v a="$qgen_rate" -v b="$torch_rate" 'BEGIN { printf "  ratio: qgen is %.1fx PyTorch\n", a / b }'
echo
"$build/bin/qgen_demo" "$spec"
echo
echo "Both backends (C and LLVM) side by side, fake_quant on every ISA (qgen compare; docs/compare.md):"
"$build/bin/qgen" compare --spec "$spec" --ops fake_quant --format md | sed -n '3,100p' | grep '^|'
echo
echo "From Python: a QAT CNN with torch's default QAT modules and with qgen.torch's, side by side (docs/python.md):"
PYTHONPATH="$build/python" XDG_CACHE_HOME="$build/demo-cache" /usr/bin/python3 -W ignore \
  "$(dirname "$0")/../examples/torch-qat/qat_cnn.py" --steps 12 | tail -3 | sed 's/^/  /'

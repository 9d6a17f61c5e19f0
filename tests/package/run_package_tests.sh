#!/bin/bash
# The installed package as users meet it: install to a temporary prefix,
# build every example against it and run it (the cross builds under qemu),
# with both backends; then check that editing a spec regenerates only its
# own kernels and that a bad spec fails the build with the spec's error.
#
# usage: run_package_tests.sh BUILD_DIR SOURCE_DIR WORK_DIR CROSS(0|1)
set -u
build=$1 src=$2 work=$3 cross=$4
prefix=$work/prefix
failures=0
rm -rf "$work" && mkdir -p "$work"

step() { printf '== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*"; failures=$((failures + 1)); }

# configure + build an example; extra arguments go to the configure step
build_example() {
  local name=$1 dir=$2; shift 2
  if ! cmake -S "$src/examples/$name" -B "$dir" "$@" >"$dir.log" 2>&1 ||
     ! cmake --build "$dir" -j 2 >>"$dir.log" 2>&1; then
    tail -30 "$dir.log"
    fail "$name: build ($*)"
    return 1
  fi
}

# run a program; its last line must contain $1
run_expect() {
  local want=$1; shift
  local out
  out=$("$@" 2>&1); local rc=$?
  printf '%s\n' "$out" | sed 's/^/   | /'
  if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | tail -1 | grep -q "$want"; then
    fail "$* (exit $rc)"
  fi
}

step "cmake --install to $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail install; exit 1; }
for f in bin/qgen lib/libqgen_rt.a lib/libqgen_rt.so lib/libqgen.a include/qgen/jit.h lib/cmake/QGen/QGenConfig.cmake \
         lib/cmake/QGen/QGenConfigVersion.cmake lib/pkgconfig/qgen.pc lib/pkgconfig/qgen-jit.pc lib/libqgen.so \
         share/man/man1/qgen.1 share/bash-completion/completions/qgen; do
  [ -e "$prefix/$f" ] || fail "missing $f in the install"
done
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs qgen | grep -q -- "-lqgen_rt -lm" || fail "pkg-config qgen"

step "the Python package from the install"
pydir=$(ls -d "$prefix"/lib/python3.*/dist-packages)
grep -qv "^/" "$pydir/qgen/_libpath.txt" || fail "_libpath.txt: expected a path relative to the package"
pyout=$(cd "$work" && PYTHONPATH="$pydir" XDG_CACHE_HOME="$work/py-cache" /usr/bin/python3 -c '
import numpy, qgen
k = qgen.Kernels(qgen.Spec.preset("torch.qnnpack.activation"))
y, m = k.fake_quant(numpy.array([0.5, -1.0, 300.0], dtype=numpy.float32), [0.5], [0])
print(y.tolist(), m.tolist(), qgen.__file__)' 2>&1)
echo "$pyout" | grep -q "^\[0.5, 0.0, 127.5\] \[1, 0, 0\] $prefix/" || fail "python package: $pyout"

step "plain-make: qgen generate, make and pkg-config, no CMake"
d=$work/plain-make
cp -r "$src/examples/plain-make" "$d"
# the README's command as written: the variables on make's command line
if (cd "$d" && env -u PKG_CONFIG_PATH make PKG_CONFIG_PATH="$prefix/lib/pkgconfig" QGEN="$prefix/bin/qgen") >"$d.log" 2>&1; then
  run_expect "every step agrees with the reference" "$d/plain"
else
  tail -30 "$d.log"
  fail "plain-make: build"
fi

step "gguf-row: Q8_0 and Q4_K rows against ggml's reference"
d=$work/gguf-row
cp -r "$src/examples/gguf-row" "$d"
if (cd "$d" && env -u PKG_CONFIG_PATH make PKG_CONFIG_PATH="$prefix/lib/pkgconfig" QGEN="$prefix/bin/qgen") >"$d.log" 2>&1; then
  run_expect "every row equals ggml's reference" "$d/gguf_row" \
    "$src/.deps/ggml/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
else
  tail -30 "$d.log"
  fail "gguf-row: build"
fi

for backend in c llvm; do
  step "downstream-cmake, native, $backend backend"
  d=$work/downstream-$backend
  build_example downstream-cmake "$d" -DCMAKE_PREFIX_PATH="$prefix" -DKERNEL_BACKEND=$backend &&
    run_expect "all kernels agree" "$d/downstream"
done
for ex in ptq-conv-bias:"every output is 255" qat-loop:"trained" ; do
  name=${ex%%:*} want=${ex#*:}
  step "$name, native"
  build_example "$name" "$work/$name" -DCMAKE_PREFIX_PATH="$prefix" && run_expect "$want" "$work/$name/$name"
done
step "jit-host, native"
if build_example jit-host "$work/jit-host" -DCMAKE_PREFIX_PATH="$prefix"; then
  for spec in act weight; do
    XDG_CACHE_HOME=$work/cache run_expect "every op agrees" "$work/jit-host/jit-host" \
      "$src/examples/downstream-cmake/specs/$spec.json"
  done
  # the second run of a spec loads it from the disk cache
  XDG_CACHE_HOME=$work/cache "$work/jit-host/jit-host" "$src/examples/downstream-cmake/specs/act.json" |
    head -1 | grep -q "from the disk cache" || fail "jit-host: no disk-cache hit on the second run"
fi
step "jit-host without CMake: cc and pkg-config qgen-jit"
d=$work/jit-host-pc
mkdir -p "$d"
if cc -O2 -ffp-contract=off -D_POSIX_C_SOURCE=200809L "$src/examples/jit-host/main.c" -o "$d/jit-host" \
  $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs qgen-jit) >"$d.log" 2>&1; then
  XDG_CACHE_HOME=$work/cache run_expect "every op agrees" "$d/jit-host" "$src/examples/downstream-cmake/specs/act.json"
else
  cat "$d.log"
  fail "jit-host: cc with pkg-config qgen-jit"
fi

if [ "$cross" = 1 ]; then
  # every other architecture of the ISA table, each scalable ISA at its
  # smallest and largest tested width
  . "$src/scripts/targets.sh"
  targets_load "$prefix/bin/qgen" "$work/targets.tsv"
  for arch in $(target_archs); do
    [ "$arch" = "$(target_host)" ] && continue
    # qemu, or node with the package's WASI runner (wasm32)
    read -r -a run <<< "$(target_runner "$arch" "$prefix/share/qgen/toolchains/wasi-run.mjs")"
    [ ${#run[@]} -gt 0 ] || continue
    backends="c llvm"
    # wasm32: the C backend here (each build compiles the whole runtime;
    # kernels.wasm32.* run both backends' kernels of every test spec)
    [ "${run[0]}" = node ] && backends=c
    for backend in $backends; do
      step "downstream-cmake, $arch ($backend backend), under ${run[0]}"
      d=$work/downstream-$arch-$backend
      build_example downstream-cmake "$d" -DQGen_DIR="$prefix/lib/cmake/QGen" -DKERNEL_BACKEND=$backend \
        -DCMAKE_TOOLCHAIN_FILE="$prefix/share/qgen/toolchains/$arch.cmake" || continue
      while IFS='|' read -r label run_isa cpu; do
        step "  $label"
        QGEN_ISA=$run_isa run_expect "all kernels agree" "${run[@]}" ${cpu:+-cpu "$cpu"} "$d/downstream"
      done < <(target_runs "$arch" | awk -F'|' '$2 == "" || !seen[$2]++ { print } { last[$2] = $0 }
                                                END { for (i in last) if (i != "") print last[i] }')
    done
  done
fi

step "editing one spec regenerates only its kernels"
proj=$work/edit-project
cp -r "$src/examples/downstream-cmake" "$proj"
d=$work/edit-build
if cmake -S "$proj" -B "$d" -DCMAKE_PREFIX_PATH="$prefix" >"$d.log" 2>&1 && cmake --build "$d" >>"$d.log" 2>&1; then
  out=$(cmake --build "$d" 2>&1)
  printf '%s\n' "$out" | grep -q "qgen:" && fail "a rebuild with nothing changed ran qgen"
  sed -i 's/"averaging_constant": 0.1/"averaging_constant": 0.2/' "$proj/specs/act.json"
  out=$(cmake --build "$d" 2>&1)
  printf '%s\n' "$out" | grep "qgen:" | sed 's/^/   | /'
  printf '%s\n' "$out" | grep -q "qgen: act kernels" || fail "editing act.json did not regenerate act"
  printf '%s\n' "$out" | grep -q "qgen: weight kernels" && fail "editing act.json regenerated weight"
  grep -q '"averaging_constant": 0.2' "$d/qgen/act/act.h" || fail "act.h does not show the edit"

  step "a bad spec fails the build with the spec's error"
  sed -i 's/"dtype": "qint8"/"dtype": "qint9"/' "$proj/specs/weight.json"
  out=$(cmake --build "$d" 2>&1); rc=$?
  printf '%s\n' "$out" | grep -E "weight.json|dtype" | head -5 | sed 's/^/   | /'
  [ $rc -ne 0 ] || fail "the build with a bad spec succeeded"
  printf '%s\n' "$out" | grep -q "specs/weight.json" || fail "the error does not name the spec file"
  printf '%s\n' "$out" | grep -q "qint9" || fail "the error does not name the bad value"
else
  tail -30 "$d.log"
  fail "edit-project: first build"
fi

if [ $failures -ne 0 ]; then
  echo "$failures package check(s) failed"
  exit 1
fi
echo "every package check passed"

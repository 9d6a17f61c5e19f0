#!/bin/sh
# Shows that qgen-difftest catches bugs planted in the generator, one at a
# time (tests/difftest/planted/*.patch: a tail one element short, half_up
# and half_away swapped, a channel walk that wraps one channel early). Each
# is applied to a copy of the working tree, the tester rebuilt and run on
# the seed `make test` uses; it must report a mismatch and its
# reproduction. Not part of `make test`: it builds the generator again.
# usage: tests/difftest/planted_bugs.sh [WORK_DIR]
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/qgen-planted}
rm -rf "$work"
mkdir -p "$work/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$work/src")
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DQGEN_KERNEL_TESTS=OFF >"$work/configure.log"
status=0
for p in "$src"/tests/difftest/planted/*.patch; do
  name=$(basename "$p" .patch)
  patch -d "$work/src" -p1 <"$p" >/dev/null
  cmake --build "$work/build" --target qgen_difftest -j "$(nproc)" >"$work/build-$name.log"
  if "$work/build/bin/qgen-difftest" --seed 1 --specs 50 --work "$work/dt-$name" >"$work/$name.log"; then
    echo "$name: NOT caught"
    status=1
  else
    echo "$name: caught ($(grep -c '^MISMATCH' "$work/$name.log") specs)"
    grep -m1 -A1 '^MISMATCH' "$work/$name.log"
  fi
  patch -d "$work/src" -R -p1 <"$p" >/dev/null
done
exit $status

#!/usr/bin/env bash
# The test suite with a clock on each phase: `make test` (full: both
# builds, then both trees' tests) and `make test-fast` (fast: the gcc build
# and the tests labelled fast). Prints each phase's wall time and the ten
# slowest tests, and keeps every phase's ctest output in
# <build>/Testing/phases/ (docs/testing.md).
# usage: scripts/test.sh full|fast BUILD [BUILD_SAN]   (MAKE: the make to build with)
set -uo pipefail
mode=$1 build=$2 build_san=${3:-}
jobs=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")/.." && pwd)
make=${MAKE:-make}
phases=()
status=0

# timed NAME COMMAND...: a phase that must pass for the tests to run.
timed() {
  local name=$1 start=$SECONDS
  shift
  "$@" || { echo "test.sh: $name failed" >&2; exit 1; }
  phases+=("$name|$((SECONDS - start))")
}
timed "deps (apt, npm)" "$here/scripts/install-deps.sh"
timed "build gcc" "$make" -C "$here" --no-print-directory build BUILD="$build"
if [ "$mode" = full ] && [ -n "$build_san" ]; then
  timed "build asan" "$make" -C "$here" --no-print-directory build-asan BUILD_SAN="$build_san"
fi
logs=$build/Testing/phases
mkdir -p "$logs"
rm -f "$logs"/*.log

# ctest_phase NAME DIR ARGS...: one ctest run, its time and its log.
ctest_phase() {
  local name=$1 dir=$2
  shift 2
  local start=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$logs/$name.log"
  local rc=${PIPESTATUS[0]}
  phases+=("ctest $name|$((SECONDS - start))")
  [ "$rc" -eq 0 ] || status=1
}

if [ "$mode" = full ]; then
  ctest_phase gcc "$build"
  dirs=("$build/kernel-manifest")
  if [ -n "$build_san" ]; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest_phase asan "$build_san"
    dirs+=("$build_san/kernel-manifest")
  fi
  # every combination the kernel tests check, as the committed manifest lists it
  sh "$here/tests/kernels/check_manifest.sh" --full "$here/tests/kernels/coverage.txt" "${dirs[@]}" || status=1
else
  ctest_phase fast "$build" -L fast
fi

echo
echo "== phases (wall seconds) =="
ctest_total=0
for p in "${phases[@]}"; do
  printf '  %-22s %6s s\n' "${p%%|*}" "${p#*|}"
  case $p in ctest*) ctest_total=$((ctest_total + ${p#*|})) ;; esac
done
printf '  %-22s %6s s\n' "ctest, all phases" "$ctest_total"
echo "== the ten slowest tests =="
for f in "$logs"/*.log; do
  sed -n "s/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec\$/\2 \1 ($(basename "$f" .log))/p" "$f"
done | sort -rn | head -10 | awk '{ printf "  %8.2f s  %s %s\n", $1, $2, $3 }'
# one closing line for every phase together (skipped tests are not passes)
total=0 failed=0 skipped=0
for f in "$logs"/*.log; do
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$f" | tail -1)
  [ -n "$line" ] || { status=1; continue; }
  t=${line##* out of } fl=${line#*passed, }
  total=$((total + t)) failed=$((failed + ${fl%% *}))
  skipped=$((skipped + $(grep -cE '\*\*\*(Skipped|Not Run)' "$f")))
done
[ $status -eq 0 ] || [ $failed -gt 0 ] || failed=1 # a phase or the manifest failed without a failed test
echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
exit $status

#!/usr/bin/env bash
# `make fuzz`: every libFuzzer target of the sanitizer build for the given
# time, one after the other, from its seed corpus; a summary line each
# (executions, coverage, findings).
# Then, with BUILD (the plain build and its cross builds): the differential
# tester for SECONDS on specs past those `make test` draws, every spec also
# under qemu; the fault sweep over every call, not the first of each site;
# and processes sharing a JIT cache while it is corrupted, for longer.
# usage: scripts/fuzz.sh BUILD_SAN SECONDS [BUILD]
set -uo pipefail
build=$1 seconds=$2 plain=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/fuzz/findings"
status=0
for t in spec npy state cache run_args kernels; do
  corpus=$build/fuzz/corpus-$t
  mkdir -p "$corpus"
  dict=()
  [ -f "$src/fuzz/dict/$t.dict" ] && dict=(-dict="$src/fuzz/dict/$t.dict")
  log=$build/fuzz/$t.log
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/findings/$t-" "${dict[@]}" "$corpus" "$src/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "fuzz_$t: ${seconds}s, ${execs:-?} executions, ${cov:-cov: ?}, exit $rc"
  [ $rc -eq 0 ] || { status=1; tail -20 "$log"; }
done
if [ -n "$plain" ]; then
  log=$build/fuzz/difftest.log
  "$plain/bin/qgen-difftest" --seed "${FUZZ_SEED:-2}" --first 1000 --seconds "$seconds" --qemu 1000000000 \
    --cross "$plain/kernel-tests" --work "$build/fuzz/difftest-work" >"$log" 2>&1
  rc=$?
  echo "qgen-difftest: $(tail -1 "$log"), exit $rc (specs and coverage in $log)"
  [ $rc -eq 0 ] || { status=1; grep -A1 -E '^(MISMATCH|FAILED)' "$log" | head -20; }
  log=$build/fuzz/faults.log
  python3 "$src/tests/faults/fault_sweep.py" --all --qgen "$build/tests/faults/qgen_faults" \
    --jit "$build/tests/faults/fault_jit" --work "$build/fuzz/faults-work" >"$log" 2>&1
  rc=$?
  echo "fault sweep (every call): $(tail -1 "$log"), exit $rc (per operation in $log)"
  [ $rc -eq 0 ] || { status=1; tail -20 "$log"; }
  log=$build/fuzz/cache_processes.log
  python3 "$src/tests/concurrency/cache_processes.py" "$plain/tests/concurrency/jit_stress" \
    "$build/fuzz/cache-work" 8 200 >"$log" 2>&1
  rc=$?
  echo "cache shared by 8 processes: $(tail -1 "$log"), exit $rc"
  [ $rc -eq 0 ] || status=1
fi
exit $status

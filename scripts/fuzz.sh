#!/usr/bin/env bash
# `make fuzz`: every libFuzzer target of the sanitizer build for the given
# time, one after the other, from its seed corpus; a summary line each
# (executions, coverage, findings).
# usage: scripts/fuzz.sh BUILD_SAN SECONDS
set -uo pipefail
build=$1 seconds=$2
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
exit $status

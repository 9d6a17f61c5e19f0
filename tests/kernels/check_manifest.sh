#!/bin/sh
# Compares the coverage manifest of a run (one line per kernel test, in
# each DIR) with the committed one (docs/testing.md). Every line the run
# wrote must be committed as it is; with --full (`make test`, both trees)
# every committed line must also have been written, except those of an ISA
# this CPU lacks (their tests wrote "skipped", and ctest counted them so).
# usage: check_manifest.sh [--full] COMMITTED DIR...
# QGEN_WRITE_MANIFEST=1 writes the run's lines to COMMITTED instead.
full=0
if [ "$1" = --full ]; then
  full=1
  shift
fi
committed=$1
shift
run=$(mktemp) && skipped=$(mktemp) && trap 'rm -f "$run" "$skipped"' EXIT
for d in "$@"; do cat "$d"/* 2>/dev/null; done >"$run.all"
grep -v ' skipped$' "$run.all" | LC_ALL=C sort -u >"$run"
sed -n 's/ skipped$//p' "$run.all" >"$skipped"
rm -f "$run.all"
lines=$(wc -l <"$run")
if [ "${QGEN_WRITE_MANIFEST:-0}" = 1 ]; then
  cp "$run" "$committed" && echo "wrote $lines lines to $committed"
  exit 0
fi
if [ ! -f "$committed" ]; then
  echo "no committed manifest $committed (QGEN_WRITE_MANIFEST=1 writes it)"
  exit 1
fi
status=0
extra=$(LC_ALL=C comm -23 "$run" "$committed")
if [ -n "$extra" ]; then
  echo "checked, but not as the committed manifest says (a class gained or lost, or a new test):"
  printf '%s\n' "$extra" | head -20
  status=1
fi
if [ $full = 1 ]; then
  missing=$(LC_ALL=C comm -13 "$run" "$committed" | while read -r spec backend arch isa vl rest; do
    grep -qxF "$spec $backend $arch ${isa%%>*} $vl" "$skipped" || echo "$spec $backend $arch $isa $vl $rest"
  done)
  if [ -n "$missing" ]; then
    echo "committed, but not checked by this run:"
    printf '%s\n' "$missing" | head -20
    status=1
  fi
fi
echo "coverage manifest: $lines lines checked, $(wc -l <"$committed") committed$([ $full = 1 ] && echo ', compared in full')"
exit $status

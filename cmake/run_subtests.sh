#!/bin/sh
# Runs the ctest of a kernel-test build and passes its verdict up: failure
# if any test failed, exit code 77 (the parent's SKIP_RETURN_CODE) if any was
# skipped, so that an ISA this CPU lacks is never counted as a pass.
# usage: run_subtests.sh CTEST DIR
out=$("$1" --test-dir "$2" --output-on-failure -j 2 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || exit 1
if printf '%s\n' "$out" | grep -q "Skipped"; then
  echo "some kernel tests were skipped: this CPU lacks their ISA"
  exit 77
fi
exit 0

#!/usr/bin/env bash
# `make demo`: the default spec, resolved, then run end to end on generated data.
set -euo pipefail
build=${1:-build}
spec=${QGEN_DEMO_SPEC:-examples/specs/act_quint8.json}
"$build/bin/qgen" spec check "$spec"
"$build/bin/qgen_demo" "$spec"

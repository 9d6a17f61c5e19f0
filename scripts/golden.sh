#!/usr/bin/env bash
# The generated output of every kernel test spec and preset, on every ISA,
# from both backends: for checking that a generator change leaves it as it
# was (docs/testing.md, "Generated output before and after").
#   scripts/golden.sh snap QGEN DIR     C files and LLVM IR into DIR
#   scripts/golden.sh diff OLD NEW QGEN the files that differ; where only the
#                                       text does, whether the machine code
#                                       (clang-19 -O2 with each ISA's flags
#                                       from `QGEN targets`, or llc-19) does too
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

snap() {
  local qgen dir=$2
  qgen=$(realpath "$1")
  rm -rf "$dir"
  mkdir -p "$dir"
  local specs=("$here"/tests/kernels/specs/*.json)
  for preset in $("$qgen" spec presets | awk '{print $1}' | grep -v '^#'); do
    specs+=("$preset")
  done
  for s in "${specs[@]}"; do
    local name
    name=$(basename "$s" .json)
    for emit in c ll; do
      # specs only scalar serves (qint32, float zero points) are generated for it alone
      for targets in all scalar; do
        # a relative -o: the files' banners then read the same in every snapshot
        (cd "$dir" && "$qgen" generate --spec "$s" --emit "$emit" --targets $targets --quiet --no-check \
          -o "$name.$emit" >/dev/null 2>&1) && break
        if [ $targets = all ]; then
          echo "golden: $name --emit $emit: scalar alone ($("$qgen" generate --spec "$s" --emit "$emit" --targets all \
            --quiet --no-check -o "$dir/.refused" 2>&1 | head -1))"
        else
          echo "golden: $name --emit $emit failed" >&2
        fi
      done
    done
  done
  rm -rf "$dir/.refused"
}

# machine code of one generated file (its ISA's compiler flags from
# `qgen targets`: QGEN_TARGETS holds that table), its path left out
code_of() {
  local f=$1 tmp isa flags
  tmp=$(mktemp -d)
  case $f in
    *.c)
      isa=$(basename "$f" .c)
      isa=${isa##*_}
      flags=$(printf '%s\n' "$QGEN_TARGETS" | awk -F'\t' -v isa="$isa" '$1 == isa { print $6, $7 }' | sed 's/ -$//')
      # shellcheck disable=SC2086
      clang-19 $flags -O2 -c -I "$(dirname "$f")" -I "$here/include" "$f" -o "$tmp/o.o" 2>/dev/null
      ;;
    *.ll) llc-19 -O2 -filetype=obj "$f" -o "$tmp/o.o" 2>/dev/null ;;
  esac
  [ -f "$tmp/o.o" ] && llvm-objdump-19 -d --no-show-raw-insn "$tmp/o.o" | tail -n +4
  rm -rf "$tmp"
}

# one differing file: "text only", or "code differs" / "only in one"
compare_one() {
  local old=$1 new=$2 rel=$3
  if [ ! -f "$old/$rel" ] || [ ! -f "$new/$rel" ]; then
    echo "only in one: $rel"
  elif [ "$(code_of "$old/$rel")" != "$(code_of "$new/$rel")" ]; then
    echo "code differs: $rel"
  else
    echo "text only: $rel"
  fi
}

diff_dirs() {
  local old=$1 new=$2 qgen=$3 out
  QGEN_TARGETS=$("$qgen" targets)
  export -f compare_one code_of
  export here QGEN_TARGETS
  out=$(cd "$old" && diff -rq . "$new" 2>/dev/null |
    sed -n "s|^Files \./\([^ ]*\) and .*|\1|p; s|^Only in \(.*\): \(.*\)|\1/\2|p" |
    xargs -P "$(nproc)" -I{} bash -c 'compare_one "$0" "$1" "$2"' "$old" "$new" {} | sort)
  [ -n "$out" ] && echo "$out"
  local text code
  text=$(printf '%s' "$out" | grep -c . || true)
  code=$(printf '%s' "$out" | grep -vc '^text only' || true)
  echo "golden: $text files differ in text, $code of them in machine code or presence"
  [ "$code" -eq 0 ]
}

case ${1:-} in
  snap) snap "$2" "$3" ;;
  diff) diff_dirs "$2" "$3" "$4" ;;
  *) echo "usage: scripts/golden.sh snap QGEN DIR | diff OLD NEW QGEN" >&2; exit 2 ;;
esac

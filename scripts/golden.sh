#!/usr/bin/env bash
# The generated output of every kernel test spec and preset, on every ISA,
# from both backends: for checking that a generator change leaves it as it
# was (docs/testing.md, "Generated output before and after").
#   scripts/golden.sh snap QGEN DIR     C files and LLVM IR into DIR
#   scripts/golden.sh diff OLD NEW      the files that differ; where only the
#                                       text does, whether the machine code
#                                       (clang-19 -O2, objdump -d) differs too
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

snap() {
  local qgen=$1 dir=$2
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
        "$qgen" generate --spec "$s" --emit "$emit" --targets $targets --quiet --no-check \
          -o "$dir/$name.$emit" >/dev/null 2>&1 && break
        [ $targets = scalar ] && echo "golden: $name --emit $emit failed" >&2
      done
    done
  done
}

# machine code of one generated file, with the file's own path left out
code_of() {
  local f=$1 tmp
  tmp=$(mktemp -d)
  case $f in
    *_neon.c | *_sve*.c) clang-19 --target=aarch64-linux-gnu -O2 -c -I "$(dirname "$f")" -I "$here/include" "$f" -o "$tmp/o.o" 2>/dev/null ;;
    *_rvv*.c) clang-19 --target=riscv64-linux-gnu -march=rv64gcv -O2 -c -I "$(dirname "$f")" -I "$here/include" "$f" -o "$tmp/o.o" 2>/dev/null ;;
    *.c) clang-19 -O2 -c -I "$(dirname "$f")" -I "$here/include" "$f" -o "$tmp/o.o" 2>/dev/null ;;
    *.ll) llc-19 -O2 -filetype=obj "$f" -o "$tmp/o.o" 2>/dev/null ;;
  esac
  [ -f "$tmp/o.o" ] && llvm-objdump-19 -d --no-show-raw-insn "$tmp/o.o" | tail -n +4
  rm -rf "$tmp"
}

diff_dirs() {
  local old=$1 new=$2 text=0 code=0
  while read -r rel; do
    if [ ! -f "$old/$rel" ] || [ ! -f "$new/$rel" ]; then
      echo "only in one: $rel"
      code=$((code + 1))
      continue
    fi
    text=$((text + 1))
    case $rel in
      *.c | *.ll)
        if [ "$(code_of "$old/$rel")" != "$(code_of "$new/$rel")" ]; then
          echo "code differs: $rel"
          code=$((code + 1))
        else
          echo "text only: $rel"
        fi
        ;;
      *) echo "differs: $rel" ;;
    esac
  done < <(cd "$old" && diff -rq . "$new" 2>/dev/null | sed -n "s|^Files \./\([^ ]*\) and .*|\1|p; s|^Only in \(.*\): \(.*\)|\1/\2|p")
  echo "golden: $text files differ in text, $code in machine code or presence"
  [ "$text" -eq 0 ]
}

case ${1:-} in
  snap) snap "$2" "$3" ;;
  diff) diff_dirs "$2" "$3" ;;
  *) echo "usage: scripts/golden.sh snap QGEN DIR | diff OLD NEW" >&2; exit 2 ;;
esac

# Shell access to the ISA table (targets/, as `qgen targets` prints it).
# Source it, then: targets_load QGEN_BINARY FILE; target_field ISA COLUMN;
# target_isas_of ARCH; target_archs; target_runs ARCH (lines "LABEL|ISA|CPU":
# every vector width a scalable ISA of ARCH is tested at, or one line with
# an empty CPU when ARCH has none); target_runner ARCH WASI_RUN (the words
# that run ARCH's programs here: qemu and its sysroot, or node with the
# WASI runner at WASI_RUN; nothing for the host's).
targets_load() { "$1" targets > "$2"; _targets_tsv=$2; }
target_field() {
  awk -F'\t' -v isa="$1" -v col="$2" 'NR > 1 && $1 == isa { v = $col; print (v == "-" ? "" : v) }' "$_targets_tsv"
}
target_isas_of() { awk -F'\t' -v arch="$1" 'NR > 1 && $2 == arch && $1 != "scalar" { print $1 }' "$_targets_tsv"; }
target_archs() { awk -F'\t' 'NR > 1 && $2 != "-" { print $2 }' "$_targets_tsv" | sort -u; }
target_host() { target_field scalar 2; }
target_runner() {
  local isa
  isa=$(target_isas_of "$1" | head -1)
  if [ -n "$(target_field "$isa" 8)" ]; then
    echo "$(target_field "$isa" 8) -L $(target_field "$isa" 9)"
  elif [ "$(target_field "$isa" 13)" = node-wasi ]; then
    echo "node --no-warnings $2"
  fi
}
target_runs() {
  local isa cpu widths bits c any=0
  for isa in $(target_isas_of "$1"); do
    cpu=$(target_field "$isa" 10)
    widths=$(target_field "$isa" 11)
    for bits in ${widths//,/ }; do
      c=${cpu//BYTES/$((bits / 8))}
      echo "$isa at $bits-bit vectors|$isa|${c//BITS/$bits}"
      any=1
    done
  done
  [ $any = 1 ] || echo "default CPU||"
}

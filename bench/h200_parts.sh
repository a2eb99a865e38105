#!/usr/bin/env bash
# Runs several bench scripts in one device-tool call and returns each one's results as its own
# archive $OUT/<part>.tgz (the device tool brings back at most 8 files), so a part that fails or runs
# out of time never costs the others' results. Binaries from $PTXBENCH_BIN (bench/stage_h200_binaries.sh).
#   PTXBENCH_BIN=$PWD/.carry/bin bench/h200_parts.sh restructure attention
# Parts: restructure (bench/h200_check_restructure.sh), attention, trusted_timing, exploits,
# or any NAME with a bench/NAME_h200.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
RETURN_DIR=${OUT:-/tmp/ptxbench-out}
mkdir -p "$RETURN_DIR"
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/build/bin}
for part in "$@"; do
  dir=/tmp/ptxbench-parts/$part
  rm -rf "$dir" && mkdir -p "$dir"
  start=$SECONDS
  if [ "$part" = restructure ]; then
    OUT=$dir bash bench/h200_check_restructure.sh > "$dir/part.log" 2>&1
  else
    OUT=$dir bash "bench/${part}_h200.sh" > "$dir/part.log" 2>&1
  fi
  rc=$?
  echo "part $part: exit $rc after $((SECONDS - start)) s" | tee -a "$dir/part.log"
  tar czf "$RETURN_DIR/$part.tgz" -C "$dir" .
done

#!/usr/bin/env bash
# A CMake compiler/linker launcher that records what each build step costs in CPU time, so that build
# speed can be measured on a machine other builds share (wall time there means nothing). Configure with
#   -DCMAKE_CXX_COMPILER_LAUNCHER=<this> -DCMAKE_CUDA_COMPILER_LAUNCHER=<this>
#   -DCMAKE_CXX_LINKER_LAUNCHER=<this> -DCMAKE_CUDA_LINKER_LAUNCHER=<this>
# and each step appends "user_s sys_s wall_s output" to $PTXBENCH_CPU_LOG (default: cpu_times.log in
# the directory ninja runs the step in, the build folder). /usr/bin/time counts the step's children
# too (nvcc's cicc/ptxas, collect2/ld). bench/cpu/cpu_report.py sums the log per target and area.
set -u
log=${PTXBENCH_CPU_LOG:-$PWD/cpu_times.log}
out="?"
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out=$a
  prev=$a
done
t=$(mktemp)
/usr/bin/time -f "%U %S %e" -o "$t" "$@"
rc=$?
# One line per step, appended in one write so parallel steps do not interleave.
printf '%s %s\n' "$(tail -n 1 "$t")" "$out" >>"$log"
rm -f "$t"
exit "$rc"

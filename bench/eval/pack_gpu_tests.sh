#!/usr/bin/env bash
# Runs the GPU tests of the sm90a knowledge-pack wrappers (tests/gpu, target ptxbench_gpu_pack_tests)
# on a Hopper GPU (~1 min) and writes the run's summary.
#
#   bench/eval/pack_gpu_tests.sh [BINARY]
#     BINARY      default $PTXBENCH_BIN/ptxbench_gpu_pack_tests (built here with
#                 `cmake --build build --target ptxbench_gpu_pack_tests`; it links cudart and gtest
#                 statically, so it can be carried to the GPU host as is)
#
# Results in bench/results/<gpu>/pack_gpu_tests/ ($OUT/pack_gpu_tests.tar.gz): pack_sm90a_gpu_tests.txt.
# Exit status: the test binary's (0 = every test passed; skipped tests are listed as SKIPPED).
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bin=${1:-$BIN/ptxbench_gpu_pack_tests}
if [ ! -x "$bin" ]; then
  echo "pack_gpu_tests: $bin not found; build it with: cmake --build build --target ptxbench_gpu_pack_tests" >&2
  exit 3
fi
bench_gpu pack_gpu_tests
out="$RESULTS/pack_sm90a_gpu_tests.txt"
{
  echo "# ptxbench: GPU tests of the sm90a knowledge-pack wrappers (tests/gpu)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "built from: $("$(dirname "$bin")/ptxbench" --version 2>/dev/null || git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader -i "${PTXBENCH_DEVICE:-0}" 2>&1 | sed 's/^/gpu: /'
  echo
} > "$out"
start=$(date +%s)
timeout 240 "$bin" --gtest_color=no 2>&1 | tee -a "$out"
status=${PIPESTATUS[0]}
echo "wall_seconds: $(( $(date +%s) - start ))" | tee -a "$out"
echo "exit_status: $status" | tee -a "$out"
echo "summary written to $out"
exit "$status"

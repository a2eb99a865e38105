#!/usr/bin/env bash
# Runs the GPU tests of the sm90a knowledge-pack wrappers (tests/gpu, target ptxbench_gpu_pack_tests)
# on a Hopper GPU and writes the run's summary to bench/results/<name>/pack_sm90a_gpu_tests.txt.
#
#   bench/run_pack_gpu_tests.sh [BINARY] [RESULT_DIR]
#     BINARY      default build/bin/ptxbench_gpu_pack_tests (built here with
#                 `cmake --build build --target ptxbench_gpu_pack_tests`; it links cudart and gtest
#                 statically, so it can be carried to the GPU host as is)
#     RESULT_DIR  default bench/results/h200
#
# Exit status: the test binary's (0 = every test passed; skipped tests are listed as SKIPPED).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/ptxbench_gpu_pack_tests}
out_dir=${2:-bench/results/h200}
if [ ! -x "$bin" ]; then
  echo "run_pack_gpu_tests: $bin not found; build it with: cmake --build build --target ptxbench_gpu_pack_tests" >&2
  exit 3
fi
mkdir -p "$out_dir"
out="$out_dir/pack_sm90a_gpu_tests.txt"
{
  echo "# ptxbench: GPU tests of the sm90a knowledge-pack wrappers (tests/gpu)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "built from: $("$(dirname "$bin")/ptxbench" --version 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | sed 's/^/gpu: /'
  else
    echo "gpu: nvidia-smi not available"
  fi
  echo
} > "$out"
start=$(date +%s)
"$bin" --gtest_color=no 2>&1 | tee -a "$out"
status=${PIPESTATUS[0]}
echo "wall_seconds: $(( $(date +%s) - start ))" | tee -a "$out"
echo "exit_status: $status" | tee -a "$out"
echo "summary written to $out"
exit "$status"

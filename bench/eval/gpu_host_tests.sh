#!/usr/bin/env bash
# The CPU test binaries' tests that need cuobjdump or a GPU, on the GPU host (~2 min): the pack SASS
# tests incl. Blackwell (ptxbench_prompts_tests PackSass*), the disassembler (ptxbench_sass_tests
# Disassembler*), the agent loop on the GPU (ptxbench_agent_tests TurnLoopTest.OnTheGpu*), the harness's
# batched device checks (ptxbench_gpu_device_checks_tests, a few seconds). They skip
# visibly on the build machine. Binaries from bench/stage_binaries.sh (libcpp-httplib, the tests'
# fake model server, is carried beside them: the GPU host lacks it).
# Results in bench/results/<gpu>/gpu_host_tests/ ($OUT/gpu_host_tests.tar.gz): gpu_host_cpu_tests.txt.
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu gpu_host_tests
# The test binaries find this checkout (suite, tests/fixtures) through PTXBENCH_ROOT and the carried
# binaries through PTXBENCH_BIN, both exported by bench/lib/env.sh, not through the build machine's
# paths compiled into them.
out="$RESULTS/gpu_host_cpu_tests.txt"
: > "$out"
fails=0
for t in "ptxbench_prompts_tests PackSass*" "ptxbench_sass_tests Disassembler*" \
         "ptxbench_agent_tests TurnLoopTest.OnTheGpu*" "ptxbench_gpu_device_checks_tests DeviceChecksGpu*"; do
  set -- $t
  LD_LIBRARY_PATH="$BIN:$LD_LIBRARY_PATH" timeout 180 "$BIN/$1" --gtest_filter="$2" >> "$out" 2>&1
  rc=$?
  echo "GPU-host subset of $1 ($2): exit $rc"
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
done
tail -3 "$out"
exit "$fails"

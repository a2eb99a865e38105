#!/usr/bin/env bash
# One device call: the tests of the CPU test binary that need cuobjdump or a GPU (pack SASS checks,
# the disassembler on real output, the agent loop on a GPU). libcpp-httplib (used by the test's fake
# model server) is carried beside the binary: the GPU host does not have it.
set -uo pipefail
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/.carry/bin}
source bench/env.sh
if [ "$ROOT" != /work/main ] && [ ! -e /work/main ]; then
  mkdir -p /work && ln -sfn "$ROOT" /work/main
  mkdir -p "$ROOT/build" && ln -sfn "$PTXBENCH_BIN" "$ROOT/build/bin"
fi
LD_LIBRARY_PATH="$PTXBENCH_BIN:$LD_LIBRARY_PATH" timeout 300 "$PTXBENCH_BIN/ptxbench_tests" \
  --gtest_filter='PackSass*:Disassembler*:TurnLoopTest.OnTheGpu*' > "$OUT/gpu_host_cpu_tests.txt" 2>&1
echo "tests exit $?"; grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) " "$OUT/gpu_host_cpu_tests.txt" | tail -20

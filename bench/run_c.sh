#!/usr/bin/env bash
# One device call: the agent replay over the GEMM task (issue 6), the attention examples again
# (issue 4), and the tests that need cuobjdump or a GPU from the CPU test binary (issue 5 pack SASS
# checks, the disassembler on real output, the agent loop on the GPU).
set -uo pipefail
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/.carry/bin}
source bench/env.sh
# The test binary has the source tree's path compiled in; point it at this copy.
if [ "$ROOT" != /work/main ] && [ ! -e /work/main ]; then
  mkdir -p /work && ln -sfn "$ROOT" /work/main
  mkdir -p "$ROOT/build" && ln -sfn "$PTXBENCH_BIN" "$ROOT/build/bin"
fi
timeout 150 bash bench/agent_replay_h200.sh > "$OUT/agent_replay.txt" 2>&1
echo "agent replay exit $?"; tail -25 "$OUT/agent_replay.txt"
# one archive: the device tool returns at most 8 files
tar czf "$OUT/agent-replay-gemm.tgz" -C "$OUT" agent-replay-gemm && rm -rf "$OUT/agent-replay-gemm"
LD_LIBRARY_PATH="$PTXBENCH_BIN:$LD_LIBRARY_PATH" timeout 200 "$PTXBENCH_BIN/ptxbench_tests" --gtest_filter='PackSass*:Disassembler*:TurnLoopTest.OnTheGpu*' \
  > "$OUT/gpu_host_cpu_tests.txt" 2>&1
echo "tests exit $?"; grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) " "$OUT/gpu_host_cpu_tests.txt" | tail -15
timeout 300 bash bench/attention_h200.sh
ls -la "$OUT"

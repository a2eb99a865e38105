#!/usr/bin/env bash
# One device call: attention evidence (issue 4): cuDNN vs the independent fp32 reference (12
# combinations and more), the attention examples through `ptxbench eval`, our cuDNN vs PyTorch's;
# plus the Blackwell/Hopper pack disassembly tests (issue 5) when the test binary is carried.
set -uo pipefail
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/.carry/bin}
source bench/env.sh
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
timeout 200 "$PTXBENCH_BIN/ptxbench_gpu_attention_tests" > "$OUT/attention_gpu_tests.txt" 2>&1
echo "attention tests exit $?"; tail -5 "$OUT/attention_gpu_tests.txt"
if [ -x "$PTXBENCH_BIN/ptxbench_tests" ]; then
  timeout 120 "$PTXBENCH_BIN/ptxbench_tests" --gtest_filter='PackSass*:Disassembler*' > "$OUT/pack_sass_tests.txt" 2>&1
  echo "sass tests exit $?"; tail -4 "$OUT/pack_sass_tests.txt"
fi
timeout 420 bash bench/attention_h200.sh
tar czf "$OUT/attention_runs.tgz" -C "${PTXBENCH_CACHE:-/tmp/ptxbench-cache}" runs 2>/dev/null
ls -la "$OUT"

#!/usr/bin/env bash
# Issue-4 evidence on a Hopper GPU (~4 min): the attention examples through `ptxbench eval` against
# the cuDNN baselines (headline shapes, plain and causal, forward and backward); our cuDNN baselines
# against PyTorch's cuDNN path side by side in one process; the attention GPU tests (cuDNN against
# the independent fp32 reference, the graph variants), all with PyTorch's libcudnn when PyTorch has
# one (bench/lib/env.sh; bench/eval/attention_cudnn_system.sh repeats them with the system one).
# Results in bench/results/<gpu>/attention/ ($OUT/attention.tar.gz): attention_examples.{json,txt},
# attention_summary.json (against examples/manifest.json), attention_baseline_vs_torch.json,
# attention_gpu_tests.txt (long lines cut).
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu attention
cd "$ROOT" || exit 2
A=examples/attention
: > "$RESULTS/attention_examples.txt"
files=()
run() {  # task, then kernels
  local task=$1; shift
  echo "== $task: $*" | tee -a "$RESULTS/attention_examples.txt"
  timeout 150 "$BIN/ptxbench" eval "$@" --task "$task" --target "$PTXBENCH_TARGET" --sanitize-timeout 120 --call-timeout 30 \
    ${PTXBENCH_EVAL_FLAGS:-} --out "$RESULTS/att_$task.json" >> "$RESULTS/attention_examples.txt" 2>&1
  echo "exit $?" | tee -a "$RESULTS/attention_examples.txt"
  files+=("$RESULTS/att_$task.json")
}
run mha_with_lse_d128 $A/plain_fwd.cu $A/wgmma_fwd.cu
run mha_with_lse_d128_causal $A/plain_fwd_causal.cu $A/wgmma_fwd_causal.cu
run mha_bwd_d128 $A/plain_bwd.cu
run mha_bwd_d128_causal $A/plain_bwd_causal.cu
python3 bench/eval/summarize_evals.py --manifest examples/manifest.json --out "$RESULTS/attention_summary.json" \
  --merged-out "$RESULTS/attention_examples.json" "${files[@]}"
rc=$?
rm -f "${files[@]}"
echo "== baselines vs PyTorch"
timeout 60 python3 bench/eval/baseline_vs_torch.py --lib "$BIN/libptxbench_baseline.so" --root "$ROOT/suite" \
  --tasks mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal \
  --out "$RESULTS/attention_baseline_vs_torch.json"
echo "== attention GPU tests (cuDNN vs the fp32 reference; libcudnn dir: ${PTXBENCH_CUDNN_DIR:-system})"
# gtest output with cuDNN's plan JSON in it has lines of 100 kB; keep results readable.
timeout 200 "$BIN/ptxbench_gpu_attention_tests" 2>&1 |
  awk '{ if (length($0) > 2000) print substr($0, 1, 2000) " ...[cut]"; else print }' > "$RESULTS/attention_gpu_tests.txt"
tests_rc=${PIPESTATUS[0]}
echo "attention GPU tests: exit $tests_rc"; tail -3 "$RESULTS/attention_gpu_tests.txt"
exit $((rc + (tests_rc != 0)))

#!/usr/bin/env bash
# Issue-4 evidence on a Hopper GPU: the attention examples through `ptxbench eval` against the cuDNN
# baselines (headline shapes, plain and causal, forward and backward), and our cuDNN baselines against
# PyTorch's cuDNN path side by side in one process.
# Results: $OUT/attention_examples.json (+ .txt), attention_summary.json, attention_baseline_vs_torch.json.
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
A=examples/attention
: > "$OUT/attention_examples.txt"
files=()
run() {  # task, then kernels
  local task=$1; shift
  echo "== $task: $*" | tee -a "$OUT/attention_examples.txt"
  "$BIN/ptxbench" eval "$@" --task "$task" --target h200 --sanitize-timeout 120 --call-timeout 30 ${PTXBENCH_EVAL_FLAGS:-} \
    --out "$OUT/att_$task.json" >> "$OUT/attention_examples.txt" 2>&1
  echo "exit $?" | tee -a "$OUT/attention_examples.txt"
  files+=("$OUT/att_$task.json")
}
run mha_with_lse_d128 $A/plain_fwd.cu $A/wgmma_fwd.cu
run mha_with_lse_d128_causal $A/plain_fwd_causal.cu $A/wgmma_fwd_causal.cu
run mha_bwd_d128 $A/plain_bwd.cu
run mha_bwd_d128_causal $A/plain_bwd_causal.cu
python3 bench/summarize_evals.py --manifest examples/manifest.json --out "$OUT/attention_summary.json" \
  --merged-out "$OUT/attention_examples.json" "${files[@]}"
rm -f "${files[@]}"
echo "== baselines vs PyTorch"
python3 bench/baseline_vs_torch.py --lib "$BIN/libptxbench_baseline.so" --root "$ROOT/suite" \
  --tasks mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal \
  --out "$OUT/attention_baseline_vs_torch.json"

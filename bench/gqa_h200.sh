#!/usr/bin/env bash
# Issue-17 evidence on a Hopper GPU (about 3-4 minutes): the three GQA held-out tasks.
#   1. The cuDNN GQA baseline against the independent fp32 reference on each task's exact workload axes
#      (and the fp32 reference against the CPU one), with PyTorch's libcudnn (9.19 on the H200 image),
#      then with the system libcudnn (9.14 there): ptxbench_gpu_attention_tests, GQA tests only.
#   2. Every GQA example through `ptxbench eval` (sanitize, correctness, timing, dynamic check) against
#      the task's baseline, checked against examples/manifest.json.
#   3. Our baseline and PyTorch's closest path to the same paged/ragged inputs side by side in one
#      process (bench/baseline_vs_torch.py: varlen FlashAttention-2 with grouped KV heads, after
#      gathering the pages for the paged tasks; alternating calls, L2 flushed before each).
# Results in $OUT (default bench/results/h200):
#   gqa_gpu_tests.txt, gqa_gpu_tests_cudnn_system.txt   the GPU tests (long lines cut)
#   gqa_examples.{json,txt}, gqa_summary.json           the verdicts; the summary compares with the manifest
#   gqa_baseline_vs_torch.json                          medians: ours, torch (gather + attention),
#                                                       torch_attention_only, ratios, max |ours - torch|
#
# Expected output (what a correct run prints; numbers vary):
#   gqa GPU tests (PyTorch's libcudnn): [  PASSED  ] N tests.     (no FAILED line; 0 skipped)
#     and in gqa_gpu_tests.txt, per task: "[baseline] gqa_...: cudnn_sdpa_gqa: cuDNN 9.19.0 ... composite GQA
#     graph, <layout> layout, <packed|padded> page table, ..." and "[compare] ...: max abs error ..." lines
#   gqa GPU tests (system libcudnn): [  PASSED  ] N tests.        (or the fallback named, never a silent pass)
#   the summary table: 4 rows, status PASSED, target absent_in_sass (plain_*) / executed (wgmma_*),
#     "as expected" yes for each, all_as_expected true; each verdict's message "correct; speedup ... vs
#     cudnn_sdpa_gqa: cuDNN 9.19.0 ..." (the plain kernels slower than cuDNN: speedups well below 1)
#   three "gqa_... ours X ms torch Y ms ours/torch Z" lines, and the JSON naming the torch path used
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
cut_lines() { awk '{ if (length($0) > 2000) print substr($0, 1, 2000) " ...[cut]"; else print }'; }
FILTER='Gqa*:Layouts/GqaGpuReferenceVsCpu*:CudnnGqa*'
G=examples/gqa

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$BIN/ptxbench" --version)" | tee "$OUT/gqa_examples.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/# gpu: /' | tee -a "$OUT/gqa_examples.txt"

echo "== 1. GPU tests, PyTorch's libcudnn"
timeout 150 "$BIN/ptxbench_gpu_attention_tests" --gtest_filter="$FILTER" 2>&1 | cut_lines > "$OUT/gqa_gpu_tests.txt"
echo "gqa GPU tests (PyTorch's libcudnn): exit ${PIPESTATUS[0]}"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[baseline\]|^\[compare\]" "$OUT/gqa_gpu_tests.txt" | cut -c1-300
(
  # The system libcudnn: drop PyTorch's NVIDIA wheel folders so the loader falls back to it.
  LD_LIBRARY_PATH=$(tr ':' '\n' <<< "$LD_LIBRARY_PATH" | grep -v 'packages/nvidia/' | paste -sd:)
  export LD_LIBRARY_PATH
  {
    echo "# system libcudnn: $(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libcudnn.so.9$' | head -1 | xargs -r readlink -f)"
    timeout 150 "$BIN/ptxbench_gpu_attention_tests" --gtest_filter="$FILTER" 2>&1 | cut_lines
    echo "exit ${PIPESTATUS[0]}"
  } > "$OUT/gqa_gpu_tests_cudnn_system.txt"
  echo "gqa GPU tests (system libcudnn): $(grep -E '^exit' "$OUT/gqa_gpu_tests_cudnn_system.txt")"
  grep -E "^\[  (PASSED|FAILED) |^\[baseline\]" "$OUT/gqa_gpu_tests_cudnn_system.txt" | cut -c1-300
)

echo "== 2. the examples through ptxbench eval"
files=()
run() {  # task, then kernels
  local task=$1; shift
  echo "== $task: $*" | tee -a "$OUT/gqa_examples.txt"
  timeout 240 "$BIN/ptxbench" eval "$@" --task "$task" --target h200 --sanitize-timeout 120 --call-timeout 30 \
    --out "$OUT/gqa_$task.json" >> "$OUT/gqa_examples.txt" 2>&1
  echo "exit $?" | tee -a "$OUT/gqa_examples.txt"
  files+=("$OUT/gqa_$task.json")
}
run gqa_paged_decode_h24_kv8_d128_ps1 $G/plain_paged_decode.cu
run gqa_paged_prefill_causal_h24_kv8_d128_ps1 $G/plain_paged_prefill.cu
run gqa_ragged_prefill_causal_h32_kv4_d128 $G/plain_ragged_prefill.cu $G/wgmma_ragged_prefill.cu
python3 bench/summarize_evals.py --manifest examples/manifest.json --out "$OUT/gqa_summary.json" \
  --merged-out "$OUT/gqa_examples.json" "${files[@]}"
rm -f "${files[@]}"
# Which baseline each verdict names (cuDNN version and graph, or the fallback and why).
python3 -c 'import json, sys
for v in json.load(open(sys.argv[1])):
    env = v.get("environment", {})
    print(v.get("file"), v.get("status"), "|", (v.get("message") or "")[:160], "|", (env.get("baseline") or "")[:200])' \
  "$OUT/gqa_examples.json"

echo "== 3. our baseline vs PyTorch"
timeout 120 python3 bench/baseline_vs_torch.py --lib "$BIN/libptxbench_baseline.so" --root "$ROOT/suite" \
  --tasks gqa_paged_decode_h24_kv8_d128_ps1 gqa_paged_prefill_causal_h24_kv8_d128_ps1 gqa_ragged_prefill_causal_h32_kv4_d128 \
  --out "$OUT/gqa_baseline_vs_torch.json"
echo "baseline vs torch: exit $?"

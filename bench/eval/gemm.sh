#!/usr/bin/env bash
# Issue-3 evidence on a Hopper GPU, in one run:
#  1. every GEMM example through `ptxbench eval` in one harness (a correct kernel again at the end
#     shows the harness survives the crash, the hang, the out-of-bounds write),
#  2. the wgmma example evaluated 10 more times (speedup spread; builds are cache hits, so the stage
#     times show the cost of an evaluation with a cached build),
#  3. our cuBLASLt reference against torch.matmul side by side in one process.
# Results: $OUT/gemm_examples.json, gemm_wgmma_repeats.json, gemm_summary.json, gemm_baseline_vs_torch.json.
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
E=examples/gemm
echo "== 1. examples"
time timeout 330 "$BIN/ptxbench" eval $E/plain_tiled.cu $E/wgmma.cu $E/wgmma_tma_pipelined.cu $E/wgmma_tma_pack.cu $E/wgmma_dead_branch.cu \
  $E/wrong_result.cu $E/out_of_bounds.cu $E/hang.cu $E/host_segfault.cu $E/wgmma.cu \
  --task gemm_n7168_k5120 --target h200 --sanitize-timeout 60 --call-timeout 20 ${PTXBENCH_EVAL_FLAGS:-} \
  --out "$OUT/gemm_examples.json" > "$OUT/gemm_examples.txt" 2>&1
echo "exit $?"
echo "== 2. wgmma example x10 (timing spread; sanitizer and profiler were covered in 1)"
reps=(); for i in $(seq 10); do reps+=("$E/wgmma.cu"); done
time "$BIN/ptxbench" eval "${reps[@]}" --task gemm_n7168_k5120 --target h200 --no-sanitize --no-dynamic-check ${PTXBENCH_EVAL_FLAGS:-} \
  --out "$OUT/gemm_wgmma_repeats.json" > /dev/null 2>&1
echo "exit $?"
python3 bench/summarize_evals.py --manifest examples/manifest.json --out "$OUT/gemm_summary.json" \
  "$OUT/gemm_examples.json" "$OUT/gemm_wgmma_repeats.json"
echo "== 3. reference vs torch.matmul"
python3 bench/baseline_vs_torch.py --lib "$BIN/libptxbench_baseline.so" --root "$ROOT/suite" \
  --tasks gemm_n7168_k5120 --out "$OUT/gemm_baseline_vs_torch.json"

#!/usr/bin/env bash
# Issue-3 evidence on a Hopper GPU, in one run (~3 min):
#  1. every GEMM example through `ptxbench eval` in one harness (a correct kernel again at the end
#     shows the harness survives the crash, the hang, the out-of-bounds write),
#  2. the wgmma example evaluated 10 more times (speedup spread; builds are cache hits, so the stage
#     times show the cost of an evaluation with a cached build),
#  3. our cuBLASLt reference against torch.matmul side by side in one process.
# Results in bench/results/<gpu>/gemm/ ($OUT/gemm.tar.gz): gemm_examples.{json,txt},
# gemm_wgmma_repeats.json, gemm_summary.json (against examples/manifest.json), gemm_baseline_vs_torch.json.
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu gemm
cd "$ROOT" || exit 2
E=examples/gemm
echo "== 1. examples"
time timeout 330 "$BIN/ptxbench" eval $E/plain_tiled.cu $E/wgmma.cu $E/wgmma_tma_pipelined.cu $E/wgmma_tma_pack.cu $E/wgmma_dead_branch.cu \
  $E/wrong_result.cu $E/out_of_bounds.cu $E/hang.cu $E/host_segfault.cu $E/wgmma.cu \
  --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --sanitize-timeout 60 --call-timeout 20 ${PTXBENCH_EVAL_FLAGS:-} \
  --out "$RESULTS/gemm_examples.json" > "$RESULTS/gemm_examples.txt" 2>&1
echo "exit $?"
echo "== 2. wgmma example x10 (timing spread; sanitizer and profiler were covered in 1)"
reps=(); for _ in $(seq 10); do reps+=("$E/wgmma.cu"); done
time timeout 200 "$BIN/ptxbench" eval "${reps[@]}" --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --no-sanitize \
  --no-dynamic-check ${PTXBENCH_EVAL_FLAGS:-} --out "$RESULTS/gemm_wgmma_repeats.json" > /dev/null 2>&1
echo "exit $?"
python3 bench/eval/summarize_evals.py --manifest examples/manifest.json --out "$RESULTS/gemm_summary.json" \
  "$RESULTS/gemm_examples.json" "$RESULTS/gemm_wgmma_repeats.json"
rc=$?
echo "== 3. reference vs torch.matmul"
timeout 60 python3 bench/eval/baseline_vs_torch.py --lib "$BIN/libptxbench_baseline.so" --root "$ROOT/suite" \
  --tasks gemm_n7168_k5120 --out "$RESULTS/gemm_baseline_vs_torch.json"
exit "$rc"

#!/usr/bin/env bash
# One device-tool run (~6 min) that checks the evaluation path on a Hopper GPU after a change, before
# the full evidence: (1) the candidate sandbox under CUDA, compute-sanitizer and Nsight Compute
# (bench/eval/sandbox_probe.sh); (2) every GEMM example through `ptxbench eval` in one harness with
# the sandbox on (falling back to --no-sandbox, recorded, if the probe's plain case failed), against
# examples/manifest.json and against this GPU's GEMM evidence (bench/results/<gpu>/gemm/gemm_examples.json
# or the older flat gemm_examples.json; without one the comparison is SKIPPED, said loudly);
# (3) the harness GPU test (tests/gpu/harness_pipeline_gpu_test.cc).
# Results in bench/results/<gpu>/regression_check/ ($OUT/regression_check.tar.gz; the probe's own in
# sandbox_probe/ and $OUT/sandbox_probe.tar.gz). Exit status: the number of failed steps.
#   PTXBENCH_BIN=$PWD/.carry/bin bench/eval/regression_check.sh
#   SKIP_PROBE=1 SKIP_HARNESS_TEST=1 ... runs only the GEMM examples (~2.5 minutes)
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu regression_check
cd "$ROOT" || exit 2
echo "== 1. sandbox probe"
if [ "${SKIP_PROBE:-0}" = 1 ]; then
  echo "skipped (SKIP_PROBE=1)"
else
  timeout 150 bash bench/eval/sandbox_probe.sh > "$RESULTS/sandbox_probe.log" 2>&1
  echo "probe exit $?"; grep -E '^CASE ' "$RESULTS_GPU/sandbox_probe/sandbox_probe.txt" | sort -u
  if ! grep -q "CASE plain-enforce: works" "$RESULTS_GPU/sandbox_probe/sandbox_probe.txt" 2>/dev/null; then
    export PTXBENCH_EVAL_FLAGS=--no-sandbox
    echo "the sandbox's plain case failed on this host: the GEMM examples run with --no-sandbox (recorded in each verdict)"
  fi
fi
echo "== 2. GEMM examples"
E=examples/gemm
time timeout 330 "$BIN/ptxbench" eval $E/plain_tiled.cu $E/wgmma.cu $E/wgmma_tma_pipelined.cu $E/wgmma_tma_pack.cu \
  $E/wgmma_dead_branch.cu $E/wrong_result.cu $E/out_of_bounds.cu $E/hang.cu $E/host_segfault.cu $E/wgmma.cu \
  --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --sanitize-timeout 60 --call-timeout 20 ${PTXBENCH_EVAL_FLAGS:-} \
  --out "$RESULTS/gemm_examples.json" > "$RESULTS/gemm_examples.txt" 2>&1
echo "eval exit $?"
fails=0
python3 bench/eval/summarize_evals.py --manifest examples/manifest.json --out "$RESULTS/gemm_summary.json" \
  "$RESULTS/gemm_examples.json" || fails=$((fails + 1))
# The evidence of this GPU from bench/eval/gemm.sh (committed, or an earlier run on this host).
if committed=$(bench_result gemm/gemm_examples.json gemm_examples.json); then
  echo "against $committed"
  python3 bench/eval/compare_summaries.py "$committed" "$RESULTS/gemm_examples.json" || fails=$((fails + 1))
else
  echo "SKIPPED: no GEMM examples committed for $PTXBENCH_TARGET (bench/eval/gemm.sh makes them)"
fi
echo "== 3. harness GPU test"
if [ "${SKIP_HARNESS_TEST:-0}" = 1 ]; then
  echo "skipped (SKIP_HARNESS_TEST=1)"
else
  # The test reads the source tree and the binaries from PTXBENCH_ROOT and PTXBENCH_BIN (env.sh).
  time timeout 300 "$BIN/ptxbench_gpu_harness_tests" > "$RESULTS/gpu_harness_tests.txt" 2>&1
  rc=$?
  echo "harness GPU test exit $rc"; grep -E "OK \]|FAILED|Failure|Expected|Which is|SKIPPED" "$RESULTS/gpu_harness_tests.txt" | head -30
  [ "$rc" -eq 0 ] || fails=$((fails + 1))
fi
echo "failed steps: $fails"
exit "$fails"

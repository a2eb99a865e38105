#!/usr/bin/env bash
# One device-tool run that checks the restructured evaluation path on a Hopper GPU early, before
# the full evidence: (1) the candidate sandbox under CUDA, compute-sanitizer and Nsight Compute
# (bench/sandbox_probe_h200.sh); (2) every GEMM example through `ptxbench eval` in one harness with
# the sandbox on (falling back to --no-sandbox, recorded, if the probe's plain case failed), compared
# with the committed bench/results/h200/gemm_summary.json; (3) the harness GPU test in ctest
# (tests/gpu/harness_pipeline_gpu_test.cc). Binaries from $PTXBENCH_BIN (bench/stage_h200_binaries.sh).
# Everything lands in one archive, $OUT/h200_check_restructure.tgz (the device tool returns 8 files).
#   PTXBENCH_BIN=$PWD/.carry/bin bench/h200_check_restructure.sh      # ~6 minutes
#   SKIP_PROBE=1 SKIP_HARNESS_TEST=1 ... runs only the GEMM examples (~2.5 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."
RETURN_DIR=${OUT:-/tmp/ptxbench-out}
export OUT=/tmp/ptxbench-results
rm -rf "$OUT" && mkdir -p "$OUT" "$RETURN_DIR"
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/build/bin}
source bench/env.sh
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$BIN/ptxbench" --version)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
  echo "== 1. sandbox probe"
  if [ "${SKIP_PROBE:-0}" = 1 ]; then
    echo "skipped (SKIP_PROBE=1)"
  else
    timeout 150 bash bench/sandbox_probe_h200.sh > "$OUT/sandbox_probe.log" 2>&1
    echo "probe exit $?"; grep -E '^CASE ' "$OUT/sandbox_probe.txt" | sort -u
  fi
  if [ "${SKIP_PROBE:-0}" != 1 ] && ! grep -q "CASE plain-enforce: works" "$OUT/sandbox_probe.txt"; then
    export PTXBENCH_EVAL_FLAGS=--no-sandbox
    echo "the sandbox's plain case failed on this host: the GEMM examples run with --no-sandbox (recorded in each verdict)"
  fi
  echo "== 2. GEMM examples"
  E=examples/gemm
  time timeout 330 "$BIN/ptxbench" eval $E/plain_tiled.cu $E/wgmma.cu $E/wgmma_tma_pipelined.cu $E/wgmma_tma_pack.cu \
    $E/wgmma_dead_branch.cu $E/wrong_result.cu $E/out_of_bounds.cu $E/hang.cu $E/host_segfault.cu $E/wgmma.cu \
    --task gemm_n7168_k5120 --target h200 --sanitize-timeout 60 --call-timeout 20 ${PTXBENCH_EVAL_FLAGS:-} \
    --out "$OUT/gemm_examples.json" > "$OUT/gemm_examples.txt" 2>&1
  echo "eval exit $?"
  python3 bench/summarize_evals.py --manifest examples/manifest.json --out "$OUT/gemm_summary.json" "$OUT/gemm_examples.json"
  python3 bench/compare_summaries.py bench/results/h200/gemm_examples.json "$OUT/gemm_examples.json"
  echo "== 3. harness GPU test"
  [ "${SKIP_HARNESS_TEST:-0}" = 1 ] && { echo "skipped (SKIP_HARNESS_TEST=1)"; exit 0; }
  # The test reads the source tree and the binaries from PTXBENCH_ROOT and PTXBENCH_BIN (env.sh).
  export PTXBENCH_BIN="$BIN"
  time timeout 300 "$BIN/ptxbench_gpu_harness_tests" > "$OUT/gpu_harness_tests.txt" 2>&1
  echo "harness GPU test exit $?"; grep -E "OK \]|FAILED|Failure|Expected|Which is|SKIPPED" "$OUT/gpu_harness_tests.txt" | head -30
} 2>&1 | tee "$OUT/h200_check_restructure.log"
tar czf "$RETURN_DIR/h200_check_restructure.tgz" -C "$OUT" .

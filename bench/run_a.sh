#!/usr/bin/env bash
# One device call: GEMM evidence (issue 3) and the knowledge-pack GPU tests (issue 5).
set -uo pipefail
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/.carry/bin}
timeout 480 bash bench/gemm_h200.sh
timeout 60 bash bench/run_pack_gpu_tests.sh "$PTXBENCH_BIN/ptxbench_gpu_pack_tests" "$OUT" | tail -5
tar czf "$OUT/gemm_runs.tgz" -C "${PTXBENCH_CACHE:-/tmp/ptxbench-cache}" runs 2>/dev/null
ls -la "$OUT"

#!/usr/bin/env bash
# A short end-to-end check of the GPU half on a Hopper GPU: the environment, then one `ptxbench eval`
# of a correct plain GEMM, a candidate whose host code segfaults, and the correct one again (the
# harness must survive the crash). Writes $OUT/smoke_*.{txt,json}.
set -uo pipefail
source "$(dirname "$0")/env.sh"
{
  echo "== date"; date -u
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== tools"; for t in nvcc cuobjdump nvdisasm ncu compute-sanitizer python3; do printf '%s: ' "$t"; command -v "$t" || echo missing; done
  nvcc --version | tail -1; ncu --version | tail -1; compute-sanitizer --version | tail -1
  echo "== ldd harness"; ldd "$BIN/ptxbench-harness" | grep -E "not found|cu|fmt|curl|crypto|pcre"
  echo "== ldd runner"; ldd "$BIN/ptxbench-runner" | grep -E "not found|cu"
  echo "== cudnn"; ldconfig -p | grep -i cudnn | head -3
} > "$OUT/smoke_env.txt" 2>&1
cat "$OUT/smoke_env.txt"
cd "$ROOT"
time "$BIN/ptxbench" eval tests/fixtures/kernels/tiled_gemm.cu tests/fixtures/kernels/host_segfault.cu \
  tests/fixtures/kernels/tiled_gemm.cu --task gemm_n7168_k5120 --target h200 --out "$OUT/smoke_eval.json" \
  "$@" 2>&1 | tee "$OUT/smoke_eval.txt"
echo "exit: ${PIPESTATUS[0]}"
tar czf "$OUT/smoke_runs.tgz" -C "$PTXBENCH_CACHE" runs 2>/dev/null

#!/usr/bin/env bash
# Issue 13, deliverable 8 on a Hopper GPU (~2 min): upstream PTXBench kernels, unchanged, through
# `ptxbench eval`. Each upstream example is a Solution JSON in upstream's format ("binding":
# "tvm-ffi"); they run in one harness together with the native wgmma example (same device code as
# gemm_tvm_ffi.cu), and the summary prints each one's status and target verdict against
# examples/upstream/manifest.json.
# Results in bench/results/<gpu>/upstream_kernels/ ($OUT/upstream_kernels.tar.gz):
# upstream_kernels.{json,txt}, upstream_kernels_summary.json.
# Expected: every row "ok" and "all as expected" (exit 0); gemm_tvm_ffi.json PASSED/executed with a
# speedup close to wgmma.cu's, gemm_tvm_ffi_plain.json PASSED/absent_in_sass.
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu upstream_kernels
cd "$ROOT" || exit 2
E=examples/upstream
UPSTREAM_KERNELS=("$E/gemm_tvm_ffi.json" "$E/gemm_tvm_ffi_plain.json")
echo "== upstream (TVM-FFI) kernels + the native wgmma example"
time timeout 400 "$BIN/ptxbench" eval "${UPSTREAM_KERNELS[@]}" examples/gemm/wgmma.cu \
  --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --sanitize-timeout 60 --call-timeout 20 \
  --out "$RESULTS/upstream_kernels.json" > "$RESULTS/upstream_kernels.txt" 2>&1
echo "exit $? (0: all passed and target-correct; 4: one is correct but not target-correct, as the plain one is)"
python3 bench/eval/summarize_evals.py --manifest "$E/manifest.json" --out "$RESULTS/upstream_kernels_summary.json" \
  "$RESULTS/upstream_kernels.json"

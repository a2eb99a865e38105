#!/usr/bin/env bash
# A two-minute end-to-end check of the GPU half on a Hopper GPU host: the environment (tools, the
# binaries' libraries, cuDNN), then one `ptxbench eval` of a correct plain GEMM, a candidate whose
# host code segfaults, and the correct one again (the harness must survive the crash). One PASS/FAIL
# line per expected verdict (PASSED, RUNTIME_ERROR, PASSED); exit status = the number of FAILs.
# Extra arguments go to `ptxbench eval`.
# Results in bench/results/<gpu>/smoke/ ($OUT/smoke.tar.gz): smoke_env.txt, smoke_eval.{json,txt},
# smoke_runs.tgz (the evaluation's run folders from $PTXBENCH_CACHE).
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu smoke
{
  echo "== date"; date -u
  echo "== nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  echo "== tools"; for t in nvcc cuobjdump nvdisasm ncu compute-sanitizer python3; do printf '%s: ' "$t"; command -v "$t" || echo missing; done
  nvcc --version | tail -1; ncu --version | tail -1; compute-sanitizer --version | tail -1
  echo "== ldd harness"; ldd "$BIN/ptxbench-harness" | grep -E "not found|cu|fmt|curl|crypto|pcre"
  echo "== ldd runner"; ldd "$BIN/ptxbench-runner" | grep -E "not found|cu"
  echo "== cudnn"; ldconfig -p | grep -i cudnn | head -3
} > "$RESULTS/smoke_env.txt" 2>&1
cat "$RESULTS/smoke_env.txt"
cd "$ROOT" || exit 2
time timeout 300 "$BIN/ptxbench" eval tests/fixtures/kernels/tiled_gemm.cu tests/fixtures/kernels/host_segfault.cu \
  tests/fixtures/kernels/tiled_gemm.cu --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --out "$RESULTS/smoke_eval.json" \
  "$@" 2>&1 | tee "$RESULTS/smoke_eval.txt"
rc=${PIPESTATUS[0]}
echo "exit: $rc"
tar czf "$RESULTS/smoke_runs.tgz" -C "$PTXBENCH_CACHE" runs 2>/dev/null
bench_check "eval exit 1: a candidate rejected, no infrastructure error (got $rc)" "$([ "$rc" = 1 ]; echo $?)"
i=0
for want in PASSED RUNTIME_ERROR PASSED; do
  got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])].get("status"))' \
        "$RESULTS/smoke_eval.json" "$i" 2>/dev/null)
  bench_check "candidate $((i + 1)) $want (got ${got:-no verdict})" "$([ "$got" = "$want" ]; echo $?)"
  i=$((i + 1))
done
bench_done

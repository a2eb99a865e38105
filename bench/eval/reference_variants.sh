#!/usr/bin/env bash
# Diagnosis of the issue-30 reference GEMM (examples/reference/gemm_persistent.cu): the reference, its
# variants (examples/reference/variants/*.cu, each isolating one suspect of the first version's
# 0.594x) and examples/gemm/wgmma_tma_pack.cu (non-persistent, ~0.97x) in ONE harness
# (`ptxbench eval ... --no-sanitize --no-dynamic-check`, so they share one cuBLASLt baseline and one
# GPU state), then one line per file: status, speedup vs cuBLASLt, candidate median ms.
# Two cheap diagnostics follow: what cudaOccupancyMaxActiveClusters answers for the reference's
# launch shape (the grid v0 and v10 use; the reference spreads
# its waves evenly over it), and per file the static count of the SASS fences
# that a .release.cluster mbarrier arrive or an .acquire.cluster wait would bring (MEMBAR.*.GPU,
# ERRBAR, CGAERRBAR, CCTL), where cuobjdump exists. About 2 minutes on an H100 (sessions 7, 8, 10).
# Results in bench/results/<gpu>/reference-variants/ ($OUT/reference-variants.tar.gz): variants.json
# (the verdicts), variants.txt (eval's output), check_<i>.txt (the parallel pre-builds),
# occupancy.txt, sass_fences.txt, summary.txt.
# Usage on the GPU host: PTXBENCH_BIN=$PWD/.carry/bin bench/eval/reference_variants.sh   (or with build/bin)
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu reference-variants
cd "$ROOT" || exit 2
TASK=gemm_n7168_k5120
FILES=(examples/reference/gemm_persistent.cu)
# The glob takes every variant (their results: examples/reference/README.md): v0-v3, v4_pingpong.cu
# (4-CTA clusters, so the occupancy line below does not cover it), v5_epilogue_overlap.cu, and
# v8_stream_k.cu (Stream-K over the last 1.58 waves), which launches the reference's cluster shape and
# smem, so the occupancy line covers it; it allocates a 16.5 MiB workspace on its first call and its
# Stream-K owners spin on flags set by other clusters, so a protocol bug would hang a call (30 s call timeout).
for f in examples/reference/variants/*.cu; do [ -e "$f" ] && FILES+=("$f"); done
# Variants that change one constant of the reference are written here from it, not kept as copies:
# v6/v7, the rasterisation group (cluster rows that share A and B in L2) at 4 and 16 instead of 8.
TMP=$(mktemp -d)
bench_cleanup() { rm -rf "$TMP"; }
for g in 4 16; do
  v="$TMP/v$([ "$g" = 4 ] && echo 6 || echo 7)_group$g.cu"
  sed "s/^constexpr int kGroupRows = 8; /constexpr int kGroupRows = $g; /" examples/reference/gemm_persistent.cu > "$v"
  grep -q "^constexpr int kGroupRows = $g; " "$v" && FILES+=("$v") || echo "   could not write $v (kGroupRows not found)"
done
# v10, the full grid: the reference before session 12's wave-balanced grid (variant v9 then, promoted),
# every cluster the occupancy query allows (66 on an H100) whatever the number of waves, to keep the
# balanced grid's lead measured against it on each GPU.
v="$TMP/v10_full_grid.cu"
python3 - examples/reference/gemm_persistent.cu "$v" <<'PY'
import sys
src = open(sys.argv[1]).read()
balanced = ("  const int fit = max_clusters < tiles ? max_clusters : tiles, waves = (tiles + fit - 1) / fit;\n"
            "  const int clusters = (tiles + waves - 1) / waves;\n")
if src.count(balanced) == 1:
    open(sys.argv[2], "w").write(src.replace(balanced, "  const int clusters = max_clusters < tiles ? max_clusters : tiles;\n"))
PY
[ -f "$v" ] && FILES+=("$v") || echo "   could not write $v (the balanced grid's lines not found)"
FILES+=(examples/gemm/wgmma_tma_pack.cu)

# eval builds its candidates one after another (~9 s each); `ptxbench check` builds into the same
# cache ($PTXBENCH_CACHE, same key), so the builds run here side by side first and eval finds them.
echo "== building ${#FILES[@]} files in parallel (ptxbench check, same build cache as eval)"
t0=$SECONDS
pids=()
for i in "${!FILES[@]}"; do
  timeout 150 "$BIN/ptxbench" check "${FILES[$i]}" --task "$TASK" --target "$PTXBENCH_TARGET" \
    > "$RESULTS/check_$i.txt" 2>&1 &
  pids+=($!)
done
wait "${pids[@]}"  # not a bare wait: that would also wait for run.log's tee
echo "   built in $((SECONDS - t0)) s"
echo "== $TASK: ${#FILES[@]} files in one harness (no sanitizer, no dynamic check)"
t0=$SECONDS
timeout 300 "$BIN/ptxbench" eval "${FILES[@]}" --task "$TASK" --target "$PTXBENCH_TARGET" \
  --no-sanitize --no-dynamic-check --out "$RESULTS/variants.json" > "$RESULTS/variants.txt" 2>&1
rc=$?
echo "   eval exit $rc after $((SECONDS - t0)) s"
python3 - "$RESULTS/variants.json" "${FILES[@]}" <<'PY' | tee -a "$RESULTS/summary.txt"
import json, sys
path, files = sys.argv[1], sys.argv[2:]
try:
    verdicts = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"no verdicts ({e})"); sys.exit(1)
if isinstance(verdicts, dict):
    verdicts = [verdicts]
ref_ms = None
print(f"{'status':<20} {'speedup':>8} {'cand ms':>9}  file")
for f, v in zip(files, verdicts):
    t = v.get("timing") or {}
    cand = (t.get("candidate") or {}).get("median_ms")
    ref_ms = ref_ms or (t.get("reference") or {}).get("median_ms")
    sp = t.get("speedup")
    line = f"{str(v.get('status')):<20} {sp if sp is None else format(sp, '.3f'):>8} " \
           f"{cand if cand is None else format(cand, '.4f'):>9}  {f}"
    if v.get("status") != "PASSED":
        line += f"  ({(v.get('message') or '')[:160]})"
    print(line)
print(f"cuBLASLt median: {ref_ms} ms; {len(verdicts)} verdicts for {len(files)} files")
sys.exit(0 if len(verdicts) == len(files) and all(v.get("status") == "PASSED" for v in verdicts) else 1)
PY
bench_check "$TASK: every file evaluated and PASSED (see the speedups above)" "${PIPESTATUS[0]}"

# The grid the reference asks for: cudaOccupancyMaxActiveClusters for a kernel with its launch shape
# (2-CTA clusters, 384 threads, 1 CTA per SM, the same dynamic shared memory).
echo "== cudaOccupancyMaxActiveClusters for the reference's launch shape"
cat > "$TMP/occupancy.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
constexpr int kSmem = 4 * 48 * 1024 + 2 * 2 * 64 * 64 * 2 + 2 * 4 * 8 + 1024;  // gemm_persistent.cu's kSmemBytes
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) probe2(int* p) { extern __shared__ int s[]; if (p) p[0] = s[0]; }
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaError_t e = cudaFuncSetAttribute(probe2, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(sms);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = kSmem;
  int fit = -1;
  cudaError_t q = cudaOccupancyMaxActiveClusters(&fit, probe2, &cfg);
  printf("SMs %d; dynamic smem %d B (set: %s); max active 2-CTA clusters %d (%s) -> %d of %d SMs busy\n", sms, kSmem,
         cudaGetErrorString(e), fit, cudaGetErrorString(q), 2 * fit, sms);
  return q == cudaSuccess ? 0 : 1;
}
CU
if timeout 60 nvcc -std=c++17 -arch=sm_90a -o "$TMP/occupancy" "$TMP/occupancy.cu" > "$RESULTS/occupancy.txt" 2>&1; then
  timeout 20 "$TMP/occupancy" >> "$RESULTS/occupancy.txt" 2>&1
fi
sed 's/^/   /' "$RESULTS/occupancy.txt"

# Static SASS fence counts per file (cubins built like the candidate build: the pack's headers
# side by side, the ABI header from include/).
echo "== SASS fences per file (static counts)"
if command -v cuobjdump > /dev/null 2>&1; then
  mkdir -p "$TMP/inc/ptxkit"
  cp packs/common/include/ptxkit/*.cuh packs/sm90a/include/ptxkit/*.cuh "$TMP/inc/ptxkit/"
  pids=()
  for i in "${!FILES[@]}"; do
    timeout 120 nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -I include -I "$TMP/inc" \
      -o "$TMP/$i.cubin" "${FILES[$i]}" > "$TMP/$i.log" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"  # not a bare wait: that would also wait for run.log's tee
  printf '%-6s %-6s %-9s %-5s %-5s  %s\n' MEMBAR ERRBAR CGAERRBAR CCTL SYNCS file | tee "$RESULTS/sass_fences.txt"
  for i in "${!FILES[@]}"; do
    sass=$(cuobjdump -sass "$TMP/$i.cubin" 2>/dev/null || true)
    printf '%-6s %-6s %-9s %-5s %-5s  %s\n' "$(grep -c 'MEMBAR\.[A-Z.]*GPU' <<<"$sass")" "$(grep -c ' ERRBAR' <<<"$sass")" \
      "$(grep -c 'CGAERRBAR' <<<"$sass")" "$(grep -c ' CCTL' <<<"$sass")" "$(grep -c 'SYNCS' <<<"$sass")" \
      "${FILES[$i]}" | tee -a "$RESULTS/sass_fences.txt"
  done
  echo "   (MEMBAR = MEMBAR.*.GPU lines; the fixed reference should have none in its main loop)"
else
  echo "   (no cuobjdump here: skipped)" | tee "$RESULTS/sass_fences.txt"
fi
rm -rf "$TMP"
bench_done

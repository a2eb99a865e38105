#!/usr/bin/env bash
# Builds every example candidate under examples/ exactly as the PTXBench harness does, runs the CPU
# checks (layout_check: the kernels' index math against hardware models; abi_smoke: entry points,
# argument checks, the host segfault), and, on a machine with a Hopper GPU, runs
# bench/eval/kernel_selftest/kernel_selftest.cu (each example in a forked child with a timeout;
# results table). Always exits 0 once it got as far as printing, so the table is never lost.
# The GPU run (not --build-only) detects the GPU first; its results go to
# bench/results/<gpu>/kernel_selftest/ (kernel_selftest.json, the build logs; $OUT/kernel_selftest.tar.gz).
#
#   bench/eval/kernel_selftest.sh                # build + CPU checks + GPU run (needs a Hopper GPU)
#   bench/eval/kernel_selftest.sh --build-only   # build + CPU checks (no GPU needed)
#   bench/eval/kernel_selftest.sh --run-only     # GPU run of an earlier build (e.g. one carried to the GPU host)
#   bench/eval/kernel_selftest.sh --only gemm/wgmma,attention/plain_fwd
# Environment: KERNEL_SELFTEST_DIR (default build/kernel_selftest), NVCC, CUDA_HOME, JOBS, OUT.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${KERNEL_SELFTEST_DIR:-$repo/build/kernel_selftest}
mode=all
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-only) mode=build ;;
    --run-only) mode=run ;;
    --only) only=${2:?--only needs a comma-separated list}; shift ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "kernel_selftest.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$mode" != build ]; then
  # shellcheck source=bench/lib/env.sh
  source "$repo/bench/lib/env.sh"
  bench_gpu kernel_selftest
fi

find_nvcc() {
  if [ -n "${NVCC:-}" ]; then echo "$NVCC"; return; fi
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
  for c in "${CUDA_HOME:-}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
    if [ -x "$c" ]; then echo "$c"; return; fi
  done
}
nvcc_bin=$(find_nvcc || true)
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ] && [ -n "$nvcc_bin" ]; then cuda_home=$(cd "$(dirname "$nvcc_bin")/.." && pwd); fi
[ -n "$cuda_home" ] || cuda_home=/usr/local/cuda
export LD_LIBRARY_PATH="$cuda_home/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

section() { printf '\n== %s\n' "$*"; }

# ---- build -------------------------------------------------------------------------------------

# The include folders the harness gives a candidate for the sm_90a targets (h100, h200: pack "sm90a"
# in suite/targets.json), in its order: the kernel ABI, the shared pack headers, the target's pack,
# the shared ptxkit folder itself (eval::candidate_include_dirs in src/eval/pipeline.cc).
pack_includes=(-I "$repo/include" -I "$repo/packs/common/include" -I "$repo/packs/sm90a/include"
               -I "$repo/packs/common/include/ptxkit")

build_one() {  # build_one SOURCE NAME -> $dir/lib/NAME.so, log in $dir/logs/NAME.log, status in .rc
  local src=$1 name=$2 rc=0 binding=()
  # An upstream (TVM-FFI) example: its Solution (the .json beside it, same source) says
  # "binding": "tvm-ffi", and the harness then adds PTXBench's TVM-FFI compatibility headers
  # (build::binding_include_dirs in src/build/binding_includes.cc); nothing more is linked.
  if [ -f "${src%.cu}.json" ] && grep -q '"binding": *"tvm-ffi"' "${src%.cu}.json"; then
    binding=(-I "$repo/compat/tvm-ffi/include")
  fi
  # The harness's exact command line (build::build_candidate in src/build/build_stage.cc: nvcc_flags,
  # the include folders above, -L stubs -lcuda), with this machine's CUDA paths; only its --keep
  # (intermediate files for the SASS stage) and the build folder's "-I ." are left out.
  "$nvcc_bin" -O3 -std=c++17 -lineinfo -gencode=arch=compute_90a,code=sm_90a -shared \
    -Xcompiler -fPIC,-fvisibility=hidden --cudart shared -Xptxas -v "${pack_includes[@]}" "${binding[@]}" \
    "$src" -o "$dir/lib/$name.so" -L"$cuda_home/lib64/stubs" -lcuda >"$dir/logs/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$dir/logs/$name.rc"
}

build_selftest() {
  local src="$repo/bench/eval/kernel_selftest" rc=0
  # shellcheck disable=SC2054  # the comma is nvcc's, inside one argument
  local common=(-O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a --cudart shared -I "$repo/include" -I "$src")
  if ls "$cuda_home"/lib64/libcublas.so* >/dev/null 2>&1 &&
     "$nvcc_bin" "${common[@]}" -DSELFTEST_WITH_CUBLAS -o "$dir/kernel_selftest" "$src/kernel_selftest.cu" -ldl -lcublas \
       >"$dir/logs/kernel_selftest.log" 2>&1; then
    echo "kernel_selftest: built with the cuBLAS baseline row"
  else
    "$nvcc_bin" "${common[@]}" -o "$dir/kernel_selftest" "$src/kernel_selftest.cu" -ldl >"$dir/logs/kernel_selftest.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "kernel_selftest: BUILD FAILED"
      cat "$dir/logs/kernel_selftest.log"
    else
      echo "kernel_selftest: built (no cuBLAS found: no baseline row)"
    fi
  fi
  echo "$rc" >"$dir/logs/kernel_selftest.rc"
}

# The "layout helpers" region of each example, one namespace per example, for layout_check.cc.
gen_layout_header() {
  local out=$1
  {
    echo '// Generated by bench/eval/kernel_selftest.sh from the examples'"'"' layout-helper regions. Do not edit.'
    echo '#pragma once'
    echo '#include <cstdint>'
    echo '#define __host__'
    echo '#define __device__'
    local pair
    for pair in plain_tiled:gemm/plain_tiled wgmma_gemm:gemm/wgmma tma_pipelined:gemm/wgmma_tma_pipelined \
                plain_fwd:attention/plain_fwd wgmma_fwd:attention/wgmma_fwd plain_bwd:attention/plain_bwd \
                mha_fwd_ref:reference/mha_fwd mha_bwd_ref:reference/mha_bwd; do
      echo "namespace ${pair%%:*} {"
      sed -n '/---- layout helpers (begin) ----/,/---- layout helpers (end) ----/p' "$repo/examples/${pair#*:}.cu"
      echo "}"
    done
  } >"$out"
}

# Examples that must stay copies of each other (one file each, so the code is duplicated).
check_copies() {
  local bad=0 a b
  body() { sed '1,/^#include <ptxbench\/abi.h>/d' "$1" | sed -e 's/<false>/<CAUSAL>/g' -e 's/<true>/<CAUSAL>/g'; }
  for a in plain_fwd wgmma_fwd plain_bwd; do
    if ! diff -q <(body "$repo/examples/attention/$a.cu") <(body "$repo/examples/attention/${a}_causal.cu") >/dev/null; then
      echo "copy check: examples/attention/${a}_causal.cu differs from $a.cu beyond the causal flag"; bad=1
    fi
  done
  # The reference attention forwards and backwards: the same file but for the header comment and the causal flag.
  ref_body() { sed '1,/^#include <ptxbench\/abi.h>/d' "$1" | sed -e 's/kCausal = \(true\|false\);/kCausal = CAUSAL;/'; }
  for a in mha_fwd mha_bwd; do
    if ! diff -q <(ref_body "$repo/examples/reference/$a.cu") <(ref_body "$repo/examples/reference/${a}_causal.cu") >/dev/null; then
      echo "copy check: examples/reference/${a}_causal.cu differs from $a.cu beyond the causal flag"; bad=1
    fi
  done
  region() { sed -n '/---- layout helpers (begin) ----/,/---- layout helpers (end) ----/p' "$1"; }
  for b in wrong_result out_of_bounds hang host_segfault; do
    if ! diff -q <(region "$repo/examples/gemm/plain_tiled.cu") <(region "$repo/examples/gemm/$b.cu") >/dev/null; then
      echo "copy check: examples/gemm/$b.cu layout helpers differ from plain_tiled.cu"; bad=1
    fi
  done
  [ "$bad" -eq 0 ] && echo "copy check: causal variants and derived GEMM examples match their originals"
  return "$bad"
}

resource_summary() {
  local log name regs spill
  printf '%-34s %6s %s\n' "example" "build" "registers (max) / spill stores+loads (bytes, all kernels)"
  for log in "$dir"/logs/*.log; do
    name=$(basename "$log" .log)
    [ "$name" = kernel_selftest ] && continue
    regs=$(grep -o 'Used [0-9]* registers' "$log" | awk '{print $2}' | sort -n | tail -1)
    spill=$(grep -o '[0-9]* bytes spill [a-z]*' "$log" | awk '{s+=$1} END {print s+0}')
    printf '%-34s %6s %s / %s\n' "$name" "$( [ "$(cat "$dir/logs/$name.rc" 2>/dev/null)" = 0 ] && echo ok || echo FAILED)" \
      "${regs:-?}" "$spill"
  done
}

sass_summary() {  # only where cuobjdump exists (the GPU host's toolkit usually has it)
  local cuobjdump="$cuda_home/bin/cuobjdump" so sass
  [ -x "$cuobjdump" ] || cuobjdump=$(command -v cuobjdump || true)
  if [ -z "$cuobjdump" ]; then echo "(no cuobjdump here: static SASS counts skipped)"; return 0; fi
  printf '%-34s %7s %8s %7s %7s\n' "example" "HGMMA" "UTMALDG" "HMMA" "LDGSTS"
  for so in "$dir"/lib/*.so; do
    sass=$("$cuobjdump" -sass "$so" 2>/dev/null || true)
    printf '%-34s %7s %8s %7s %7s\n' "$(basename "$so" .so)" "$(grep -c ' HGMMA' <<<"$sass" || true)" \
      "$(grep -c ' UTMALDG' <<<"$sass" || true)" "$(grep -c ' HMMA' <<<"$sass" || true)" "$(grep -c ' LDGSTS' <<<"$sass" || true)"
  done
}

do_build() {
  if [ -z "$nvcc_bin" ]; then
    echo "kernel_selftest.sh: nvcc not found (set NVCC or CUDA_HOME); cannot build" >&2
    return 1
  fi
  mkdir -p "$dir/lib" "$dir/logs" "$dir/gen"
  section "building examples with $("$nvcc_bin" --version | tail -1) ($jobs jobs)"
  local t0=$SECONDS src rel name running=0 failed=0
  while IFS= read -r src; do
    rel=${src#"$repo"/examples/}
    name=${rel%.cu}
    name=${name//\//_}
    rm -f "$dir/lib/$name.so"
    build_one "$src" "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  done < <(find "$repo/examples" -name '*.cu' | sort)
  build_selftest &
  wait || true
  for rcf in "$dir"/logs/*.rc; do
    if [ "$(cat "$rcf")" != 0 ]; then
      failed=1
      echo "BUILD FAILED: $(basename "$rcf" .rc) (log: ${rcf%.rc}.log)"
      sed -n '1,40p' "${rcf%.rc}.log"
    fi
  done
  echo "built in $((SECONDS - t0)) s"
  section "ptxas resource usage"
  resource_summary
  section "static SASS instruction counts"
  sass_summary

  section "CPU checks"
  check_copies || failed=1
  gen_layout_header "$dir/gen/layout_helpers.gen.h"
  if g++ -std=c++17 -O1 -Wall -Wextra -I "$dir/gen" -o "$dir/layout_check" "$repo/bench/eval/kernel_selftest/layout_check.cc"; then
    "$dir/layout_check" || failed=1
  else
    echo "layout_check: BUILD FAILED"; failed=1
  fi
  if g++ -std=c++17 -O1 -Wall -Wextra -I "$repo/include" -I "$cuda_home/include" -o "$dir/abi_smoke" \
       "$repo/bench/eval/kernel_selftest/abi_smoke.cc" -ldl; then
    "$dir/abi_smoke" "$dir/lib" || failed=1
  else
    echo "abi_smoke: BUILD FAILED"; failed=1
  fi
  return "$failed"
}

do_run() {
  if [ ! -x "$dir/kernel_selftest" ]; then
    echo "kernel_selftest.sh: $dir/kernel_selftest is missing; build first (without --run-only)" >&2
    return 1
  fi
  section "GPU run"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  fi
  local args=(--lib-dir "$dir/lib")
  [ -n "$only" ] && args+=(--only "$only")
  args+=(--json "$RESULTS/kernel_selftest.json")
  local rc=0
  timeout 300 "$dir/kernel_selftest" "${args[@]}" || rc=$?
  mkdir -p "$RESULTS/kernel_selftest_logs" && cp "$dir"/logs/*.log "$RESULTS/kernel_selftest_logs/" 2>/dev/null || true
  return "$rc"
}

build_rc=0
run_rc=0
if [ "$mode" != run ]; then do_build || build_rc=$?; fi
if [ "$mode" != build ]; then do_run || run_rc=$?; fi
section "summary"
[ "$mode" != run ] && echo "build + CPU checks: $([ "$build_rc" = 0 ] && echo ok || echo 'PROBLEMS (see above)')"
[ "$mode" != build ] && echo "GPU self-test: $([ "$run_rc" = 0 ] && echo 'all examples behaved as expected' || echo 'some examples did NOT behave as expected (see the table)')"
exit 0

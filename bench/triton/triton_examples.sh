#!/usr/bin/env bash
# GPU evidence for the Triton track (issue 16) on a Hopper GPU (python3 with torch and Triton; the H200
# run had torch 2.11 and Triton 3.6),
# in parts of at most 4 minutes each. Every case is its own `ptxbench eval` under its own time
# limit, inside one deadline for the part, so one case failing or hanging loses only itself; a
# failure candidate and the tl.dot GEMM after it share one trusted harness (the next candidate
# must evaluate normally). The same pipeline as for CUDA: Python gate, byte-compile, the sandboxed
# Triton runner (JIT compilation in the warm-up), kernel provenance, static SASS of the cubins
# Triton compiled and Nsight Compute's count of the measured call.
#
#   bench/triton/triton_examples.sh [core|failures|kernels|replay|all]      (default core)
#
#   core      diagnostics; `ptxbench check` of every example; the tl.dot GEMM through the full
#             pipeline (timing, ncu: GMMA executed); a gate-rejected torch.matmul and
#             getattr(torch, "mat" + "mul"), a numerically wrong GEMM, then the good one; a device
#             fault (the runner crashes), then the good one; torch compute hidden from the gate
#             (caught by kernel provenance), then the good one
#   failures  a Python exception, a hang, a Python-side output cache, each followed by the good GEMM
#   kernels   the TMA-descriptor GEMM and the mma.sync fallback (full pipeline); the attention
#             forwards, plain and causal
#   replay    the replayed Triton trajectory (`ptxbench run --language triton`: a gate rejection,
#             then the tl.dot GEMM through the agent's default evaluation, compute-sanitizer included)
# Each part stops starting cases at its deadline (BUDGET_S, 225 s) and so ends within 4 minutes.
#
# Binaries: PTXBENCH_BIN, else build/bin, else .carry/bin (bench/stage_binaries.sh).
# Results in bench/results/<gpu>/triton/<part>/ -- one <case>.json (verdicts) and <case>.txt (the
# command's output) per case, cases.tsv (case, exit status, seconds), summary.json and summary.txt
# (bench/triton/check_triton_examples.py), run.log (everything printed) -- and, when $OUT is set,
# $OUT/triton.tar.gz of bench/results/<gpu>/triton/ (every part run so far).
# Expected: summary.txt ends with "PASS"; every line "OK"; the script exits 0. Exit 1: a verdict
# differs from examples/triton/manifest.json (summary.txt shows the first mismatch in full).
set -uo pipefail
PART=${1:-core}
if [ "$PART" = all ]; then
  rc=0
  for p in core failures kernels replay; do bash "$0" "$p" || rc=1; done
  exit $rc
fi
case "$PART" in core|failures|kernels|replay) ;; *) echo "usage: $0 [core|failures|kernels|replay|all]" >&2; exit 2 ;; esac
source "$(dirname "$0")/../lib/env.sh"
bench_gpu "triton/$PART"
cd "$ROOT" || exit 2

E=examples/triton
GEMM=gemm_n7168_k5120
P="$BIN/ptxbench"
RES=$RESULTS
BUDGET_S=${BUDGET_S:-225}       # the part's deadline; the checker and the tarball need the rest
DEADLINE=$((SECONDS + BUDGET_S))
EVALS=()
printf 'case\texit\tseconds\n' > "$RES/cases.tsv"

# run_case NAME MAX_SECONDS COMMAND...: runs under min(MAX, time left), output in NAME.txt.
run_case() {
  local name=$1 max=$2; shift 2
  local left=$((DEADLINE - SECONDS))
  if [ "$left" -lt "${MIN_CASE_S:-20}" ]; then
    echo "!! case $name SKIPPED: only ${left}s left of the part's ${BUDGET_S}s"
    printf '%s\tskipped\t0\n' "$name" >> "$RES/cases.tsv"
    return
  fi
  local limit=$((max < left ? max : left)) t0=$SECONDS
  echo "== $name (limit ${limit}s): $*"
  timeout -k 5 "$limit" "$@" > "$RES/$name.txt" 2>&1
  local rc=$? took=$((SECONDS - t0))
  printf '%s\t%s\t%s\n' "$name" "$rc" "$took" >> "$RES/cases.tsv"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "!! case $name TIMED OUT after ${took}s (its verdicts may be missing); last lines:"
  else
    echo "   exit $rc after ${took}s (non-zero is expected for failure candidates); last lines:"
  fi
  tail -n 4 "$RES/$name.txt" | sed 's/^/   | /'
}

# eval_case NAME MAX_SECONDS [eval options] -- FILES...
eval_case() {
  local name=$1 max=$2; shift 2
  local opts=() files=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  files=("$@")
  EVALS+=("$RES/$name.json")
  run_case "$name" "$max" "$P" eval "${files[@]}" --target "$PTXBENCH_TARGET" --out "$RES/$name.json" "${opts[@]}"
}

# Failure pairs need statuses and runner survival, not the profiler: short timing, no ncu.
QUICK=(--task "$GEMM" --no-sanitize --no-dynamic-check --warmup 1 --iterations 3 --call-timeout 10)
FULL=(--no-sanitize --call-timeout 20)

echo "== triton_examples.sh $PART, binaries $BIN"
echo "python3: $(command -v "${PTXBENCH_PYTHON:-python3}")"
ls -l "$BIN/libptxbench_runner_py.so" 2>&1 | sed 's/^/helper: /'

case "$PART" in
core)
  run_case diagnose 25 "${PTXBENCH_PYTHON:-python3}" -B src/gpu/runner_py/ptxbench_triton_runner.py --diagnose
  echo "== CPU stages of every example (ptxbench check)"
  : > "$RES/check.txt"
  for f in $E/*.py; do
    task=$(python3 -c 'import json,sys; print({e["file"]: e["task"] for e in json.load(open(sys.argv[1]))["examples"]}[sys.argv[2]])' \
           $E/manifest.json "$(basename "$f")")
    printf '%-32s %s\n' "$(basename "$f")" "$(timeout 10 "$P" check "$f" --task "$task" --json 2>&1 |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["outcome"], "|", d["message"][:110])' 2>&1)" |
      tee -a "$RES/check.txt"
  done
  eval_case gemm_full 80 --task $GEMM "${FULL[@]}" -- $E/gemm_tl_dot.py
  eval_case wrong_and_gate 50 "${QUICK[@]}" -- $E/fail_torch_matmul.py $E/fail_getattr_matmul.py \
    $E/fail_wrong_result.py $E/gemm_tl_dot.py
  eval_case device_fault 50 "${QUICK[@]}" -- $E/fail_device_fault.py $E/gemm_tl_dot.py
  eval_case hidden_torch_compute 50 "${QUICK[@]}" -- $E/fail_hidden_torch_compute.py $E/gemm_tl_dot.py
  EXPECT=gemm_tl_dot.py,fail_torch_matmul.py,fail_getattr_matmul.py,fail_wrong_result.py,fail_device_fault.py,fail_hidden_torch_compute.py
  TRAJ=()
  ;;
failures)
  eval_case exception 45 "${QUICK[@]}" -- $E/fail_exception.py $E/gemm_tl_dot.py
  eval_case hang 60 "${QUICK[@]}" -- $E/fail_hang.py $E/gemm_tl_dot.py
  eval_case output_cache 45 "${QUICK[@]}" -- $E/fail_output_cache.py $E/gemm_tl_dot.py
  EXPECT=fail_exception.py,fail_hang.py,fail_output_cache.py,gemm_tl_dot.py
  TRAJ=()
  ;;
replay)
  run_case agent_replay 210 "$P" run --model replay:examples/agent/triton_gemm_replay.json --language triton \
    --tasks $GEMM --target "$PTXBENCH_TARGET" --variants base --trajectories 1 --turns 2 --out "$RES/agent-replay-triton"
  EXPECT=none
  TRAJ=(--trajectory "$RES/agent-replay-triton/trajectories/${GEMM}__${PTXBENCH_TARGET}__base__t0.json")
  ;;
kernels)
  eval_case gemm_variants 100 --task $GEMM "${FULL[@]}" -- $E/gemm_tma_descriptor.py $E/gemm_mma_sync_fallback.py
  eval_case attention 60 --task mha_with_lse_d128 "${FULL[@]}" -- $E/attention_fwd.py
  eval_case attention_causal 60 --task mha_with_lse_d128_causal "${FULL[@]}" -- $E/attention_fwd_causal.py
  EXPECT=gemm_tma_descriptor.py,gemm_mma_sync_fallback.py,attention_fwd.py,attention_fwd_causal.py
  TRAJ=()
  ;;
esac

echo "== check against examples/triton/manifest.json ($((DEADLINE - SECONDS))s of the budget left)"
cat "$RES/cases.tsv"
python3 bench/triton/check_triton_examples.py --manifest $E/manifest.json --out "$RES/summary.json" --expect "$EXPECT" \
  "${TRAJ[@]}" ${EVALS[@]+"${EVALS[@]}"} > "$RES/summary.txt" 2>&1
rc=$?
cat "$RES/summary.txt"
echo "triton_examples.sh $PART: checker exit $rc; results in $RES"
exit $rc

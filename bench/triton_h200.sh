#!/usr/bin/env bash
# GPU evidence for the Triton track (issue 16), on an H200 with torch 2.11 and Triton 3.6, in about
# 5 minutes. Every step has its own time limit; the script always ends with the checker's summary.
#
#   0. diagnostics: versions, the Triton runner's view of the host (--diagnose), the helper library
#   1. the CPU stages of every example (ptxbench check): the gate's rejections, built/deferred for the rest
#   2. the failure examples, each followed by the tl.dot GEMM, in ONE harness (no sanitizer, no
#      profiler, short timing: this step is about statuses and runner survival)
#   3. the full pipeline (timing, Nsight Compute) on the TMA-descriptor GEMM, the tl.dot GEMM and the
#      mma.sync fallback, in one harness: static SASS of the cubins Triton compiled, GMMA/TMA executed
#   4. the attention forwards, plain (mha_with_lse_d128) and causal (mha_with_lse_d128_causal)
#   5. the replayed Triton trajectory through `ptxbench run --language triton`
#   6. bench/check_triton_examples.py: every verdict against examples/triton/manifest.json; for the
#      first mismatch, its full message, log and the runner's own log (versions, Triton's errors)
#
# Results: $OUT/triton/ (default bench/results/h200/triton/): *.json verdicts, *.txt terminal output,
# triton_h200.log (everything this script printed), summary.json.
#   usage: bench/triton_h200.sh            (SANITIZE=1 adds a compute-sanitizer run of the GEMM, ~+1 min)
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
T="$OUT/triton"
mkdir -p "$T"
exec > >(tee "$T/triton_h200.log") 2>&1
E=examples/triton
GEMM=gemm_n7168_k5120
P="$BIN/ptxbench"

echo "== 0. diagnostics $(date -u +%Y-%m-%dT%H:%M:%SZ)"
"$P" --version
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1
echo "python3: $(command -v python3) ${PTXBENCH_PYTHON:+(PTXBENCH_PYTHON=$PTXBENCH_PYTHON)}"
timeout 60 "${PTXBENCH_PYTHON:-python3}" -B src/gpu/runner_py/ptxbench_triton_runner.py --diagnose
echo "helper: $(ls -l "$BIN/libptxbench_runner_py.so" 2>&1)"
ldd "$BIN/libptxbench_runner_py.so" 2>&1 | grep -E "cudart|cupti|seccomp|not found"
command -v cuobjdump ncu compute-sanitizer gcc cc 2>&1 | sed 's/^/tool: /'

echo "== 1. CPU stages of every example"
for f in $E/*.py; do
  task=$(python3 -c 'import json,sys; print({e["file"]: e["task"] for e in json.load(open(sys.argv[1]))["examples"]}[sys.argv[2]])' \
         $E/manifest.json "$(basename "$f")")
  printf '%-32s %s\n' "$(basename "$f")" "$(timeout 60 "$P" check "$f" --task "$task" --json 2>&1 |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["outcome"], "|", d["message"][:110])' 2>&1)"
done

echo "== 2. failure examples, each followed by the tl.dot GEMM (one harness)"
seq=()
for f in fail_wrong_result fail_exception fail_hang fail_device_fault fail_torch_matmul fail_getattr_matmul \
         fail_hidden_torch_compute fail_output_cache; do
  seq+=("$E/$f.py" "$E/gemm_tl_dot.py")
done
time timeout 200 "$P" eval "${seq[@]}" --task $GEMM --target h200 --no-sanitize --no-dynamic-check \
  --warmup 1 --iterations 3 --call-timeout 10 --out "$T/triton_failures.json" > "$T/triton_failures.txt" 2>&1
echo "exit $?"

echo "== 3. GEMMs through the full pipeline (timing, static SASS of Triton's cubins, ncu)"
time timeout 150 "$P" eval $E/gemm_tma_descriptor.py $E/gemm_tl_dot.py $E/gemm_mma_sync_fallback.py \
  --task $GEMM --target h200 --no-sanitize --call-timeout 20 --out "$T/triton_gemm.json" > "$T/triton_gemm.txt" 2>&1
echo "exit $?"

echo "== 4. attention forwards (plain, causal)"
time timeout 90 "$P" eval $E/attention_fwd.py --task mha_with_lse_d128 --target h200 --no-sanitize --call-timeout 20 \
  --out "$T/triton_attention.json" > "$T/triton_attention.txt" 2>&1
echo "exit $?"
time timeout 90 "$P" eval $E/attention_fwd_causal.py --task mha_with_lse_d128_causal --target h200 --no-sanitize \
  --call-timeout 20 --out "$T/triton_attention_causal.json" > "$T/triton_attention_causal.txt" 2>&1
echo "exit $?"

if [ "${SANITIZE:-0}" = 1 ]; then
  echo "== 4b. compute-sanitizer memcheck on the tl.dot GEMM"
  time timeout 240 "$P" eval $E/gemm_tl_dot.py --task $GEMM --target h200 --no-dynamic-check --warmup 1 --iterations 3 \
    --out "$T/triton_sanitize.json" > "$T/triton_sanitize.txt" 2>&1
  echo "exit $?"
fi

echo "== 5. replayed Triton trajectory (ptxbench run --language triton)"
rm -rf "$T/agent-replay-triton"
time timeout 120 "$P" run --model replay:examples/agent/triton_gemm_replay.json --language triton \
  --tasks $GEMM --target h200 --variants base --trajectories 1 --turns 2 --out "$T/agent-replay-triton" \
  > "$T/agent_replay_triton.txt" 2>&1
echo "exit $?"

echo "== 6. check against examples/triton/manifest.json"
evals=("$T/triton_failures.json" "$T/triton_gemm.json" "$T/triton_attention.json" "$T/triton_attention_causal.json")
[ "${SANITIZE:-0}" = 1 ] && evals+=("$T/triton_sanitize.json")
python3 bench/check_triton_examples.py --manifest $E/manifest.json --out "$T/summary.json" \
  --trajectory "$T/agent-replay-triton/trajectories/${GEMM}__h200__base__t0.json" "${evals[@]}"
echo "exit $?"

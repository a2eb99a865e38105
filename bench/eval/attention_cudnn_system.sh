#!/usr/bin/env bash
# The attention baselines with the GPU host's *system* libcudnn (9.14 on the H200 image; our headers
# are 9.19): which cuDNN the loader picked, the cuDNN-vs-reference GPU tests, and the causal examples
# through `ptxbench eval`. Answers "does PTXBench work, or refuse clearly, with that cuDNN?" (~3 min)
# Results in bench/results/<gpu>/attention_cudnn_system/ ($OUT/attention_cudnn_system.tar.gz):
# attention_cudnn_system.txt (tests, cut lines), attention_cudnn_system_examples.json,
# attention_cudnn_system_summary.json (verdicts against examples/manifest.json).
set -uo pipefail
export PTXBENCH_CUDNN_DIR=system
source "$(dirname "$0")/../lib/env.sh"
bench_gpu attention_cudnn_system
# A caller may have sourced env.sh before with PyTorch's libcudnn first on the path: drop PyTorch's
# NVIDIA wheel folders so the loader falls back to the system library.
LD_LIBRARY_PATH=$(tr ':' '\n' <<< "$LD_LIBRARY_PATH" | grep -v 'packages/nvidia/' | paste -sd:)
export LD_LIBRARY_PATH
cd "$ROOT" || exit 2
txt="$RESULTS/attention_cudnn_system.txt"
A=examples/attention
{
  echo "# system libcudnn: $(ldconfig -p 2>/dev/null | grep -o '/[^ ]*libcudnn.so.9$' | head -1 | xargs -r readlink -f)"
  echo "# LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "== ptxbench_gpu_attention_tests (cuDNN vs the fp32 reference, graph variants)"
  timeout 200 "$BIN/ptxbench_gpu_attention_tests" 2>&1 |
    awk '{ if (length($0) > 2000) print substr($0, 1, 2000) " ...[cut]"; else print }'
  echo "exit ${PIPESTATUS[0]}"
} > "$txt" 2>&1
grep -E "^\[  (PASSED|FAILED) |^exit|tests? ran" "$txt"
files=()
for job in "mha_with_lse_d128_causal $A/plain_fwd_causal.cu $A/wgmma_fwd_causal.cu" "mha_bwd_d128_causal $A/plain_bwd_causal.cu"; do
  set -- $job
  task=$1; shift
  timeout 150 "$BIN/ptxbench" eval "$@" --task "$task" --target "$PTXBENCH_TARGET" --sanitize-timeout 120 \
    --call-timeout 30 --out "$RESULTS/sys_$task.json" 2>&1 | tee -a "$txt" | tail -8
  files+=("$RESULTS/sys_$task.json")
done
python3 bench/eval/summarize_evals.py --manifest examples/manifest.json --out "$RESULTS/attention_cudnn_system_summary.json" \
  --merged-out "$RESULTS/attention_cudnn_system_examples.json" "${files[@]}"
rc=$?
rm -f "${files[@]}"
# Which cuDNN each verdict's reference ran on.
python3 -c 'import json, sys
for v in json.load(open(sys.argv[1])):
    env = v.get("environment", {})
    print(v.get("file"), v.get("status"), "cudnn", env.get("libs", {}).get("cudnn"), "|", (env.get("baseline") or "")[:100])' \
  "$RESULTS/attention_cudnn_system_examples.json"
exit "$rc"

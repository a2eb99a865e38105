#!/usr/bin/env bash
# Every piece of GPU evidence for the cuDNN attention baselines in one run on the GPU host (about
# 5 minutes on an H200): the GPU tests (cuDNN vs the fp32 reference, 12 direction x D x causal
# combinations and more), the full probe (each graph variant at a small and the headline shape,
# the four baselines), and the baseline-vs-PyTorch comparison (bench/attention_baseline_vs_torch.sh).
#
# usage: bench/attention_gpu_evidence.sh [BIN_DIR]
#   BIN_DIR holds ptxbench-attention-probe and ptxbench_gpu_attention_tests (default: .carry/attention
#   as staged by bench/stage_attention_binaries.sh, else build/bin).
# Writes into $OUT (else bench/results/h200): attention_gpu_tests.json, attention_probe.json,
# attention_probe_torchlib.json, attention_baseline.json and attention_evidence.log (all output).
set -uo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
if [ -z "$bin" ]; then
  if [ -x .carry/attention/ptxbench-attention-probe ]; then bin=.carry/attention; else bin=build/bin; fi
fi
out="${OUT:-bench/results/h200}"
mkdir -p "$out"
log="$out/attention_evidence.log"
: > "$log"
status=0

step() { echo; echo "=== $* ==="; }
{
  step "GPU and libraries"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 || true
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1 || true
  ldconfig -p 2>/dev/null | grep -i libcudnn.so || true

  step "GPU tests: cuDNN vs the fp32 reference"
  timeout 420 "$bin/ptxbench_gpu_attention_tests" --gtest_output="json:$out/attention_gpu_tests.json" || status=1

  step "probe: every graph variant, small and headline shapes, the four baselines (default libcudnn)"
  timeout 420 "$bin/ptxbench-attention-probe" --json "$out/attention_probe.json" || status=1

  step "baselines vs PyTorch"
  bench/attention_baseline_vs_torch.sh --probe "$bin/ptxbench-attention-probe" \
    --system-json "$out/attention_probe.json" --out "$out" || status=1
  rm -f "$out/attention_probe_system.json"
  echo
  echo "attention_gpu_evidence: exit $status"
} 2>&1 | tee -a "$log"
exit "$status"

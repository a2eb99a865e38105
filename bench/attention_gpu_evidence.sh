#!/usr/bin/env bash
# The GPU evidence for the cuDNN attention baselines, in two parts that each fit a 10-minute run on
# the GPU host:
#   tests  the GPU tests (cuDNN vs the fp32 reference: the 12 direction x D x causal combinations,
#          S = 1024 cases, each graph variant alone, ...) with the default libcudnn, then the 12
#          combinations again with PyTorch's libcudnn                                   (~3-5 min)
#   bench  the full probe (each graph variant at a small and the headline shape, the four baselines)
#          and the baseline-vs-PyTorch comparison (bench/attention_baseline_vs_torch.sh) (~3-5 min)
#
# usage: bench/attention_gpu_evidence.sh tests|bench|all [BIN_DIR]
#   BIN_DIR holds ptxbench-attention-probe and ptxbench_gpu_attention_tests (default: .carry/attention
#   as staged by bench/stage_attention_binaries.sh, else build/bin).
# Writes into $OUT (else bench/results/h200):
#   tests: attention_gpu_tests.json, attention_gpu_tests_torchlib.json, attention_tests.log
#   bench: attention_probe.json, attention_probe_torchlib.json, attention_baseline.json, attention_bench.log
set -uo pipefail
cd "$(dirname "$0")/.."
part="${1:-all}"
bin="${2:-}"
if [ -z "$bin" ]; then
  if [ -x .carry/attention/ptxbench-attention-probe ]; then bin=.carry/attention; else bin=build/bin; fi
fi
out="${OUT:-bench/results/h200}"
mkdir -p "$out"

torch_cudnn_lib() { python3 bench/torch_nvidia_libs.py 2>/dev/null || true; }

environment() {
  echo "=== GPU and libraries"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 || true
  python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1 || true
  ldconfig -p 2>/dev/null | grep -i 'libcudnn.so' || true
  echo "PyTorch's libcudnn: $(torch_cudnn_lib)"
}

run_tests() {
  environment
  echo; echo "=== GPU tests, default libcudnn"
  timeout 330 "$bin/ptxbench_gpu_attention_tests" --gtest_output="json:$out/attention_gpu_tests.json"
  local lib; lib=$(torch_cudnn_lib)
  if [ -n "$lib" ]; then
    echo; echo "=== the 12 cuDNN-vs-reference combinations, PyTorch's libcudnn (${lib%%:*})"
    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 240 "$bin/ptxbench_gpu_attention_tests" \
      --gtest_filter='AllTwelve/*:CudnnGraphVariant*:Variants/*' \
      --gtest_output="json:$out/attention_gpu_tests_torchlib.json"
  fi
}

run_bench() {
  environment
  echo; echo "=== probe: every graph variant, small and headline shapes, the four baselines (default libcudnn)"
  timeout 300 "$bin/ptxbench-attention-probe" --json "$out/attention_probe.json"
  echo; echo "=== baselines vs PyTorch"
  bench/attention_baseline_vs_torch.sh --probe "$bin/ptxbench-attention-probe" \
    --system-json "$out/attention_probe.json" --out "$out"
}

case "$part" in
  tests) run_tests 2>&1 | tee "$out/attention_tests.log" ;;
  bench) run_bench 2>&1 | tee "$out/attention_bench.log" ;;
  all) { run_tests; run_bench; } 2>&1 | tee "$out/attention_evidence.log" ;;
  *) echo "usage: $0 tests|bench|all [BIN_DIR]" >&2; exit 2 ;;
esac
# The steps ran in a piped subshell, so judge from the result files: no failed test, and the
# PyTorch comparison's verdict.
python3 - "$part" "$out" <<'EOF'
import json, os, sys
part, out = sys.argv[1], sys.argv[2]
ok = True
def load(name):
    path = os.path.join(out, name)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"missing or unreadable {path}: {e}")
        return None
if part in ("tests", "all"):
    for name in ("attention_gpu_tests.json", "attention_gpu_tests_torchlib.json"):
        doc = load(name)
        if doc is None:
            ok = ok and name.endswith("torchlib.json")  # absent when PyTorch's libcudnn is not found
            continue
        skipped = [f"{suite['name']}.{t['name']}" for suite in doc.get("testsuites", [])
                   for t in suite.get("testsuite", []) if t.get("result") == "SKIPPED"]
        print(f"{name}: {doc.get('tests')} tests, {doc.get('failures')} failures, {len(skipped)} skipped")
        for t in skipped:
            print(f"  skipped: {t}")  # on the GPU host only the unified variants cuDNN lacks should be here
        ok = ok and doc.get("failures") == 0
if part in ("bench", "all"):
    doc = load("attention_baseline.json")
    verdict = (doc or {}).get("verdict", {})
    print(f"attention_baseline.json verdict: {verdict}")
    ok = ok and bool(verdict.get("pass"))
print(f"attention_gpu_evidence ({part}): {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
EOF

#!/usr/bin/env bash
# Our cuDNN attention baselines vs PyTorch's cuDNN path on the four headline workloads (B=4, H=48,
# S=4096, D=128; forward and backward, causal and not). Runs on the GPU host:
#   - our probe (--baselines-only) with whatever libcudnn the loader finds (the system one), unless
#     a probe JSON from a full run is given with --system-json;
#   - our probe again with LD_LIBRARY_PATH at PyTorch's NVIDIA wheels (site-packages/nvidia/*/lib,
#     cuDNN's first: bench/torch_nvidia_libs.py), i.e. the libcudnn PyTorch itself uses;
#   - bench/attention_torch.py: PyTorch's timings and the side-by-side JSON + verdict.
#
# usage: bench/attention_baseline_vs_torch.sh [--probe PATH] [--system-json PATH] [--out DIR]
# Output files (DIR defaults to $OUT, else bench/results/h200): attention_probe_system.json (unless
# given), attention_probe_torchlib.json, attention_baseline.json. Exit 0 when every judged ratio <= 1.05.
set -uo pipefail
cd "$(dirname "$0")/.."

probe=build/bin/ptxbench-attention-probe
system_json=""
out="${OUT:-bench/results/h200}"
while [ $# -gt 0 ]; do
  case "$1" in
    --probe) probe="$2"; shift 2 ;;
    --system-json) system_json="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
python=${PYTHON:-python3}
mkdir -p "$out"
[ -x "$probe" ] || { echo "no probe binary at $probe (build ptxbench-attention-probe, or pass --probe)" >&2; exit 2; }

torch_lib=$("$python" bench/torch_nvidia_libs.py 2>/dev/null || true)

if [ -z "$system_json" ]; then
  system_json="$out/attention_probe_system.json"
  echo "== our baselines, default libcudnn"
  timeout 300 "$probe" --baselines-only --json "$system_json" || echo "(probe exit $?)"
fi
ours=(--ours "$system_json")
if [ -n "$torch_lib" ]; then
  echo "== our baselines, PyTorch's libcudnn (${torch_lib%%:*})"
  LD_LIBRARY_PATH="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$probe" --baselines-only --json "$out/attention_probe_torchlib.json" || echo "(probe exit $?)"
  ours+=(--ours "$out/attention_probe_torchlib.json")
else
  echo "== PyTorch's libcudnn not found (nvidia.cudnn); comparing with the default libcudnn only"
fi

echo "== PyTorch"
timeout 300 "$python" bench/attention_torch.py "${ours[@]}" --out "$out/attention_baseline.json"

# Sourced by the adaptation bench scripts: the suite target of the GPU at hand, never assumed.
# Reads the first GPU's name (nvidia-smi) and picks the target of suite/targets.json whose gpu_name
# matches it: the same name, else the same model word ("H100", "H200", "B200"). Sets PTXBENCH_TARGET
# (h100, h200, ...) and GPU_NAME; with no GPU or no match it prints why and returns 1.
#   PTXBENCH_TARGET=h200 forces a target (a check of the script itself, not evidence).
detect_gpu_target() {
  local root=$1
  if [ -n "${PTXBENCH_TARGET:-}" ]; then
    GPU_NAME=${GPU_NAME:-forced}
    return 0
  fi
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_target: nvidia-smi not found: no GPU to pick a target for" >&2
    return 1
  fi
  GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/^ *//;s/ *$//')
  if [ -z "$GPU_NAME" ]; then
    echo "gpu_target: nvidia-smi lists no GPU" >&2
    return 1
  fi
  PTXBENCH_TARGET=$(python3 - "$root/suite/targets.json" "$GPU_NAME" <<'PY'
import json, sys
targets = json.load(open(sys.argv[1]))["targets"]
name = sys.argv[2]
exact = [t for t, v in targets.items() if v.get("gpu_name") == name]
def model(n):  # "NVIDIA H100 80GB HBM3" -> "H100"
    words = n.split()
    return words[1] if len(words) > 1 and words[0] == "NVIDIA" else words[0]
same_model = [t for t, v in targets.items() if model(v.get("gpu_name", "")) in name.split()]
pick = exact or same_model
print(pick[0] if len(pick) == 1 else "")
PY
)
  if [ -z "$PTXBENCH_TARGET" ]; then
    echo "gpu_target: no target in suite/targets.json matches the GPU '$GPU_NAME'" >&2
    return 1
  fi
  export PTXBENCH_TARGET GPU_NAME
}

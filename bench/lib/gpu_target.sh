#!/usr/bin/env bash
# The one GPU-detection rule of the bench scripts: which suite target (suite/targets.json) the GPU of
# this host is. Sourced by bench/lib/env.sh (function bench_gpu_target); run directly it prints the
# target, e.g. `bench/lib/gpu_target.sh` -> h100.
#
# The rule is the C++ one (`ptxbench eval`/`serve` without --target): the target whose gpu_name is
# exactly the model nvidia-smi reports, else the target whose name is a whole word of the lower-cased
# model ("NVIDIA H100 PCIe" -> h100; "NVIDIA GH200 480GB" is no target). Anything else -- no
# nvidia-smi, no GPU at that index, an unknown model -- is one line on stderr and exit status 2.
#
#   PTXBENCH_DEVICE     the GPU index asked about (default 0)
#   PTXBENCH_GPU_MODEL  the model name to use instead of asking nvidia-smi (tests, dry runs on a
#                       machine without a GPU); the targets file still decides
#   PTXBENCH_ROOT       the checkout whose suite/targets.json is read (default: this script's)

# bench_gpu_model: the model name of GPU $PTXBENCH_DEVICE, or one line on stderr and status 2.
bench_gpu_model() {
  if [ -n "${PTXBENCH_GPU_MODEL:-}" ]; then
    printf '%s\n' "$PTXBENCH_GPU_MODEL"
    return 0
  fi
  local device=${PTXBENCH_DEVICE:-0} model rc
  if ! command -v nvidia-smi > /dev/null 2>&1; then
    echo "bench: no NVIDIA GPU here (nvidia-smi not found); PTXBENCH_GPU_MODEL names one for a dry run" >&2
    return 2
  fi
  model=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$device" 2> /dev/null)
  rc=$?
  model=${model%%$'\n'*}
  if [ "$rc" -ne 0 ] || [ -z "$model" ]; then
    # Asked again for its message: stdout alone keeps a warning on stderr out of the model name.
    local why
    why=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$device" 2>&1)
    why=${why%%$'\n'*}
    echo "bench: nvidia-smi found no GPU $device (exit $rc): ${why:-no output}" >&2
    return 2
  fi
  printf '%s\n' "$model"
}

# bench_gpu_target: the suite target of GPU $PTXBENCH_DEVICE, or one line on stderr and status 2.
bench_gpu_target() {
  local model root
  model=$(bench_gpu_model) || return 2
  root=${PTXBENCH_ROOT:-$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)}
  if ! command -v python3 > /dev/null 2>&1; then
    echo "bench: python3 is needed to read suite/targets.json" >&2
    return 2
  fi
  # Whole words: runs of letters and digits, so "gh200" is one word and never the target h200.
  python3 - "$root/suite/targets.json" "$model" <<'PY'
import json, re, sys
path, model = sys.argv[1], sys.argv[2].strip()
try:
    with open(path) as f:
        targets = json.load(f)["targets"]
except (OSError, ValueError, KeyError) as e:
    print(f"bench: cannot read the targets from {path}: {e}", file=sys.stderr)
    sys.exit(2)
names = sorted(targets)
exact = [n for n in names if targets[n].get("gpu_name") == model]
words = set(re.split(r"[^a-z0-9]+", model.lower()))
by_word = [n for n in names if n in words]
pick = (exact or by_word or [None])[0]
if pick is None:
    print(f"bench: GPU '{model}' is none of the suite's targets ({', '.join(names)} in {path})", file=sys.stderr)
    sys.exit(2)
print(pick)
PY
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  bench_gpu_target
fi

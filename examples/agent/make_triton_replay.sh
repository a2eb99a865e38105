#!/usr/bin/env bash
# Writes examples/agent/triton_gemm_replay.json: a recorded two-turn Triton GEMM trajectory for
# `ptxbench run --language triton --model replay:examples/agent/triton_gemm_replay.json`. Reply 1
# does the product with torch.matmul (the Python gate rejects it, naming rule and line); reply 2 is
# the kernel.py given as the argument (a tl.dot GEMM, e.g. examples/triton/gemm_tl_dot.py).
#   usage: examples/agent/make_triton_replay.sh KERNEL.py [OUT.json]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernel="${1:?usage: $0 KERNEL.py [OUT.json]}"
out="${2:-$here/triton_gemm_replay.json}"
python3 - "$here/../triton/fail_torch_matmul.py" "$kernel" "$out" <<'PY'
import json, sys
first_kernel = open(sys.argv[1]).read()
kernel = open(sys.argv[2]).read()
first = ("The quickest correct version lets torch do the product and keeps a Triton kernel for later:\n\n"
         "```python\n" + first_kernel.rstrip("\n") + "\n```\n")
second = ("The gate does not allow torch compute on the host, so the product moves into a Triton kernel: "
          "grouped 128x256x64 tiles, tl.dot with fp32 accumulation (wgmma on Hopper with 8 warps), 3 stages.\n\n"
          "```python\n" + kernel.rstrip("\n") + "\n```\n")
traj = {
  "info": {"model_stats": {"instance_cost": 0.0, "api_calls": 2}, "config": {"agent_type": "ptxbench.MiniPTXAgent"},
           "mini_version": "ptxbench replay example", "exit_status": "Recorded", "submission": "",
           "ptxbench": {"model": "replay-example", "task": "gemm_n7168_k5120", "target": "h200", "arch": "sm_90a",
                        "variant": "base", "language": "triton", "trajectory_index": 0, "turn_limit": 2,
                        "target_speedup": 1.2, "history_policy": "full", "seed": 0, "dropped_pairs": [],
                        "interruptions": []}},
  "messages": [
    {"role": "system", "content": "(recorded example: the live run builds its own prompts)"},
    {"role": "user", "content": "(recorded example)"},
    {"role": "assistant", "content": first},
    {"role": "user", "content": "(recorded feedback)", "extra": {"turn": 0, "event": "evaluation"}},
    {"role": "assistant", "content": second},
    {"role": "user", "content": "(recorded feedback)", "extra": {"turn": 1, "event": "evaluation"}}],
  "trajectory_format": "mini-swe-agent-1.1"}
with open(sys.argv[3], "w") as f:
    json.dump(traj, f, indent=2)
    f.write("\n")
print("wrote", sys.argv[3])
PY

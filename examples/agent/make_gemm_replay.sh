#!/usr/bin/env bash
# Writes examples/agent/gemm_replay.json: a recorded two-turn GEMM trajectory for
# `ptxbench run --model replay:examples/agent/gemm_replay.json`. Reply 1 is a kernel that does not
# compile; reply 2 is the kernel file given as the argument (a correct wgmma GEMM, e.g.
# examples/gemm/wgmma_*.cu).
#   usage: examples/agent/make_gemm_replay.sh KERNEL.cu [OUT.json]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kernel="${1:?usage: $0 KERNEL.cu [OUT.json]}"
out="${2:-$here/gemm_replay.json}"
python3 - "$here/first_reply.md" "$kernel" "$out" <<'PY'
import json, sys
first = open(sys.argv[1]).read()
kernel = open(sys.argv[2]).read()
second = ("The build failed because the descriptor helper was never defined. Here is the complete kernel "
          "with TMA loads and wgmma, written out in full:\n\n```cuda\n" + kernel.rstrip("\n") + "\n```\n")
traj = {
  "info": {"model_stats": {"instance_cost": 0.0, "api_calls": 2}, "config": {"agent_type": "ptxbench.MiniPTXAgent"},
           "mini_version": "ptxbench replay example", "exit_status": "Recorded", "submission": "",
           "ptxbench": {"model": "replay-example", "task": "gemm_n7168_k5120", "target": "h200", "arch": "sm_90a",
                        "variant": "minimal", "trajectory_index": 0, "turn_limit": 2, "target_speedup": 1.2,
                        "history_policy": "full", "seed": 0, "dropped_pairs": [], "interruptions": []}},
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

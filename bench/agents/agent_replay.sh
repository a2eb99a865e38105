#!/usr/bin/env bash
# GPU evidence for the agent (issue 6): the replay model drives the full loop over the GEMM task on
# an H200 — turn 0 a kernel that does not compile, turn 1 examples/gemm/wgmma_tma_pipelined.cu, which
# must come back correct and target-correct (GMMA/TMA verified as executed on the workload).
# The run directory (plan.json, trajectories/, summary.json) lands in $OUT/agent-replay-gemm.
#   usage: bench/agent_replay_h200.sh        (from a built tree; see bench/env.sh for overrides)
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
run="$OUT/agent-replay-gemm"
replay=examples/agent/gemm_replay.json
if grep -q 'PLACEHOLDER, not a kernel' "$replay"; then
  echo "error: $replay holds a placeholder reply; regenerate it with examples/agent/make_gemm_replay.sh" >&2
  exit 2
fi
"$BIN/ptxbench" run --model "replay:$replay" --tasks gemm_n7168_k5120 --target h200 --variants base \
  --trajectories 1 --out "$run"
python3 - "$run/trajectories/gemm_n7168_k5120__h200__base__t0.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
feedback = [m for m in t["messages"][3::2] if m.get("role") == "user"]
labels = [f["extra"]["ptxbench"]["label"] for f in feedback]
last = feedback[-1]["extra"]["ptxbench"]
print("exit_status:", t["info"]["exit_status"], "| labels:", labels)
print("last turn: label", last["label"], "| target_correct", last["target_correct"],
      "| target_verdict", last["target_verdict"], "| speedup", last["speedup"],
      "| dynamic_counts", last["dynamic_counts"])
print("feedback shown to the model:\n" + feedback[-1]["content"])
ok = last["label"] == "correct" and last["target_correct"]
print("PASS: the last turn is correct and target-correct" if ok else "FAIL: the last turn is not correct and target-correct")
sys.exit(0 if ok else 1)
PY

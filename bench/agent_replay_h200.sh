#!/usr/bin/env bash
# GPU evidence for the agent (issue 6): the replay model drives the full loop over the GEMM task on
# an H200 — turn 0 a kernel that does not compile, turn 1 a wgmma GEMM that must come back correct
# and target-correct (GMMA/TMA verified as executed). Writes the run under bench/results/h200/.
#   usage: bench/agent_replay_h200.sh [RUN_DIR]      (run from the repository root, after building)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results/h200/agent-replay-gemm}"
replay=examples/agent/gemm_replay.json
if grep -q 'PLACEHOLDER, not a kernel' "$replay"; then
  echo "error: $replay still holds the placeholder second reply;" \
       "regenerate it: examples/agent/make_gemm_replay.sh examples/gemm/<wgmma kernel>.cu" >&2
  exit 2
fi
build/bin/ptxbench run --model "replay:$replay" --tasks gemm_n7168_k5120 --target h200 \
  --trajectories 1 --out "$out"
python3 - "$out/trajectories/gemm_n7168_k5120__h200__minimal__t0.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
msgs = t["messages"]
feedback = [m for m in msgs[3::2] if m.get("role") == "user"]
last = feedback[-1]["extra"]["ptxbench"]
labels = [f["extra"]["ptxbench"]["label"] for f in feedback]
print("exit_status:", t["info"]["exit_status"], "| labels:", labels)
print("last turn: label", last["label"], "| target_correct", last["target_correct"],
      "| target_verdict", last["target_verdict"], "| speedup", last["speedup"],
      "| dynamic_counts", last["dynamic_counts"])
ok = last["label"] == "correct" and last["target_correct"]
print("PASS: the last turn is correct and target-correct" if ok else "FAIL: the last turn is not correct and target-correct")
sys.exit(0 if ok else 1)
PY

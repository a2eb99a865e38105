#!/usr/bin/env bash
# GPU evidence for the agent (issue 6), ~1 min: the replay model drives the full loop over the GEMM
# task on this host's Hopper GPU -- turn 0 a kernel that does not compile, turn 1
# examples/gemm/wgmma_tma_pipelined.cu, which must come back correct and target-correct (GMMA/TMA
# verified as executed on the workload).
# Results in bench/results/<gpu>/agent_replay/ ($OUT/agent_replay.tar.gz): the run directory
# agent-replay-gemm/ (plan.json, trajectories/, summary.json) and run.log (the last turn, PASS/FAIL).
#   usage: bench/agents/agent_replay.sh        (from a built tree; see bench/lib/env.sh for overrides)
set -euo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu agent_replay
cd "$ROOT" || exit 2
run="$RESULTS/agent-replay-gemm"
replay=examples/agent/gemm_replay.json
if grep -q 'PLACEHOLDER, not a kernel' "$replay"; then
  echo "error: $replay holds a placeholder reply; regenerate it with examples/agent/make_gemm_replay.sh" >&2
  exit 2
fi
timeout 200 "$BIN/ptxbench" run --model "replay:$replay" --tasks gemm_n7168_k5120 --target "$PTXBENCH_TARGET" \
  --variants base --trajectories 1 --out "$run"
python3 - "$run/trajectories/gemm_n7168_k5120__${PTXBENCH_TARGET}__base__t0.json" <<'PY'
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
ok = last["label"] == "passed" and last["target_correct"]
print("PASS: the last turn passed and is target-correct" if ok else "FAIL: the last turn did not pass, or is not target-correct")
sys.exit(0 if ok else 1)
PY

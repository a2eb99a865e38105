#!/usr/bin/env bash
# Renders `ptxbench report` over a run directory written by the agent and takes a headless-Chromium
# screenshot. CPU only (seconds). Default run: the agent replay committed for the GPU named by
# PTXBENCH_TARGET, else the only one committed (bench/results/<gpu>/agent_replay/agent-replay-gemm,
# or the older bench/results/<gpu>/agent-replay-gemm).
#   bench/agents/report_agent_run.sh [RUN_DIR]
# Output: bench/results/cpu/report_agent_replay.{html,png}.
set -euo pipefail
cd "$(dirname "$0")/../.."
run=${1:-}
if [ -z "$run" ]; then
  shopt -s nullglob
  runs=(bench/results/"${PTXBENCH_TARGET:-*}"/agent_replay/agent-replay-gemm bench/results/"${PTXBENCH_TARGET:-*}"/agent-replay-gemm)
  if [ "${#runs[@]}" -ne 1 ]; then
    echo "bench: ${#runs[@]} committed agent runs (${runs[*]:-none}); name one: $0 RUN_DIR" >&2
    exit 2
  fi
  run=${runs[0]}
fi
out=bench/results/cpu
mkdir -p "$out"
bin=${PTXBENCH_BIN:-build/bin}/ptxbench
"$bin" report "$run" --out "$out/report_agent_replay.html"
if [ -x /usr/bin/chromium ]; then
  profile=$(mktemp -d)
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,1800 \
    --screenshot="$out/report_agent_replay.png" "file://$(realpath "$out/report_agent_replay.html")" 2>/dev/null
  rm -rf "$profile"
  echo "screenshot: $out/report_agent_replay.png"
fi

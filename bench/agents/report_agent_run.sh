#!/usr/bin/env bash
# Renders `ptxbench report` over a run directory written by the agent (default: the H200 replay run
# committed under bench/results/h200/agent-replay-gemm) and takes a headless-Chromium screenshot.
# CPU only. Output: bench/results/cpu/report_agent_replay.{html,png}.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-bench/results/h200/agent-replay-gemm}
out=bench/results/cpu
mkdir -p "$out"
build/bin/ptxbench report "$run" --out "$out/report_agent_replay.html"
if [ -x /usr/bin/chromium ]; then
  profile=$(mktemp -d)
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,1800 \
    --screenshot="$out/report_agent_replay.png" "file://$(realpath "$out/report_agent_replay.html")" 2>/dev/null
  rm -rf "$profile"
  echo "screenshot: $out/report_agent_replay.png"
fi

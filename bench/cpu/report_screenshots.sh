#!/usr/bin/env bash
# Renders `ptxbench report` for the two runs a new user without a GPU meets first, and screenshots them
# in headless Chromium (as tests/metrics/report_browser_test.cc does):
#   - report_cpu_only.png: the README's demo run made with --cpu-only (replayed model, real nvcc
#     builds, nothing on a GPU): the banner saying that nothing ran on a GPU and what the numbers mean;
#   - report_incomplete.png: tests/fixtures/trajectories/run_small with one trajectory interrupted
#     after 2 of its 3 turns (exit status Running) and one planned trajectory file deleted: the
#     warnings banner.
# CPU only; needs nvcc (for the demo's builds), python3 and /usr/bin/chromium.
#
#   bench/cpu/report_screenshots.sh [OUT_DIR]       (default: bench/results/cpu)
#
# Checks that each rendered page has its banner and no script error, then writes the PNGs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$repo/bench/results/cpu}")
bin=${PTXBENCH_BIN:-$repo/build/bin}/ptxbench
[ -x "$bin" ] || cmake --build "$repo/build" --target ptxbench
chromium=/usr/bin/chromium
[ -x "$chromium" ] || { echo "bench: $chromium is missing (apt-get install chromium)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Relative paths, so the reports show runs/demo and runs/incomplete rather than a temporary folder.
cd "$tmp"
ln -s "$repo/examples" examples
"$bin" run --model replay:examples/agent/gemm_replay.json --tasks gemm_n7168_k5120 --variants base \
  --trajectories 1 --cpu-only --quiet --out runs/demo
cp -r "$repo/tests/fixtures/trajectories/run_small" runs/incomplete
python3 - <<'PY'
import json, os
f = "runs/incomplete/trajectories/base-t0.json"
d = json.load(open(f))
d["info"]["exit_status"] = "Running"          # as a killed `ptxbench run` leaves it
d["messages"] = d["messages"][:2 + 2 * 2]     # system, task, 2 of its 3 turns
json.dump(d, open(f, "w"), indent=1)
os.remove("runs/incomplete/trajectories/multicast-t1.json")  # planned in plan.json, now missing
PY

shot() {  # NAME RUN_DIR TITLE BANNER_ID
  local name=$1 run=$2 title=$3 banner=$4
  "$bin" report "$run" --title "$title" --out "$name.html" 2> "$name.err" || { cat "$name.err" >&2; exit 1; }
  sed 's/^/  /' "$name.err"
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$tmp/profile")
  "$chromium" "${flags[@]}" --dump-dom --virtual-time-budget=3000 "file://$tmp/$name.html" > "$name.dom" 2> /dev/null
  grep -q "id=\"$banner\"" "$name.dom" || { echo "bench: $name: no #$banner in the rendered page" >&2; exit 1; }
  grep -q '<div id="report-errors"></div>' "$name.dom" || { echo "bench: $name: the page reported errors" >&2; exit 1; }
  "$chromium" "${flags[@]}" --window-size=1400,1800 --screenshot="$out/$name.png" "file://$tmp/$name.html" 2> /dev/null
  echo "bench: wrote $out/$name.png (#$banner rendered, no script error)"
}
shot report_cpu_only runs/demo "PTXBench report: the README demo without a GPU (run --cpu-only)" report-cpu-only
shot report_incomplete runs/incomplete "PTXBench report: an incomplete run" report-warnings

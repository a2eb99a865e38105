#!/usr/bin/env bash
# Times `ptxbench metrics --import-upstream` over upstream PTXBench's whole per-turn export (13,674
# turns; acceptance: under 2 s on the 2-core dev machine) and renders `ptxbench report` over it, with a
# headless-Chromium screenshot when /usr/bin/chromium exists. CPU only.
#
#   bench/cpu/metrics_upstream.sh [UPSTREAM_DIR] [RUNS]     (default: ../shared or ../../shared data, 7 runs)
#
# Writes bench/results/cpu/metrics_upstream.txt and bench/results/cpu/report_upstream.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${1:-}
if [ -z "$data" ]; then
  for d in ../shared/data/upstream-ptxbench ../../shared/data/upstream-ptxbench; do [ -d "$d" ] && data=$d && break; done
fi
[ -f "$data/reasoning_tokens_vs_performance.csv" ] || { echo "bench: no upstream export in '$data'" >&2; exit 2; }
runs=${2:-7}
bin=build/bin/ptxbench
[ -x "$bin" ] || cmake --build build --target ptxbench
out=bench/results/cpu
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

report="$out/metrics_upstream.txt"
{
  echo "# ptxbench metrics --import-upstream: wall time over the whole upstream export"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "input: $(wc -l < "$data/reasoning_tokens_vs_performance.csv") lines, $(stat -c %s "$data/reasoning_tokens_vs_performance.csv") bytes"
} > "$report"

times=()
for _ in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  "$bin" metrics --import-upstream "$data/reasoning_tokens_vs_performance.csv" --out "$tmp/m" > "$tmp/table1.md" 2> "$tmp/err"
  end=$(date +%s.%N)
  times+=("$(printf '%.3f' "$(echo "$end - $start" | bc -l)")")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -g)
{
  echo "runs: $runs"
  echo "wall_s (sorted): $(echo $sorted)"
  echo "min_s: $(echo "$sorted" | head -1)"
  echo "median_s: $(echo "$sorted" | sed -n "$(( (runs + 1) / 2 ))p")"
  echo "max_s: $(echo "$sorted" | tail -1)"
  echo "budget_s: 2.0"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "stderr: $(cat "$tmp/err")"
  echo "outputs: $(cd "$tmp/m" && for f in *; do printf '%s=%s ' "$f" "$(stat -c %s "$f")"; done)"
  echo
  echo "## stdout (Table-1 view)"
  cat "$tmp/table1.md"
} >> "$report"

start=$(date +%s.%N)
"$bin" report --import-upstream "$data/reasoning_tokens_vs_performance.csv" --title "Upstream PTXBench (published runs)" \
  --out "$tmp/report.html" 2>> "$tmp/err"
end=$(date +%s.%N)
echo "report_wall_s: $(printf '%.3f' "$(echo "$end - $start" | bc -l)") ($(stat -c %s "$tmp/report.html") bytes)" >> "$report"
if [ -x /usr/bin/chromium ]; then
  /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$tmp/profile" --window-size=1500,2600 \
    --screenshot="$out/report_upstream.png" "file://$(realpath "$tmp/report.html")" 2> /dev/null
  echo "screenshot: $out/report_upstream.png (1500x2600, top of the page)" >> "$report"
fi
sed -n '1,20p' "$report"

#!/usr/bin/env bash
# Issue 27 (upstream parity) and issue 24.3 (targets from the hardware) on the Hopper GPU at hand, in
# at most 4 minutes (typically 1-2):
#   1. detect: the GPU's name (nvidia-smi) and the suite target whose gpu_name it is (h100 or h200);
#   2. serve: `ptxbench serve` with NO --target (its default must come from the GPU), its default
#      SQLite queue, 2 CPU workers and 1 GPU worker on GPU 0, jobs nothing serves answered after 5 s;
#      its "listening" line must name that target;
#   3. parity: bench/service/parity_client.py — upstream's agent client (tests/service/upstream_client.py's
#      agent_turn: memcheck twice, /evaluate, /debug after a fault) on an upstream-form TVM-FFI kernel
#      (PASSED, hardware = this GPU), an out-of-bounds kernel (RUNTIME_ERROR, the debug report replaces
#      the log), a wrong result, a compile error (hardware named); a submission naming no target
#      (served as this GPU's); one naming the other Hopper target (failed within seconds, saying why);
#      upstream's service-test status codes; a Triton solution (reported only: its GPU side is in progress);
#   4. a second `serve` on the same port must fail with "address in use".
# Results: bench/results/<gpu>/service/parity/ (summary.txt, one JSON per case, serve and worker logs),
# and $OUT/service_parity.tar.gz when OUT is set.
#   bench/stage_h200_binaries.sh                                 # here, before carrying the tree
#   PTXBENCH_BIN=$PWD/.carry/bin bench/service/parity_gpu.sh     # on the GPU host, from the repository root
# A dry run of the plumbing without a GPU (a stand-in nvidia-smi on PATH that prints a Hopper name, the
# fake evaluator: the cases that need real verdicts fail, the rest runs):
#   PTXBENCH_SERVICE_EXTRA_ARGS="--evaluator fake --fake-gpu-name 'NVIDIA H100 80GB HBM3'" bench/service/parity_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
RETURN_DIR=${OUT:-}
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/build/bin}
START=$SECONDS

gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1 | sed 's/[[:space:]]*$//')
if [ -z "$gpu_name" ]; then
  echo "parity_gpu.sh: no NVIDIA GPU here (nvidia-smi found none)" >&2
  exit 2
fi
# The suite target whose gpu_name this GPU reports, and another Hopper target no GPU here serves.
read -r target other < <(python3 - "$gpu_name" <<'EOF'
import json, sys
name = sys.argv[1]
targets = json.load(open("suite/targets.json"))["targets"]
mine = [t for t, v in targets.items() if v["gpu_name"] == name]
hopper = [t for t, v in targets.items() if v["arch_family"] == "hopper" and t not in mine]
print(mine[0] if mine else "", hopper[0] if hopper else "")
EOF
)
if [ -z "$target" ] || [ -z "$other" ]; then
  echo "parity_gpu.sh: GPU '$gpu_name' is not a Hopper GPU of suite/targets.json (h100, h200)" >&2
  exit 2
fi

R=$PWD/bench/results/$target/service/parity
rm -rf "$R" && mkdir -p "$R"
export OUT=$R
source bench/env.sh
work=$(mktemp -d /tmp/ptxbench-parity-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18775}
URL="http://127.0.0.1:$port"
declare -A RESULT
server=

finish() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  mkdir -p "$R/worker_logs"
  cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  "$BIN/ptxbench" jobs --queue "$work/service/" --json > "$R/jobs.json" 2>&1
  rm -rf "$work"
  if [ -n "$RETURN_DIR" ]; then mkdir -p "$RETURN_DIR" && tar czf "$RETURN_DIR/service_parity.tar.gz" -C "$R/.." parity; fi
}
trap finish EXIT

budget() {  # a step's limit: its own or what is left of 220 s, whichever is less
  local left=$((220 - (SECONDS - START)))
  [ "$left" -lt 1 ] && left=1
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

case_result() {
  RESULT[$1]=$([ "$2" = 0 ] && echo ok || echo "FAILED (exit $2)")
  echo "== $1: ${RESULT[$1]} at $((SECONDS - START)) s" | tee -a "$R/summary.txt"
}

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$BIN/ptxbench" --version 2>/dev/null | head -1)"
  echo "# gpu: $gpu_name -> target $target (the other Hopper target: $other)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader 2>&1 | sed 's/^/# nvidia-smi: /'
} | tee "$R/summary.txt"

EXTRA=()
[ -n "${PTXBENCH_SERVICE_EXTRA_ARGS:-}" ] && eval "EXTRA=($PTXBENCH_SERVICE_EXTRA_ARGS)"
echo "== serve, no --target"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$work/service" --cpu-workers 2 --devices 0 \
  --unserved-after 5 --call-timeout 10 --sanitize-timeout 30 ${PTXBENCH_SERVICE_EXTRA_ARGS:+"${EXTRA[@]}"} \
  > "$R/serve.log" 2>&1 &
server=$!
rc=1
for _ in $(seq 150); do  # up to 30 s: the GPU worker probed the GPU and registered
  if python3 bench/service_h200_check.py ready --url "$URL" --gpu 1 2>/dev/null; then rc=0; break; fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
if ! grep -q "default target $target)" "$R/serve.log"; then
  { echo "serve did not choose $target:"; head -3 "$R/serve.log"; } | tee -a "$R/summary.txt"
  rc=1
fi
case_result serve_default_target $rc

echo "== upstream parity cases"
timeout "$(budget 170)" python3 bench/service/parity_client.py --url "$URL" --target "$target" --other-target "$other" \
  --gpu-name "$gpu_name" --out "$R" 2>&1 | tee "$R/parity.txt"
case_result parity "${PIPESTATUS[0]}"

echo "== a second serve on the same port"
timeout "$(budget 20)" "$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$work/second" --no-local-workers \
  > "$R/second_serve.txt" 2>&1
second=$?
first=$(head -1 "$R/second_serve.txt")
echo "exit $second: $first" | tee -a "$R/summary.txt"
[ "$second" != 0 ] && [ "$second" != 124 ] && echo "$first" | grep -q "address in use"
case_result port_in_use $?

all=0
line="cases:"
for c in serve_default_target parity port_in_use; do
  line="$line $c=${RESULT[$c]:-not run}"
  [ "${RESULT[$c]:-}" = ok ] || all=1
done
echo "$line; $((SECONDS - START)) s in all" | tee -a "$R/summary.txt"
exit $all

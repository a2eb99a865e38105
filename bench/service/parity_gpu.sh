#!/usr/bin/env bash
# Issue 27 (upstream parity) and issue 24.3 (targets from the hardware) on the Hopper GPU at hand, in
# at most 4 minutes (typically 1-2):
#   1. serve: `ptxbench serve` with NO --target (its default must come from the GPU), its default
#      SQLite queue, 2 CPU workers and 1 GPU worker on the GPU, jobs nothing serves answered after 5 s;
#      its "listening" line must name this GPU's target (bench/lib/gpu_target.sh's);
#   2. parity: bench/service/parity_client.py — upstream's agent client (tests/service/upstream_client.py's
#      agent_turn: memcheck twice, /evaluate, /debug after a fault) on an upstream-form TVM-FFI kernel
#      (PASSED, hardware = this GPU), an out-of-bounds kernel (RUNTIME_ERROR, the debug report replaces
#      the log), a wrong result, a compile error (hardware named); a submission naming no target
#      (served as this GPU's); one naming the other Hopper target (failed within seconds, saying why);
#      upstream's service-test status codes; a Triton solution (the tl.dot GEMM: PASSED);
#   3. a second `serve` on the same port must fail with "address in use".
# Results in bench/results/<gpu>/service/parity/ (summary.txt, one JSON per case, serve and worker
# logs, jobs.json; $OUT/service.tar.gz).
#   bench/stage_binaries.sh                                      # here, before carrying the tree
#   PTXBENCH_BIN=$PWD/.carry/bin bench/service/parity_gpu.sh     # on the GPU host, from the repository root
# A dry run of the plumbing without a GPU (the fake evaluator: the cases that need real verdicts
# fail, the rest runs):
#   PTXBENCH_GPU_MODEL="NVIDIA H100 80GB HBM3" PTXBENCH_RESULTS_ROOT=/tmp/r \
#     PTXBENCH_SERVICE_EXTRA_ARGS="--evaluator fake --fake-gpu-name 'NVIDIA H100 80GB HBM3'" bench/service/parity_gpu.sh
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu service/parity
cd "$ROOT" || exit 2
R=$RESULTS
START=$SECONDS
gpu_name=$(bench_gpu_model) || exit 2
# Another Hopper target of the suite, one no GPU here serves.
other=$(python3 - "$PTXBENCH_TARGET" <<'PY'
import json, sys
targets = json.load(open("suite/targets.json"))["targets"]
print(next((t for t, v in sorted(targets.items()) if v["arch_family"] == "hopper" and t != sys.argv[1]), ""))
PY
)
if [ -z "$other" ]; then
  echo "parity_gpu.sh: suite/targets.json has no other Hopper target than $PTXBENCH_TARGET" >&2
  exit 2
fi
echo "# gpu: $gpu_name -> target $PTXBENCH_TARGET (the other Hopper target: $other)" | tee -a "$R/summary.txt"
work=$(mktemp -d /tmp/ptxbench-parity-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18775}
URL="http://127.0.0.1:$port"
server=

bench_cleanup() {
  bench_stop "$server"
  mkdir -p "$R/worker_logs"
  cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  "$BIN/ptxbench" jobs --queue "$work/service/" --json > "$R/jobs.json" 2>&1
  rm -rf "$work"
}

budget() {  # a step's limit: its own or what is left of 220 s, whichever is less
  local left=$((220 - (SECONDS - START)))
  [ "$left" -lt 1 ] && left=1
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

EXTRA=()
[ -n "${PTXBENCH_SERVICE_EXTRA_ARGS:-}" ] && eval "EXTRA=($PTXBENCH_SERVICE_EXTRA_ARGS)"
echo "== serve, no --target"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$work/service" --cpu-workers 2 \
  --devices 0 --unserved-after 5 --call-timeout 10 --sanitize-timeout 30 \
  ${PTXBENCH_SERVICE_EXTRA_ARGS:+"${EXTRA[@]}"} > "$R/serve.log" 2>&1 &
server=$!
rc=1
for _ in $(seq 150); do  # up to 30 s: the GPU worker probed the GPU and registered
  if python3 bench/service/service_gpu_check.py ready --url "$URL" --gpu 1 2>/dev/null; then rc=0; break; fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
if ! grep -q "default target $PTXBENCH_TARGET)" "$R/serve.log"; then
  { echo "serve did not choose $PTXBENCH_TARGET:"; head -3 "$R/serve.log"; } | tee -a "$R/summary.txt"
  rc=1
fi
bench_check "serve without --target is ready and defaults to $PTXBENCH_TARGET" $rc

echo "== upstream parity cases"
timeout "$(budget 170)" python3 bench/service/parity_client.py --url "$URL" --target "$PTXBENCH_TARGET" \
  --other-target "$other" --gpu-name "$gpu_name" --out "$R" 2>&1 | tee "$R/parity.txt"
bench_check "upstream's client and service-test cases (parity_client.py)" "${PIPESTATUS[0]}"

echo "== a second serve on the same port"
timeout "$(budget 20)" "$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$work/second" --no-local-workers \
  > "$R/second_serve.txt" 2>&1
second=$?
first=$(head -1 "$R/second_serve.txt")
echo "exit $second: $first" | tee -a "$R/summary.txt"
[ "$second" != 0 ] && [ "$second" != 124 ] && echo "$first" | grep -q "address in use"
bench_check "a second serve on the port fails with 'address in use'" $?

echo "# $((SECONDS - START)) s in all" | tee -a "$R/summary.txt"
bench_done

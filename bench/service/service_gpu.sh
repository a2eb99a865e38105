#!/usr/bin/env bash
# Issue 13 on one Hopper GPU, in at most 4 minutes (typically about 2): the evaluation service on a
# single host, checked against a direct `ptxbench eval` of the same kernels.
#   0. direct: `ptxbench eval` of the committed GEMM examples and the upstream TVM-FFI GEMM, in the
#      background from the start (its own build cache), the reference for every comparison below;
#   1. serve: `ptxbench serve --target <this GPU's target>` with its default SQLite queue and local
#      workers: 4 CPU workers and 2 GPU workers on GPU 0 (each its own long-lived harness), 6 s
#      leases, a dead worker restarted after 20 s (so the job of a killed one finishes on its sibling);
#   2. upstream: every kernel through the upstream-format Python client (tests/service/upstream_client.py)
#      at once, cache bypassed (evaluations per minute, the service's GPU-stage seconds per second,
#      nvidia-smi's utilization meanwhile); then the same set again: every answer from the cache, < 1 s;
#   3. remote: `ptxbench eval --remote` (PTXBench's own client) of the same kernels: cached verdicts;
#   4. kill: `ptxbench eval --remote --bypass-cache` of the pipelined wgmma GEMM; the GPU worker that
#      holds its job is SIGKILLed mid-run; the job finishes once, after a lost lease, on the other one;
#   5. compare: status, target-instruction verdict and deciding stage of every service result
#      (2, 3, 4) identical to the direct evaluation's.
# The direct evaluation and the service share the GPU (the 4-minute rule), so speedups are recorded,
# not compared. One case failing does not stop the others; the last line lists each case's result.
# Results in bench/results/<gpu>/service/ (summary.txt, *.json, logs; $OUT/service.tar.gz).
#   bench/stage_binaries.sh                                      # here, before carrying the tree
#   PTXBENCH_BIN=$PWD/.carry/bin bench/service/service_gpu.sh    # on the GPU host, from the repository root
# PTXBENCH_SERVE_DEFAULT_TARGET=1 starts serve without --target (it must pick this GPU's target itself).
# A dry run of the plumbing without a GPU (the fake evaluator's verdicts: compare fails, the rest runs):
#   PTXBENCH_GPU_MODEL="NVIDIA H200" PTXBENCH_RESULTS_ROOT=/tmp/r \
#     PTXBENCH_SERVICE_EXTRA_ARGS="--evaluator fake --fake-delay-ms 3000" bench/service/service_gpu.sh
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu service
cd "$ROOT" || exit 2
R=$RESULTS
bench_header > "$R/summary.txt"
START=$SECONDS
work=$(mktemp -d /tmp/ptxbench-service-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18765}
URL="http://127.0.0.1:$port"
G=examples/gemm
KERNELS=("$G/plain_tiled.cu" "$G/wgmma.cu" "$G/wgmma_tma_pipelined.cu" "$G/wgmma_tma_pack.cu" "$G/wgmma_dead_branch.cu"
         "$G/wrong_result.cu" "$G/out_of_bounds.cu" "$G/hang.cu" "$G/host_segfault.cu" examples/upstream/gemm_tvm_ffi.json)
KILLED=$G/wgmma_tma_pipelined.cu
# The same protocol for the direct evaluation and the service's GPU workers (hang.cu ends at the
# sanitizer's limit, so it sets the pace).
TIMEOUTS=(--call-timeout 10 --sanitize-timeout 15)
declare -A RESULT
server=
direct=

bench_cleanup() {
  bench_stop "$server"
  [ -n "$direct" ] && kill -TERM "$direct" 2>/dev/null  # timeout(1) passes TERM on to the eval
  mkdir -p "$R/worker_logs"
  cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  "$BIN/ptxbench" jobs --queue "$work/service/" --json > "$R/jobs.json" 2>&1
  rm -rf "$work"
}

# Every step's limit is its own or what is left of 225 s, whichever is less: the whole run, the
# archive included, stays under 4 minutes even when every step times out.
budget() {
  local left=$((225 - (SECONDS - START)))
  [ "$left" -lt 1 ] && left=1
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

verdict_exit() {  # 0, 1 and 4 are verdicts (several examples fail on purpose); 2, 3 and 124 are the tool's
  [ "$1" = 0 ] || [ "$1" = 1 ] || [ "$1" = 4 ]
}

case_result() {  # case_result NAME EXIT: record and say it loudly
  RESULT[$1]=$([ "$2" = 0 ] && echo ok || echo "FAILED (exit $2)")
  echo "== $1: ${RESULT[$1]} at $((SECONDS - START)) s" | tee -a "$R/summary.txt"
}

echo "== 0. direct ptxbench eval (background)"
PTXBENCH_CACHE=$work/direct-cache timeout 200 "$BIN/ptxbench" eval "${KERNELS[@]}" --task gemm_n7168_k5120 \
  --target "$PTXBENCH_TARGET" "${TIMEOUTS[@]}" --out "$R/direct.json" > "$R/direct.txt" 2>&1 &
direct=$!

# PTXBENCH_SERVE_DEFAULT_TARGET=1 leaves --target out: serve must then take this GPU's target itself.
serve_target=(--target "$PTXBENCH_TARGET")
[ "${PTXBENCH_SERVE_DEFAULT_TARGET:-0}" = 1 ] && serve_target=()
echo "== 1. ptxbench serve ${serve_target[*]:-(no --target)} (SQLite, 4 CPU + 2 GPU local workers)"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" ${serve_target[@]+"${serve_target[@]}"} --service-dir "$work/service" \
  --cpu-workers 4 --devices 0 --gpu-workers-per-device 2 --worker-restart-ms 20000 "${TIMEOUTS[@]}" --lease-ms 6000 \
  ${PTXBENCH_SERVICE_EXTRA_ARGS:-} > "$R/serve.log" 2>&1 &
server=$!
ready=1
for _ in $(seq 150); do  # up to 30 s: both GPU workers probed the GPU and registered healthy
  if python3 bench/service/service_gpu_check.py ready --url "$URL" --gpu 2; then
    ready=0; break
  fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
python3 bench/service/service_gpu_check.py fetch --url "$URL" /health "$R/health_at_start.json"
case_result serve $ready

echo "== 2. upstream-format client: fresh, then cached"
timeout "$(budget 120)" python3 bench/service/service_gpu_check.py upstream --url "$URL" --out "$R" --max-wait 110 \
  --target "$PTXBENCH_TARGET" "${KERNELS[@]}" \
  2>&1 | tee "$R/upstream_client.txt"
case_result upstream "${PIPESTATUS[0]}"

echo "== 3. ptxbench eval --remote (cached verdicts)"
timeout "$(budget 30)" "$BIN/ptxbench" eval "${KERNELS[@]}" --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --remote "$URL" \
  --out "$R/remote.json" > "$R/remote.txt" 2>&1
rc=$?
verdict_exit "$rc" && [ -s "$R/remote.json" ] && rc=0
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=sum(1 for v in d if (v.get("service") or {}).get("cached")); print(f"{n} of {len(d)} answered from the result cache"); sys.exit(0 if n == len(d) else 1)' \
  "$R/remote.json" 2>&1 | tee -a "$R/remote.txt" || rc=1
case_result remote $rc

echo "== 4. a GPU worker SIGKILLed mid-job"
timeout "$(budget 50)" "$BIN/ptxbench" eval "$KILLED" --task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --remote "$URL" --bypass-cache \
  --out "$R/killed_job.json" > "$R/killed_job.txt" 2>&1 &
client=$!
timeout "$(budget 30)" python3 bench/service/service_gpu_check.py kill --url "$URL" --out "$R" --wait 25 --delay 1.0 2>&1 | tee "$R/kill.txt"
kill_rc=${PIPESTATUS[0]}
wait "$client"
client_rc=$?
echo "remote client exit $client_rc" | tee -a "$R/kill.txt"
timeout "$(budget 40)" python3 bench/service/service_gpu_check.py kill-after --url "$URL" --out "$R" 2>&1 | tee -a "$R/kill.txt"
after_rc=${PIPESTATUS[0]}
[ "$kill_rc" = 0 ] && verdict_exit "$client_rc" && [ -s "$R/killed_job.json" ] && rc=$after_rc || rc=1
case_result kill $rc
python3 bench/service/service_gpu_check.py fetch --url "$URL" /metrics "$R/metrics.txt"
python3 bench/service/service_gpu_check.py fetch --url "$URL" /health "$R/health_at_end.json"

echo "== 5. service verdicts against the direct evaluation"
wait "$direct"
echo "direct eval exit $? at $((SECONDS - START)) s" | tee -a "$R/summary.txt"
direct=
timeout "$(budget 20)" python3 bench/service/service_gpu_check.py compare --out "$R" --direct "$R/direct.json" \
  upstream="$R/upstream_client.json" remote="$R/remote.json" killed="$R/killed_job.json" 2>&1 | tee "$R/compare.txt"
case_result compare "${PIPESTATUS[0]}"
python3 bench/eval/summarize_evals.py --manifest examples/manifest.json --out "$R/direct_summary.json" "$R/direct.json" \
  > "$R/direct_summary.txt" 2>&1

all=0
line="cases:"
for c in serve upstream remote kill compare; do
  line="$line $c=${RESULT[$c]:-not run}"
  [ "${RESULT[$c]:-}" = ok ] || all=1
done
echo "$line; $((SECONDS - START)) s in all" | tee -a "$R/summary.txt"
exit $all

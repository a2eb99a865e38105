#!/usr/bin/env bash
# Issue 13 on a GPU host (budget <= 4 min): `ptxbench serve` with local workers (4 CPU workers, one
# GPU worker per GPU with a long-lived harness per task), then, through the upstream-format Python
# client, every GEMM example, two attention examples (plain and wgmma forward, one task) and the
# upstream TVM-FFI kernel submitted at once; each verdict's status and target verdict against the
# manifests, evaluations per minute, the GPU's busy fraction, and the same set again answered from
# the result cache in under a second. Results: $OUT/service_h200.{json,txt}, $OUT/service_h200_serve.log,
# $OUT/service_h200_workers/ (each local worker's log), $OUT/service_h200_metrics.txt (GET /metrics).
#   PTXBENCH_BIN=$PWD/.carry/bin bench/service_h200.sh      (after bench/stage_h200_binaries.sh)
set -uo pipefail
source "$(dirname "$0")/env.sh"
cd "$ROOT"
svc=$(mktemp -d /tmp/ptxbench-service-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18765}
echo "== ptxbench serve on 127.0.0.1:$port (service dir $svc)"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$svc" --cpu-workers 4 \
  --call-timeout 15 --sanitize-timeout 30 --max-sessions 2 > "$OUT/service_h200_serve.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; mkdir -p "$OUT/service_h200_workers"; cp "$svc"/logs/*.log "$OUT/service_h200_workers/" 2>/dev/null; rm -rf "$svc"' EXIT
for i in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.2; done
# Wait for the GPU worker to register (it probes the GPU first).
for i in $(seq 150); do
  curl -sf "http://127.0.0.1:$port/health" | python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(0 if any(w["role"]=="gpu" and w["healthy"] for w in h["workers"]) else 1)' && break
  sleep 0.2
done
curl -s "http://127.0.0.1:$port/health"; echo
echo "== examples through the service"
time timeout 220 python3 bench/service_h200_check.py --url "http://127.0.0.1:$port" --out "$OUT"
rc=$?
curl -s "http://127.0.0.1:$port/metrics" > "$OUT/service_h200_metrics.txt"
"$BIN/ptxbench" jobs --queue "$svc/" > "$OUT/service_h200_jobs.txt" 2>&1
echo "exit $rc"
exit $rc

#!/usr/bin/env bash
# The durable job queue's overhead (issue 13): GPU-stage throughput with 1, 2 and 4 fake GPU worker
# processes (goal: >= 3.5x at 4) and enqueue-to-lease latency with PostgreSQL (LISTEN/NOTIFY vs
# polling), SQLite alongside. The fake GPU work is a fixed sleep (default 50 ms per job), so the
# scaling measures the queue, not this machine's 2 cores. PostgreSQL runs as a private server on
# loopback (needs postgresql-15; without it those rows are left out and the output says why).
#   usage: bench/service/queue_bench.sh [JOBS [GPU_MS [LATENCY_SAMPLES]]]     (defaults 200 50 200)
# Output: bench/results/cpu/service_queue_bench.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/cpu/service_queue_bench.txt
cmake --build build --target ptxbench-queue-bench ptxbench-fake-worker -j "$(nproc)" >/dev/null
{
  echo "# bench/service/queue_bench.sh $* ($(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD)," \
       "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  build/bin/ptxbench-queue-bench "${1:-200}" "${2:-50}" "${3:-200}"
} | tee "$out"
python3 - "$out" <<'PY'
import re, sys
rows = [l.split("|") for l in open(sys.argv[1]) if re.match(r"\| (sqlite|postgresql) \| 4 \|", l)]
for r in rows:
    speedup = float(r[6].strip().rstrip("x"))
    print(f"{r[1].strip()}: {speedup:.2f}x with 4 GPU workers (goal >= 3.5x): {'met' if speedup >= 3.5 else 'NOT met'}")
PY

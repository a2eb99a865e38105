#!/usr/bin/env bash
# The evaluation service's throughput end to end over HTTP with 1, 2 and 4 fake GPU workers
# (bench/service/http_bench.py; goal >= 3.5x at 4). ~1.5 min on the 2-core development machine.
#   usage: bench/service/http_bench.sh [JOBS [GPU_MS]]      (defaults 200 100)
# Output: bench/results/cpu/service_http_bench.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/cpu/service_http_bench.txt
cmake --build build --target ptxbench -j "$(nproc)" >/dev/null
{
  echo "# bench/service/http_bench.sh $* ($(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD)," \
       "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  python3 bench/service/http_bench.py --jobs "${1:-200}" --gpu-ms "${2:-100}"
} | tee "$out"

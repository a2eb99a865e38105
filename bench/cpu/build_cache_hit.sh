#!/usr/bin/env bash
# How long a build-cache hit takes (the issue's goal: under 50 ms). Builds one kernel once, then
# repeats `ptxbench check` 20 times and reports the build stage's own seconds (the lookup: hashing
# the sources, flags, nvcc version and include folders, reading the entry). CPU only; needs nvcc.
# Output: bench/results/cpu/build_cache_hit.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/results/cpu/build_cache_hit.txt
cache=$(mktemp -d)
kernel=${1:-examples/gemm/wgmma_tma_pipelined.cu}
times=()
for _ in $(seq 0 20); do
  t=$(PTXBENCH_CACHE=$cache build/bin/ptxbench check "$kernel" --task gemm_n7168_k5120 --json |
      python3 -c 'import json,sys; d=json.load(sys.stdin); s=[x for x in d["stages"] if x["stage"]=="build"][0]; print(d["build"]["cache_hit"], s["seconds"])')
  times+=("$t")
done
rm -rf "$cache"
{
  echo "# build stage seconds for $kernel: first build, then 20 cache hits ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
  printf '%s\n' "${times[@]}"
  printf '%s\n' "${times[@]:1}" | python3 -c '
import sys, statistics
v = sorted(float(l.split()[1]) * 1000 for l in sys.stdin if l.startswith("True"))
print(f"cache hits: {len(v)}, median {statistics.median(v):.1f} ms, max {max(v):.1f} ms (goal: < 50 ms)")'
} | tee "$out"

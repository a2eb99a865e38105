#!/usr/bin/env bash
# Copies the binaries bench/h200_evidence.sh needs, stripped, into .carry/bin (ignored by git) so they
# can be carried to a GPU host (the device tool carries at most 64 MiB). Their non-CUDA dependencies
# are static or header-only; libcpp-httplib (only the agent tests' fake model server uses it) is
# copied beside them. On the GPU host: PTXBENCH_BIN=$PWD/.carry/bin bench/h200_evidence.sh PART
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build
rm -rf .carry/bin && mkdir -p .carry/bin
# The per-area test binaries are the ones h200_evidence.sh runs a GPU-host subset of (agent part);
# ptxbench_sandbox_tests checks the sandbox against the GPU host's kernel (sandbox_probe_h200.sh).
for b in ptxbench ptxbench-harness ptxbench-runner libptxbench_baseline.so \
         ptxbench_prompts_tests ptxbench_sass_tests ptxbench_agent_tests ptxbench_sandbox_tests \
         ptxbench_gpu_attention_tests ptxbench_gpu_pack_tests ptxbench_gpu_harness_tests ptxbench-attention-probe \
         ptxbench-sandbox-probe libptxbench_sandbox_probe_candidate.so libptxbench_runner_py.so; do
  strip -o ".carry/bin/$b" "build/bin/$b"
done
httplib=$(ldd build/bin/ptxbench_agent_tests | awk '/libcpp-httplib/ {print $3}')
[ -n "$httplib" ] && cp -L "$httplib" .carry/bin/
du -sh .carry/bin

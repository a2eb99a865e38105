#!/usr/bin/env bash
# Copies the binaries the bench scripts need, stripped, into .carry/bin (ignored by git) so they can
# be carried to a GPU host (the device tool carries at most 64 MiB). Their non-CUDA dependencies are
# static or header-only, except libfmt.so.9 (the GPU host has the same fmt 9.1; copied all the same)
# and what the evaluation service links (`ptxbench serve`/`worker`: libcpp-httplib, libpq and its
# LDAP libraries), which are copied beside them; bench/lib/env.sh puts
# $BIN on LD_LIBRARY_PATH when they are there. (SQLite is not carried: Ubuntu's python3 depends on it.)
# Nothing here depends on the GPU: the same binaries serve every Hopper target.
#   bench/stage_binaries.sh                                        # here, after a build
#   PTXBENCH_BIN=$PWD/.carry/bin bench/evidence.sh PART...         # on the GPU host (carry .carry)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build
rm -rf .carry/bin && mkdir -p .carry/bin
# The per-area test binaries are the ones bench/eval/gpu_host_tests.sh runs a GPU-host subset of;
# ptxbench_sandbox_tests checks the sandbox against the GPU host's kernel (bench/eval/sandbox_probe.sh);
# the reference kernels' correctness tests run before bench/eval/reference.sh times them.
for b in ptxbench ptxbench-harness ptxbench-runner libptxbench_baseline.so \
         ptxbench_prompts_tests ptxbench_sass_tests ptxbench_agent_tests ptxbench_sandbox_tests \
         ptxbench_gpu_attention_tests ptxbench_gpu_pack_tests ptxbench_gpu_harness_tests ptxbench_gpu_device_checks_tests ptxbench_gpu_pool_memory_tests ptxbench-attention-probe \
         ptxbench-sandbox-probe libptxbench_sandbox_probe_candidate.so libptxbench_runner_py.so \
         ptxbench_gpu_reference_tests ptxbench_gpu_reference_stream_k_tests ptxbench_gpu_reference_attention_tests \
         ptxbench_gpu_reference_attention_causal_tests ptxbench_gpu_reference_attention_bwd_tests \
         ptxbench_gpu_reference_attention_bwd_causal_tests; do
  strip -o ".carry/bin/$b" "build/bin/$b"
done
# Ubuntu 24.04 has neither libcpp-httplib 0.11 nor Debian 12's libpq (built against libldap 2.5).
for lib in libfmt libcpp-httplib libpq.so libldap-2.5 liblber-2.5; do
  path=$(ldd build/bin/ptxbench | awk -v l="$lib" 'index($1, l) == 1 {print $3}' | head -1)
  if [ -n "$path" ]; then cp -L "$path" .carry/bin/; fi
done
du -sh .carry/bin

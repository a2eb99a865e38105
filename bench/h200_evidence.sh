#!/usr/bin/env bash
# All committed H200 evidence, in parts that each fit one 10-minute run on a Hopper GPU host.
# Binaries come from $PTXBENCH_BIN (default build/bin; bench/stage_h200_binaries.sh copies stripped
# ones to .carry/bin for carrying to a GPU host). Results go to $OUT (default bench/results/h200).
#
#   bench/h200_evidence.sh gemm        GEMM examples, 10 repeats of the wgmma example, cuBLASLt vs
#                                      torch.matmul (issue 3); the sm90a pack wrapper tests (issue 5)
#   bench/h200_evidence.sh attention   attention examples and our cuDNN vs PyTorch's, with PyTorch's
#                                      libcudnn (9.19 on the H200 image); then the same GPU tests and
#                                      the causal examples with the system libcudnn (9.14 there)
#   bench/h200_evidence.sh agent       the replay agent over the GEMM task (issue 6); the CPU test
#                                      binary's tests that need cuobjdump or a GPU
set -uo pipefail
cd "$(dirname "$0")/.."
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/build/bin}
part=${1:-}
header() {
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$PTXBENCH_BIN/ptxbench" --version)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
}
# gtest output with cuDNN's plan JSON in it has lines of 100 kB; keep results readable.
cut_lines() { awk '{ if (length($0) > 2000) print substr($0, 1, 2000) " ...[cut]"; else print }'; }

case "$part" in
gemm)
  header
  timeout 480 bash bench/gemm_h200.sh
  timeout 90 bash bench/run_pack_gpu_tests.sh "$PTXBENCH_BIN/ptxbench_gpu_pack_tests" "${OUT:-bench/results/h200}" | tail -5
  ;;
attention)
  header
  timeout 300 bash bench/attention_h200.sh
  source bench/env.sh
  timeout 200 "$PTXBENCH_BIN/ptxbench_gpu_attention_tests" 2>&1 | cut_lines > "$OUT/attention_gpu_tests.txt"
  echo "attention GPU tests (PyTorch's libcudnn): exit ${PIPESTATUS[0]}"; tail -3 "$OUT/attention_gpu_tests.txt"
  PTXBENCH_CUDNN_DIR=system timeout 330 bash bench/attention_cudnn_system.sh
  ;;
agent)
  header
  source bench/env.sh
  # The CPU test binary has the source tree's path compiled in; point it at this copy.
  if [ "$ROOT" != /work/main ] && [ ! -e /work/main ]; then
    mkdir -p /work && ln -sfn "$ROOT" /work/main
    mkdir -p "$ROOT/build" && [ -e "$ROOT/build/bin" ] || ln -sfn "$PTXBENCH_BIN" "$ROOT/build/bin"
  fi
  rm -rf "$OUT/agent-replay-gemm"
  timeout 200 bash bench/agent_replay_h200.sh > "$OUT/agent_replay.txt" 2>&1
  echo "agent replay exit $?"; tail -3 "$OUT/agent_replay.txt"
  # libcpp-httplib (the tests' fake model server) is carried beside the binary: the GPU host lacks it.
  LD_LIBRARY_PATH="$PTXBENCH_BIN:$LD_LIBRARY_PATH" timeout 240 "$PTXBENCH_BIN/ptxbench_tests" \
    --gtest_filter='PackSass*:Disassembler*:TurnLoopTest.OnTheGpu*' > "$OUT/gpu_host_cpu_tests.txt" 2>&1
  echo "GPU-host subset of ptxbench_tests: exit $?"; tail -3 "$OUT/gpu_host_cpu_tests.txt"
  ;;
*)
  echo "usage: $0 gemm|attention|agent" >&2
  exit 2
  ;;
esac

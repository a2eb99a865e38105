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
#   bench/h200_evidence.sh probe       the cuDNN probe: each graph variant and engine, both libcudnn
#   bench/h200_evidence.sh agent       the replay agent over the GEMM task (issue 6); the CPU test
#                                      binary's tests that need cuobjdump or a GPU
#   bench/h200_evidence.sh triton      the Triton track (issues 16, 25): examples, the Triton exploit
#                                      suite, a replayed Triton trajectory and the service
#                                      (bench/triton/triton_gpu.sh, at most 9 min)
#   bench/h200_evidence.sh gqa         the GQA tasks (issue 17): cuDNN vs the fp32 reference with both
#                                      libcudnn, the GQA examples, our baseline vs PyTorch
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
triton)
  # The Triton track (issues 16, 25): every example of examples/triton and every case of
  # tests/exploits/triton, each risky one followed by an honest kernel, the replayed Triton trajectory,
  # the service against direct eval; results in bench/results/<gpu>/triton/ (bench/triton/triton_gpu.sh).
  header
  timeout 560 bash bench/triton/triton_gpu.sh
  ;;
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
probe)
  # ptxbench-attention-probe: every cuDNN graph variant at a small and the headline shape, and the four
  # baselines, with the system libcudnn and with PyTorch's. The JSON embeds every plan (and its
  # kernels) and runs to megabytes: only the logs, long lines cut, are kept.
  header
  for lib in system torch; do
    (
      if [ "$lib" = system ]; then export PTXBENCH_CUDNN_DIR=system; fi
      source bench/env.sh
      LD_LIBRARY_PATH=$(tr ':' '\n' <<< "$LD_LIBRARY_PATH" | { if [ "$lib" = system ]; then grep -v 'packages/nvidia/'; else cat; fi; } | paste -sd:)
      export LD_LIBRARY_PATH
      timeout 240 "$PTXBENCH_BIN/ptxbench-attention-probe" --json "/tmp/attention_probe_$lib.json" 2>&1 | cut_lines \
        > "$OUT/attention_probe_cudnn_$lib.txt"
      echo "probe with the $lib libcudnn: exit ${PIPESTATUS[0]}"
      grep -E "^cuDNN loaded|^probe:" "$OUT/attention_probe_cudnn_$lib.txt"
    )
  done
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
  # One test binary per area: the pack SASS tests (prompts), the disassembler (sass), the agent on the GPU.
  : > "$OUT/gpu_host_cpu_tests.txt"
  for t in "ptxbench_prompts_tests PackSass*" "ptxbench_sass_tests Disassembler*" \
           "ptxbench_agent_tests TurnLoopTest.OnTheGpu*"; do
    set -- $t
    LD_LIBRARY_PATH="$PTXBENCH_BIN:$LD_LIBRARY_PATH" timeout 240 "$PTXBENCH_BIN/$1" --gtest_filter="$2" \
      >> "$OUT/gpu_host_cpu_tests.txt" 2>&1
    echo "GPU-host subset of $1 ($2): exit $?"
  done
  tail -3 "$OUT/gpu_host_cpu_tests.txt"
  ;;
gqa)
  timeout 250 bash bench/gqa_h200.sh
  ;;
*)
  echo "usage: $0 gemm|attention|probe|agent|gqa|triton" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# The cuDNN probe (ptxbench-attention-probe, docs/attention-baselines.md) on a Hopper GPU, ~30 s:
# every cuDNN graph variant and engine at a small and the headline shape, and the four baselines,
# with the system libcudnn and with PyTorch's; a diagnostic for new cuDNN versions. The probe's JSON
# embeds every plan (and its kernels) and runs to megabytes: only the logs, long lines cut, are kept.
# Results in bench/results/<gpu>/attention_probe/ ($OUT/attention_probe.tar.gz):
# attention_probe_cudnn_{system,torch}.txt ("cuDNN loaded" and one "probe:" line per case).
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu attention_probe
rc=0
for lib in system torch; do
  (
    # The system libcudnn: drop PyTorch's NVIDIA wheel folders so the loader falls back to it.
    if [ "$lib" = system ]; then
      LD_LIBRARY_PATH=$(tr ':' '\n' <<< "$LD_LIBRARY_PATH" | grep -v 'packages/nvidia/' | paste -sd:)
      export LD_LIBRARY_PATH
    fi
    timeout 240 "$BIN/ptxbench-attention-probe" --json "/tmp/attention_probe_$lib.json" 2>&1 |
      awk '{ if (length($0) > 2000) print substr($0, 1, 2000) " ...[cut]"; else print }' \
      > "$RESULTS/attention_probe_cudnn_$lib.txt"
    probe_rc=${PIPESTATUS[0]}
    echo "probe with the $lib libcudnn: exit $probe_rc"
    grep -E "^cuDNN loaded|^probe:" "$RESULTS/attention_probe_cudnn_$lib.txt"
    exit "$probe_rc"
  ) || rc=1
done
exit "$rc"

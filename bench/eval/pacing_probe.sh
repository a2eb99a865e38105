#!/usr/bin/env bash
# Issue 26, P3's verdict clause: does a kernel timed after an L2 flush take longer when the GPU idled
# longer before the flush? The harness before the speed work left ~1.3-1.9 ms between the candidate's
# call and the reference's flush, the harness now ~0.3-0.4 ms, and it measures cuBLASLt 0.1-0.4 %
# shorter. bench/eval/pacing_probe/pacing_probe.cu (compiled here with the host's nvcc, outside the
# product) varies that gap alone — idle, or ticking with tiny kernels and a synchronisation each —
# for the GEMM task's cuBLASLt GEMM, a compute-bound FMA loop and an SM-clock probe; gaps, kinds and
# kernels shuffled in every round. About 1 minute at 300 rounds.
#   bench/eval/pacing_probe.sh [ROUNDS]     # default 300
# Results: bench/results/<gpu>/pacing-probe/ (samples.tsv.gz, probe_summary.{txt,json}:
# bench/eval/summarize_pacing_probe.py); $OUT/pacing-probe.tar.gz when OUT is set.
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
rounds=${1:-300}
case "$rounds" in '' | *[!0-9]* | 0) echo "pacing_probe.sh: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2 ;; esac
bench_gpu pacing-probe
cd "$ROOT" || exit 2
work=$(mktemp -d /tmp/ptxbench-pacing-XXXXXX)
bench_cleanup() { rm -rf "$work"; }
nvcc -O2 -std=c++17 -arch=sm_90 -o "$work/pacing_probe" bench/eval/pacing_probe/pacing_probe.cu -lcublasLt
bench_check "the probe compiled" $?
[ -x "$work/pacing_probe" ] || bench_done
"$work/pacing_probe" "$rounds" "$RESULTS/samples.tsv"
bench_check "the probe ran $rounds rounds" $?
python3 bench/eval/summarize_pacing_probe.py "$RESULTS/samples.tsv" "$RESULTS"
bench_check "the samples summarised" $?
gzip -f "$RESULTS/samples.tsv"
bench_done

#!/usr/bin/env bash
# Issue 20, items 5(b) and 5(c) on a Hopper GPU (docs/trusted-timing.md), in about 2-3 minutes:
#  1. the resolution of the harness's bound: the no-op calibration calls (100 per candidate, after 5
#     dropped) of the honest examples/gemm/wgmma_tma_pipelined.cu, through the shared-memory go/done
#     channel (run A) and through the old socket round trip (run D): overhead, p50/p90/p99/max, jitter
#     and the allowance the rule derives, in microseconds;
#  2. the CUPTI decoy exploits (tests/exploits/f04_*.cu): with the launch audit on (A) every one is
#     rejected (COMPILE_ERROR by a gate, or RUNTIME_ERROR "measurement tampered"); with the audit only
#     recorded (--no-tamper-check) the harness's bound alone: the microsecond decoy fails the physical
#     floor, the 0.6 ms decoy above the floor gets its true latency (B) or, with its forged early
#     "done" on the shared page, INCORRECT_NUMERICAL or at least the GEMM's latency (C) — never the
#     decoy's. D shows what the old socket bound let through, for comparison;
#  3. the honest GEMM keeps its speedup on both channels (first and last of A, and D) -- against the
#     speedup committed for this GPU (bench/results/<gpu>/gemm/gemm_examples.json or the older flat
#     gemm_examples.json) when there is one, else against the run's own first honest verdict.
# Results in bench/results/<gpu>/trusted_timing/ ($OUT/trusted_timing.tar.gz):
# {A_shm_checked,B_shm_bound_only,C_shm_forged_done,D_socket}.{json,txt}, trusted_timing_summary.{json,txt}
# (exit 0 = every expectation held).
# Usage on the GPU host, from the repository root after building (cmake --build build):
#   bench/eval/trusted_timing.sh
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu trusted_timing
cd "$ROOT" || exit 2
T=$RESULTS
X=tests/exploits
G=examples/gemm/wgmma_tma_pipelined.cu
COMMON=(--task gemm_n7168_k5120 --target "$PTXBENCH_TARGET" --no-sanitize --no-dynamic-check --call-timeout 20)
run() {  # run NAME TIMEOUT ARGS...: one `ptxbench eval` into $T/NAME.{json,txt}
  local name=$1 limit=$2
  shift 2
  echo "== $name"
  local start=$SECONDS
  timeout "$limit" "$BIN/ptxbench" eval "$@" "${COMMON[@]}" --out "$T/$name.json" > "$T/$name.txt" 2>&1
  echo "exit $? after $((SECONDS - start)) s"
}

# A: the defaults (shared-memory channel, launch audit deciding).
run A_shm_checked 150 "$G" "$X/f04_cupti_extern.cu" "$X/f04_cupti_token_paste.cu" "$X/f04_profiler_entry_point.cu" \
  "$X/f04_cupti_decoy_elf_walk.cu" "$X/f04_decoy_above_floor.cu" "$G"
# B: the harness's bound alone (audit recorded, not deciding), the decoys without the forged "done".
export F04_DECOY_FORGE_DONE=0  # read by the exploit in the runner (the harness passes its environment on)
run B_shm_bound_only 90 "$X/f04_cupti_decoy_elf_walk.cu" "$X/f04_decoy_above_floor.cu" --no-tamper-check
unset F04_DECOY_FORGE_DONE
# C: the same with the forged early "done" on the shared page.
run C_shm_forged_done 60 "$X/f04_decoy_above_floor.cu" --no-tamper-check
# D: the old socket round trip, for comparison (audit recorded, not deciding).
run D_socket 90 "$G" "$X/f04_decoy_above_floor.cu" --timing-channel socket --no-tamper-check

echo "== summary"
if reference=$(bench_result gemm/gemm_examples.json gemm_examples.json); then
  echo "the honest GEMM's reference speedup for $PTXBENCH_TARGET: $reference"
else
  reference=
  echo "no GEMM examples committed for $PTXBENCH_TARGET: the run's first honest verdict is the reference"
fi
python3 bench/eval/summarize_trusted_timing.py --dir "$T" ${reference:+--reference "$reference"} \
  --out "$T/trusted_timing_summary.json" | tee "$T/trusted_timing_summary.txt"
exit "${PIPESTATUS[0]}"

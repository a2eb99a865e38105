#!/usr/bin/env bash
# Why did the GEMM examples' speedups move between the commit before the speed work and now? (Issue
# 26, P3's verdict clause: on an H100 in session 13 every passing GEMM example came out 0.2-0.7 %
# lower after than before, with the control run of the same new binaries agreeing with the first.)
# Two things changed how timing measures, besides the speed work itself: 8 rotating input sets
# instead of 3 (df6b17f) and reference outputs per input set (1c23595). Every build takes
# --input-sets, so this evaluates the passing GEMM examples, timing only, with each build at 3 and
# at 8 sets, the configurations interleaved over several rounds in one run:
#   before3 before8 [mid8 mid3] after8 after3, before3 before8 ..., ...
# and separates the set count's effect (same build) from each build step's (same set count), each
# against the rounds' own spread. Needs $PTXBENCH_BEFORE_BIN (bench/stage_commit_binaries.sh of the commit
# before); $PTXBENCH_MID_BIN, when set, adds builds between them, in order, separated by ':' (named
# mid1, mid2, ...; e.g. df6b17f: the speed work and 8 sets, one reference output buffer), which
# splits the build's effect into steps. PTXBENCH_AB_SETS (default "3 8", single digits) picks the set
# counts, PTXBENCH_AB_ROUNDS (default 3) the rounds.
#   PTXBENCH_BEFORE_BIN=... [PTXBENCH_MID_BIN=...] bench/eval/input_sets_ab.sh   # ~4-5 minutes with one middle build
# Results: bench/results/<gpu>/input-sets-ab/ (one verdict list per configuration and round,
# ab_summary.json, ab_summary.txt: bench/eval/summarize_input_sets_ab.py, which also re-summarises a committed folder), $OUT/input-sets-ab.tar.gz when OUT is set.
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu input-sets-ab
cd "$ROOT" || exit 2
work=$(mktemp -d /tmp/ptxbench-sets-ab-XXXXXX)
bench_cleanup() { rm -rf "$work"; }
if [ -z "${PTXBENCH_BEFORE_BIN:-}" ] || [ ! -x "$PTXBENCH_BEFORE_BIN/ptxbench" ]; then
  echo "input_sets_ab.sh needs PTXBENCH_BEFORE_BIN (the binaries of the commit before: bench/stage_commit_binaries.sh)"
  bench_check "input sets A/B ran (needs PTXBENCH_BEFORE_BIN)" 1
  bench_done
fi
declare -A build_bin=([before]=$PTXBENCH_BEFORE_BIN [after]=$BIN)
builds=(before after)
if [ -n "${PTXBENCH_MID_BIN:-}" ]; then
  IFS=: read -ra mids <<< "$PTXBENCH_MID_BIN"
  builds=(before)
  for i in "${!mids[@]}"; do
    [ -x "${mids[$i]}/ptxbench" ] || { echo "PTXBENCH_MID_BIN: no ptxbench in '${mids[$i]}'" >&2; exit 2; }
    build_bin[mid$((i + 1))]=${mids[$i]}
    builds+=("mid$((i + 1))")
  done
  builds+=(after)
fi
for b in "${builds[@]}"; do echo "# $b: $("${build_bin[$b]}/ptxbench" --version 2>/dev/null | head -1)"; done
read -ra set_counts <<< "${PTXBENCH_AB_SETS:-3 8}"
for n in "${set_counts[@]}"; do
  case "$n" in [1-9]) ;; *) echo "PTXBENCH_AB_SETS: set counts are single digits 1-9, got '$n'" >&2; exit 2 ;; esac
done
# Within a round the set counts alternate (3 8, 8 3, ...), so no count always runs first.
configs=()
for i in "${!builds[@]}"; do
  order=("${set_counts[@]}")
  if [ $((i % 2)) -eq 1 ]; then order=(); for ((j = ${#set_counts[@]} - 1; j >= 0; j--)); do order+=("${set_counts[$j]}"); done; fi
  for n in "${order[@]}"; do configs+=("${builds[$i]}$n"); done
done
rounds=${PTXBENCH_AB_ROUNDS:-3}
case "$rounds" in '' | *[!0-9]* | 0) echo "PTXBENCH_AB_ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2 ;; esac
source "$ROOT/bench/lib/examples.sh"
files=("${PASSING_GEMM_EXAMPLES[@]}")
for round in $(seq "$rounds"); do
  for config in "${configs[@]}"; do
    b=${config%?}
    bin=${build_bin[$b]} cache=$work/cache-$b
    PTXBENCH_CACHE=$cache timeout 240 "$bin/ptxbench" eval "${files[@]}" --task gemm_n7168_k5120 \
      --input-sets "${config: -1}" --no-sanitize --no-dynamic-check \
      --out "$RESULTS/${config}_r$round.json" > "$RESULTS/${config}_r$round.txt" 2>&1
    echo "round $round $config: exit $? at ${SECONDS}s"
  done
done
python3 bench/eval/summarize_input_sets_ab.py "$RESULTS" "$rounds" "${set_counts[*]}" "${builds[@]}"
bench_check "input sets A/B: every configuration gave every example a speedup in every round" $?
bench_done

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
# ab_summary.json, ab_summary.txt), $OUT/input-sets-ab.tar.gz when OUT is set.
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
E=examples/gemm
files=($E/plain_tiled.cu $E/wgmma.cu $E/wgmma_dead_branch.cu $E/wgmma_tma_pack.cu $E/wgmma_tma_pipelined.cu)
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
python3 - "$RESULTS" "$rounds" "${set_counts[*]}" "${builds[@]}" <<'PY'
import json, statistics, sys
results, rounds, set_counts, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
configs = [b + n for b in builds for n in set_counts]
rows = {}  # file -> config -> list of (speedup, candidate ms, reference ms, interval half-width)
problems = 0  # a round without verdicts, a verdict without a speedup: the check fails, the rest is still summarised
for c in configs:
    for r in range(1, rounds + 1):
        try:
            verdicts = json.load(open(f"{results}/{c}_r{r}.json"))
        except (OSError, ValueError) as e:
            print(f"{c} round {r}: no verdicts ({e})")
            problems += 1
            continue
        for v in verdicts:
            t = v.get("timing") or {}
            if v.get("status") != "PASSED" or "speedup" not in t:
                print(f"{c} round {r}: {v.get('file')} {v.get('status')} (no speedup)")
                problems += 1
                continue
            if t.get("input_sets") != int(c[-1]):
                print(f"{c} round {r}: {v['file']} ran with {t.get('input_sets')} input sets")
            ci = t.get("speedup_ci") or {}
            rows.setdefault(v["file"], {}).setdefault(c, []).append(
                (t["speedup"], t["candidate"]["median_ms"], t["reference"]["median_ms"],
                 ci.get("half_width") or (t["speedup_p90"] - t["speedup_p10"]) / 2))
def mean(xs): return statistics.fmean(xs)
def sd(xs): return statistics.stdev(xs) if len(xs) > 1 else float("nan")
summary, lines, ok = {}, [], True
lines.append(f"{'example':28s} {'config':8s} {'speedup mean':>12s} {'sd':>7s} {'cand ms':>8s} {'ref ms':>8s}  rounds")
for f, by in rows.items():
    name = f.split("/")[-1]
    summary[name] = {}
    for c in configs:
        xs = by.get(c, [])
        if not xs:
            ok = False
            continue
        s = [x[0] for x in xs]
        summary[name][c] = {"speedups": s, "mean": mean(s), "sd": sd(s),
                            "candidate_ms": mean([x[1] for x in xs]), "reference_ms": mean([x[2] for x in xs]),
                            "mean_interval_half_width": mean([x[3] for x in xs])}
        m = summary[name][c]
        lines.append(f"{name:28s} {c:8s} {m['mean']:12.4f} {m['sd']:7.4f} {m['candidate_ms']:8.5f} {m['reference_ms']:8.5f}  "
                     + " ".join(f"{x:.4f}" for x in s))
lines.append("")
lines.append("effects in % of the first's mean speedup (candidate, reference: % change of their median times):")
effects = {f"sets ({b}: {m} -> {n})": (b + m, b + n) for b in builds for m, n in zip(set_counts, set_counts[1:])}
for a, b in zip(builds, builds[1:]):
    for n in set_counts:
        effects[f"build ({n} sets: {a} -> {b})"] = (a + n, b + n)
if len(builds) > 2:
    for n in set_counts:
        effects[f"build ({n} sets: before -> after)"] = ("before" + n, "after" + n)
effects["both (before at 3 -> after at 8)"] = ("before3", "after8")  # P3's defaults; skipped without both
for f, by in summary.items():
    for label, (a, b) in effects.items():
        if a not in by or b not in by:
            continue
        A, B = by[a], by[b]
        d = 100 * (B["mean"] - A["mean"]) / A["mean"]
        # the noise of a difference of two round means: each round mean's standard error, combined
        se = 100 * ((A["sd"] ** 2 + B["sd"] ** 2) / rounds) ** 0.5 / A["mean"]
        dc = 100 * (B["candidate_ms"] - A["candidate_ms"]) / A["candidate_ms"]
        dr = 100 * (B["reference_ms"] - A["reference_ms"]) / A["reference_ms"]
        by.setdefault("effects", {})[label] = {"speedup_pct": d, "noise_se_pct": se, "candidate_pct": dc, "reference_pct": dr}
        lines.append(f"{f:28s} {label:34s} speedup {d:+6.2f} % (se {se:4.2f})  candidate {dc:+6.2f} %  reference {dr:+6.2f} %")
json.dump({"rounds": rounds, "examples": summary}, open(f"{results}/ab_summary.json", "w"), indent=1)
open(f"{results}/ab_summary.txt", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if ok and summary and not problems else 1)
PY
bench_check "input sets A/B: every configuration gave every example a speedup in every round" $?
bench_done

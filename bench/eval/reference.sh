#!/usr/bin/env bash
# Issue 30 on a Hopper GPU: each reference kernel of examples/reference/manifest.json first through its
# GPU correctness test (the manifest's `test`, an executable of tests/gpu: small and ragged shapes against
# a host reference, a hang failing after 20 s; a kernel whose test fails is not timed), then evaluated three
# times in one harness (`ptxbench eval F F F --out`), its verdicts checked against the goal of its task
# (passed, target-correct, the median speedup at least the goal). About 1 min per kernel.
# Results in bench/results/<gpu>/reference/ (reference-<task>-.../ for a subset; $OUT/<folder>.tar.gz): <task>.json (the verdicts, what
# `ptxbench metrics --ceiling` reads), <task>.txt (eval's output), <task>.test.txt (the correctness test's output), summary.txt (one line per evaluation:
# status, target verdict, coverage, speedup with its 95 % interval; PASS/FAIL per kernel).
# Usage on the GPU host: PTXBENCH_BIN=$PWD/.carry/bin bench/eval/reference.sh [TASK...]   (or with build/bin;
# TASKs: only the kernels of these tasks, e.g. a new kernel's first run)
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
# A subset (TASK arguments) writes its own folder, reference-<task>-<task>/, so it never replaces the
# other kernels' evidence in reference/ (merge it there by hand to commit it as the ceiling's input).
for want in "$@"; do
  [[ "$want" =~ ^[a-z0-9_]+$ ]] || { echo "reference.sh: '$want' is not a task name" >&2; exit 2; }
done
name=reference
[ $# -gt 0 ] && name="reference-$(IFS=-; echo "$*")"
bench_gpu "$name"
cd "$ROOT" || exit 2
M=examples/reference/manifest.json
mapfile -t KERNELS < <(python3 -c 'import json,sys; [print(k["file"], k["task"], k.get("test", "-")) for k in json.load(open(sys.argv[1]))["kernels"]]' "$M")
if [ $# -gt 0 ]; then
  chosen=()
  for entry in "${KERNELS[@]}"; do
    read -r _ task _ <<< "$entry"
    for want in "$@"; do [ "$task" = "$want" ] && chosen+=("$entry"); done
  done
  [ ${#chosen[@]} -eq $# ] || { echo "reference.sh: some of '$*' name no kernel of $M" >&2; exit 2; }
  KERNELS=("${chosen[@]}")
fi
if [ ${#KERNELS[@]} -eq 0 ]; then
  bench_check "examples/reference/ holds a reference kernel (none yet: see examples/reference/README.md)" 1
  bench_done
fi
for entry in "${KERNELS[@]}"; do
  read -r file task test <<< "$entry"
  if [ "$test" != "-" ]; then
    if [ ! -x "$BIN/$test" ]; then
      echo "  $task: correctness test $test is not in $BIN (build it: cmake --build build --target $test)" | tee -a "$RESULTS/summary.txt"
      bench_check "$task: correctness test $test ran" 1
      continue
    fi
    echo "== $task: $test"
    timeout 90 "$BIN/$test" > "$RESULTS/$task.test.txt" 2>&1
    rc=$?
    echo "  $task: correctness test $test exit $rc ($(grep -cE '^\[       OK \]' "$RESULTS/$task.test.txt") passed, $(grep -cE '^\[  FAILED  \]' "$RESULTS/$task.test.txt") failed lines)" | tee -a "$RESULTS/summary.txt"
    bench_check "$task: correctness test $test passed" "$rc"
    [ "$rc" -eq 0 ] || continue
  fi
  echo "== $task: examples/reference/$file x3"
  timeout 400 "$BIN/ptxbench" eval "examples/reference/$file" "examples/reference/$file" "examples/reference/$file" \
    --task "$task" --target "$PTXBENCH_TARGET" --out "$RESULTS/$task.json" > "$RESULTS/$task.txt" 2>&1
  echo "   eval exit $?"
  python3 - "$M" "$task" "$RESULTS/$task.json" <<'PY' | tee -a "$RESULTS/summary.txt"
import json, statistics, sys
manifest, task, path = sys.argv[1:4]
goal = next(g for g in json.load(open(manifest))["goals"] if g["task"] == task)
try:
    verdicts = json.load(open(path))
except (OSError, ValueError) as e:
    print(f"  {task}: no verdicts ({e})"); sys.exit(1)
good = []
for i, v in enumerate(verdicts):
    t = v.get("timing") or {}
    ti = v.get("target_instructions") or {}
    cov = {f: c.get("fraction") for f, c in (ti.get("coverage") or {}).items()}
    print(f"  {task} #{i}: {v.get('status')} target {ti.get('verdict')} coverage {cov} speedup {t.get('speedup')} "
          f"(95% interval {(t.get('speedup_ci') or {}).get('low')}-{(t.get('speedup_ci') or {}).get('high')}, "
          f"{t.get('stopped')})")
    if v.get("status") == "PASSED" and v.get("target_correct") and t.get("speedup"):
        good.append(t["speedup"])
ok = len(good) == len(verdicts) == 3 and statistics.median(good) >= goal["min_speedup"]
print(f"  {task}: {len(good)} of {len(verdicts)} passed target-correct, median "
      f"{statistics.median(good) if good else 0:.3f}x vs goal {goal['min_speedup']:.2f}x {goal['baseline']}")
sys.exit(0 if ok else 1)
PY
  bench_check "$task: 3 of 3 evaluations passed and target-correct, median speedup at least the goal" "${PIPESTATUS[0]}"
done
bench_done

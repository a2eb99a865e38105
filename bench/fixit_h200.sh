#!/usr/bin/env bash
# GPU evidence for the Fixit pipeline (issue 14), end to end on an H200, offline, in about 3 minutes:
#   1. student: `ptxbench run` with a replay model whose three turns are real failing kernels
#      (turn 0 the agent replay's kernel that does not compile, turn 1 examples/gemm/wrong_result.cu,
#      turn 2 examples/gemm/out_of_bounds.cu), evaluated on the GPU;
#   2. `fixit mine` (expects compile/turn0, numerical/turn1, runtime/turn2);
#   3. `fixit repair` with a replay teacher whose fix is a real kernel (the agent replay's
#      wgmma_tma_pipelined.cu), evaluated on the GPU;
#   4. `fixit pairs --require-target` (expects 3 target-correct pairs);
#   5. `fixit reason` with a replay reasoning teacher;
#   6. `sft export --format fixit` (tokens counted with the test tokenizer.json);
#   7. train/: the export as train/'s reader sees it, then a tiny random model of the student's
#      architecture: exactly the last assistant message labelled, 20 steps lower the loss, the adapter
#      saves and reloads (train/tests/test_exported_sft.py).
# Every stage writes its output under $OUT/fixit/ and a line to $OUT/fixit/summary.txt; a stage
# that fails says so loudly and the stages that do not depend on it still run. With $OUT set, the
# results also go into $OUT/fixit.tar.gz.
#
#   usage: bench/stage_h200_binaries.sh   (on the build machine; carries .carry/bin)
#          PTXBENCH_BIN=$PWD/.carry/bin bench/fixit_h200.sh     (on the GPU host, repository root)
set -uo pipefail
TARBALL_DIR=${OUT:-}
source "$(dirname "$0")/env.sh"
cd "$ROOT"
RES=${FIXIT_RESULTS:-$ROOT/bench/results/h200/fixit}
rm -rf "$RES" && mkdir -p "$RES"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
SUMMARY="$RES/summary.txt"
# The student's prompt variant. ablation_params (the Hopper pack's parameters only, ~11k characters)
# keeps the exported rows short enough for the tiny model's 20 steps inside the time budget; base
# (the whole pack, ~84k characters, ~30k tokens per row for the tiny tokenizer) works too, slower.
VARIANT=${FIXIT_VARIANT:-ablation_params}
failures=0
say() { echo "$*" | tee -a "$SUMMARY"; }
stage() {  # stage NAME TIMEOUT CMD...: runs CMD, its output in $RES/NAME.log; FAILED lines are loud
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$RES/$name.log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ]; then say "ok      $name ($((SECONDS - t0)) s)"
  else say "FAILED  $name: exit $rc after $((SECONDS - t0)) s (see $name.log): $(tail -1 "$RES/$name.log")"; failures=$((failures + 1)); fi
  return $rc
}
finish() {
  say "stages failed: $failures"
  if [ -n "$TARBALL_DIR" ]; then
    mkdir -p "$TARBALL_DIR" && tar -czf "$TARBALL_DIR/fixit.tar.gz" -C "$(dirname "$RES")" "$(basename "$RES")" \
      && echo "results: $TARBALL_DIR/fixit.tar.gz"
  fi
  [ "$failures" -eq 0 ]
  exit $?
}
say "fixit_h200: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown) bin $BIN variant $VARIANT"

# ---- replay files: the student's three failing turns, the repair teacher's fix, the reasoning teacher
W=$RES/inputs && mkdir -p "$W"
python3 - "$W" <<'PY' || { say "FAILED  inputs: could not build the replay files"; finish; }
import json, sys
w = sys.argv[1]
base = json.load(open("examples/agent/gemm_replay.json"))
replies = [m["content"] for m in base["messages"] if m["role"] == "assistant"]
if len(replies) < 2 or "PLACEHOLDER, not a kernel" in "".join(replies):
    sys.exit("examples/agent/gemm_replay.json has no recorded kernels (regenerate with examples/agent/make_gemm_replay.sh)")
def cuda(path, intro):
    return intro + "\n\n```cuda\n" + open(path).read().rstrip("\n") + "\n```\n"
def replay(contents):
    msgs = [{"role": "system", "content": "(recorded for bench/fixit_h200.sh)"}, {"role": "user", "content": "(recorded)"}]
    for c in contents:
        msgs += [{"role": "assistant", "content": c}, {"role": "user", "content": "(recorded feedback)"}]
    return {"trajectory_format": base.get("trajectory_format"), "info": base.get("info", {}), "messages": msgs}
student = [replies[0],
           cuda("examples/gemm/wrong_result.cu", "The build error is fixed; here is the whole kernel again."),
           cuda("examples/gemm/out_of_bounds.cu", "The results were wrong because of the tile indexing; corrected.")]
json.dump(replay(student), open(f"{w}/student.json", "w"), indent=1)
json.dump(replay([replies[1]]), open(f"{w}/repair_teacher.json", "w"), indent=1)
steps = [
    "The evaluator's message is the first thing I have to take seriously, because it tells me at which stage my kernel stopped: "
    "whether it never built, whether it ran and touched memory it does not own, or whether it finished and produced numbers "
    "that disagree with the reference. Each of those points to a different part of the design, so I start there rather than "
    "rewriting everything at once.",
    "For a build failure the cause is usually a helper I used and never defined, or an intrinsic whose operand types do not "
    "match; on Hopper the descriptor and barrier helpers are the usual suspects, so I make sure every helper the main loop "
    "calls is written out in the file and that the shared memory layout it assumes is the one I allocate.",
    "For wrong numbers the structure is usually fine and one index is not: I check how each thread block maps to its output "
    "tile, how the K loop advances through A and B, and whether the accumulator fragments are written back to the rows and "
    "columns they were computed for. A single transposed index gives exactly the large relative error the evaluator reports.",
    "For an out-of-bounds access I look at every global address the kernel forms and ask which problem sizes make it leave the "
    "tensor; the fix is to derive the grid from the shapes the task gives and to keep every load and store inside them, "
    "instead of assuming a size that happens to divide evenly.",
    "Since the task asks for Hopper's tensor core path, I also make sure the repaired kernel stages tiles with the tensor "
    "memory accelerator and feeds warpgroup matrix multiplies from swizzled shared memory through a small multi-stage pipeline "
    "with barriers between the producer and the consumers, so that the fix does not trade correctness for the target "
    "instructions. With the indexing derived from the shapes and every helper present, the kernel builds, stays in bounds and "
    "matches the reference, and the pipeline keeps the tensor cores busy.",
    "Finally I read the whole file once more from the top as the evaluator will build it: one translation unit, the entry "
    "point exported with the dtypes the task declares, no host-side allocation inside the timed call, and nothing that "
    "depends on a problem size other than the ones the workload lists. Only then do I hand it back, because a repair that "
    "introduces a second failure costs another full round of feedback.",
]
rationale = "<my_reasoning>\n" + "\n\n".join(steps) + "\n</my_reasoning>\n"
json.dump(replay([rationale]), open(f"{w}/reason_teacher.json", "w"), indent=1)
PY

run_dir=$RES/student-run
stage student 120 "$BIN/ptxbench" run --model "replay:$W/student.json" --tasks gemm_n7168_k5120 --target h200 \
  --variants "$VARIANT" --trajectories 1 --turns 3 --out "$run_dir" -q
python3 - "$run_dir" > "$RES/student_labels.txt" 2>&1 <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/trajectories/*.json")):
    t = json.load(open(f))
    print(f.split("/")[-1], [m["extra"]["ptxbench"]["label"] for m in t["messages"][3::2] if "ptxbench" in m.get("extra", {})])
PY
say "        student labels: $(cat "$RES/student_labels.txt" 2>/dev/null | tr '\n' ' ')"

mined=$RES/mined
stage mine 30 "$BIN/ptxbench" fixit mine "$run_dir" --out "$mined" && \
  say "        mined strata: $(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["counts"]["per_stratum"]))' "$mined/manifest.json")"

repairs=$RES/repairs
stage repair 150 "$BIN/ptxbench" fixit repair "$mined" --model "replay:$W/repair_teacher.json" --target h200 \
  --out "$repairs" --parallel 3 -q
[ -f "$repairs/summary.json" ] && say "        repairs: $(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print({k: t.get(k) for k in ("finished","correct_trajectories","target_correct_trajectories","turns_completed")})' "$repairs/summary.json")"

pairs=$RES/pairs
stage pairs 30 "$BIN/ptxbench" fixit pairs "$repairs" --out "$pairs" --require-target && \
  say "        pairs: $(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["counts"]))' "$pairs/manifest.json")"

reasoning=$RES/reasoning
stage reason 60 "$BIN/ptxbench" fixit reason "$pairs" --model "replay:$W/reason_teacher.json" --out "$reasoning" -q

sft=$RES/sft
stage export 60 "$BIN/ptxbench" sft export "$reasoning" --format fixit --out "$sft" \
  --tokenizer tests/fixtures/tokenizer/tiny_tokenizer.json --chat-template chatml --max-tokens 1000000 && \
  say "        export: $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["counts"]; print(c["in"], "in,", c["out"], "out, dropped", c["dropped"])' "$sft/manifest.json")"

if [ -f "$sft/sft.jsonl" ]; then
  stage reader 60 env PTXBENCH_SFT_EXPORT="$sft/sft.jsonl" python3 -B -m unittest -v train.tests.test_export_format
  stage train 150 env PTXBENCH_SFT_DATA="$sft/sft.jsonl" python3 -B -m unittest -v train.tests.test_exported_sft
  grep -E "dataset loss|reloaded|tokens, .* labelled|skipped|Error" "$RES/train.log" | sed 's/^/        /' | tee -a "$SUMMARY"
  grep -q "skipped" "$RES/train.log" && { say "FAILED  train: skipped (missing torch/transformers/peft?)"; failures=$((failures + 1)); }
else
  say "FAILED  reader, train: no export to train on"; failures=$((failures + 2))
fi
finish

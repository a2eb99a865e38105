#!/usr/bin/env bash
# GPU evidence for Fixit as the paper ran it (issues 14 and 28), offline, in one script on any Hopper
# GPU (the suite target is taken from the GPU's name: h100 on an H100, h200 on an H200):
#
#   1. student: `ptxbench run` with a replay model on mha_with_lse_d128 (prompt variant fa3_fwd_v0, so
#      every recipe's filters take it) whose three turns are real failing kernels made from
#      examples/attention/plain_fwd.cu: turn 0 does not compile, turn 1 computes wrong numbers, turn 2
#      writes out of bounds; evaluated by the real evaluator on the GPU. A teacher's run (the
#      target-correct examples/attention/wgmma_fwd.cu) for KernelGen.
#   2. a tiny random model of Qwen3's architecture with Qwen3's chat template, its tokenizer trained
#      on the runs' texts (train/tiny_model.py; nothing is downloaded): the target the rows are
#      measured for.
#   3. every recipe s0-s6 (`ptxbench sft recipe`) with the real evaluator: replay teachers (the
#      repair teacher's fix is wgmma_fwd.cu), the recipes' own filters, caps and rules (s5 and s6
#      with --allow-underfilled-definitions: a 3-turn run has fewer rows than their cap of 33), rows
#      measured with the tiny model's tokenizer; each recipe's counts beside the paper's, and why
#      they differ.
#   4. train/: its reader on the exported rows (train/tests/test_export_format.py), then the LoRA recipe
#      exactly as the paper's (rank 32, 5 epochs, batch 2, lr 4.65e-4, 65,536-token rows, loss on the
#      last assistant message) on the rows of s0 and s5 together, the dataset loss before and after.
#   5. the adapter served (train/serve_openai.py, OpenAI-compatible, on 127.0.0.1) and `ptxbench run`
#      against it for one trajectory: student -> data -> adapter -> student again.
#
# Writes bench/results/<target>/fixit/ (summary.txt first; one <stage>.log per stage; the runs, the
# recipe folders, the training run's manifest, the served trajectory) and, with $OUT set,
# $OUT/fixit.tar.gz of that folder (the tiny model's weights left out). A stage that fails says so
# (FAILED) and the stages that do not depend on it still run; the exit status is the number of
# failed stages. About 5-6 minutes on an H100 (each recipe repairs three rows on the GPU).
#
#   on the build machine: bench/stage_binaries.sh     (carries .carry/bin)
#   on the GPU host, repository root:
#     PTXBENCH_BIN=$PWD/.carry/bin bench/adapt/fixit_gpu.sh
#
# FIXIT_SELF_CHECK=1 runs the script on a machine without a GPU with the test-only fake evaluator
# (the kernels carry its markers in comments, which the real evaluator ignores) and target h100,
# into bench/results/cpu/fixit_selfcheck/: a check of the script itself, not evidence; the stages
# that need torch fail there.
set -uo pipefail
TARBALL_DIR=${OUT:-}
source "$(dirname "$0")/../lib/env.sh"
cd "$ROOT" || exit 2
EVAL=()
if [ "${FIXIT_SELF_CHECK:-0}" = 1 ]; then
  EVAL=(--evaluator fake)
  PTXBENCH_TARGET=${PTXBENCH_TARGET:-h100}
  GPU_NAME="none (self-check with the fake evaluator)"
  FIXIT_RESULTS=${FIXIT_RESULTS:-$ROOT/bench/results/cpu/fixit_selfcheck}
fi
if [ "${FIXIT_SELF_CHECK:-0}" != 1 ]; then  # the GPU's own target (bench/lib/gpu_target.sh), never assumed
  PTXBENCH_TARGET=$(bench_gpu_target) || exit 2
  GPU_NAME=$(bench_gpu_model)
fi
T=$PTXBENCH_TARGET
RES=${FIXIT_RESULTS:-$ROOT/bench/results/$T/fixit}
rm -rf "$RES" && mkdir -p "$RES"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
SUMMARY="$RES/summary.txt"
TASK=mha_with_lse_d128
VARIANT=fa3_fwd_v0
W=$RES/inputs && mkdir -p "$W"
failures=0
T0=$SECONDS
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
summary() { python3 "$ROOT/bench/adapt/fixit_summary.py" "$@"; }
server_pid=
finish() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  say "stages failed: $failures (total $((SECONDS - T0)) s)"
  if [ -n "$TARBALL_DIR" ]; then
    mkdir -p "$TARBALL_DIR" && tar -czf "$TARBALL_DIR/fixit.tar.gz" --exclude='*/tiny/model.safetensors' \
      -C "$(dirname "$RES")" "$(basename "$RES")" && echo "results: $TARBALL_DIR/fixit.tar.gz"
  fi
  exit "$failures"
}
trap 'say "interrupted"; failures=$((failures + 1)); finish' INT TERM
say "fixit_gpu: $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown) target $T ($GPU_NAME) bin $BIN"
python3 - > "$RES/environment.txt" 2>&1 <<'PY'
import importlib, platform
print("python", platform.python_version())
for name in ("torch", "transformers", "peft", "tokenizers", "jinja2"):
    try:
        print(name, importlib.import_module(name).__version__)
    except ImportError:
        print(name, "missing")
PY
say "        $(tr '\n' ' ' < "$RES/environment.txt")"

# ---- 1. replay files: the student's three failing turns, the teachers' replies ----------------------
python3 - "$W" <<'PY' || { say "FAILED  inputs: could not build the replay files"; failures=$((failures + 1)); finish; }
import json, sys
w = sys.argv[1]
plain = open("examples/attention/plain_fwd.cu").read()
good = open("examples/attention/wgmma_fwd.cu").read()
def edit(src, old, new):
    assert old in src, f"examples/attention/plain_fwd.cu no longer holds {old!r}"
    return src.replace(old, new, 1)
inv = "const float inv = 1.f / l;"
# Each carries the fake evaluator's marker in a comment (FIXIT_SELF_CHECK); the real evaluator ignores it.
compile_error = edit(plain, inv, "const float inv = 1.f / l + undefined_correction;  // FAKE_COMPILE_ERROR")
wrong_numbers = edit(plain, inv, "const float inv = 1.5f / l;  // FAKE_WRONG")
out_of_bounds = edit(plain, "const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;",
                     "const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;\n"
                     "  if (blockIdx.x == 0 && tid == 0) O[size_t(1) << 40] = O[0];  // FAKE_RUNTIME_ERROR")
def reply(intro, code):  # ends with its closing fence, as mined replies must
    return intro + "\n\n```cuda\n" + code.rstrip("\n") + "\n```"
def replay(contents):
    msgs = [{"role": "system", "content": "(recorded for bench/adapt/fixit_gpu.sh)"}, {"role": "user", "content": "(recorded)"}]
    for c in contents:
        msgs += [{"role": "assistant", "content": c}, {"role": "user", "content": "(recorded feedback)"}]
    return {"messages": msgs}
json.dump(replay([reply("A plain tiled forward pass first.", compile_error),
                  reply("Fixed the build; here is the whole kernel again.", wrong_numbers),
                  reply("The normalisation was off; corrected.", out_of_bounds)]), open(f"{w}/student.json", "w"), indent=1)
fix = reply("Here is the kernel with the error fixed, using wgmma for both matrix products.", good)
json.dump(replay([fix]), open(f"{w}/repair_teacher.json", "w"), indent=1)
json.dump(replay([reply("A wgmma forward pass with an online softmax.", good)]), open(f"{w}/kernelgen_teacher.json", "w"), indent=1)
steps = [
    "I start from what the evaluator told me, because it says at which stage my kernel stopped: whether it never built, "
    "whether it ran and touched memory it does not own, or whether it finished and produced numbers that disagree with "
    "the reference. Each of those points to a different part of the design, so I do not rewrite everything at once.",
    "For a build failure the cause is usually a name I used and never defined. Here the normalisation line refers to a "
    "correction term that exists nowhere in the file, so the fix is to compute the inverse of the running sum and "
    "nothing else: inv = 1 / l after the two shuffles that add up the quad's partial sums.",
    "For wrong numbers the structure is usually fine and one factor is not. The output is O = P V / l row by row, and "
    "any constant in front of 1 / l scales every output element by that constant while the log-sum-exp stays right, "
    "which is exactly the pattern of a large relative error in O with a correct LSE.",
    "For an out-of-bounds access I look at every global address the kernel forms and ask which one can leave its "
    "tensor. A store to O at an offset of 2^40 elements is far outside the B*H*S*D elements the task gives, so it must "
    "go; every store has to be indexed by the head, the row and the column of this tile.",
    "Since the task asks for Hopper's tensor cores, I also move both matrix products to warpgroup MMA: S = Q K^T with "
    "Q and K tiles staged in 128-byte swizzled shared memory and described by matrix descriptors, then the online "
    "softmax in registers (the running maximum in the exp2 domain, rescaling the accumulator when it grows), then "
    "O += P V with P converted to bf16 in registers. Shared memory: a 64x128 Q tile and 64x128 K and V tiles in bf16 "
    "are 16 KB each, 48 KB in all, well within the 227 KB an SM offers.",
    "Before the matrix products I check the synchronisation they need: a fence before the first warpgroup MMA reads "
    "shared memory that ordinary stores wrote, the group committed after each product, and a wait before the "
    "accumulators are read for the softmax. Without the wait the scores would be read while the tensor cores still "
    "write them, which gives wrong numbers that change from run to run, the worst kind of failure to debug.",
    "Finally I read the file from the top as the evaluator will build it: one translation unit, the entry point "
    "exported with the dtypes the task declares, the shape checks in run, no host allocation in the timed call. Only "
    "then do I hand it back, because a repair that introduces a second failure costs another round of feedback.",
]
rationale = "<my_reasoning>\n" + "\n\n".join(steps) + "\n</my_reasoning>"
json.dump(replay([rationale]), open(f"{w}/reason_teacher.json", "w"), indent=1)
PY

student=$RES/student-run
stage student 240 "$BIN/ptxbench" run --model "replay:$W/student.json" --tasks $TASK --target "$T" --variants $VARIANT \
  --trajectories 1 --turns 3 --out "$student" -q "${EVAL[@]}"
say "        student labels: $(summary labels "$student")"
teacher=$RES/teacher-run
stage teacher 120 "$BIN/ptxbench" run --model "replay:$W/kernelgen_teacher.json" --tasks $TASK --target "$T" \
  --variants $VARIANT --trajectories 1 --turns 1 --out "$teacher" -q "${EVAL[@]}"
say "        teacher labels: $(summary labels "$teacher")"

# ---- 2. the tiny Qwen3 model: its tokenizer measures the rows ---------------------------------------
TINY=$RES/tiny
python3 - "$student" "$teacher" "$W/corpus.jsonl" <<'PY'
import glob, json, sys
with open(sys.argv[3], "w") as out:
    for run in sys.argv[1:3]:
        for f in sorted(glob.glob(run + "/trajectories/*.json")):
            out.write(json.dumps({"messages": json.load(open(f))["messages"]}) + "\n")
PY
stage tiny_model 180 python3 -m train.tiny_model --arch qwen3 --chat-template qwen3 --vocab-size 8192 --out "$TINY" \
  --corpus "$W/corpus.jsonl" --seed 0
say "        tiny model: $(summary tiny "$TINY/tiny_model.json")"

# ---- 3. every recipe with the real evaluator ----------------------------------------------------------
# The rows are measured with the tiny model's tokenizer; without it (no torch here) with the small test
# tokenizer and a raised limit, which the reports then name.
MEASURE=(--tokenizer "$TINY/tokenizer.json")
if [ ! -f "$TINY/tokenizer.json" ]; then
  MEASURE=(--tokenizer tests/fixtures/tokenizer/tiny_tokenizer.json --max-tokens 4000000)
  say "        no tiny model: rows measured with the test tokenizer (not the target's)"
fi
recipe() {  # recipe NAME RUN_DIR [extra options]
  local name=$1 runs=$2; shift 2
  stage "recipe_$name" 300 "$BIN/ptxbench" sft recipe "$name" --runs "$runs" --out "$RES/recipes/$name" \
    --repair-model "replay:$W/repair_teacher.json" --reason-model "replay:$W/reason_teacher.json" \
    "${MEASURE[@]}" --parallel 3 -q "${EVAL[@]}" "$@"
  local report=$RES/recipes/$name/recipe_report.json
  [ -f "$report" ] && say "        $name: $(summary recipe "$report")"
}
mkdir -p "$RES/recipes"
recipe s0 "$teacher"
for r in s1 s2 s3 s4; do recipe $r "$student"; done
for r in s5 s6; do recipe $r "$student" --allow-underfilled-definitions; done
[ -f "$RES/recipes/s5/recipe_report.json" ] && \
  say "        why s5 differs: $(summary why "$RES/recipes/s5/recipe_report.json")"

# ---- 4. train/ on the rows of s0 and s5 ---------------------------------------------------------------
DATA=$RES/train_rows.jsonl
cat "$RES/recipes/s0/sft/sft.jsonl" "$RES/recipes/s5/sft/sft.jsonl" > "$DATA" 2>/dev/null
say "        training rows: $(wc -l < "$DATA" 2>/dev/null || echo 0) (s0 + s5)"
# train/'s tests of exported rows (they skip without them; bench/adapt/train_smoke.sh counts on them running here)
stage reader 240 env PTXBENCH_SFT_EXPORT="$DATA" PTXBENCH_SFT_DATA="$DATA" \
  python3 -B -m unittest -v train.tests.test_export_format train.tests.test_exported_sft
RUN=$RES/train
# The paper's settings are sft_lora's defaults; fp32 because the model is tiny (bf16 is for the real one).
stage train 420 python3 -m train.sft_lora --data "$DATA" --model "$TINY" --out "$RUN" --dtype fp32 --eval-loss
if [ -f "$RUN/run_manifest.json" ]; then
  say "        $(summary train "$RUN/run_manifest.json")"
  summary loss_fell "$RUN/run_manifest.json" || { say "FAILED  train: the dataset loss did not fall"; failures=$((failures + 1)); }
fi

# ---- 5. serve the adapter; the student again, from it ----------------------------------------------
if [ -f "$RUN/adapter/adapter_config.json" ]; then
  rm -f "$W/port"
  python3 -m train.serve_openai --model "$TINY" --adapter "$RUN/adapter" --served-name tiny-sft-s0-s5 --port 0 \
    --ready-file "$W/port" --max-new-tokens 256 > "$RES/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do [ -s "$W/port" ] && break; kill -0 "$server_pid" 2>/dev/null || break; sleep 1; done
  if [ -s "$W/port" ]; then
    port=$(cat "$W/port")
    say "ok      serve (the adapter on http://127.0.0.1:$port/v1)"
    again=$RES/student-again
    stage student_again 300 "$BIN/ptxbench" run --model openai:tiny-sft-s0-s5 --base-url "http://127.0.0.1:$port/v1" \
      --tasks $TASK --target "$T" --variants $VARIANT --trajectories 1 --turns 1 --out "$again" -q "${EVAL[@]}"
    say "        served trajectory: $(summary labels "$again")"
  else
    say "FAILED  serve: the server did not come up (see serve.log): $(tail -1 "$RES/serve.log")"; failures=$((failures + 1))
  fi
else
  say "FAILED  serve, student_again: no adapter to serve"; failures=$((failures + 2))
fi
finish

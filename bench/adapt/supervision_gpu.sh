#!/usr/bin/env bash
# GPU evidence for the supervision arms (issue 15, docs/supervision.md): the four arms of the paper's
# Table 4 (base, expert guidance, repair notes, notes + fixed kernel) run on the Hopper GPU at hand
# (its suite target from its name: bench/lib/gpu_target.sh) with the real evaluator and the replay
# model of bench/agents/agent_replay.sh (turn 0 a kernel nvcc rejects, turn 1
# examples/gemm/wgmma_tma_pipelined.cu). Checked per arm: the guidance hash in every turn and the
# document in the system prompt; after the real compile error, the retrieved notes with BM25 scores
# and the corpus hash in the records; the note written from this very trajectory excluded (leak
# control); the fixed kernel shown only in notes+kernel; the last turn correct. Then `ptxbench
# metrics` and `report` over the four run directories (the Table 4 view).
#
#   usage (repository root, binaries staged by bench/stage_binaries.sh):
#     PTXBENCH_BIN=$PWD/.carry/bin bench/adapt/supervision_gpu.sh
#   SUPERVISION_CPU_ONLY=1 runs the arms with --cpu-only (no GPU: the last turn is only `built`, target
#   h200 as `run` assumes without a GPU), to check the script itself on a build machine; its results
#   are not evidence.
#   writes bench/results/<target>/supervision/ (runs/, metrics/, report.html, check.txt, *.log) and, when
#   $OUT is set, $OUT/supervision.tar.gz with the same files. Each arm is its own case: one failing
#   is reported (FAIL lines, exit 1 at the end) and the others still run. About 1-2 minutes.
set -uo pipefail
user_out=${OUT:-}
source "$(dirname "$0")/../lib/env.sh"
cd "$ROOT" || exit 2
cpu_only=()
if [ "${SUPERVISION_CPU_ONLY:-0}" = 1 ]; then
  cpu_only=(--cpu-only); target=h200; res="$ROOT/bench/results/cpu/supervision_selfcheck"
else
  target=$(bench_gpu_target) || exit 2
  res="$ROOT/bench/results/$target/supervision"
fi
rm -rf "$res" && mkdir -p "$res/runs"
failures=()
fail() { echo "FAIL: $*" | tee -a "$res/check.txt" >&2; failures+=("$*"); }

replay=examples/agent/gemm_replay.json
if grep -q 'PLACEHOLDER, not a kernel' "$replay"; then
  fail "$replay holds a placeholder reply (regenerate it with examples/agent/make_gemm_replay.sh)"
fi

# Inputs: a guidance document for the GEMM task and a notes file written in the repair-note format
# (no teacher is reachable from the GPU host). "near" was written from another trajectory whose wrong
# kernel is the replay's turn 0; "leak" from this run's own trajectory (same wrong kernel, must be
# excluded); "far" from an unrelated softmax kernel.
cat > "$res/guidance.md" <<'EOF'
---
format: ptxbench.guidance/1
title: Hopper wgmma/TMA checklist (bench input)
tasks: gemm_n7168_k5120
---
# GUIDANCE-BODY: what earlier GEMM kernels got wrong
- Define every helper you call (descriptor builders, barrier wrappers) in the same file.
- Fence before the first wgmma.mma_async, commit the group, wait before reading accumulators.
EOF
python3 - "$replay" "$res/notes.jsonl" "$target" <<'PY' || fail "could not write the notes file"
import hashlib, json, re, sys
replay, out, target = sys.argv[1], sys.argv[2], sys.argv[3]
replies = [m["content"] for m in json.load(open(replay))["messages"] if m["role"] == "assistant"]
def code(reply):
    blocks = re.findall(r"```(?:cuda|cpp|c\+\+)?\n(.*?)```", reply, re.S)
    return blocks[-1]
wrong, fixed = code(replies[0]), code(replies[1])
far_wrong = "__global__ void softmax_rows(float* x, int n) {\n  __shared__ float row_max[128];\n  row_max[threadIdx.x] = x[threadIdx.x];\n}\n"
sha = lambda s: hashlib.sha256(s.encode()).hexdigest()
def note(key, trajectory, wrong_kernel, fixed_kernel, instruction, speedup):
    feedback = "Evaluation FAILED: compile_error\nerror: identifier \"make_smem_desc\" is undefined"
    body = {"summary": f"Bench note {key}: the kernel called a helper it never defined; the fix defined it.",
            "instruction_notes": [{"instruction": instruction, "shape_context": "128x128x64 bf16 tiles, K-major",
                                   "correct_example": "wgmma_fence();\nwgmma(desc_a, desc_b);\nwgmma_commit();",
                                   "wrong_example": "wgmma(make_smem_desc(a), b); // helper never defined",
                                   "operand_contract": "64-bit shared-memory descriptors; f32 accumulators",
                                   "required_sequence": ["wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group"],
                                   "diagnostics": "nvcc: identifier is undefined",
                                   "do_not_do": ["call a descriptor helper that is not defined in the file"]}],
            "tags": ["wgmma", "compile_error"]}
    return {"format": "ptxbench.repair-note/1", "key": key,
            "source": {"run": "/bench/source-run", "task": "gemm_n7168_k5120", "variant": "base",
                       "trajectory": trajectory, "turn": 0, "label": "compile_error"},
            "pair": {"wrong_kernel_sha256": sha(wrong_kernel), "feedback_sha256": sha(feedback),
                     "fixed_kernel_sha256": sha(fixed_kernel), "fixed_speedup": speedup, "fixed_target_correct": True,
                     "origin": {"id": key}},
            "teacher": {"model": "bench-fixture", "attempts": 1}, "note": body,
            "wrong_kernel": wrong_kernel, "feedback": feedback, "fixed_kernel": fixed_kernel}
notes = [note("leak", f"gemm_n7168_k5120__{target}__base__t0", wrong, "// FIXED-LEAK\n" + fixed, "wgmma.leak", 0.9),
         note("near", f"elsewhere__{target}__base__t9", wrong, "// FIXED-NEAR\n" + fixed, "wgmma.mma_async", 0.85),
         note("far", f"elsewhere__{target}__base__t3", far_wrong, "// FIXED-FAR\n", "online softmax", 0.2)]
with open(out, "w") as f:
    for n in notes: f.write(json.dumps(n) + "\n")
PY
"$BIN/ptxbench" notes check "$res/notes.jsonl" > "$res/notes_check.txt" 2>&1 || fail "ptxbench notes check: $(tail -1 "$res/notes_check.txt")"

run_arm() {  # name, extra args...
  local name=$1; shift
  local t0=$SECONDS
  if "$BIN/ptxbench" run --model "replay:$replay" --tasks gemm_n7168_k5120 --target "$target" --variants base \
       --trajectories 1 --seed 42 --out "$res/runs/$name" "${cpu_only[@]}" "$@" > "$res/run_$name.log" 2>&1; then
    echo "arm $name: ran in $((SECONDS - t0)) s" | tee -a "$res/check.txt"
  else
    fail "arm $name: ptxbench run exited $? ($(tail -1 "$res/run_$name.log"))"
  fi
}
run_arm base
run_arm guidance --guidance "$res/guidance.md"
run_arm notes --repair-notes "$res/notes.jsonl" --retrieval notes
run_arm notes_kernel --repair-notes "$res/notes.jsonl" --retrieval notes+kernel

# Per-arm checks of the records (each arm checked even when another failed).
python3 - "$res" "${SUPERVISION_CPU_ONLY:-0}" "$target" <<'PY' >> "$res/check.txt" 2>&1 || fail "record checks (see check.txt)"
import hashlib, json, os, sys
res, cpu_only, target = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
stem = f"gemm_n7168_k5120__{target}__base__t0"
guidance_sha = hashlib.sha256(open(f"{res}/guidance.md", "rb").read()).hexdigest()
notes_sha = hashlib.sha256(open(f"{res}/notes.jsonl", "rb").read()).hexdigest()
bad = 0
def check(arm, cond, what):
    global bad
    print(("ok:   " if cond else "FAIL: ") + f"{arm}: {what}")
    bad += 0 if cond else 1
seeds = {}
for arm in ["base", "guidance", "notes", "notes_kernel"]:
    path = f"{res}/runs/{arm}/trajectories/{stem}.json"
    if not os.path.exists(path):
        check(arm, False, f"{path} exists"); continue
    t = json.load(open(path))
    info = t["info"]["ptxbench"]
    seeds[arm] = info.get("seed")
    fb = [m for m in t["messages"][3::2] if m.get("role") == "user"]
    ext = [m["extra"]["ptxbench"] for m in fb]
    labels = [e["label"] for e in ext]
    print(f"{arm}: labels {labels}, seed {info.get('seed')}")
    check(arm, len(labels) == 2 and labels[0] in ("compile_error", "compilation_error"), "turn 0 is a real compile error")
    if cpu_only:
        check(arm, labels[-1] == "built", "the last turn built (--cpu-only self-check)")
    else:
        check(arm, labels[-1] in ("passed", "correct") and ext[-1].get("target_correct") is True, "the last turn is correct and target-correct")
    sup = info.get("supervision")
    if arm == "base":
        check(arm, sup is None and all("supervision" not in e for e in ext), "no supervision records")
        continue
    if arm == "guidance":
        check(arm, sup and sup["arm"] == "guidance:" + guidance_sha[:8] and sup["guidance"]["sha256"] == guidance_sha, "trajectory records the guidance sha256")
        check(arm, all(e["supervision"]["guidance_sha256"] == guidance_sha for e in ext), "every turn records the guidance sha256")
        check(arm, "GUIDANCE-BODY" in t["messages"][0]["content"], "the document is in the system prompt")
        continue
    mode = "notes" if arm == "notes" else "notes+kernel"
    n = sup["notes"] if sup else None
    check(arm, n is not None and n["sha256"] == notes_sha and n["mode"] == mode, "trajectory records the notes sha256 and mode")
    check(arm, n is not None and n.get("excluded_keys") == ["leak"], "leak control excluded the note from this trajectory")
    check(arm, n is not None and n.get("corpus", {}).get("notes") == 2 and len(n["corpus"].get("sha256", "")) == 64, "corpus record (2 notes after exclusion, sha256)")
    r = ext[0]["supervision"].get("retrieval")
    print(f"{arm}: turn 0 retrieval {json.dumps(r)}")
    check(arm, r is not None and r["groups"] and r["groups"][0]["notes"] == ["near"] and r["groups"][0]["score"] > 0, "after the compile error the note 'near' is retrieved first with a positive score")
    keys = [k for g in (r or {}).get("groups", []) for k in g["notes"]]
    check(arm, "leak" not in keys, "the excluded note is never retrieved")
    content = fb[0]["content"]
    check(arm, "Repair notes from earlier fixes" in content, "the notes are in the feedback")
    check(arm, ("FIXED-NEAR" in content) == (arm == "notes_kernel"), "the fixed kernel is shown only in notes+kernel")
    check(arm, "FIXED-LEAK" not in content, "the leaked fixed kernel is not shown")
    check(arm, "retrieval" not in ext[1]["supervision"], "nothing is retrieved after the correct turn")
check("all arms", len(set(seeds.values())) == 1, f"every arm ran the same per-trajectory seed {seeds}")
print(f"record checks: {bad} failed")
sys.exit(1 if bad else 0)
PY

# The arms side by side.
runs=()
for arm in base guidance notes notes_kernel; do [ -d "$res/runs/$arm" ] && runs+=("$res/runs/$arm"); done
if [ ${#runs[@]} -gt 0 ]; then
  "$BIN/ptxbench" metrics "${runs[@]}" --turn-limits 1,2 --out "$res/metrics" > "$res/metrics_stdout.md" 2> "$res/metrics.log" \
    || fail "ptxbench metrics: $(tail -1 "$res/metrics.log")"
  grep -q 'Supervision arms (Table 4 layout)' "$res/metrics_stdout.md" || fail "metrics: no Table 4 view on stdout"
  "$BIN/ptxbench" report "${runs[@]}" --out "$res/report.html" > "$res/report.log" 2>&1 \
    || fail "ptxbench report: $(tail -1 "$res/report.log")"
  grep -q 'Supervision arms (Table 4 view)' "$res/report.html" 2>/dev/null || fail "report: no Supervision arms section"
fi

echo "--- check.txt"; cat "$res/check.txt"
echo "--- Table 4 view"; sed -n '/Supervision arms/,$p' "$res/metrics_stdout.md" 2>/dev/null
# Run directories hold absolute paths of this host; the archive keeps them as evidence of where it ran.
if [ -n "$user_out" ]; then
  mkdir -p "$user_out"
  tar -C "$(dirname "$res")" -czf "$user_out/supervision.tar.gz" "$(basename "$res")" && echo "wrote $user_out/supervision.tar.gz"
fi
if [ ${#failures[@]} -gt 0 ]; then
  echo "supervision_gpu: ${#failures[@]} failure(s)" >&2
  exit 1
fi
echo "supervision_gpu: PASS (4 arms, records checked, Table 4 view written, target $target)"

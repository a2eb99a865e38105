#!/usr/bin/env bash
# GPU evidence for the Triton track (issue 25) on the Hopper GPU at hand (H100 or H200), in at most
# 9 minutes: every Triton example and every Triton exploit through `ptxbench eval` (each risky case
# followed by an honest kernel in the same harness), a replayed Triton agent trajectory through
# `ptxbench run --language triton`, and the Triton examples through `ptxbench serve` and the
# upstream-format client, compared with the direct evaluation.
#
#   bench/triton/triton_gpu.sh [examples] [exploits] [agent] [service]      (default: all four)
#
#   examples  examples/triton: the passing kernels (tl.dot GEMM, mma.sync fallback, attention forward
#             plain and causal) and two failures through the full pipeline (sanitize, Nsight
#             Compute), as the Solution JSONs the service also gets; every other failure quickly
#             (no sanitizer, no ncu), each followed by gemm_tl_dot.py
#   exploits  tests/exploits/triton: every case followed by control_tl_dot_gemm.py; the coverage
#             cases with Nsight Compute
#   agent     examples/agent/triton_gemm_replay.json through `ptxbench run --language triton`
#             (a gate rejection, then the tl.dot GEMM through the agent's default evaluation)
#   service   `ptxbench serve` (2 GPU workers) and tests/service/upstream_client.py, through
#             bench/service/service_gpu_check.py: the full examples' Solutions fresh, then cached; status,
#             target verdict and deciding stage identical to the direct evaluation (it needs the
#             examples' full chunks, which run even when `examples` is not named; a dry run of the
#             plumbing: PTXBENCH_SERVICE_EXTRA_ARGS="--evaluator fake" — the comparison then fails)
#
# The work is cut into chunks (one `ptxbench eval` each: one harness per task, so a risky case and
# the honest kernel after it share it), spread over LANES parallel lanes (default 4; the GPU lease
# serialises timing and profiling, the rest overlaps), longest first. Every chunk runs under
# min(its own limit, time left); a chunk that would start after BUDGET_S (default 450 s) is
# SKIPPED loudly, and its cases then FAIL as "was not evaluated" — rerun the part that lost them
# (each part alone is a shorter run; `bench/triton/triton_gpu.sh exploits` after the others).
# Quick chunks pass --no-sanitize --no-dynamic-check --warmup 1 --iterations 3 --call-timeout 10;
# full ones --timing-cap 0.5 (timing precision does not matter here).
#
# Environment: bench/lib/env.sh (bench_gpu: the target from the GPU's name, RESULTS, run.log, the
# tarball; PTXBENCH_BIN, PTXBENCH_DEVICE, PTXBENCH_GPU_MODEL, PTXBENCH_RESULTS_ROOT). Results:
# bench/results/<target>/triton/<run>/ (<run>: "all", or the parts named, e.g. "exploits"):
# <part>/<chunk>.{json,txt} (verdicts, output), examples/solutions/, cases.tsv (chunk, part, exit,
# seconds), service/ (serve.log, upstream_client.json, compare.json, worker logs),
# agent/agent-replay-triton/, check.txt and summary.json (bench/triton/check_triton.py: one PASS/FAIL
# line per expectation, then the first FAIL in full), summary.txt (the PASS/FAIL lines and "FAILS: N"),
# run.log; $OUT/triton.tar.gz of bench/results/<target>/triton when OUT is set.
# Expected: every line of summary.txt PASS and "FAILS: 0"; the exit status is the number of FAIL lines
# (at most 100).
set -uo pipefail
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=(examples exploits agent service)
for p in "${PARTS[@]}"; do
  case "$p" in examples|exploits|agent|service) ;; *) echo "usage: $0 [examples] [exploits] [agent] [service]" >&2; exit 2 ;; esac
done
selected() { local p; for p in "${PARTS[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
RUN=all
[ ${#PARTS[@]} -lt 4 ] && RUN=$(IFS=-; echo "${PARTS[*]}")

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib/env.sh
source "$HERE/../lib/env.sh"
bench_gpu "triton/$RUN"
RESULTS=$(cd "$RESULTS" && pwd)  # absolute: the service's client resolves paths itself
cd "$ROOT" || exit 2
# env.sh narrows CUDA_VISIBLE_DEVICES to PTXBENCH_DEVICE: the GPU is then device 0 of this process.
DEVICE=${PTXBENCH_DEVICE:-0}
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [ "$CUDA_VISIBLE_DEVICES" = "$DEVICE" ] && DEVICE=0

P="$BIN/ptxbench"
T=$PTXBENCH_TARGET
E=examples/triton
X=tests/exploits/triton
GEMM=gemm_n7168_k5120
LANES=${LANES:-4}
BUDGET_S=${BUDGET_S:-450}
START=$SECONDS
DEADLINE=$((START + BUDGET_S))
# The service checks: where the bench layout keeps them, else their older place.
SERVICE_CHECK=$(ls bench/service/service_gpu_check.py bench/service_*_check.py 2>/dev/null | head -1)
for p in examples exploits agent service; do
  if selected "$p" || { [ "$p" = examples ] && selected service; }; then mkdir -p "$RESULTS/$p"; fi
done

echo "== triton_gpu.sh ${PARTS[*]}: target $T, device $DEVICE, binaries $BIN, $LANES lanes, budget ${BUDGET_S}s"
git -C "$ROOT" log -1 --format='commit %H %s' 2>/dev/null | cut -c1-120
timeout 30 "${PTXBENCH_PYTHON:-python3}" -B src/gpu/runner_py/ptxbench_triton_runner.py --diagnose > "$RESULTS/diagnose.json" 2>&1
head -c 600 "$RESULTS/diagnose.json"; echo

# ---- the Solutions of the full examples (the direct evaluation and the service get the same files)
S="$RESULTS/examples/solutions"
FULL_EXAMPLES="fail_hidden_torch_compute.py gemm_tl_dot.py fail_wrong_result.py gemm_mma_sync_fallback.py attention_fwd.py attention_fwd_causal.py"
if selected examples || selected service; then
  python3 - "$E" "$S" "$T" $FULL_EXAMPLES <<'PY' || { echo "cannot write the Solutions" >&2; exit 2; }
import json, os, sys
folder, out, target, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
tasks = {e["file"]: e["task"] for e in json.load(open(os.path.join(folder, "manifest.json")))["examples"]}
os.makedirs(out, exist_ok=True)
for name in names:
    sol = {"name": name[:-3], "definition": tasks[name], "author": "bench/triton/triton_gpu.sh",
           "spec": {"language": "triton", "target_hardware": [target.upper()], "entry_point": "kernel.py::run",
                    "dependencies": [], "destination_passing_style": True},
           "sources": [{"path": "kernel.py", "content": open(os.path.join(folder, name)).read()}],
           "description": "examples/triton/" + name}
    json.dump(sol, open(os.path.join(out, name + ".json"), "w"), indent=1)
PY
fi

# ---- the chunks: NAME -> part, limit (s), estimate (s, for the lanes), options, files ----------
QUICK="--no-sanitize --no-dynamic-check --warmup 1 --iterations 3 --call-timeout 10"
FULL="--timing-cap 0.5"
declare -A PART LIMIT EST OPTS FILES
chunk() { PART[$1]=$2; LIMIT[$1]=$3; EST[$1]=$4; OPTS[$1]=$5; FILES[$1]=$6; }
C=$X/control_tl_dot_gemm.py
G=$E/gemm_tl_dot.py
chunk ex_full_gemm examples 260 170 "$FULL" \
  "$S/fail_hidden_torch_compute.py.json $S/gemm_tl_dot.py.json $S/fail_wrong_result.py.json $S/gemm_mma_sync_fallback.py.json"
chunk ex_full_attention examples 200 90 "$FULL" "$S/attention_fwd.py.json $S/attention_fwd_causal.py.json"
chunk ex_gate examples 60 10 "$QUICK" "$E/fail_torch_matmul.py $E/fail_getattr_matmul.py"
chunk ex_quick_a examples 200 130 "$QUICK" \
  "$E/fail_exception.py $G $E/fail_triton_compile.py $G $E/fail_device_fault.py $G"
chunk ex_quick_b examples 200 140 "$QUICK" "$E/fail_hang.py $G $E/fail_output_cache.py $G $E/gemm_tma_descriptor.py $G"
chunk x_gate exploits 60 10 "$QUICK" "$X/gate_plain_aten_mm.py $X/gate_import_sys.py $X/gate_dunder_globals.py"
chunk x_vendor exploits 200 130 "$QUICK" \
  "$X/reflect_frame_torch_c.py $C $X/reflect_aten_linear.py $C $X/reflect_gc_runner_torch.py $C"
chunk x_forge_a exploits 200 130 "$QUICK" \
  "$X/forge_capture_hides_cublas.py $C $X/forge_no_compile_hook.py $C $X/forge_cubin_swap.py $C"
chunk x_forge_b exploits 240 170 "$QUICK" \
  "$X/forge_kernel_name.py $C $X/forge_recorder_hints.py $C $X/forge_env_knobs.py $C $X/forge_ptx_options.py $C"
chunk x_switch exploits 240 170 "$QUICK" \
  "$X/switch_python_counter.py $C $X/switch_after_capture.py $C $X/switch_device_counter_input.py $C $X/switch_device_counter_output.py $C"
chunk x_work exploits 260 200 "$QUICK" \
  "$X/work_side_stream.py $C $X/work_python_thread.py $C $X/cache_by_pointer.py $C $X/cache_by_content.py $C $X/alias_return_input_view.py $C"
chunk x_sandbox exploits 240 150 "$QUICK" \
  "$X/sandbox_files.py $C $X/sandbox_socket.py $C $X/sandbox_fork.py $C $X/sandbox_kill_parent.py $C"
# With Nsight Compute (GMMA counted in the plan's kernels, work coverage): the control, then the two cases.
chunk x_instr exploits 240 150 "--no-sanitize --min-coverage 0.5 --warmup 1 --iterations 3 --call-timeout 10" \
  "$C $X/mma_sync_not_gmma.py $C $X/token_gmma_side.py $C"
chunk agent_replay agent 240 90 "" ""

ORDER=()
for name in ex_full_gemm ex_full_attention agent_replay x_forge_b x_switch x_work x_sandbox x_instr ex_quick_b \
            ex_quick_a x_vendor x_forge_a ex_gate x_gate; do
  p=${PART[$name]}
  if selected "$p" || { { [ "$name" = ex_full_gemm ] || [ "$name" = ex_full_attention ]; } && selected service; }; then
    ORDER+=("$name")
  fi
done
# Longest first onto the least loaded lane (the list above is already longest-first within priority).
declare -a LANE LOAD
for ((l = 0; l < LANES; ++l)); do LANE[$l]=""; LOAD[$l]=0; done
for name in "${ORDER[@]}"; do
  best=0
  for ((l = 1; l < LANES; ++l)); do [ "${LOAD[$l]}" -lt "${LOAD[$best]}" ] && best=$l; done
  LANE[$best]="${LANE[$best]} $name"
  LOAD[$best]=$((LOAD[$best] + EST[$name]))
done

printf 'chunk\tpart\texit\tseconds\n' > "$RESULTS/cases.tsv"
run_chunk() {
  local name=$1 part=${PART[$1]} left=$((DEADLINE - SECONDS)) out="$RESULTS/${PART[$1]}/$1"
  if [ "$left" -lt "${MIN_CHUNK_S:-30}" ]; then
    echo "!! $name SKIPPED: ${left}s left of the ${BUDGET_S}s budget (rerun: $0 $part)"
    printf '%s\t%s\tskipped\t0\n' "$name" "$part" >> "$RESULTS/cases.tsv"
    touch "$out.done"
    return
  fi
  local limit=$((LIMIT[$name] < left ? LIMIT[$name] : left)) t0=$SECONDS rc
  echo "== $name (${part}, limit ${limit}s, at $((SECONDS - START))s)"
  if [ "$name" = agent_replay ]; then
    timeout -k 5 "$limit" "$P" run --model replay:examples/agent/triton_gemm_replay.json --language triton \
      --tasks $GEMM --target "$T" --variants base --trajectories 1 --turns 2 --out "$RESULTS/agent/agent-replay-triton" \
      > "$out.txt" 2>&1
  else
    local task=(--task "$GEMM")
    case "${FILES[$name]}" in *.json*) task=() ;; esac  # Solutions name their task
    # shellcheck disable=SC2086  # the options and the files are word lists
    timeout -k 5 "$limit" "$P" eval ${FILES[$name]} "${task[@]}" --target "$T" --device "$DEVICE" ${OPTS[$name]} \
      --out "$out.json" > "$out.txt" 2>&1
  fi
  rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$part" "$rc" "$((SECONDS - t0))" >> "$RESULTS/cases.tsv"
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "!! $name TIMED OUT after $((SECONDS - t0))s (its verdicts are missing)"
  echo "   $name: exit $rc after $((SECONDS - t0))s"
  touch "$out.done"
}

lane() {
  local name
  for name in "$@"; do run_chunk "$name"; done
}

# ---- the service: serve, the upstream-format client now, the comparison once the direct Solutions are done
service_job() {
  local R="$RESULTS/service" work port=${PTXBENCH_SERVICE_PORT:-18777} server rc ready=1
  local URL="http://127.0.0.1:$port"
  work=$(mktemp -d /tmp/ptxbench-triton-service-XXXXXX)
  echo "== service: ptxbench serve on $URL (2 GPU workers on device $DEVICE), at $((SECONDS - START))s"
  "$P" serve --listen "127.0.0.1:$port" --service-dir "$work/service" --cpu-workers 2 --devices "$DEVICE" \
    --gpu-workers-per-device 2 --target "$T" ${PTXBENCH_SERVICE_EXTRA_ARGS:-} > "$R/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 300); do  # up to 60 s: both GPU workers probed the GPU and registered healthy
    if python3 "$SERVICE_CHECK" ready --url "$URL" --gpu 2; then ready=0; break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  echo "   service ready: $([ $ready = 0 ] && echo yes || echo NO) at $((SECONDS - START))s"
  local left=$((DEADLINE - SECONDS - 40))
  [ "$left" -lt 30 ] && left=30
  timeout -k 5 "$left" python3 "$SERVICE_CHECK" upstream --url "$URL" --out "$R" --target "$PTXBENCH_TARGET" --max-wait "$((left - 10))" \
    "$S"/*.json > "$R/upstream_client.txt" 2>&1
  echo "   upstream-format client: exit $? at $((SECONDS - START))s"
  while { [ ! -e "$RESULTS/examples/ex_full_gemm.done" ] || [ ! -e "$RESULTS/examples/ex_full_attention.done" ]; } &&
        [ "$SECONDS" -lt "$((DEADLINE + 60))" ]; do sleep 2; done
  python3 "$ROOT/bench/lib/merge_verdicts.py" "$R/direct.json" "$RESULTS/examples/ex_full_gemm.json" "$RESULTS/examples/ex_full_attention.json"
  timeout 20 python3 "$SERVICE_CHECK" compare --out "$R" --direct "$R/direct.json" upstream="$R/upstream_client.json" \
    > "$R/compare.txt" 2>&1
  echo "   service against direct: exit $? at $((SECONDS - START))s"
  python3 "$SERVICE_CHECK" fetch --url "$URL" /health "$R/health.json"
  bench_stop "$server"
  mkdir -p "$R/worker_logs" && cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  "$P" jobs --queue "$work/service/" --json > "$R/jobs.json" 2>&1
  rm -rf "$work"
}

PIDS=()
for ((l = 0; l < LANES; ++l)); do
  [ -z "${LANE[$l]// /}" ] && continue
  echo "lane $l:${LANE[$l]} (about ${LOAD[$l]}s uncontended)"
  # shellcheck disable=SC2086
  lane ${LANE[$l]} &
  PIDS+=($!)
done
if selected service; then service_job & PIDS+=($!); fi
for pid in "${PIDS[@]}"; do wait "$pid"; done
echo "== all lanes done at $((SECONDS - START))s"
cat "$RESULTS/cases.tsv"

# ---- the check: one PASS/FAIL line per expectation ----------------------------------------------
names_of() {  # the case names of the scheduled chunks of one part
  local part=$1 name f out=""
  for name in "${ORDER[@]}"; do
    [ "${PART[$name]}" = "$part" ] || continue
    for f in ${FILES[$name]}; do f=$(basename "$f"); out="$out,${f%.json}"; done
  done
  echo "${out#,}"
}
EVALS=()
for name in "${ORDER[@]}"; do [ "$name" = agent_replay ] || EVALS+=("$RESULTS/${PART[$name]}/$name.json"); done
EXPECT_EXAMPLES=$(names_of examples)
EXPECT_EXPLOITS=$(names_of exploits)
CHECK=(--examples "$E/manifest.json" --exploits "$X/manifest.json" --expect-examples "${EXPECT_EXAMPLES:-none}"
       --expect-exploits "${EXPECT_EXPLOITS:-none}" --out "$RESULTS/summary.json")
selected agent && CHECK+=(--trajectory "$RESULTS/agent/agent-replay-triton/trajectories/${GEMM}__${T}__base__t0.json")
selected service && CHECK+=(--service "$RESULTS/service")
python3 bench/triton/check_triton.py "${CHECK[@]}" ${EVALS[@]+"${EVALS[@]}"} > "$RESULTS/check.txt" 2>&1
# shellcheck disable=SC2034  # bench_done (bench/lib/env.sh) reads it
BENCH_FAILS=$?
cat "$RESULTS/check.txt"
grep -E '^(PASS|FAIL) ' "$RESULTS/check.txt" > "$RESULTS/summary.txt"
echo "triton_gpu.sh ${PARTS[*]}: after $((SECONDS - START))s; results in $RESULTS"
bench_done

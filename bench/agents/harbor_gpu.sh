#!/usr/bin/env bash
# Issue 29 on one Hopper GPU, in at most 4 minutes (docs/coding-agents.md): an exported Harbor task's
# verifier (tests/test.sh) against a real `ptxbench serve` on this host's GPU, as Harbor would run it
# after an agent finished, with the agent's final /workspace/kernel.cu being
#   pass:    examples/gemm/wgmma_tma_pipelined.cu   (correct, wgmma and TMA executed: reward 1)
#   wrong:   examples/gemm/wrong_result.cu          (wrong results: reward 0)
#   missing: no kernel at all                       (reward 0, nothing evaluated)
# The GPU is recognised by the suite (the target in suite/targets.json whose gpu_name nvidia-smi
# reports: h100 or h200), the task exported for that target, and the results written to
# bench/results/<target>/agents/ (summary.txt, per case: reward.txt, ptxbench.json, verdict.json,
# speedup.txt, eval.log, test.sh's output), plus $OUT/agents.tar.gz when OUT is set.
#   bench/stage_h200_binaries.sh                                 # here, before carrying the tree
#   PTXBENCH_BIN=$PWD/.carry/bin bench/agents/harbor_gpu.sh      # on the GPU host, from the repository root
# The last line of summary.txt lists each case's result; the exit code is 0 only when all held.
set -uo pipefail
cd "$(dirname "$0")/../.."
RETURN_DIR=${OUT:-}
export PTXBENCH_BIN=${PTXBENCH_BIN:-$PWD/build/bin}
source bench/env.sh
START=$SECONDS
TASK=gemm_n7168_k5120

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
target=$(python3 - "$gpu" <<'PY'
import json, sys
name = sys.argv[1].strip()
targets = json.load(open("suite/targets.json"))["targets"]
found = [t for t, info in targets.items() if info.get("gpu_name") == name and info.get("verification") == "runtime"]
print(found[0] if found else "")
PY
)
if [ -z "$target" ]; then
  echo "harbor_gpu.sh: no runtime target in suite/targets.json has the gpu_name '${gpu:-<no GPU found>}'" >&2
  exit 3
fi
R=$PWD/bench/results/$target/agents
rm -rf "$R" && mkdir -p "$R"
work=$(mktemp -d /tmp/ptxbench-agents-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18766}
URL="http://127.0.0.1:$port"
declare -A RESULT
server=

finish() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  mkdir -p "$R/worker_logs"
  cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  rm -rf "$work"
  if [ -n "$RETURN_DIR" ]; then mkdir -p "$RETURN_DIR" && tar czf "$RETURN_DIR/agents.tar.gz" -C "$R/.." agents; fi
}
trap finish EXIT

# Every step's limit is its own or what is left of 220 s, whichever is less.
budget() {
  local left=$((220 - (SECONDS - START)))
  [ "$left" -lt 1 ] && left=1
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}

case_result() {  # case_result NAME OK(0/1) DETAIL
  RESULT[$1]=$([ "$2" = 0 ] && echo ok || echo FAILED)
  echo "== $1: ${RESULT[$1]} ($3) at $((SECONDS - START)) s" | tee -a "$R/summary.txt"
}

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$BIN/ptxbench" --version 2>/dev/null | head -1)"
  echo "# gpu: $gpu -> target $target"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/# nvidia-smi: /'
} | tee "$R/summary.txt"

echo "== export: $TASK for $target"
"$BIN/ptxbench" tasks export --format harbor --out "$work/tasks" --tasks "$TASK" --target "$target" > "$R/export.txt" 2>&1
export_rc=$?
cp "$work/tasks/$TASK/task.toml" "$work/tasks/$TASK/tests/test.sh" "$R/" 2>/dev/null
case_result export "$export_rc" "exit $export_rc"

echo "== serve: 1 CPU worker, 1 GPU worker on GPU 0"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" --service-dir "$work/service" --devices 0 \
  --call-timeout 10 --sanitize-timeout 15 > "$R/serve.log" 2>&1 &
server=$!
up=1
for _ in $(seq 150); do  # up to 30 s for the port; the job waits in the queue until the GPU worker is up
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=0; break; fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
case_result serve "$up" "$URL"

# verify NAME KERNEL(or "") EXPECTED_REWARD: tests/test.sh as Harbor runs it, outside a container.
verify() {
  local name=$1 kernel=$2 want=$3 ws=$work/$1/workspace out=$R/$1
  mkdir -p "$ws" "$out"
  [ -n "$kernel" ] && cp "$kernel" "$ws/kernel.cu"
  PTXBENCH_WORKSPACE=$ws PTXBENCH_VERIFIER_DIR=$out PTXBENCH_EXECUTABLE=$BIN/ptxbench PTXBENCH_SERVICE_URL=$URL \
    PTXBENCH_CACHE=$work/$1/cache timeout "$(budget 150)" bash "$work/tasks/$TASK/tests/test.sh" > "$out/test_sh.txt" 2>&1
  local rc=$? got
  got=$(cat "$out/reward.txt" 2>/dev/null | tr -d '\n')
  local detail="test.sh exit $rc, reward ${got:-none}, want $want; $(tail -1 "$out/test_sh.txt")"
  [ "$rc" = 0 ] && [ "$got" = "$want" ]
  case_result "$name" $? "$detail"
}

verify pass examples/gemm/wgmma_tma_pipelined.cu 1
verify wrong examples/gemm/wrong_result.cu 0
verify missing "" 0

all=0
line="cases:"
for c in export serve pass wrong missing; do
  line="$line $c=${RESULT[$c]:-not run}"
  [ "${RESULT[$c]:-}" = ok ] || all=1
done
echo "$line; $((SECONDS - START)) s in all" | tee -a "$R/summary.txt"
exit $all

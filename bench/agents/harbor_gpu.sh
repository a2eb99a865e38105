#!/usr/bin/env bash
# Issue 29 (PTXBench as a tool for coding agents) on a Hopper GPU, in at most about 4 minutes: an
# exported Harbor task's verifier and the MCP server, both against a real `ptxbench serve` on GPU 0.
#  1. export: `ptxbench tasks export --format harbor` of the GEMM task for this GPU's target;
#  2. serve: `ptxbench serve --target <target>` (SQLite, 1 CPU + 1 GPU local worker) on a local port;
#  3. the exported tests/test.sh as Harbor runs it after an agent (bash, outside a container:
#     PTXBENCH_WORKSPACE, PTXBENCH_VERIFIER_DIR and PTXBENCH_EXECUTABLE stand for /workspace,
#     /logs/verifier and the image's ptxbench), with the agent's final /workspace/kernel.cu being
#       pass     examples/gemm/wgmma_tma_pipelined.cu  reward 1, outcome passed, target-correct, a speedup
#       wrong    examples/gemm/wrong_result.cu         reward 0, not passed
#       missing  no kernel                             reward 0, kernel_state missing, nothing evaluated
#  4. mcp: `ptxbench mcp --remote URL` driven by a scripted client (initialize, tools/list, evaluate
#     the pipelined GEMM with a progress token): a passed, target-correct verdict as structuredContent.
# Every expectation is one PASS/FAIL line in summary.txt; the exit status is the number of FAILs.
# Results in bench/results/<gpu>/harbor_gpu/ ($OUT/harbor_gpu.tar.gz): summary.txt, run.log,
# export.txt, task.toml, test.sh, serve.log, <case>/ (reward.txt, ptxbench.json, verdict.json,
# speedup.txt, eval.log, kernel.cu, test_sh.txt), mcp/ (the session's messages, stderr).
# Usage on the GPU host, from the repository root, with binaries from bench/stage_binaries.sh:
#   PTXBENCH_BIN=$PWD/.carry/bin bench/agents/harbor_gpu.sh       (or with build/bin after a build)
# Dry run of the plumbing without a GPU (the jobs then wait for a GPU worker: the evaluated cases FAIL
# after PTXBENCH_CASE_TIMEOUT seconds each, default 150; the export, serve and missing cases PASS):
#   PTXBENCH_GPU_MODEL="NVIDIA H100 80GB HBM3" PTXBENCH_RESULTS_ROOT=/tmp/r PTXBENCH_CASE_TIMEOUT=5 \
#     bench/agents/harbor_gpu.sh
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu harbor_gpu
cd "$ROOT" || exit 2
R=$RESULTS
TASK=gemm_n7168_k5120
work=$(mktemp -d /tmp/ptxbench-harbor-XXXXXX)
port=${PTXBENCH_SERVICE_PORT:-18767}
URL="http://127.0.0.1:$port"
server=
case_timeout=${PTXBENCH_CASE_TIMEOUT:-150}  # seconds per test.sh run and for the MCP session
bench_cleanup() {
  bench_stop "$server"
  mkdir -p "$R/worker_logs" && cp "$work"/service/logs/*.log "$R/worker_logs/" 2>/dev/null
  rm -rf "$work"
}

# json_field FILE EXPR: a Python expression over the JSON in FILE as `j`, printed ("" when unreadable).
json_field() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# 1. export
echo "== 1. export $TASK for $PTXBENCH_TARGET"
timeout 60 "$BIN/ptxbench" tasks export --format harbor --out "$work/tasks" --tasks "$TASK" --target "$PTXBENCH_TARGET" \
  > "$R/export.txt" 2>&1
rc=$?
cp "$work/tasks/$TASK/task.toml" "$work/tasks/$TASK/tests/test.sh" "$R/" 2>/dev/null
bench_check "export exit 0 (got $rc)" "$([ "$rc" = 0 ]; echo $?)"
bench_check "export wrote an executable tests/test.sh" "$([ -x "$work/tasks/$TASK/tests/test.sh" ]; echo $?)"

# 2. serve
echo "== 2. serve --target $PTXBENCH_TARGET on $URL (1 CPU worker, 1 GPU worker on GPU 0)"
"$BIN/ptxbench" serve --listen "127.0.0.1:$port" --target "$PTXBENCH_TARGET" --service-dir "$work/service" \
  --cpu-workers 1 --devices 0 --call-timeout 10 --sanitize-timeout 15 > "$R/serve.log" 2>&1 &
server=$!
up=1
for _ in $(seq 150); do  # up to 30 s for the port; a job waits in the queue until the GPU worker is up
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=0; break; fi
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
bench_check "serve listens on $URL" "$up"

# 3. tests/test.sh: verify NAME KERNEL("" for none) WANT_REWARD
verify() {
  local name=$1 kernel=$2 want=$3 ws=$work/$1/workspace out=$R/$1 rc got
  mkdir -p "$ws" "$out"
  [ -n "$kernel" ] && cp "$kernel" "$ws/kernel.cu"
  echo "== 3. test.sh, $name: ${kernel:-no kernel}"
  PTXBENCH_WORKSPACE=$ws PTXBENCH_VERIFIER_DIR=$out PTXBENCH_EXECUTABLE=$BIN/ptxbench PTXBENCH_SERVICE_URL=$URL \
    PTXBENCH_CACHE=$work/$name/cache timeout "$case_timeout" bash "$work/tasks/$TASK/tests/test.sh" > "$out/test_sh.txt" 2>&1
  rc=$?
  got=$(cat "$out/reward.txt" 2>/dev/null | tr -d '\n')
  echo "   test.sh exit $rc, reward ${got:-none}: $(tail -1 "$out/test_sh.txt")"
  bench_check "$name: test.sh exit 0 (got $rc)" "$([ "$rc" = 0 ]; echo $?)"
  bench_check "$name: reward.txt is $want (got ${got:-none})" "$([ "$got" = "$want" ]; echo $?)"
}
verify pass examples/gemm/wgmma_tma_pipelined.cu 1
bench_check "pass: outcome passed, target-correct" \
  "$([ "$(json_field "$R/pass/ptxbench.json" 'j["outcome"], j["target_correct"]')" = "('passed', True)" ]; echo $?)"
bench_check "pass: a speedup in speedup.txt ($(cat "$R/pass/speedup.txt" 2>/dev/null))" \
  "$(grep -Eq '^[0-9.e+-]+$' "$R/pass/speedup.txt" 2>/dev/null; echo $?)"
bench_check "pass: verdict.json beside the reward" "$([ "$(json_field "$R/pass/verdict.json" 'j["format"]')" = ptxbench.verdict/1 ]; echo $?)"
verify wrong examples/gemm/wrong_result.cu 0
bench_check "wrong: evaluated and not passed ($(json_field "$R/wrong/ptxbench.json" 'j["outcome"]'))" \
  "$(o=$(json_field "$R/wrong/ptxbench.json" 'j["outcome"]'); [ -n "$o" ] && [ "$o" != passed ] && [ "$o" != no_code ]; echo $?)"
verify missing "" 0
bench_check "missing: kernel_state missing, nothing evaluated" \
  "$([ "$(json_field "$R/missing/ptxbench.json" 'j["kernel_state"], j["exit_code"]')" = "('missing', None)" ]; echo $?)"

# 4. mcp --remote: a scripted client session
echo "== 4. mcp --remote $URL: initialize, tools/list, evaluate with a progress token"
mkdir -p "$R/mcp"
timeout "$case_timeout" python3 - "$BIN/ptxbench" "$URL" "$TASK" "$PTXBENCH_TARGET" "$ROOT/examples/gemm/wgmma_tma_pipelined.cu" \
  "$R/mcp" <<'PY' > "$R/mcp/client.txt" 2>&1
import json, subprocess, sys
exe, url, task, target, kernel, out = sys.argv[1:7]
p = subprocess.Popen([exe, "mcp", "--remote", url, "--progress-interval-ms", "1000"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=open(out + "/stderr.txt", "w"), text=True)
log = open(out + "/messages.jsonl", "w")
def send(m):
    log.write("> " + json.dumps(m) + "\n"); p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
def answer(i):
    progress = 0
    for line in p.stdout:
        log.write("< " + line)
        m = json.loads(line)
        if m.get("method") == "notifications/progress": progress += 1
        if m.get("id") == i: return m, progress
    return None, progress
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
      "clientInfo": {"name": "harbor_gpu.sh", "version": "1"}}})
init, _ = answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools, _ = answer(2)
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "evaluate", "_meta": {"progressToken": "e"},
      "arguments": {"task": task, "target": target, "source": open(kernel).read()}}})
ev, progress = answer(3)
p.stdin.close(); p.wait(timeout=30)
sc = ((ev or {}).get("result") or {}).get("structuredContent") or {}
print(json.dumps({"protocol": ((init or {}).get("result") or {}).get("protocolVersion"),
                  "tools": sorted(t["name"] for t in ((tools or {}).get("result") or {}).get("tools", [])),
                  "isError": ((ev or {}).get("result") or {}).get("isError"), "outcome": sc.get("outcome"),
                  "target_correct": sc.get("target_correct"), "speedup": (sc.get("timing") or {}).get("speedup"),
                  "progress_notifications": progress, "exit": p.returncode}))
PY
rc=$?
echo "   $(tail -1 "$R/mcp/client.txt")"
mcp() { python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(eval(sys.argv[2]))' \
  "$R/mcp/client.txt" "$1" 2>/dev/null; }
bench_check "mcp: session ran (exit $rc)" "$([ "$rc" = 0 ]; echo $?)"
bench_check "mcp: four tools listed" "$([ "$(mcp 'j["tools"]')" = "['check', 'evaluate', 'list_tasks', 'show_task']" ]; echo $?)"
bench_check "mcp: evaluate passed, target-correct ($(mcp 'j["outcome"], j["target_correct"], j["speedup"]'))" \
  "$([ "$(mcp 'j["isError"], j["outcome"], j["target_correct"]')" = "(False, 'passed', True)" ]; echo $?)"
bench_check "mcp: progress notifications while it ran ($(mcp 'j["progress_notifications"]'))" \
  "$([ "$(mcp 'j["progress_notifications"] > 0')" = True ]; echo $?)"
bench_check "mcp: exits 0 when stdin closes" "$([ "$(mcp 'j["exit"]')" = 0 ]; echo $?)"
bench_done

#!/usr/bin/env bash
# Harbor verifier of the PTXBench task gemm_n7168_k5120 on h100 (prompt variant base), written by
# `ptxbench tasks export --format harbor` (ptxbench 0.1.0); docs/coding-agents.md describes it.
#
# Evaluates the agent's final kernel, /workspace/kernel.cu, through the PTXBench service at
# $PTXBENCH_SERVICE_URL (`ptxbench eval --remote URL --json`: every stage, the GPU stages on the
# service's GPUs) and writes into /logs/verifier:
#   reward.txt     1 when the kernel is correct and target-correct (ptxbench eval's exit code 0), else 0
#   verdict.json   the verdict, when the kernel was evaluated
#   speedup.txt    the speedup against the baseline, or "none" when the kernel is not correct
#   ptxbench.json  a summary: task, target, arch, variant, kernel state, exit code, outcome, reward, speedup
#   eval.log       what ptxbench printed on stderr
#   kernel.cu      a copy of the evaluated kernel
# A kernel that is missing, empty, not text or larger than 16 MiB scores 0 without an evaluation.
# An infrastructure failure (no service URL, the service unreachable, no verdict) writes no
# reward.txt and exits 3: Harbor then reports the trial as failed instead of scoring 0 for
# something the agent did not do. PTXBENCH_WORKSPACE, PTXBENCH_VERIFIER_DIR and PTXBENCH_EXECUTABLE
# replace /workspace, /logs/verifier and `ptxbench` (to run this script outside a container).
set -u
if ! command -v python3 >/dev/null 2>&1; then
  echo "test.sh: python3 is needed to read the verdict (the PTXBench agent image has it)" >&2
  exit 3
fi
exec python3 - "gemm_n7168_k5120" "h100" "sm_90a" "base" <<'PY'
import json
import os
import subprocess
import sys

task, target, arch, variant = sys.argv[1:5]
workspace = os.environ.get("PTXBENCH_WORKSPACE") or "/workspace"
out = os.environ.get("PTXBENCH_VERIFIER_DIR") or "/logs/verifier"
ptxbench = os.environ.get("PTXBENCH_EXECUTABLE") or "ptxbench"
url = os.environ.get("PTXBENCH_SERVICE_URL", "")
kernel = os.path.join(workspace, "kernel.cu")
max_kernel_bytes = 16 << 20  # the most `ptxbench eval` reads of a kernel file

os.makedirs(out, exist_ok=True)
for name in ("reward.txt", "verdict.json", "speedup.txt", "ptxbench.json", "eval.log", "kernel.cu"):
    try:
        os.remove(os.path.join(out, name))
    except FileNotFoundError:
        pass

summary = {"format": "ptxbench.harbor-verifier/1", "task": task, "target": target, "arch": arch,
           "variant": variant,
           "kernel": kernel, "kernel_state": "present", "exit_code": None, "outcome": None,
           "target_correct": False, "speedup": None, "reward": None, "message": ""}


def write(name, text):
    tmp = os.path.join(out, "." + name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out, name))


def finish(reward, message):
    summary["reward"] = reward
    summary["message"] = message
    write("ptxbench.json", json.dumps(summary, indent=2) + "\n")
    speedup = summary["speedup"]
    write("speedup.txt", ("%.6g" % speedup if speedup is not None else "none") + "\n")
    print("ptxbench verifier: " + message)
    if reward is None:
        sys.exit(3)
    write("reward.txt", "%d\n" % reward)  # last: Harbor reads it
    sys.exit(0)


def no_kernel(state, message):
    summary["kernel_state"] = state
    summary["outcome"] = "no_code"
    finish(0, message + "; reward 0")


if not os.path.isfile(kernel):
    no_kernel("missing", kernel + " does not exist")
with open(kernel, "rb") as f:
    data = f.read(max_kernel_bytes + 1)
if not data:
    no_kernel("empty", kernel + " is empty")
if len(data) > max_kernel_bytes:
    no_kernel("too_large", kernel + " is larger than 16 MiB")
try:
    data.decode("utf-8")
    text = b"\0" not in data
except UnicodeDecodeError:
    text = False
if not text:
    no_kernel("not_text", kernel + " is not text (a NUL byte or invalid UTF-8)")
write("kernel.cu", data.decode("utf-8"))
if not url:
    finish(None, "PTXBENCH_SERVICE_URL is not set: no service to evaluate the kernel")

command = [ptxbench, "eval", kernel, "--task", task, "--target", target, "--remote", url, "--json"]
try:
    run = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
except OSError as e:
    finish(None, "could not start %s: %s" % (ptxbench, e))
errors = run.stderr.decode("utf-8", "replace")
write("eval.log", errors)
summary["exit_code"] = run.returncode
try:
    verdict = json.loads(run.stdout)
except ValueError:
    verdict = None
if not isinstance(verdict, dict) or verdict.get("format") != "ptxbench.verdict/1":
    last = (errors.strip().splitlines() or ["nothing on stderr"])[-1]
    finish(None, "no verdict (ptxbench exited with %d): %s" % (run.returncode, last))
write("verdict.json", run.stdout.decode("utf-8", "replace"))
summary["outcome"] = verdict.get("outcome")
summary["target_correct"] = verdict.get("target_correct") is True
timing = verdict.get("timing")
if summary["outcome"] == "passed" and isinstance(timing, dict) and isinstance(timing.get("speedup"), (int, float)):
    summary["speedup"] = timing["speedup"]
if run.returncode not in (0, 1, 4) or summary["outcome"] == "infra_error":
    finish(None, "the evaluation failed (exit %d): %s" % (run.returncode, verdict.get("message", "")))
reward = 1 if run.returncode == 0 and summary["outcome"] == "passed" and summary["target_correct"] else 0
finish(reward, "%s, %s: reward %d" % (summary["outcome"],
                                      "target-correct" if summary["target_correct"] else "not target-correct", reward))
PY

#!/usr/bin/env bash
# Validates the candidate sandbox (docs/sandbox.md) on a GPU host: a sandboxed CUDA process must
# still do everything the runner does (context, CUPTI, CUDA IPC of a buffer owned by another
# process, dlopen of a candidate-like shared object, a kernel on the shared buffer, pinned copies)
# directly, under compute-sanitizer and under Nsight Compute, while writes outside scratch stay
# refused and a raw execve ends the process with "sandbox: attempted execve".
#
# One line per case: "CASE <name>: works" or "CASE <name>: FAILED at <step>: <what>", with the
# steps, the sandbox report and, for audit cases, the kernel's log of every system call the filter
# would have refused (audit type=1326, syscall=N) and every Landlock refusal (type=1423).
#
#   bench/eval/sandbox_probe.sh    # bench/results/<gpu>/sandbox_probe/sandbox_probe.txt ($OUT/sandbox_probe.tar.gz)
#
# Needs: build/bin/ptxbench-sandbox-probe and build/bin/libptxbench_sandbox_probe_candidate.so (or
# PTXBENCH_BIN=...; ptxbench_sandbox_tests beside them is run too), root for dmesg. Takes about a minute. Expected on a working host: every CASE
# "works"; the audit cases list no syscall= line (nothing the driver or the tools need is refused).
# If an enforce case fails and its audit case lists calls, those calls are what the policy must
# allow for that mode (syscall numbers: `ausyscall N` or /usr/include/x86_64-linux-gnu/asm/unistd_64.h).
set -uo pipefail
source "$(dirname "$0")/../lib/env.sh"
bench_gpu sandbox_probe
PROBE="$BIN/ptxbench-sandbox-probe"
CAND="$BIN/libptxbench_sandbox_probe_candidate.so"
CS=$(command -v compute-sanitizer || echo "$CUDA_HOME/bin/compute-sanitizer")
NCU=$(command -v ncu || echo "$CUDA_HOME/bin/ncu")
RESULT="$RESULTS/sandbox_probe.txt"
PROFILE_DIR=$(mktemp -d /tmp/ptxbench-probe-ncu-XXXXXX)

kernel_log_lines() { dmesg 2>/dev/null | wc -l; }
# Prints the kernel log lines since line $1 that come from seccomp logging or Landlock.
kernel_log_since() {
  dmesg 2>/dev/null | tail -n +"$(($1 + 1))" | grep -E 'type=1326|type=142[0-9]|landlock' |
    sed -E 's/.*(syscall=[0-9]+).*/  kernel: seccomp would refuse \1/; s/.*(type=142[0-9].*)/  kernel: landlock \1/' |
    sort | uniq -c
}

CASES=0
run_case() {
  local name=$1; shift
  CASES=$((CASES + 1))
  local mark; mark=$(kernel_log_lines)
  echo "== $name"
  timeout 600 "$PROBE" --case "$name" --candidate "$CAND" "$@"
  echo "  probe exit: $?"
  kernel_log_since "$mark"
}

{
  echo "== host"; date -u; uname -r; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "landlock ABI: $(python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))' 2>/dev/null)"
  echo "lsm: $(cat /sys/kernel/security/lsm 2>/dev/null || echo unreadable)"
  echo "seccomp actions logged: $(cat /proc/sys/kernel/seccomp/actions_logged 2>/dev/null)"
  "$CS" --version | tail -1; "$NCU" --version | tail -1
  # The CPU tests of the sandbox on this host's kernel (Landlock ABI, namespaces), when staged.
  if [ -x "$BIN/ptxbench_sandbox_tests" ]; then
    echo "== ptxbench_sandbox_tests"
    timeout 300 "$BIN/ptxbench_sandbox_tests" --gtest_brief=1 2>&1 | tail -n 30
    echo "  sandbox tests exit: ${PIPESTATUS[0]}"
  fi
  SAN="$CS --tool memcheck --padding 1024 --print-limit 20 --target-processes all"
  PROF="$NCU --metrics sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode --clock-control none --target-processes all -f -o $PROFILE_DIR/profile"

  # Directly, as the timing/correctness runner.
  run_case plain-enforce --mode enforce --tool none --final-violation
  run_case plain-audit --mode audit --tool none
  # Bisection aids: which layer breaks the plain case, if it breaks.
  run_case plain-no-landlock --mode enforce --tool none --disable landlock
  run_case plain-no-seccomp --mode enforce --tool none --disable seccomp
  # Under compute-sanitizer (the sanitize stage's command line).
  run_case sanitizer-enforce --mode enforce --tool compute-sanitizer --final-violation --wrapper "$SAN"
  run_case sanitizer-audit --mode audit --tool compute-sanitizer --wrapper "$SAN"
  # Under Nsight Compute: the brief's minimal metric, then the dynamic_check stage's command line.
  run_case ncu-inst-enforce --mode enforce --tool nsight-compute --final-violation \
    --wrapper "$NCU --metrics inst_executed --target-processes all"
  run_case ncu-enforce --mode enforce --tool nsight-compute --final-violation --wrapper "$PROF"
  run_case ncu-audit --mode audit --tool nsight-compute --wrapper "$PROF"
  ls -la "$PROFILE_DIR"
  echo "== summary"
} > "$RESULT.tmp" 2>&1
summary=$(grep -E '^CASE ' "$RESULT.tmp")
echo "$summary" >> "$RESULT.tmp"
mv "$RESULT.tmp" "$RESULT"
rm -rf "$PROFILE_DIR"
cat "$RESULT"
# Exit status: the number of cases that did not say "works" (a probe that crashed says nothing).
works=$(grep -c '^CASE .*: works$' <<< "$summary")
exit "$((CASES - works))"

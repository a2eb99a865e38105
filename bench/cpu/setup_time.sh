#!/usr/bin/env bash
# A newcomer's set-up, timed: a fresh clone, `scripts/setup.sh`, then `scripts/test.sh`, each on the
# wall clock — exactly what a new machine does, so no ccache and no compiler launcher (PATH loses
# ccache's masquerade folder, CCACHE_DISABLE=1). The goals (issue 26): setup.sh ≤ 12 min and
# test.sh ≤ 5 min on a fresh 2-core Debian 12 machine. Wall times mean something only on an idle
# machine: the script records the load average before and after and says so when it was not idle.
# (On a shared machine measure CPU seconds instead: bench/cpu/build_cpu.sh.)
#   bench/cpu/setup_time.sh [COMMIT]            # default HEAD; the clone is made from this checkout
#   PTXBENCH_SETUP_REPO=<url> bench/cpu/setup_time.sh [COMMIT]   # clone from elsewhere (includes the clone time)
# Output: bench/results/cpu/setup_time.txt and setup_time.json (nproc, versions, commit, times, load).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
commit=$(git rev-parse "${1:-HEAD}")
source_repo=${PTXBENCH_SETUP_REPO:-$repo}
out=$repo/bench/results/cpu
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxbench-setup-time.XXXXXX")
trap 'rm -rf "$work"' EXIT

export CCACHE_DISABLE=1
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER PTXBENCH_CMAKE_ARGS
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v ccache | paste -sd:)
export PATH

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
timed() {  # timed NAME CMD...: wall, user and sys seconds of CMD into $work/NAME.time, its output into NAME.log
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$work/$name.time" "$@" >"$work/$name.log" 2>&1
}
rc_clone=0; rc_setup=0; rc_test=0
timed clone git clone -q --no-checkout "$source_repo" "$work/src" || rc_clone=$?
git -C "$work/src" checkout -q "$commit"
cd "$work/src"
timed setup bash scripts/setup.sh || rc_setup=$?
if [ "$rc_setup" -eq 0 ]; then timed test bash scripts/test.sh || rc_test=$?; fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cd "$repo"

field() { [ -f "$work/$1.time" ] && awk -v i="$2" '{print $i}' "$work/$1.time" || echo null; }
minutes() { [ "$1" = null ] && echo "n/a" || awk -v s="$1" 'BEGIN {printf "%d min %02d s", s / 60, s % 60}'; }
setup_wall=$(field setup 1)
test_wall=$(field test 1)
summary=$(grep -E '^test.sh:|tests passed' "$work/test.log" 2>/dev/null | tr '\n' ' ' || true)
gxx=$(c++ --version | head -1)
cmake_v=$(cmake --version | head -1)
nvcc_v=$(command -v nvcc >/dev/null && nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p' || echo none)
os=$(. /etc/os-release && echo "$PRETTY_NAME")
idle=yes
awk -v l="${load_before%% *}" 'BEGIN {exit !(l > 0.5)}' && idle=no
{
  echo "# bench/cpu/setup_time.sh: fresh clone of $commit ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# $os, $(nproc) cores; $gxx; $cmake_v; nvcc $nvcc_v; no ccache"
  echo "# load average before: $load_before, after: $load_after$([ $idle = no ] && echo " — NOT IDLE: these wall times are not a newcomer's")"
  echo "clone:           $(minutes "$(field clone 1)") (exit $rc_clone)"
  echo "scripts/setup.sh: $(minutes "$setup_wall") wall, $(field setup 2) s user + $(field setup 3) s sys (exit $rc_setup; goal ≤ 12 min)"
  echo "scripts/test.sh:  $(minutes "$test_wall") wall, $(field test 2) s user + $(field test 3) s sys (exit $rc_test; goal ≤ 5 min)"
  echo "$summary"
} | tee "$out/setup_time.txt"
cat >"$out/setup_time.json" <<EOF
{"commit": "$commit", "nproc": $(nproc), "os": "$os", "compiler": "$gxx", "cmake": "$cmake_v", "nvcc": "$nvcc_v",
 "ccache": false, "load_before": "$load_before", "load_after": "$load_after", "idle": "$idle",
 "clone_wall_s": $(field clone 1), "setup_wall_s": $setup_wall, "setup_user_s": $(field setup 2), "setup_sys_s": $(field setup 3),
 "setup_exit": $rc_setup, "test_wall_s": $test_wall, "test_user_s": $(field test 2), "test_sys_s": $(field test 3),
 "test_exit": $rc_test, "goal_setup_s": 720, "goal_test_s": 300}
EOF
[ "$rc_setup" -eq 0 ] && [ "$rc_test" -eq 0 ]

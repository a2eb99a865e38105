#!/usr/bin/env bash
# What a fresh build and the test suite cost in CPU seconds, step by step: a fresh clone of a commit,
# configured as scripts/setup.sh configures it plus bench/cpu/cpu_time_launcher.sh on every compile
# and link, built with -j$(nproc), then scripts/test.sh — all without ccache. CPU seconds, unlike wall
# time, do not depend on what else the machine runs, so this works on the shared development machine;
# bench/cpu/cpu_report.py sums them per area and target and estimates the wall time on an idle 2-core
# machine. The wall time itself is bench/cpu/setup_time.sh's, on an idle machine.
#   bench/cpu/build_cpu.sh [COMMIT] [NAME]      # default HEAD; NAME defaults to build_cpu
# Output: bench/results/cpu/NAME.txt (the report), NAME.json, NAME.steps.log (every step's seconds)
# Environment: PTXBENCH_CPU_CMAKE_ARGS adds configure options (e.g. -DPTXBENCH_UNITY=OFF to compare);
# PTXBENCH_CPU_SKIP_TESTS=1 skips scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
commit=$(git rev-parse "${1:-HEAD}")
name=${2:-build_cpu}
out=$repo/bench/results/cpu
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxbench-build-cpu.XXXXXX")
trap 'rm -rf "$work"' EXIT

# No cache of any kind: a newcomer has none.
export CCACHE_DISABLE=1
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER PTXBENCH_CMAKE_ARGS

git clone -q --no-checkout "$repo" "$work/src"
git -C "$work/src" checkout -q "$commit"
launcher=$repo/bench/cpu/cpu_time_launcher.sh
export PTXBENCH_CPU_LOG=$work/steps.log
cd "$work/src"
# scripts/setup.sh's configure line, with the launcher on every compile and link.
/usr/bin/time -f "%U %S %e" -o "$work/configure.time" \
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" -DCMAKE_CUDA_COMPILER_LAUNCHER="$launcher" \
  -DCMAKE_CXX_LINKER_LAUNCHER="$launcher" ${PTXBENCH_CPU_CMAKE_ARGS:-} >"$work/configure.log" 2>&1
/usr/bin/time -f "%U %S %e" -o "$work/build.time" cmake --build build -j "$(nproc)" >"$work/build.log" 2>&1 || {
  tail -50 "$work/build.log" >&2
  echo "build_cpu: the build failed" >&2
  exit 1
}
test_line="tests skipped (PTXBENCH_CPU_SKIP_TESTS)"
test_cpu=null
test_wall=null
if [ "${PTXBENCH_CPU_SKIP_TESTS:-0}" != 1 ]; then
  /usr/bin/time -f "%U %S %e" -o "$work/test.time" bash scripts/test.sh >"$work/test.log" 2>&1 || true
  test_line=$(grep -E '^test.sh:|tests passed' "$work/test.log" | tr '\n' ' ')
  test_cpu=$(awk '{printf "%.0f", $1 + $2}' "$work/test.time")
  test_wall=$(awk '{printf "%.0f", $3}' "$work/test.time")
fi
configure_cpu=$(awk '{printf "%.1f", $1 + $2}' "$work/configure.time")
build_cpu=$(awk '{printf "%.1f", $1 + $2}' "$work/build.time")
cp "$work/steps.log" "$out/$name.steps.log"
{
  echo "# bench/cpu/build_cpu.sh: a fresh clone of $commit, built without ccache ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) (CPU seconds do not depend on the load; wall times here do)"
  echo "# $(c++ --version | head -1); $(cmake --version | head -1); ninja $(ninja --version)$(command -v nvcc >/dev/null && echo "; nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')")"
  echo "# configure options beyond scripts/setup.sh's: ${PTXBENCH_CPU_CMAKE_ARGS:-none}"
  echo "configure: $configure_cpu CPU s; build: $build_cpu CPU s (wall here $(awk '{print $3}' "$work/build.time") s)"
  echo "scripts/test.sh: ${test_cpu} CPU s, wall here ${test_wall} s; $test_line"
  echo
  python3 "$repo/bench/cpu/cpu_report.py" build "$work/steps.log" --total-cpu "$build_cpu" \
    --configure-cpu "$configure_cpu" --jobs 2 --json "$work/report.json"
} | tee "$out/$name.txt"
python3 - "$work/report.json" "$out/$name.json" "$commit" "$test_cpu" "$test_wall" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r.update({"commit": sys.argv[3], "test_cpu_s": None if sys.argv[4] == "null" else float(sys.argv[4]),
          "test_wall_here_s": None if sys.argv[5] == "null" else float(sys.argv[5])})
json.dump(r, open(sys.argv[2], "w"), indent=1)
EOF

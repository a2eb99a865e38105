#!/usr/bin/env bash
# Builds (incrementally) and runs every test. Tests that need a GPU (label gpu) or a CUDA tool this
# machine lacks skip visibly; the summary line counts them.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${PTXBENCH_CMAKE_ARGS:-}
cmake --build build -j "$(nproc)" || exit 1
log=$(mktemp)
ctest --test-dir build --no-tests=error --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
skipped=$(grep -c '\*\*\*Skipped' "$log" || true)
gpu_skipped=$(grep '\*\*\*Skipped' "$log" | grep -c 'Gpu\|GPU' || true)
echo "test.sh: ctest exit ${rc}; ${skipped} test(s) skipped (${gpu_skipped} need a GPU); see 'The following tests did not run' above"
rm -f "$log"
exit "$rc"

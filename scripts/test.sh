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
# Skipped tests that carry the gpu label (the rest skip for a missing tool such as cuobjdump or chromium).
gpu_tests=$(ctest --test-dir build -N -L gpu | sed -n 's/^ *Test *#[0-9]*: \([^ ]*\).*$/\1/p' | sort)
gpu_skipped=$(grep '\*\*\*Skipped' "$log" | sed 's/^.*Test *#[0-9]*: \([^ ]*\) .*$/\1/' | sort | comm -12 - <(echo "$gpu_tests") | wc -l)
echo "test.sh: ctest exit ${rc}; ${skipped} test(s) skipped, ${gpu_skipped} of them labelled gpu (no GPU here); see 'The following tests did not run' above"
rm -f "$log"
exit "$rc"

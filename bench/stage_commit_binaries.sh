#!/usr/bin/env bash
# Builds the evaluation binaries of another commit (ptxbench, ptxbench-harness, ptxbench-runner;
# no tests) in a worktree of their own and packs them, stripped, into .carry/NAME.tar.xz, which
# unpacks to .carry/NAME/bin: the "before" of speed.sh's P3 and P3-verdicts (PTXBENCH_BEFORE_BIN)
# and the middle builds of eval/input_sets_ab.sh (PTXBENCH_MID_BIN). Their shared libraries (fmt)
# come from this commit's .carry/bin, which bench/lib/env.sh puts on LD_LIBRARY_PATH. About 10
# minutes on 2 cores; the worktree (/tmp/ptxbench-stage-COMMIT) is kept, so a second run only relinks.
#   bench/stage_commit_binaries.sh 6a2bd48 before        # here
#   tar -xJf .carry/before.tar.xz -C .carry; PTXBENCH_BEFORE_BIN=$PWD/.carry/before/bin ...   # on the GPU host
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 2 ]; then echo "usage: $0 COMMIT NAME" >&2; exit 2; fi
commit=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "stage_commit_binaries.sh: no commit '$1'" >&2; exit 2; }
case "$2" in '' | *[!A-Za-z0-9_-]* | bin) echo "stage_commit_binaries.sh: NAME is letters, digits, _ or - (not 'bin'), got '$2'" >&2; exit 2 ;; esac
short=$(git rev-parse --short "$commit")
tree=/tmp/ptxbench-stage-$short
if [ ! -d "$tree" ]; then
  git worktree prune  # a worktree whose folder /tmp lost would block adding it again
  git worktree add --detach "$tree" "$commit" > /dev/null
fi
[ -f "$tree/build/build.ninja" ] || cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTXBENCH_BUILD_TESTS=OFF > /dev/null
cmake --build "$tree/build" -j "$(nproc)" --target ptxbench ptxbench-harness ptxbench-runner
stage=$(mktemp -d)
mkdir -p "$stage/$2/bin"
for b in ptxbench ptxbench-harness ptxbench-runner; do strip -o "$stage/$2/bin/$b" "$tree/build/bin/$b"; done
mkdir -p .carry
tar -cJf ".carry/$2.tar.xz" -C "$stage" "$2"
rm -rf "$stage"
echo "staged $short as .carry/$2.tar.xz ($(du -h ".carry/$2.tar.xz" | cut -f1)): $("$tree/build/bin/ptxbench" --version | head -1)"

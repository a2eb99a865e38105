# Sourced by the bench scripts: where the binaries are, where results go, and the library path the
# binaries need on a GPU host (CUDA toolkit, CUPTI). Override any of these from the environment.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${PTXBENCH_BIN:-$ROOT/build/bin}
OUT=${OUT:-$ROOT/bench/results/h200}
mkdir -p "$OUT"
export PTXBENCH_ROOT=${PTXBENCH_ROOT:-$ROOT}
export PTXBENCH_CACHE=${PTXBENCH_CACHE:-/tmp/ptxbench-cache}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/targets/x86_64-linux/lib"; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
export LD_LIBRARY_PATH

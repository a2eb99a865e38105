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
# Carried binaries (bench/stage_h200_binaries.sh) bring the service's libraries (libpq, cpp-httplib)
# beside them: the GPU host's Ubuntu has other versions or none.
[ -e "$BIN/libpq.so.5" ] && LD_LIBRARY_PATH="$BIN:$LD_LIBRARY_PATH"
export LD_LIBRARY_PATH
# Prefer the cuDNN inside PyTorch's wheel (9.19 on the H200 image; the system has 9.14), so our
# baselines and PyTorch's use the same library. PTXBENCH_CUDNN_DIR=system keeps the loader's default.
if [ "${PTXBENCH_CUDNN_DIR:-}" != "system" ]; then
  if [ -z "${PTXBENCH_CUDNN_DIR:-}" ] && command -v python3 >/dev/null 2>&1; then
    PTXBENCH_CUDNN_DIR=$(python3 -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null || true)
  fi
  [ -n "${PTXBENCH_CUDNN_DIR:-}" ] && [ -d "$PTXBENCH_CUDNN_DIR" ] && export LD_LIBRARY_PATH="$PTXBENCH_CUDNN_DIR:$LD_LIBRARY_PATH"
fi

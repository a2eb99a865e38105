# shellcheck shell=bash
# Sourced by every bench script (bench/README.md, "How to write a bench script"): where the checkout
# and the binaries are, the library path the binaries need on a GPU host (CUDA toolkit, CUPTI, the
# carried service libraries, cuDNN), and the functions that make a script GPU-neutral:
#
#   bench_gpu NAME      detect the GPU (bench/lib/gpu_target.sh) and export PTXBENCH_TARGET, its suite
#                       target; RESULTS=bench/results/$PTXBENCH_TARGET/NAME, emptied and created;
#                       everything the script prints also goes to $RESULTS/run.log; at exit, when $OUT
#                       is set, the results are packed into $OUT/<first part of NAME>.tar.gz. No GPU
#                       or an unknown one: one line on stderr and exit status 2.
#   bench_header        one comment line each: date, ptxbench version and commit; GPU and target
#   bench_result REL... the first of bench/results/$PTXBENCH_TARGET/REL that exists (committed or
#                       earlier results of this GPU), or nothing
#   bench_check NAME S  one "PASS NAME" (S = 0) or "FAIL NAME" line, also in $RESULTS/summary.txt
#   bench_done          the "FAILS: N" line; exits with N, the number of failed checks
#   bench_stop PID      stop a server the script started: SIGTERM, up to 5 s to exit, then SIGKILL
#   bench_cleanup       (the script's own, optional) runs at exit before the results are packed
#
# Environment (all optional): PTXBENCH_BIN (binaries; default build/bin, else .carry/bin from
# bench/stage_binaries.sh), PTXBENCH_DEVICE (the GPU index; also CUDA_VISIBLE_DEVICES when set),
# PTXBENCH_GPU_MODEL (a model name instead of nvidia-smi's: tests and dry runs),
# PTXBENCH_RESULTS_ROOT (default bench/results), PTXBENCH_CACHE, CUDA_HOME, PTXBENCH_CUDNN_DIR,
# OUT (the device tool's return folder: only tarballs go there).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ -n "${PTXBENCH_BIN:-}" ]; then
  BIN=$PTXBENCH_BIN
elif [ ! -x "$ROOT/build/bin/ptxbench" ] && [ -x "$ROOT/.carry/bin/ptxbench" ]; then
  BIN=$ROOT/.carry/bin
else
  BIN=$ROOT/build/bin
fi
export PTXBENCH_BIN=$BIN
export PTXBENCH_ROOT=${PTXBENCH_ROOT:-$ROOT}
export PTXBENCH_CACHE=${PTXBENCH_CACHE:-/tmp/ptxbench-cache}
PTXBENCH_RESULTS_ROOT=${PTXBENCH_RESULTS_ROOT:-$ROOT/bench/results}
if [ -n "${PTXBENCH_DEVICE:-}" ]; then export CUDA_VISIBLE_DEVICES=$PTXBENCH_DEVICE; fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
for d in "$CUDA_HOME/lib64" "$CUDA_HOME/extras/CUPTI/lib64" "$CUDA_HOME/targets/x86_64-linux/lib"; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
# Carried binaries (bench/stage_binaries.sh) bring the service's libraries (libpq, cpp-httplib)
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

# shellcheck source=bench/lib/gpu_target.sh
source "$ROOT/bench/lib/gpu_target.sh"

BENCH_FAILS=0

bench_gpu() {
  local name=${1:-}
  case "$name" in
    "" | /* | *..* | *[!A-Za-z0-9_./-]*)
      echo "bench: bench_gpu needs a results folder name (letters, digits, _ . - /), got '$name'" >&2
      exit 2 ;;
  esac
  PTXBENCH_TARGET=$(bench_gpu_target) || exit 2
  export PTXBENCH_TARGET
  RESULTS_GPU=$PTXBENCH_RESULTS_ROOT/$PTXBENCH_TARGET
  RESULTS=$RESULTS_GPU/$name
  BENCH_PACK=${name%%/*}
  rm -rf "$RESULTS" && mkdir -p "$RESULTS" || { echo "bench: cannot create $RESULTS" >&2; exit 2; }
  exec 3>&1 4>&2
  exec > >(tee "$RESULTS/run.log") 2>&1
  BENCH_TEE=$!
  trap bench_finish EXIT
  # A time limit must still leave the results packed: back to the original output, then the EXIT
  # trap. timeout(1) signals the whole process group, tee included, so the next write to run.log
  # (bash's own "Terminated" line for the killed command) raises SIGPIPE: handled the same way.
  trap 'bench_stopped 143 TERM' TERM
  trap 'bench_stopped 130 INT' INT
  trap 'bench_stopped 141 PIPE' PIPE
  bench_header
}

bench_stopped() {
  # timeout(1) signals this shell twice (itself, then its group): the second signal, handled while
  # the first one's exit packs the results, does nothing (no `return`: it would end the EXIT trap).
  if [ -z "${BENCH_STOPPING:-}" ]; then
    BENCH_STOPPING=1
    exec 1>&3 2>&4
    echo "bench: $(basename "$0") stopped by SIG$2 after ${SECONDS}s; packing what it wrote" >&2
    exit "$1"
  fi
}

bench_header() {
  local commit gpu
  commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$BIN/ptxbench" --version 2>/dev/null | head -1) commit $commit"
  if [ -n "${PTXBENCH_GPU_MODEL:-}" ]; then
    gpu="$PTXBENCH_GPU_MODEL (PTXBENCH_GPU_MODEL, not asked of nvidia-smi)"
  else
    gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit --format=csv,noheader \
          -i "${PTXBENCH_DEVICE:-0}" 2>&1 | head -1)
  fi
  echo "# gpu ${PTXBENCH_DEVICE:-0}: $gpu; target $PTXBENCH_TARGET; results ${RESULTS#"$ROOT"/}"
}

bench_result() {
  local rel
  for rel in "$@"; do
    if [ -e "$RESULTS_GPU/$rel" ]; then
      echo "$RESULTS_GPU/$rel"
      return 0
    fi
  done
  return 1
}

bench_stop() {
  [ -n "${1:-}" ] || return 0
  kill -TERM "$1" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}

bench_check() {
  if [ "$2" -eq 0 ]; then
    echo "PASS $1" | tee -a "$RESULTS/summary.txt"
  else
    echo "FAIL $1" | tee -a "$RESULTS/summary.txt"
    BENCH_FAILS=$((BENCH_FAILS + 1))
  fi
}

bench_done() {
  echo "FAILS: $BENCH_FAILS" | tee -a "$RESULTS/summary.txt"
  exit $((BENCH_FAILS > 100 ? 100 : BENCH_FAILS))
}

bench_finish() {
  local rc=$?
  trap - EXIT
  trap '' PIPE  # run.log's tee may be gone already
  BENCH_STOPPING=1
  if declare -F bench_cleanup > /dev/null; then bench_cleanup; fi
  echo "# $(basename "$0"): exit $rc after ${SECONDS}s"
  # Close run.log before packing it; a background process still holding the pipe is not waited for.
  exec 1>&3 2>&4 3>&- 4>&-
  local _
  for _ in $(seq 50); do kill -0 "$BENCH_TEE" 2>/dev/null || break; sleep 0.1; done
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT" && tar -czf "$OUT/$BENCH_PACK.tar.gz" -C "$RESULTS_GPU" "$BENCH_PACK" \
      && echo "bench: packed ${RESULTS_GPU#"$ROOT"/}/$BENCH_PACK into $OUT/$BENCH_PACK.tar.gz"
  fi
  return "$rc"
}

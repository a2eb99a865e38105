#!/usr/bin/env bash
# The GPU evidence of PTXBench, in parts, on any Hopper GPU host: each part runs one or more bench
# scripts, each under its own time limit; each script detects the GPU, writes its results to
# bench/results/<gpu>/<name>/ and, when $OUT is set (the device tool's return folder), packs them
# into $OUT/<name>.tar.gz, so a script that fails or runs out of time never costs another's results.
# Binaries from $PTXBENCH_BIN (bench/stage_binaries.sh stages them in .carry/bin for carrying).
#
#   bench/evidence.sh PART...          e.g. PTXBENCH_BIN=$PWD/.carry/bin bench/evidence.sh gemm
#   bench/evidence.sh PART:SECONDS...  a one-script part under another limit, e.g. exploits:190
#   bench/evidence.sh --list           the parts, their scripts and time limits
#
# Each script sees its limit as PTXBENCH_BENCH_LIMIT_S (minus 10 s to pack its results): a script
# that can stop early (service/scaling.sh) finishes and packs within it.
# One device-tool call allows 10 minutes: name parts whose limits add up to at most ~570 s (the
# script says so before it starts when they do not). Exit status: the number of scripts that failed
# (non-zero exit, time limit, or missing from this checkout).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source bench/lib/env.sh

# part_scripts PART: one line per script, "LIMIT_SECONDS SCRIPT [ARGS]" (SCRIPT under bench/).
part_scripts() {
  case "$1" in
    gemm)            echo "450 eval/gemm.sh"; echo "120 eval/pack_gpu_tests.sh" ;;
    attention)       echo "330 eval/attention.sh"; echo "240 eval/attention_cudnn_system.sh" ;;
    probe)           echo "500 eval/attention_probe.sh" ;;
    gqa)             echo "250 eval/gqa.sh" ;;
    agent)           echo "200 agents/agent_replay.sh"; echo "360 eval/gpu_host_tests.sh" ;;
    newuser)         echo "300 agents/newuser_cli.sh" ;;
    harbor)          echo "300 agents/harbor_gpu.sh" ;;
    exploits)        echo "570 eval/exploits.sh" ;;
    sandbox)         echo "120 eval/sandbox_probe.sh"; echo "450 eval/sandbox_exploits.sh" ;;
    timing)          echo "300 eval/trusted_timing.sh" ;;
    regression)      echo "500 eval/regression_check.sh" ;;
    reference)       echo "400 eval/reference.sh" ;;
    refvariants)     echo "150 eval/reference_variants.sh" ;;
    upstream)        echo "420 eval/upstream_kernels.sh" ;;
    smoke)           echo "330 eval/smoke.sh" ;;
    selftest)        echo "570 eval/kernel_selftest.sh" ;;
    service)         echo "250 service/service_gpu.sh" ;;
    parity)          echo "240 service/parity_gpu.sh" ;;
    scaling)         echo "480 service/scaling.sh" ;;  # N = 1, 2, 4 against one solo pass: ~5 min in session 10
    scaling-12)      echo "450 service/scaling.sh 1 2" ;;
    scaling-4)       echo "330 service/scaling.sh 4" ;;
    speed)           echo "540 eval/speed.sh" ;;
    triton)          echo "560 triton/triton_gpu.sh" ;;
    triton-exploits) echo "560 triton/triton_gpu.sh exploits" ;;
    fixit)           echo "540 adapt/fixit_gpu.sh" ;;  # seven recipes, each evaluating its repairs on the GPU
    train)           echo "200 adapt/train_smoke.sh" ;;
    supervision)     echo "200 adapt/supervision_gpu.sh" ;;
    *) return 1 ;;
  esac
}
PARTS="gemm attention probe gqa agent newuser harbor exploits sandbox timing regression reference refvariants upstream smoke selftest service parity scaling scaling-12 scaling-4 speed
triton triton-exploits fixit train supervision"

if [ $# -eq 0 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,13p' "$0"
  echo "parts: $(echo $PARTS)"
  [ $# -gt 0 ]
  exit $?
fi
if [ "$1" = --list ]; then
  for p in $PARTS; do part_scripts "$p" | sed "s|^|$p: |"; done
  exit 0
fi
# part_lines PART[:SECONDS]: part_scripts, with a one-script part's limit replaced by SECONDS.
part_lines() {
  local part=${1%%:*} limit=
  [[ "$1" == *:* ]] && limit=${1#*:}
  local lines
  lines=$(part_scripts "$part") || { echo "bench: unknown part '$part' (parts: $(echo $PARTS))" >&2; return 2; }
  if [ -n "$limit" ]; then
    [[ "$limit" =~ ^[0-9]+$ ]] && [ "$limit" -ge 20 ] ||
      { echo "bench: '$1': the limit must be a number of seconds, at least 20" >&2; return 2; }
    [ "$(wc -l <<< "$lines")" -eq 1 ] ||
      { echo "bench: '$1': part $part runs several scripts; a limit can be given only to a one-script part" >&2; return 2; }
    lines="$limit ${lines#* }"
  fi
  echo "$lines"
}
total=0
for part in "$@"; do
  lines=$(part_lines "$part") || exit 2
  while read -r limit _; do total=$((total + limit)); done <<< "$lines"
done
# Fail before anything runs when this host has no GPU or one that is no suite target.
target=$(bench_gpu_target) || exit 2
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) bench/evidence.sh $*: GPU ${PTXBENCH_DEVICE:-0} is target $target;" \
     "results in ${PTXBENCH_RESULTS_ROOT#"$ROOT"/}/$target/${OUT:+, tarballs in $OUT}"
if [ "$total" -gt 570 ]; then
  echo "# note: these parts' limits add up to ${total} s, more than one 10-minute device call leaves"
fi
failed=0
for part in "$@"; do
  while read -r limit script args; do
    path=bench/$script
    if [ ! -f "$path" ]; then
      echo "== part $part: $path is not in this checkout"
      failed=$((failed + 1))
      continue
    fi
    echo "== part $part: $path $args (limit ${limit}s)"
    start=$SECONDS
    # shellcheck disable=SC2086  # ARGS are words by design
    PTXBENCH_BENCH_LIMIT_S=$((limit - 10)) timeout -k 15 "$limit" bash "$path" $args < /dev/null
    rc=$?
    took=$((SECONDS - start))
    case "$rc" in
      0) echo "== part $part: $path $args: ok after ${took}s" ;;
      124|137) echo "== part $part: $path $args: TIME LIMIT (${limit}s) reached"; failed=$((failed + 1)) ;;
      *) echo "== part $part: $path $args: FAILED (exit $rc) after ${took}s"; failed=$((failed + 1)) ;;
    esac
  done <<< "$(part_lines "$part")"
done
echo "# evidence $*: $failed script(s) failed"
exit "$failed"

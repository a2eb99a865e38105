# shellcheck shell=bash
# The GEMM and attention examples that the whole-suite GPU checks evaluate, each with its task (sourced
# by service/scaling.sh, eval/speed.sh's P3-verdicts and P6, eval/input_sets_ab.sh): passing kernels
# with and without the target instructions, a dead-branch decoy, and one of each failure (wrong
# result, out of bounds, hang, host crash). EXAMPLE_TASKS lists the tasks in the order they are evaluated.
declare -A EXAMPLE_TASK=(
  [examples/gemm/plain_tiled.cu]=gemm_n7168_k5120 [examples/gemm/wgmma.cu]=gemm_n7168_k5120
  [examples/gemm/wgmma_tma_pipelined.cu]=gemm_n7168_k5120 [examples/gemm/wgmma_tma_pack.cu]=gemm_n7168_k5120
  [examples/gemm/wgmma_dead_branch.cu]=gemm_n7168_k5120 [examples/gemm/wrong_result.cu]=gemm_n7168_k5120
  [examples/gemm/out_of_bounds.cu]=gemm_n7168_k5120 [examples/gemm/hang.cu]=gemm_n7168_k5120
  [examples/gemm/host_segfault.cu]=gemm_n7168_k5120
  [examples/attention/plain_fwd.cu]=mha_with_lse_d128 [examples/attention/wgmma_fwd.cu]=mha_with_lse_d128
  [examples/attention/plain_fwd_causal.cu]=mha_with_lse_d128_causal
  [examples/attention/wgmma_fwd_causal.cu]=mha_with_lse_d128_causal
  [examples/attention/plain_bwd.cu]=mha_bwd_d128 [examples/attention/plain_bwd_causal.cu]=mha_bwd_d128_causal)
EXAMPLE_TASKS=(gemm_n7168_k5120 mha_with_lse_d128 mha_with_lse_d128_causal mha_bwd_d128 mha_bwd_d128_causal)
# The GEMM examples that pass, in the order the timing comparisons list them (eval/input_sets_ab.sh);
# speed.sh's P6 submits them without the dead-branch decoy, whose live path does plain_tiled.cu's work.
PASSING_GEMM_EXAMPLES=(examples/gemm/plain_tiled.cu examples/gemm/wgmma.cu examples/gemm/wgmma_dead_branch.cu
                       examples/gemm/wgmma_tma_pack.cu examples/gemm/wgmma_tma_pipelined.cu)
# The same evaluation limits wherever these examples are compared (hang.cu's sanitizer limit sets the pace).
EXAMPLE_TIMEOUTS=(--call-timeout 10 --sanitize-timeout 15)

# examples_of TASK: the examples of TASK, one per line, in a fixed order.
examples_of() {
  local f
  for f in "${!EXAMPLE_TASK[@]}"; do [ "${EXAMPLE_TASK[$f]}" = "$1" ] && echo "$f"; done | sort
}

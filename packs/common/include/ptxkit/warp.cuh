// ptxkit/warp.cuh: warp-level election and warpgroup register reallocation.
#pragma once
#include <cstdint>

namespace ptxkit {

/// Whole warp (all 32 lanes, converged). True in exactly one lane (the same lane every time for
/// the same mask). Use it to let one lane issue TMA, mbarrier expect_tx or tcgen05 commands.
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t pred;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(pred));
  return pred != 0;
}

/// Whole warp. Like elect_one_sync but also returns the elected lane in every lane.
__device__ __forceinline__ uint32_t elect_lane_sync(bool& is_elected) {
  uint32_t lane, pred;
  asm volatile("{\n .reg .pred p;\n elect.sync %0|p, 0xffffffff;\n selp.u32 %1, 1, 0, p;\n}"
               : "=r"(lane), "=r"(pred));
  is_elected = pred != 0;
  return lane;
}

/// All 4 warps of a warpgroup, same N. Lowers this warpgroup's per-thread register limit to N and
/// returns the rest to the CTA pool (producer warpgroups: 24..56). Needs __launch_bounds__ with
/// a known thread count, else ptxas ignores it (warning C7508).
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg count must be a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(N));
}

/// All 4 warps of a warpgroup, same N. Raises the per-thread register limit to N, blocking until
/// the CTA pool has enough (consumer warpgroups: 232/240). Sum over warpgroups must fit 64K regs.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg count must be a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(N));
}

}  // namespace ptxkit

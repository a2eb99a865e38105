#pragma once
// The launch shape of the harness's own grid-stride kernels (input generation, device checks): 256
// threads a block, at most 4096 blocks (enough to fill any Hopper part several times over; the
// kernels stride over the rest), at least one so that an empty buffer still launches validly.
#include <cstdint>

namespace ptxbench::gpu {

constexpr int k_grid_stride_threads = 256;

inline int grid_stride_blocks(int64_t n) {
  int64_t b = (n + k_grid_stride_threads - 1) / k_grid_stride_threads;
  return static_cast<int>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

}  // namespace ptxbench::gpu

#pragma once
// Rounding a size or offset up to a multiple: one helper for the harness's buffers, its snapshot
// chunks and the cuDNN baselines' workspace layouts.

#include <concepts>

namespace ptxbench {

/// The smallest multiple of `alignment` (> 0) that is >= value (value >= 0).
template <std::integral T>
constexpr T align_up(T value, T alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

static_assert(align_up(0, 256) == 0 && align_up(1, 256) == 256 && align_up(256, 256) == 256 && align_up(257, 256) == 512);

}  // namespace ptxbench

#include "gpu/harness/input_set_count.h"

#include <algorithm>

namespace ptxbench::gpu {

std::size_t rotating_input_sets(std::size_t set_bytes, std::size_t l2_flush_bytes, std::size_t device_bytes,
                                int requested) {
  if (requested > 0) return static_cast<std::size_t>(requested);
  set_bytes = std::max<std::size_t>(set_bytes, 1);
  const std::size_t beyond_l2 = (l2_flush_bytes + set_bytes - 1) / set_bytes + 1;
  const std::size_t memory_allows = device_bytes / k_input_set_memory_share / set_bytes;
  return std::max({k_min_input_sets, beyond_l2, std::min(k_wanted_input_sets, memory_allows)});
}

}  // namespace ptxbench::gpu

#include "gpu/harness/snapshot_plan.h"

#include <algorithm>
#include <random>

#include "core/align.h"

namespace ptxbench::gpu {

std::vector<snapshot_chunk> snapshot_plan(const std::vector<std::size_t>& output_bytes, int chunks_per_output,
                                          uint64_t seed) {
  constexpr std::size_t k_align = 256;
  std::vector<snapshot_chunk> plan;
  std::size_t parts = static_cast<std::size_t>(std::max(1, chunks_per_output));
  for (std::size_t o = 0; o < output_bytes.size(); ++o) {
    std::size_t size = output_bytes[o];
    std::size_t chunk = (size + parts - 1) / parts;
    chunk = std::max(k_align, align_up(chunk, k_align));
    for (std::size_t at = 0; at < size; at += chunk) plan.push_back({o, at, std::min(chunk, size - at)});
  }
  std::mt19937_64 rng(seed);
  std::shuffle(plan.begin(), plan.end(), rng);
  return plan;
}

}  // namespace ptxbench::gpu

#include "measure/launch_tally.h"

namespace ptxbench::measure {

void launch_tally::add(std::size_t kernels) { ++m_histogram[kernels]; }

std::optional<int> launch_tally::per_call() const {
  if (m_uncounted || m_histogram.size() != 1) return std::nullopt;
  const std::size_t kernels = m_histogram.begin()->first;
  if (kernels == 0) return std::nullopt;
  return static_cast<int>(kernels);
}

}  // namespace ptxbench::measure

#pragma once
// The kernel launches per candidate call, as counted from CUPTI's records of each call. Correctness
// uses the count to profile one call's worth in the dynamic check; timing records the histogram and
// the count. Both need the same rule: a count is known only when every counted call made the same
// number, and a call CUPTI could not count (another timing method) makes it unknown.
#include <cstddef>
#include <map>
#include <optional>

namespace ptxbench::measure {

class launch_tally {
 public:
  /// One call's kernel count from CUPTI's records.
  void add(std::size_t kernels);
  /// A call whose launches could not be counted.
  void add_uncounted() { m_uncounted = true; }
  /// The launches of every call when all calls made the same positive number; empty otherwise.
  [[nodiscard]] std::optional<int> per_call() const;
  /// How many calls made each number of launches.
  [[nodiscard]] const std::map<std::size_t, int>& histogram() const { return m_histogram; }

 private:
  std::map<std::size_t, int> m_histogram;
  bool m_uncounted = false;
};

}  // namespace ptxbench::measure

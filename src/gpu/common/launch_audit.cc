#include "gpu/common/launch_audit.h"

#include <algorithm>

namespace ptxbench::gpu {

bool is_marker_kernel_name(std::string_view name) { return name.find("ptxbench_runner_marker") != std::string_view::npos; }

void launch_grouper::enter(bool is_launch, std::string_view api, bool graph, uint32_t correlation_id) {
  if (m_depth == 0) {
    m_outer_is_launch = is_launch;
    m_current = observed_launch{};
    if (is_launch) m_current = {std::string(api), graph, false, {correlation_id}};
  } else if (m_outer_is_launch) {
    m_current.correlation_ids.push_back(correlation_id);
  }
  ++m_depth;
}

std::optional<observed_launch> launch_grouper::exit(bool succeeded) {
  if (m_depth == 0) return std::nullopt;
  if (--m_depth > 0 || !m_outer_is_launch) return std::nullopt;
  m_outer_is_launch = false;
  if (!succeeded) return std::nullopt;  // a refused launch puts nothing on the GPU
  return std::move(m_current);
}

void launch_grouper::mark_captured() {
  if (m_depth > 0 && m_outer_is_launch) m_current.captured = true;
}

bool was_recorded(const observed_launch& launch, const std::unordered_set<uint32_t>& recorded) {
  return std::any_of(launch.correlation_ids.begin(), launch.correlation_ids.end(),
                     [&](uint32_t id) { return recorded.count(id) > 0; });
}

std::vector<observed_launch> unrecorded_launches(const std::vector<observed_launch>& launches,
                                                 const std::unordered_set<uint32_t>& recorded) {
  std::vector<observed_launch> out;
  for (const auto& l : launches)
    if (!l.captured && !was_recorded(l, recorded)) out.push_back(l);
  return out;
}

ordered_json audit_json(const audit_observations& seen, const std::unordered_set<uint32_t>& recorded) {
  auto missing = unrecorded_launches(seen.launches, recorded);
  auto executed = static_cast<std::size_t>(std::count_if(seen.launches.begin(), seen.launches.end(),
                                                         [](const observed_launch& l) { return !l.captured; }));
  std::string matching = "correlation";
  if (!missing.empty() && missing.size() == executed &&
      static_cast<std::size_t>(std::max(0, seen.kernel_records_in_call)) >= executed) {
    missing.clear();
    matching = "count";
  }
  int graphs = static_cast<int>(std::count_if(seen.launches.begin(), seen.launches.end(),
                                              [](const observed_launch& l) { return l.graph && !l.captured; }));
  int captured = static_cast<int>(std::count_if(seen.launches.begin(), seen.launches.end(),
                                                [](const observed_launch& l) { return l.captured; }));
  ordered_json apis = ordered_json::array();
  for (const auto& l : missing) {
    if (apis.size() >= 4) break;
    if (std::find(apis.begin(), apis.end(), l.api) == apis.end()) apis.push_back(l.api);
  }
  return {{"launches", static_cast<int>(seen.launches.size()) - captured},
          {"graph_launches", graphs},
          {"captured_launches", captured},
          {"unrecorded", missing.size()},
          {"unrecorded_apis", apis},
          {"launches_outside_calls", seen.launches_outside_calls},
          {"marker_before", seen.marker_before},
          {"marker_after", seen.marker_after},
          {"marker_after_counted", seen.marker_after_counted},
          {"callbacks_enabled", seen.callbacks_enabled},
          {"matching", matching}};
}

}  // namespace ptxbench::gpu

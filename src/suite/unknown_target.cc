#include "suite/unknown_target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace ptxbench {

std::string unknown_target_message(const suite& s, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& [target_name, info] : s.targets) names.push_back(target_name);
  return unknown_name_message("target", name, names,
                              fmt::format("expected one of {} (suite/targets.json)", fmt::join(names, ", ")));
}

}  // namespace ptxbench

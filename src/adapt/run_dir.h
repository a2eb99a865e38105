#pragma once
// Reading a `ptxbench run` directory for the adaptation stages: plan.json (format
// ptxbench.run-plan/1, which tells a PTXBench run apart from another tool's output) and the
// trajectory of every planned item, strictly (a truncated or foreign file is an error, never skipped).

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/trajectory.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

struct run_trajectory {
  std::string file;                     ///< absolute path
  std::string sha256;                   ///< of the file's bytes
  ordered_json plan_item;               ///< the plan.json entry
  std::optional<agent::trajectory> t;   ///< nullopt: planned but not started (no file)
};

struct run_directory {
  std::string dir;          ///< absolute
  std::string name;         ///< the folder's name, file-safe
  ordered_json plan;        ///< plan.json
  std::string plan_sha256;
  std::vector<run_trajectory> trajectories;  ///< in plan order
};

/// Reads RUN_DIR. Fails (one line) when it is not a PTXBench run directory or a planned trajectory
/// file is unreadable, truncated or not in the trajectory format.
result<run_directory> read_run_directory(const std::filesystem::path& dir);

/// The feedback's structured block (messages[3+2k].extra.ptxbench), or an empty object.
const ordered_json& turn_extra(const agent::trajectory& t, int turn);

/// The evaluator's text of a feedback message: extra.raw_output, else what sits inside <output>.
std::string error_log_of(const ordered_json& feedback);

/// A --tasks/--variants/--turns style filter: an empty one keeps everything.
template <typename T>
bool keeps(const std::vector<T>& filter, const T& value) {
  return filter.empty() || std::find(filter.begin(), filter.end(), value) != filter.end();
}

}  // namespace ptxbench::adapt

#pragma once
// summary.json: what happened in a run directory, recomputed from the trajectory files alone (so it
// is right after any number of kills and resumes).

#include <filesystem>
#include <string>
#include <vector>

#include "agent/sweep.h"
#include "core/json_check.h"

namespace ptxbench::agent {

/// One trajectory's facts: exit status, turns, labels, first correct / target-correct turn, best
/// speedups, calls and cost. A missing file gives exit_status "NotStarted".
ordered_json summarize_trajectory(const std::filesystem::path& file);

/// The whole run: totals, breakdowns per task and per variant, and every trajectory's facts.
/// `stop_message` (may be empty) says why the run stopped early.
ordered_json summarize_run(const std::filesystem::path& out_dir, const std::vector<plan_item>& plan, int turn_limit,
                           const std::string& stop_message);

}  // namespace ptxbench::agent

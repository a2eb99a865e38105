#pragma once
// Is a run directory complete? A run that was interrupted, is still running, or lost files yields
// numbers over fewer turns than it planned, and nothing in the per-turn records shows it. These
// checks compare what is there with what plan.json (written by `ptxbench run`) asked for, and each
// trajectory's exit status with its turns.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "metrics/data_warnings.h"
#include "metrics/trajectory_reader.h"

namespace ptxbench::metrics {

/// A warning when the trajectory did not end for good: its exit status is not final (Running,
/// Interrupted, APIError, AuthError, InfraError), or it stopped with fewer counted turns than its
/// turn limit without meeting its target (Submitted) or overflowing the context window. The final
/// statuses are those of docs/trajectory-format.md.
std::optional<data_warning> unfinished_warning(const trajectory& t);

/// Warnings from comparing RUN_DIR/plan.json ("ptxbench.run-plan/1": plan[].file) with the trajectory
/// files found (paths relative to dir, "trajectories/x.json"): one per planned file that is missing,
/// one per file the plan does not name, or one `no_plan` when plan.json is missing or unusable.
std::vector<data_warning> plan_warnings(const std::filesystem::path& dir, const std::vector<std::string>& files_found);

}  // namespace ptxbench::metrics

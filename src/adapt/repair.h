#pragma once
// `ptxbench fixit repair`: one repair trajectory per mined wrong kernel, through the agent's own loop
// and evaluator and the sweep machinery of `ptxbench run` (run_plan: lock, plan.json check, resume,
// summary), so a repair run is a run directory and resumes the same way after a kill.
//
// Each trajectory starts with the student's own system prompt (the knowledge pack it saw, verbatim
// from the mined trajectory) and upstream's repair message (upstream-ptxbench.md §9.1, source-02), laid
// out as upstream's: "Task:" and the task's definition JSON, a plain "Kernel" heading and the wrong
// kernel in a ```cpp fence, a plain "Error Message" heading and the evaluator's error text, and one
// sentence asking for the minimal fix. Upstream's settings: 5 turns, stop once the target speedup
// 0.15 is reached.

#include <filesystem>
#include <string>
#include <vector>

#include "adapt/mined_row.h"
#include "agent/sweep.h"
#include "suite/task.h"

namespace ptxbench::adapt {

inline constexpr const char* k_repair_format = "ptxbench.fixit-repair/1";
inline constexpr int k_repair_turns = 5;
inline constexpr double k_repair_target_speedup = 0.15;

/// The first user message of a repair trajectory.
std::string repair_prompt(const task& t, const std::string& wrong_kernel, const std::string& error_log);

struct repair_plan {
  std::vector<agent::plan_item> items;  ///< one per mined row on the target, in mined order
  std::vector<std::string> tasks, variants;
  std::string target;
  int rows_on_other_targets = 0;
  ordered_json fixit;                   ///< plan.json's "fixit" block: format, mined dir and its hash
};

/// Plans the repairs of a mined directory. `target` empty: the one target the rows share (an error
/// when they span several). Every row's task must be in the suite.
result<repair_plan> plan_repairs(const std::filesystem::path& mined_dir, const suite& tasks, const std::string& target,
                                 uint64_t seed);

/// Runs (or resumes) the repairs: fills o.tasks, o.variants, o.target and o.trajectories from the
/// plan and calls agent::run_plan. `s.prompts` is not used (every item carries its prompts).
result<agent::sweep_outcome> run_repairs(const repair_plan& plan, agent::sweep_options o, agent::sweep_services& s);

}  // namespace ptxbench::adapt

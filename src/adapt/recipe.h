#pragma once
// The paper's dataset recipes s0–s6 as data (configs/recipes/<name>.json, format
// ptxbench.sft-recipe/1): problem mix, row format, the filters and caps of each stage, the repair and
// reasoning teachers, the export settings and the paper's record counts; `interpretation` lists what
// upstream does not record and the file decides. Every stage setting a file leaves out is the stage's
// own default, which is upstream's. `ptxbench sft recipe NAME` runs the stages into one directory and
// compares the counts with the paper's, with the reasons wherever they cannot match.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapt/kernelgen.h"
#include "adapt/mine.h"
#include "adapt/pairs.h"
#include "adapt/rationale.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_recipe_format = "ptxbench.sft-recipe/1";

struct recipe {
  std::string name, upstream_tag, description, row_format;  ///< row_format: fixit | kernelgen
  std::string problems_name;
  std::vector<std::string> tasks;
  // fixit
  mine_options mine;          ///< filters and cap (run_dirs, tasks and argv are set by the runner)
  std::string repair_model;
  int repair_turns = 5;
  double repair_target_speedup = 0.15;
  pairs_options pairs;        ///< filters and post-balancing cap
  // kernelgen
  kernelgen_options collect;
  // both
  std::string reason_model;
  rationale_rules rules;
  teacher_sampling sampling;
  std::size_t max_tokens = 65536;
  std::string chat_template = "auto";
  std::string kernel_fence = "cpp";
  bool normalize = true;
  ordered_json paper;  ///< {"rows": N, ...}
  ordered_json json;   ///< the file as read
};

/// Names of the recipes in DIR (file stems), sorted.
std::vector<std::string> list_recipes(const std::filesystem::path& dir);

/// Reads DIR/<name>.json strictly; errors name the file and the JSON path.
result<recipe> load_recipe(const std::filesystem::path& dir, const std::string& name);

/// What a recipe was actually run on, for the reasons its counts differ from the paper's.
struct recipe_run_facts {
  std::vector<std::string> tasks_covered;  ///< the recipe's tasks that the runs hold trajectories of
  std::vector<std::string> variants;       ///< prompt variants in the runs
  int trajectories = 0;                    ///< trajectories of the recipe's tasks
  int max_turns = 0;                       ///< the largest turn limit among them
  std::string repair_model, reason_model;  ///< the teachers used
  std::string evaluator;                   ///< "pipeline" (the real one) or a test evaluator
  bool cpu_only = false;
  std::vector<std::string> underfilled;    ///< tasks with fewer mined rows than the cap
  std::size_t max_tokens = 65536;          ///< the export's row limit as run
};

/// Reads the runs' plans and trajectories (read_run_directory) for the facts above that they hold.
result<recipe_run_facts> describe_runs(const recipe& r, const std::vector<std::filesystem::path>& run_dirs);

/// The counts of a finished (or partly run) recipe directory beside the paper's:
/// {"stages": [{"stage", "ours", "paper", "matches"}], "why_different": [reason, ...]}; paper null
/// where upstream gives no number; why_different empty when every known count matches.
ordered_json compare_with_paper(const recipe& r, const ordered_json& stage_counts, const recipe_run_facts& facts);

}  // namespace ptxbench::adapt

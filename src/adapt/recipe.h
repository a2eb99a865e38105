#pragma once
// The paper's dataset recipes s0–s6 as data (configs/recipes/<name>.json, format
// ptxbench.sft-recipe/1): problem mix, row format, the filters and caps of each stage, the repair and
// reasoning teachers, the export settings and the paper's record counts; `interpretation` lists what
// upstream does not record and the file decides. `ptxbench sft recipe NAME` runs the stages into one
// directory and compares the counts with the paper's.

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
  std::vector<std::string> mine_variants;
  std::vector<int> mine_turns;
  int mine_cap = -1;
  uint64_t mine_seed = 0;
  std::string repair_model;
  int repair_turns = 5;
  double repair_target_speedup = 0.15;
  bool pairs_require_target = false;
  std::optional<double> pairs_min_speedup;
  pair_select pairs_select = pair_select::all;
  int pairs_cap = -1;
  uint64_t pairs_seed = 0;
  // kernelgen
  kernelgen_options collect;
  // both
  std::string reason_model;
  rationale_rules rules;
  std::size_t max_tokens = 65536;
  std::string chat_template = "auto";
  ordered_json paper;  ///< {"rows": N, ...}
  ordered_json json;   ///< the file as read
};

/// Names of the recipes in DIR (file stems), sorted.
std::vector<std::string> list_recipes(const std::filesystem::path& dir);

/// Reads DIR/<name>.json strictly; errors name the file and the JSON path.
result<recipe> load_recipe(const std::filesystem::path& dir, const std::string& name);

/// The counts of a finished (or partly run) recipe directory beside the paper's, one row per stage:
/// {"stage", "ours", "paper"} (paper null where upstream gives no number).
ordered_json compare_with_paper(const recipe& r, const ordered_json& stage_counts);

}  // namespace ptxbench::adapt

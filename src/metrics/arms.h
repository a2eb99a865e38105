#pragma once
// Prompt-time supervision arms side by side (the paper's Table 4; docs/supervision.md): the same
// model on the same task with no supervision ("base"), with an expert-guidance document
// ("guidance:<sha256 prefix>"), with retrieved repair notes ("notes") and with notes plus the best
// fixed kernel ("notes+kernel", the solution-bearing arm: a gain there may be copying, not
// reasoning). An arm's turns are pooled over every run directory that ran it, so arms can be run
// as separate sweeps.

#include <compare>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"
#include "metrics/aggregate.h"

namespace ptxbench::metrics {

struct arm_key {
  std::string model, arch, definition, arm;
  auto operator<=>(const arm_key&) const = default;
};

struct arm_group {
  arm_key key;
  std::vector<turn_record> turns;
  std::vector<std::string> exp_dirs;  ///< the runs pooled, in first-appearance order
};

/// True when the arm showed the model a fixed kernel (its name has a "notes+kernel" part).
bool is_solution_bearing(const std::string& arm);
/// The arm's name as tables and charts print it: marked " †" when it is solution-bearing.
std::string arm_label(const std::string& arm);
/// True when any record ran under an arm other than "base".
bool has_supervision_arms(const std::vector<turn_record>& records);

/// Groups by (model, arch, definition, arm); ordered by first appearance of (model, arch, definition),
/// and within it base, guidance, notes, notes+kernel, then other combinations.
std::vector<arm_group> group_by_arm(const std::vector<turn_record>& records);

struct arm_rate_row { arm_key key; int turn_limit = 0; turn_rates value; };
struct arm_fast_p_row { arm_key key; int turn_limit = 0; fast_p_point value; };

struct arm_tables {
  std::vector<arm_rate_row> rates;
  std::vector<arm_fast_p_row> fast_p;  ///< at every turn limit
};
arm_tables compute_arm_tables(const std::vector<arm_group>& groups, const metrics_options& options);

/// The Table-4 view as markdown: per arch, one row pair per (model, arm) — target-instruction turn
/// correctness at each turn limit, plain correctness in parentheses — with the solution-bearing arm
/// marked † and explained below the table.
std::string render_table4_markdown(const arm_tables& tables, const std::vector<int>& turn_limits);

/// arms.csv (model,arch,definition,arm,solution_bearing,turn_limit,n_turns,correct_turns,
/// target_correct_turns,turn_correctness_rate,target_turn_correctness_rate) and arms_fast_p.csv
/// (... turn_limit,p,fast_p,fast_inst_p,n_turns,n_variants).
std::string arm_rates_csv(const std::vector<arm_rate_row>& rows);
std::string arm_fast_p_csv(const std::vector<arm_fast_p_row>& rows);

/// Writes arms.csv, arms_fast_p.csv and table4.md into out_dir.
status write_arm_files(const std::filesystem::path& out_dir, const arm_tables& tables, const std::vector<int>& turn_limits);

}  // namespace ptxbench::metrics

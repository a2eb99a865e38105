#pragma once
// What `ptxbench metrics` and `ptxbench report` read: our run directories and/or one upstream
// per-turn export, turned into one list of turn records (plus the trajectories' texts for the report).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "metrics/trajectory_reader.h"
#include "metrics/upstream_import.h"

namespace ptxbench::metrics {

struct input_spec {
  std::vector<std::filesystem::path> run_dirs;
  std::optional<std::filesystem::path> upstream_turns;       ///< reasoning_tokens_vs_performance.csv
  std::optional<std::filesystem::path> upstream_experiments; ///< default: experiments.csv beside it, if present
  upstream_options upstream;
};

struct loaded_inputs {
  std::vector<turn_record> records;  ///< run directories first (in the order given), then upstream rows
  std::vector<run_data> runs;        ///< with texts, for the report's turn strips
  std::vector<std::string> notes;    ///< things a person should know (experiments without turns ...)
  ordered_json sources = ordered_json::array();  ///< what was read, for provenance
};

/// Reads every input. Fails when nothing is given or on the first unreadable input.
result<loaded_inputs> load_inputs(const input_spec& spec);

/// Parses "1,4,8" into sorted, distinct positive turn limits; fails naming the bad item.
result<std::vector<int>> parse_turn_limits(const std::string& text);

/// Parses "FROM:TO:STEP" (e.g. "0:1.5:0.05") into a p grid; fails unless 0 <= FROM <= TO and STEP > 0
/// and the grid has at most 10001 points.
result<std::vector<double>> parse_p_range(const std::string& text);

/// Counts records that are counted turns and those that are infra errors (excluded).
struct record_counts { int64_t turns = 0, infra_errors = 0; };
record_counts count_records(const std::vector<turn_record>& records);

}  // namespace ptxbench::metrics

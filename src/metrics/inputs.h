#pragma once
// What `ptxbench metrics` and `ptxbench report` read: our run directories and/or one upstream
// per-turn export, turned into one list of turn records (plus the trajectories' texts for the report).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "metrics/data_warnings.h"
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
  /// What the numbers lack or had removed: unfinished, missing or unreadable trajectories, duplicated
  /// rows, repeated run directories, runs that do not match experiments.csv (data_warnings.h).
  /// `--strict` refuses inputs with any.
  std::vector<data_warning> warnings;
  /// Things a reader of the numbers should know that are not defects of the data (a CPU-only run ...).
  std::vector<std::string> notes;
  std::vector<std::string> cpu_only_runs;        ///< run directories where nothing ran on a GPU (`run --cpu-only`)
  std::vector<std::string> fake_evaluator_runs;  ///< run directories judged by the test-only fake evaluator
  ordered_json sources = ordered_json::array();  ///< what was read, for provenance
};

/// Reads every input. Fails when nothing is given, on an input that cannot be read at all, on a
/// malformed trajectory and on conflicting duplicate rows; everything else that is wrong with the
/// data becomes a warning. A run directory given twice (the same directory by any path) is read once.
result<loaded_inputs> load_inputs(const input_spec& spec);

/// The largest turn limit accepted: the trajectory reader's bound on a turn number.
inline constexpr int k_max_turn_limit = 100000;

/// Parses "1,4,8" into sorted, distinct turn limits from 1 to k_max_turn_limit (at most 100 of them);
/// fails naming the bad item.
result<std::vector<int>> parse_turn_limits(const std::string& text);

/// The largest turn limit, the one the comparisons, the ceiling and the curves count turns up to; 8
/// when there is none.
int largest_turn_limit(const std::vector<int>& turn_limits);

/// Parses "FROM:TO:STEP" (e.g. "0:1.5:0.05") into a p grid; fails unless FROM, TO and STEP are finite
/// numbers with 0 <= FROM <= TO and STEP > 0 and the grid has at most 10001 points. Each failure
/// names what is wrong in one line.
result<std::vector<double>> parse_p_range(const std::string& text);

/// Parses --min-coverage: "" is off (nullopt); otherwise a finite share from 0 to 1 ("0.9" = 90 %).
result<std::optional<double>> parse_min_coverage(const std::string& text);

/// Parses --variant-block: a whole number from 0 to 1000.
result<int> parse_variant_block(const std::string& text);

/// Counts records that are counted turns and those that are infra errors (excluded).
struct record_counts { int64_t turns = 0, infra_errors = 0; };
record_counts count_records(const std::vector<turn_record>& records);

}  // namespace ptxbench::metrics

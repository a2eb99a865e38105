#pragma once
// Reading our agent's trajectory files (mini-swe-agent-1.1 layout plus the `ptxbench` blocks) into
// turn records. Labels, verdicts and speedups come from the structured `extra.ptxbench` block of each
// feedback message; the feedback text is kept only for the report and is never searched.

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "metrics/data_warnings.h"
#include "metrics/turn_record.h"

namespace ptxbench::metrics {

/// The texts of one turn, shown by the report's turn strip (no metric reads them).
struct turn_text {
  std::string kernel;    ///< the last fenced code block of the reply, or the whole reply when it has none
  std::string feedback;  ///< the feedback message the model received
  std::string summary;   ///< the verdict's one-line message, when there is a verdict
};

struct trajectory {
  std::string id;                 ///< the file name without ".json"; unique within its run directory
  std::string file;
  std::string exit_status;        ///< info.exit_status, empty when absent
  int turn_limit = 0;             ///< info.ptxbench.turn_limit
  std::optional<bool> run_on_gpu; ///< info.config.environment.run_on_gpu; nullopt when absent
  std::string evaluator;          ///< info.config.environment.evaluator ("pipeline", "fake"); empty when absent
  std::vector<turn_record> turns; ///< one per evaluated reply, in message order, infra errors included
  std::vector<turn_text> texts;   ///< parallel to turns
};

/// Builds a trajectory from parsed JSON. Fails with the JSON path of the first problem
/// ("messages[5].extra.ptxbench.label: unknown label 'ok' (expected one of: ...)"), including
/// a label that contradicts extra.all_passed, a target_correct that contradicts the verdict, and a
/// counted turn whose number does not follow the previous counted turn's (only an infra_error turn
/// may repeat a turn number: the agent retries that turn).
result<trajectory> trajectory_from_json(const ordered_json& j, const std::string& id, const std::string& exp_dir);

struct run_data {
  std::string dir;                       ///< as given; becomes every record's exp_dir
  std::vector<trajectory> trajectories;  ///< sorted by file name
  /// Unfinished trajectories, files planned but missing or not planned, unreadable files
  /// (run_completeness.h): the numbers are computed anyway, and these say what they lack.
  std::vector<data_warning> warnings;
};

/// Reads RUN_DIR/trajectories/*.json. A file that cannot be read or is not JSON (truncated, not
/// text, no permission) is skipped with a warning, like a missing one; a file that is JSON but
/// malformed or self-contradictory fails the whole read (its data cannot be trusted), as does a
/// missing folder or a folder without one readable trajectory.
result<run_data> read_run_dir(const std::filesystem::path& dir);

/// Every turn record of the run, trajectory by trajectory.
std::vector<turn_record> run_records(const run_data& run);

/// Returns the body of the last complete ``` fenced block in text, or text itself when there is none.
std::string last_code_block(const std::string& text);

}  // namespace ptxbench::metrics

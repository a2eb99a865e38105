#pragma once
// What is wrong with the data behind the numbers: unfinished or missing trajectories, unreadable
// files, duplicated rows, runs that do not match upstream's experiment list. Metrics are still computed
// from what was read, but every warning is shown where the numbers are (stderr of `metrics` and
// `report`, metrics.json, warnings.csv, table1.md, the report's banner) and `--strict` refuses them.
// docs/metrics.md ("Warnings") lists the kinds.

#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::metrics {

enum class warning_kind {
  unfinished_trajectory,     ///< exit status not final, or fewer turns than its limit without a reason to stop
  missing_trajectory,        ///< named in plan.json, no file
  unplanned_trajectory,      ///< a file plan.json does not name
  unreadable_trajectory,     ///< cannot be read or is not JSON; skipped
  no_plan,                   ///< no usable plan.json: missing trajectories cannot be detected
  repeated_run_dir,          ///< the same directory given twice; read once
  duplicate_rows,            ///< identical copies of upstream rows; dropped
  run_not_in_experiments,    ///< upstream: a run with turns but no experiments.csv row
  experiment_without_turns,  ///< upstream: an experiments.csv row without turns
  other_task_evaluation,     ///< Harbor: an evaluation of another task or target inside a trial; not counted
};

/// "unfinished_trajectory", ... (the `kind` field of metrics.json and warnings.csv).
std::string_view warning_kind_name(warning_kind kind);

struct data_warning {
  warning_kind kind;
  std::string source;   ///< the file or directory it is about
  std::string message;  ///< one line that names the source, e.g. "runs/a/trajectories/x.json: unfinished: ..."
};

/// warnings.csv: `kind,source,message`, one row per warning (only the header when there is none).
std::string warnings_csv(const std::vector<data_warning>& warnings);
/// The `warnings` array of metrics.json: [{"kind", "source", "message"}, ...].
ordered_json warnings_json(const std::vector<data_warning>& warnings);

}  // namespace ptxbench::metrics

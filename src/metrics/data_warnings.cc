#include "metrics/data_warnings.h"

#include "core/csv.h"

namespace ptxbench::metrics {

std::string_view warning_kind_name(warning_kind kind) {
  switch (kind) {
    case warning_kind::unfinished_trajectory: return "unfinished_trajectory";
    case warning_kind::missing_trajectory: return "missing_trajectory";
    case warning_kind::unplanned_trajectory: return "unplanned_trajectory";
    case warning_kind::unreadable_trajectory: return "unreadable_trajectory";
    case warning_kind::no_plan: return "no_plan";
    case warning_kind::repeated_run_dir: return "repeated_run_dir";
    case warning_kind::duplicate_rows: return "duplicate_rows";
    case warning_kind::run_not_in_experiments: return "run_not_in_experiments";
    case warning_kind::experiment_without_turns: return "experiment_without_turns";
    case warning_kind::other_task_evaluation: return "other_task_evaluation";
  }
  return "unknown";
}

std::string warnings_csv(const std::vector<data_warning>& warnings) {
  csv_builder csv({"kind", "source", "message"});
  for (const auto& w : warnings) csv.cell(warning_kind_name(w.kind)).cell(w.source).cell(w.message).end_row();
  return csv.text();
}

ordered_json warnings_json(const std::vector<data_warning>& warnings) {
  ordered_json out = ordered_json::array();
  for (const auto& w : warnings)
    out.push_back({{"kind", warning_kind_name(w.kind)}, {"source", w.source}, {"message", w.message}});
  return out;
}

}  // namespace ptxbench::metrics

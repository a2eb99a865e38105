#pragma once
// The pack's ceiling (issue 30): how fast a kernel written from the knowledge pack alone runs on a
// task, beside the best the models in the inputs reached there. The reference kernels live in
// examples/reference/; bench/eval/reference.sh evaluates each three times in one harness with
// `ptxbench eval ... --out FILE`, and those verdict files are what `--ceiling` reads — the verdict is
// the one record of an evaluation, so the ceiling is read like any other.
//
// A row compares like with like: the same suite target (h100, h200: the same GPU model and
// baseline) and task. Upstream's rows name no target, so they never meet a reference kernel.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxbench::metrics {

/// One reference kernel on one target, from its evaluations.
struct reference_kernel {
  std::string target, task, file;
  int evaluations = 0;              ///< verdicts read for this kernel on this target
  std::vector<double> speedups;     ///< of those, each passed and target-correct one's speedup
  double speedup = 0;               ///< their median; 0 when there is none
  double speedup_min = 0, speedup_max = 0;
  std::string last_failure;         ///< the message of an evaluation that did not pass target-correct ("" if none)
};

struct reference_set {
  std::vector<std::string> sources;        ///< the files read
  std::vector<reference_kernel> kernels;   ///< in order of first appearance
};

/// Reads `ptxbench eval --out` files (a JSON array of verdicts, or one verdict). A file that is not
/// one, or a verdict without task or target, is an error naming the file.
result<reference_set> load_reference_verdicts(const std::vector<std::filesystem::path>& files);

struct ceiling_row {
  std::string target, task;
  std::optional<reference_kernel> reference;  ///< none: no reference kernel for this task on this target
  int64_t turns = 0;                          ///< the inputs' counted turns here with turn < T
  double models_best = 0;                     ///< their best target-correct speedup (0: none)
  std::string best_model;                     ///< whose turn that was
};

/// One row per (target, task) that the inputs' turns or the reference kernels have, sorted by target
/// then task. `turn_limit`: only turns 0..T-1 count, as in Table 1.
std::vector<ceiling_row> compute_ceiling(const std::vector<turn_record>& records, int turn_limit,
                                         const reference_set& references);

/// One row's cells as text, for either renderer: `escape` makes a text safe for the format (markdown
/// or HTML). `file` is empty without a reference kernel; the others read "–" where a side is missing.
struct ceiling_cells {
  std::string file, reference_speedup, models_best, ratio;
};
ceiling_cells ceiling_row_cells(const ceiling_row& r, const std::function<std::string(std::string_view)>& escape);

/// ceiling.csv: target,task,turn_limit,reference_file,reference_evaluations,reference_target_correct,
/// reference_speedup,reference_speedup_min,reference_speedup_max,models_turns,models_best_target_speedup,
/// best_model,models_over_reference (empty cells where a side is missing).
std::string ceiling_csv(const std::vector<ceiling_row>& rows, int turn_limit);

/// The "Ceiling" table in markdown (printed below Table 1 and appended to table1.md).
std::string render_ceiling_markdown(const std::vector<ceiling_row>& rows, int turn_limit);

}  // namespace ptxbench::metrics

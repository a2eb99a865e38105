#pragma once
// Importing upstream PTXBench's published per-turn export (plot viewer data:
// reasoning_tokens_vs_performance.csv, one row per turn, and experiments.csv, one row per run), so
// published runs are re-aggregated by exactly the code that aggregates ours.
//
// What the upstream rows say and do not say (docs/metrics.md has the evidence):
//  - `correctness` is upstream's text-search class of the feedback; we map it to our labels and keep
//    the original in source_label. Its mislabels (a banned library lands in "Other error") stay.
//  - A turn is target-correct where `correct_with_arch` is 1 (Correct, dynamic SASS verification
//    present, and the arch's required tag). The verification status itself is not exported.
//  - No prompt-variant column exists. Trajectory ids run exp_000, exp_001, ... and the paper's 3 prompt
//    variants x 4 trajectories appear as blocks of 4 consecutive ids (inferred, see variant_block).

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/csv.h"
#include "metrics/data_warnings.h"
#include "metrics/turn_record.h"

namespace ptxbench::metrics {

struct upstream_options {
  /// Consecutive trajectory ids per prompt variant: exp_000..exp_003 become variant "exp_000-003".
  /// 0: no variant key (Fast_p min/max then span the whole run).
  int variant_block = 4;
};


/// Returns the inferred variant of a trajectory id ("exp_006", block 4 -> "exp_004-007"), or "" when
/// the id is not exp_<number> or block is 0.
std::string upstream_variant(std::string_view trajectory_id, int block);

/// The identity of a turn row is (model, arch, definition, exp_dir, trajectory_id, turn): one turn
/// of one trajectory of one run. In upstream's whole export each identity occurs exactly once.
struct upstream_turns {
  std::vector<turn_record> records;    ///< one per distinct turn row, in file order
  std::vector<data_warning> warnings;  ///< one `duplicate_rows` warning when identical copies were dropped
};

/// Converts the parsed per-turn export to records. Fails with "<file>:<line>: <problem>" on a missing
/// column, a malformed number, an unknown correctness class, a target-correct turn that is not correct,
/// or a row with the identity of an earlier row but different content in any column (which of the
/// two is right cannot be known). Identical copies of an earlier row are dropped, with one warning.
result<upstream_turns> import_upstream_turns(const csv_table& table, const upstream_options& options);

/// Reads and converts the per-turn export file.
result<upstream_turns> read_upstream_turns(const std::filesystem::path& file, const upstream_options& options);

struct upstream_experiment {
  std::string model, arch, definition, workload, exp_dir;
};

/// Reads experiments.csv (model, arch, definition, workload, exp_dir).
result<std::vector<upstream_experiment>> read_upstream_experiments(const std::filesystem::path& file);

/// Reorders records so runs appear in experiments.csv order (runs it does not list go last, in their
/// original order) and returns one warning per mismatch: a run with turns but no experiments row, or an
/// experiment with no turns.
std::vector<data_warning> align_with_experiments(std::vector<turn_record>& records,
                                                const std::vector<upstream_experiment>& experiments);

}  // namespace ptxbench::metrics

#pragma once
// The paper's aggregates over turn records, as plain functions of one group's turns and a turn limit
// T (only turns 0..T-1 count; "first T turns"). Infra-error turns never count: the model did not
// spend a turn on them. docs/metrics.md gives the formulas.

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "metrics/turn_record.h"

namespace ptxbench::metrics {

/// One run of one model on one task: the unit of every table row.
struct group_key {
  std::string model, arch, definition, exp_dir;
  std::string language = "cuda";  ///< the candidates' language: "cuda" or "triton"
  auto operator<=>(const group_key&) const = default;
};

struct turn_group {
  group_key key;
  std::vector<turn_record> turns;  ///< in input order
};

/// Splits records by (model, arch, language, definition, exp_dir); groups come in order of first appearance.
std::vector<turn_group> group_turns(const std::vector<turn_record>& records);

struct turn_rates {
  int64_t n_turns = 0;               ///< counted turns with turn < T
  int64_t correct_turns = 0;
  int64_t target_correct_turns = 0;
  std::optional<double> rate;        ///< correct_turns / n_turns; nullopt when n_turns is 0
  std::optional<double> target_rate; ///< target_correct_turns / n_turns
  /// With a min_coverage: target-correct turns whose coverage is known and at least that (beyond
  /// the paper; eval/coverage.h), and their rate. Zero / nullopt without one.
  int64_t coverage_target_correct_turns = 0;
  std::optional<double> coverage_target_rate;
};
/// Turn correctness rate and target-instruction turn correctness rate (the paper's Table 1), and,
/// with min_coverage, the coverage-qualified target-instruction rate.
turn_rates compute_turn_rates(std::span<const turn_record> turns, int turn_limit,
                              std::optional<double> min_coverage = std::nullopt);

struct trajectory_rates {
  int64_t n_trajectories = 0;              ///< trajectories with at least one counted turn
  int64_t correct_trajectories = 0;        ///< ... with a correct turn among turns 0..T-1
  int64_t target_correct_trajectories = 0; ///< ... with a target-correct turn among turns 0..T-1
  std::optional<double> rate, target_rate;
};
/// Trajectory success rates (upstream's plot viewer calls the plain one "correctness rate").
trajectory_rates compute_trajectory_rates(std::span<const turn_record> turns, int turn_limit);

struct best_speedups {
  double best = 0;         ///< max speedup over correct turns with turn < T; 0 when there is none
  double best_target = 0;  ///< the same over target-correct turns
};
best_speedups compute_best_speedups(std::span<const turn_record> turns, int turn_limit);

struct fast_p_point {
  double p = 0;
  int64_t n_turns = 0;  ///< counted turns with turn < T, all variants
  int n_variants = 0;   ///< variants with at least one such turn
  double fast = 0, fast_min = 0, fast_max = 0;  ///< mean, min, max over variants
  double inst = 0, inst_min = 0, inst_max = 0;  ///< the same for Fast^Inst_p
};
/// Fast_p (correct and speedup > p) and Fast^Inst_p (also target-correct) as fractions of the counted
/// turns with turn < T, per prompt variant, then mean/min/max over variants. Turns with an empty
/// variant form one variant. Returns one point per p; empty when no turn counts.
std::vector<fast_p_point> compute_fast_p(std::span<const turn_record> turns, int turn_limit,
                                         const std::vector<double>& p_values);

/// Returns from, from+step, ... up to `to` inclusive (rounded to 1e-9 so 0.15 prints as 0.15); empty
/// for a step <= 0, a reversed or non-finite range, or more than 10^7 points.
std::vector<double> p_grid(double from, double to, double step);

struct metrics_options {
  std::vector<int> turn_limits{1, 4, 8};
  std::optional<double> min_coverage;  ///< --min-coverage: adds the coverage-qualified rate
  std::vector<double> p_values = p_grid(0, 1.5, 0.05);
};

struct turn_rate_row { group_key key; int turn_limit = 0; turn_rates value; };
struct trajectory_rate_row { group_key key; int turn_limit = 0; trajectory_rates value; };
struct best_speedup_row { group_key key; int turn_limit = 0; best_speedups value; };
struct fast_p_row { group_key key; int turn_limit = 0; fast_p_point value; };

/// Every table `ptxbench metrics` writes, one row per (group, turn limit[, p]), groups in input order.
struct metrics_tables {
  std::vector<turn_rate_row> turn_rates;
  std::vector<trajectory_rate_row> trajectory_rates;
  std::vector<best_speedup_row> best_speedups;
  std::vector<fast_p_row> fast_p;
};
metrics_tables compute_metrics(const std::vector<turn_group>& groups, const metrics_options& options);

}  // namespace ptxbench::metrics

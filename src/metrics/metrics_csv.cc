#include "metrics/metrics_csv.h"

#include "core/file_io.h"
#include "core/csv.h"
#include "metrics/language_comparison.h"

namespace ptxbench::metrics {
namespace {

std::vector<std::string> key_header(std::vector<std::string> extra) {
  std::vector<std::string> h = {"model", "arch", "language", "definition", "exp_dir", "turn_limit"};
  h.insert(h.end(), extra.begin(), extra.end());
  return h;
}

void key_cells(csv_builder& csv, const group_key& k, int turn_limit) {
  csv.cell(k.model).cell(k.arch).cell(k.language).cell(k.definition).cell(k.exp_dir).cell(turn_limit);
}

}  // namespace

std::string turn_rates_csv(const std::vector<turn_rate_row>& rows) {
  csv_builder csv(key_header({"n_turns", "correct_turns", "target_correct_turns", "turn_correctness_rate",
                              "target_turn_correctness_rate", "coverage_target_correct_turns",
                              "coverage_target_turn_correctness_rate"}));
  for (const auto& r : rows) {
    key_cells(csv, r.key, r.turn_limit);
    const auto& v = r.value;
    csv.cell(v.n_turns).cell(v.correct_turns).cell(v.target_correct_turns).cell(v.rate).cell(v.target_rate);
    if (v.coverage_target_rate) csv.cell(v.coverage_target_correct_turns);
    else csv.cell(std::optional<int64_t>());
    csv.cell(v.coverage_target_rate).end_row();
  }
  return csv.text();
}

std::string trajectory_rates_csv(const std::vector<trajectory_rate_row>& rows) {
  csv_builder csv(key_header({"n_trajectories", "correct_trajectories", "target_correct_trajectories",
                              "trajectory_success_rate", "target_trajectory_success_rate"}));
  for (const auto& r : rows) {
    key_cells(csv, r.key, r.turn_limit);
    const auto& v = r.value;
    csv.cell(v.n_trajectories).cell(v.correct_trajectories).cell(v.target_correct_trajectories);
    csv.cell(v.rate).cell(v.target_rate).end_row();
  }
  return csv.text();
}

std::string best_speedup_csv(const std::vector<best_speedup_row>& rows) {
  csv_builder csv(key_header({"best_speedup", "best_target_speedup"}));
  for (const auto& r : rows) {
    key_cells(csv, r.key, r.turn_limit);
    csv.cell(r.value.best).cell(r.value.best_target).end_row();
  }
  return csv.text();
}

std::string fast_p_csv(const std::vector<fast_p_row>& rows) {
  csv_builder csv(key_header({"p", "fast_p", "fast_inst_p", "n_turns", "n_variants", "fast_p_min", "fast_p_max",
                              "fast_inst_p_min", "fast_inst_p_max"}));
  for (const auto& r : rows) {
    key_cells(csv, r.key, r.turn_limit);
    const auto& v = r.value;
    csv.cell(v.p).cell(v.fast).cell(v.inst).cell(v.n_turns).cell(v.n_variants);
    csv.cell(v.fast_min).cell(v.fast_max).cell(v.inst_min).cell(v.inst_max).end_row();
  }
  return csv.text();
}

status write_metrics_dir(const std::filesystem::path& out_dir, const std::vector<turn_record>& records,
                         const metrics_tables& tables, const std::vector<data_warning>& warnings,
                         const std::string& table1_markdown, const ordered_json& meta) {
  const std::pair<const char*, std::string> files[] = {
      {"turns.csv", records_to_csv(records)},
      {"turns.json", records_to_json_text(records)},
      {"turn_rates.csv", turn_rates_csv(tables.turn_rates)},
      {"trajectory_rates.csv", trajectory_rates_csv(tables.trajectory_rates)},
      {"best_speedup.csv", best_speedup_csv(tables.best_speedups)},
      {"fast_p.csv", fast_p_csv(tables.fast_p)},
      {"warnings.csv", warnings_csv(warnings)},
      {"table1.md", table1_markdown},
      {"metrics.json", dump_pretty(meta) + "\n"},
  };
  for (const auto& [name, text] : files) {
    auto st = write_file_atomic(out_dir / name, text);
    if (!st) return st.err();
  }
  return ok();
}

}  // namespace ptxbench::metrics

namespace ptxbench::metrics {

status write_language_comparison(const std::filesystem::path& out_dir, const std::vector<turn_group>& groups,
                                 int turn_limit, const std::vector<double>& p_values) {
  return write_file_atomic(out_dir / "language_comparison.csv",
                           language_comparison_csv(compare_languages(groups, turn_limit, p_values)));
}

}  // namespace ptxbench::metrics

#pragma once
// The CSV files `ptxbench metrics` writes. Every table's rows are keyed by
// model,arch,language,definition,exp_dir,turn_limit (fast_p.csv adds p); docs/metrics.md lists the
// columns. language_comparison.csv holds the CUDA-PTX vs Triton comparison (metrics/language_comparison.h).

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "metrics/aggregate.h"
#include "metrics/data_warnings.h"

namespace ptxbench::metrics {

std::string turn_rates_csv(const std::vector<turn_rate_row>& rows);
std::string trajectory_rates_csv(const std::vector<trajectory_rate_row>& rows);
std::string best_speedup_csv(const std::vector<best_speedup_row>& rows);
std::string fast_p_csv(const std::vector<fast_p_row>& rows);

/// Writes turns.csv, turns.json, turn_rates.csv, trajectory_rates.csv, best_speedup.csv, fast_p.csv,
/// warnings.csv (data_warnings.h; only its header when there are none), table1.md (the given text)
/// and metrics.json (provenance: `meta`) into out_dir, creating it. Fails naming the file it could
/// not write.
status write_metrics_dir(const std::filesystem::path& out_dir, const std::vector<turn_record>& records,
                         const metrics_tables& tables, const std::vector<data_warning>& warnings,
                         const std::string& table1_markdown, const ordered_json& meta);

/// Writes language_comparison.csv (metrics/language_comparison.h) into out_dir.
status write_language_comparison(const std::filesystem::path& out_dir, const std::vector<turn_group>& groups,
                                 int turn_limit, const std::vector<double>& p_values);

}  // namespace ptxbench::metrics

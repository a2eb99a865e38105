#pragma once
// What `ptxbench metrics` and `ptxbench report` both read: run directories and/or upstream's per-turn
// export, the turn limits and the Fast_p grid. One set of options, parsed one way for both commands.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/result.h"
#include "metrics/inputs.h"

namespace ptxbench::cli {

struct metrics_input_args {
  std::vector<std::string> run_dirs;
  std::string upstream, experiments;
  std::string turn_limits = "1,4,8";
  std::string fast_p = "0:1.5:0.05";
  int variant_block = 4;
  double min_coverage = -1;  ///< --min-coverage; < 0: off
};

void add_metrics_input_options(CLI::App* cmd, metrics_input_args& a, const std::string& turn_limits_help);

struct metrics_inputs {
  metrics::loaded_inputs loaded;
  std::vector<int> turn_limits;
  std::vector<double> p_values;
  std::optional<double> min_coverage;
};

/// Parses the limits and the grid and loads the inputs; any failure is the user's (a usage error).
/// Prints the loader's notes on stderr.
result<metrics_inputs> load_metrics_inputs(const metrics_input_args& a);

}  // namespace ptxbench::cli

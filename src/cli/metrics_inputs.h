#pragma once
// What `ptxbench metrics` and `ptxbench report` both read: run directories and/or upstream's per-turn
// export, the turn limits and the Fast_p grid. One set of options, parsed one way for both commands.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/result.h"
#include "metrics/ceiling.h"
#include "metrics/inputs.h"

namespace ptxbench::cli {

/// Numbers stay text until load_metrics_inputs parses them, so every bad value gets the same kind of
/// one-line message (metrics/inputs.h) rather than the option parser's.
struct metrics_input_args {
  std::vector<std::string> run_dirs;
  std::string upstream, experiments;
  std::string turn_limits = "1,4,8";
  std::string fast_p = "0:1.5:0.05";
  std::string variant_block = "4";
  std::string min_coverage;  ///< --min-coverage; empty: off
  bool strict = false;       ///< --strict: any data warning is an error (exit 2)
  std::vector<std::string> ceiling;  ///< --ceiling: verdict files of the pack's reference kernels
};

void add_metrics_input_options(CLI::App* cmd, metrics_input_args& a, const std::string& turn_limits_help);

struct metrics_inputs {
  metrics::loaded_inputs loaded;
  std::vector<int> turn_limits;
  std::vector<double> p_values;
  std::optional<double> min_coverage;
  std::optional<metrics::reference_set> ceiling;  ///< with --ceiling
};

/// Parses the options and loads the inputs; any failure is the user's (a usage error). Prints each
/// data warning ("ptxbench: warning: ...") and each note on stderr, one line each; with --strict,
/// warnings make it fail ("--strict: N warnings above; nothing written").
result<metrics_inputs> load_metrics_inputs(const metrics_input_args& a);

/// The closing line after the work when there were warnings: how many, and where they are recorded
/// (`recorded_in`, e.g. "out/warnings.csv and out/metrics.json"). Empty when there were none.
std::string warnings_summary(const metrics::loaded_inputs& in, const std::string& recorded_in);

}  // namespace ptxbench::cli

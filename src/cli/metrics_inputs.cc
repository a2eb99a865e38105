#include "cli/metrics_inputs.h"

#include <cstdio>

namespace ptxbench::cli {

void add_metrics_input_options(CLI::App* cmd, metrics_input_args& a, const std::string& turn_limits_help) {
  cmd->add_option("run_dirs", a.run_dirs, "run directories (each holds trajectories/*.json)");
  cmd->add_option("--import-upstream", a.upstream, "upstream PTXBench per-turn export (reasoning_tokens_vs_performance.csv)");
  cmd->add_option("--experiments", a.experiments, "upstream experiments.csv (default: the one beside the export, if any)");
  cmd->add_option("--variant-block", a.variant_block,
                  "upstream: consecutive trajectory ids per prompt variant (inferred 4; 0 = no variant key)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--turn-limits", a.turn_limits, turn_limits_help);
  cmd->add_option("--fast-p", a.fast_p, "Fast_p thresholds FROM:TO:STEP (default 0:1.5:0.05)");
  cmd->add_option("--min-coverage", a.min_coverage,
                  "also count target-correct turns whose work coverage is at least this share, e.g. 0.9 (Table 1's "
                  "third line and the coverage_* columns; default: off)")
      ->check(CLI::Range(0.0, 100.0));
}

result<metrics_inputs> load_metrics_inputs(const metrics_input_args& a) {
  metrics::input_spec spec;
  for (const auto& d : a.run_dirs) spec.run_dirs.emplace_back(d);
  if (!a.upstream.empty()) spec.upstream_turns = a.upstream;
  if (!a.experiments.empty()) spec.upstream_experiments = a.experiments;
  spec.upstream.variant_block = a.variant_block;
  auto limits = metrics::parse_turn_limits(a.turn_limits);
  if (!limits) return limits.err();
  auto grid = metrics::parse_p_range(a.fast_p);
  if (!grid) return grid.err();
  auto in = metrics::load_inputs(spec);
  if (!in) return in.err();
  for (const auto& n : in->notes) std::fprintf(stderr, "ptxbench: note: %s\n", n.c_str());
  std::optional<double> min_coverage;
  if (a.min_coverage >= 0) min_coverage = a.min_coverage;
  return metrics_inputs{std::move(*in), std::move(*limits), std::move(*grid), min_coverage};
}

}  // namespace ptxbench::cli

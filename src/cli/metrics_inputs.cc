#include "cli/metrics_inputs.h"

#include <cstdio>

#include <fmt/format.h>

namespace ptxbench::cli {

void add_metrics_input_options(CLI::App* cmd, metrics_input_args& a, const std::string& turn_limits_help) {
  cmd->add_option("run_dirs", a.run_dirs, "run directories (each holds trajectories/*.json)");
  cmd->add_option("--import-upstream", a.upstream, "upstream PTXBench per-turn export (reasoning_tokens_vs_performance.csv)");
  cmd->add_option("--experiments", a.experiments, "upstream experiments.csv (default: the one beside the export, if any)");
  cmd->add_option("--variant-block", a.variant_block,
                  "upstream: consecutive trajectory ids per prompt variant, 0 to 1000 (inferred 4; 0 = no variant key)")
      ->capture_default_str();
  cmd->add_option("--turn-limits", a.turn_limits, turn_limits_help);
  cmd->add_option("--fast-p", a.fast_p, "Fast_p thresholds FROM:TO:STEP (default 0:1.5:0.05)");
  cmd->add_option("--min-coverage", a.min_coverage,
                  "also count target-correct turns whose work coverage is at least this share, 0 to 1, e.g. 0.9 "
                  "(Table 1's third line and the coverage_* columns; default: off)");
  cmd->add_option("--ceiling", a.ceiling,
                  "verdicts of the pack's reference kernels (`ptxbench eval ... --out FILE`, bench/eval/reference.sh), "
                  "repeatable: adds the Ceiling table, each task's reference speedup beside the models' best");
  cmd->add_flag("--strict", a.strict,
                "refuse (exit 2) when the data has warnings: unfinished, missing or unreadable trajectories, "
                "duplicated rows ...");
}

result<metrics_inputs> load_metrics_inputs(const metrics_input_args& a) {
  // Every option is checked before anything is read.
  auto limits = metrics::parse_turn_limits(a.turn_limits);
  if (!limits) return limits.err();
  auto grid = metrics::parse_p_range(a.fast_p);
  if (!grid) return grid.err();
  auto min_coverage = metrics::parse_min_coverage(a.min_coverage);
  if (!min_coverage) return min_coverage.err();
  auto block = metrics::parse_variant_block(a.variant_block);
  if (!block) return block.err();
  std::optional<metrics::reference_set> ceiling;
  if (!a.ceiling.empty()) {
    std::vector<std::filesystem::path> files(a.ceiling.begin(), a.ceiling.end());
    auto refs = metrics::load_reference_verdicts(files);
    if (!refs) return refs.err();
    ceiling = std::move(*refs);
  }
  metrics::input_spec spec;
  for (const auto& d : a.run_dirs) spec.run_dirs.emplace_back(d);
  if (!a.upstream.empty()) spec.upstream_turns = a.upstream;
  if (!a.experiments.empty()) spec.upstream_experiments = a.experiments;
  spec.upstream.variant_block = *block;
  auto in = metrics::load_inputs(spec);
  if (!in) return in.err();
  for (const auto& w : in->warnings) std::fprintf(stderr, "ptxbench: warning: %s\n", w.message.c_str());
  for (const auto& n : in->notes) std::fprintf(stderr, "ptxbench: note: %s\n", n.c_str());
  if (a.strict && !in->warnings.empty())
    return make_error(fmt::format("--strict: {} warning{} above; nothing written", in->warnings.size(),
                                  in->warnings.size() == 1 ? "" : "s"));
  return metrics_inputs{std::move(*in), std::move(*limits), std::move(*grid), *min_coverage, std::move(ceiling)};
}

std::string warnings_summary(const metrics::loaded_inputs& in, const std::string& recorded_in) {
  if (in.warnings.empty()) return "";
  return fmt::format("{} warning{} about the data behind these numbers (listed above and in {}); --strict refuses "
                     "such data",
                     in.warnings.size(), in.warnings.size() == 1 ? "" : "s", recorded_in);
}

}  // namespace ptxbench::cli

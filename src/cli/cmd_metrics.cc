// `ptxbench metrics RUN_DIR... | --import-upstream FILE --out DIR`: per-turn records and the paper's
// aggregates (turn and trajectory correctness rates, best speedups, Fast_p) as CSV files, and the
// Table-1 view as markdown on stdout. docs/metrics.md defines every number.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "metrics/aggregate.h"
#include "metrics/inputs.h"
#include "metrics/metrics_csv.h"
#include "metrics/table1.h"

namespace ptxbench::cli {
namespace {

struct metrics_args {
  std::vector<std::string> run_dirs;
  std::string upstream, experiments, out;
  std::string turn_limits = "1,4,8";
  std::string fast_p = "0:1.5:0.05";
  int variant_block = 4;
};

ordered_json meta_json(const metrics_args& a, const metrics::loaded_inputs& in, const metrics::metrics_options& opt) {
  auto counts = metrics::count_records(in.records);
  return {{"format", "ptxbench.metrics/1"},
          {"ptxbench_version", PTXBENCH_VERSION},
          {"inputs", in.sources},
          {"turn_limits", opt.turn_limits},
          {"fast_p", a.fast_p},
          {"counted_turns", counts.turns},
          {"infra_error_turns_excluded", counts.infra_errors},
          {"notes", in.notes}};
}

exit_status run_metrics(const metrics_args& a) {
  metrics::input_spec spec;
  for (const auto& d : a.run_dirs) spec.run_dirs.emplace_back(d);
  if (!a.upstream.empty()) spec.upstream_turns = a.upstream;
  if (!a.experiments.empty()) spec.upstream_experiments = a.experiments;
  spec.upstream.variant_block = a.variant_block;
  metrics::metrics_options opt;
  auto limits = metrics::parse_turn_limits(a.turn_limits);
  if (!limits) return report_error(limits.err().message, exit_status::usage);
  opt.turn_limits = *limits;
  auto grid = metrics::parse_p_range(a.fast_p);
  if (!grid) return report_error(grid.err().message, exit_status::usage);
  opt.p_values = *grid;
  auto in = metrics::load_inputs(spec);
  if (!in) return report_error(in.err().message, exit_status::usage);
  for (const auto& n : in->notes) std::fprintf(stderr, "ptxbench: note: %s\n", n.c_str());
  auto groups = metrics::group_turns(in->records);
  auto tables = metrics::compute_metrics(groups, opt);
  auto st = metrics::write_metrics_dir(a.out, in->records, tables, meta_json(a, *in, opt));
  if (!st) return report_error(st.err().message, exit_status::infra);
  auto counts = metrics::count_records(in->records);
  std::fputs(metrics::render_table1_markdown(metrics::build_table1(tables.turn_rates, opt.turn_limits), opt.turn_limits)
                 .c_str(),
             stdout);
  std::fprintf(stderr, "ptxbench: %s\n",
               fmt::format("{} turns in {} runs ({} infra-error turns excluded); wrote {}/turns.csv, turns.json, "
                           "turn_rates.csv, trajectory_rates.csv, best_speedup.csv, fast_p.csv, metrics.json",
                           counts.turns, groups.size(), counts.infra_errors, a.out)
                   .c_str());
  return exit_status::ok;
}

}  // namespace

void add_metrics_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("metrics", "turn/trajectory correctness rates, best speedups and Fast_p as CSV");
  auto a = std::make_shared<metrics_args>();
  cmd->add_option("run_dirs", a->run_dirs, "run directories (each holds trajectories/*.json)");
  cmd->add_option("--import-upstream", a->upstream, "upstream PTXBench per-turn export (reasoning_tokens_vs_performance.csv)");
  cmd->add_option("--experiments", a->experiments, "upstream experiments.csv (default: the one beside the export, if any)");
  cmd->add_option("--variant-block", a->variant_block,
                  "upstream: consecutive trajectory ids per prompt variant (inferred 4; 0 = no variant key)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--turn-limits", a->turn_limits, "turn limits T, comma-separated (default 1,4,8)");
  cmd->add_option("--fast-p", a->fast_p, "Fast_p thresholds FROM:TO:STEP (default 0:1.5:0.05)");
  cmd->add_option("--out", a->out, "output folder for the CSV/JSON files")->required();
  cmd->callback([&ctx, a]() { ctx.exit = run_metrics(*a); });
}

}  // namespace ptxbench::cli

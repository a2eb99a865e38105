// `ptxbench report RUN_DIR... [--import-upstream FILE] --out report.html`: one self-contained HTML file
// (tables, Fast_p and best-speedup curves, turn labels, per-trajectory turn strips).
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/file_io.h"
#include "metrics/html_report.h"
#include "metrics/inputs.h"

namespace ptxbench::cli {
namespace {

struct report_args {
  std::vector<std::string> run_dirs;
  std::string upstream, experiments, out, title = "PTXBench report";
  std::string turn_limits = "1,4,8";
  std::string fast_p = "0:1.5:0.05";
  int variant_block = 4;
};

exit_status run_report(const report_args& a) {
  metrics::input_spec spec;
  for (const auto& d : a.run_dirs) spec.run_dirs.emplace_back(d);
  if (!a.upstream.empty()) spec.upstream_turns = a.upstream;
  if (!a.experiments.empty()) spec.upstream_experiments = a.experiments;
  spec.upstream.variant_block = a.variant_block;
  metrics::report_options opt;
  opt.title = a.title;
  opt.generated_by = std::string("ptxbench ") + PTXBENCH_VERSION;
  auto limits = metrics::parse_turn_limits(a.turn_limits);
  if (!limits) return report_error(limits.err().message, exit_status::usage);
  opt.turn_limits = *limits;
  auto grid = metrics::parse_p_range(a.fast_p);
  if (!grid) return report_error(grid.err().message, exit_status::usage);
  opt.p_values = *grid;
  auto in = metrics::load_inputs(spec);
  if (!in) return report_error(in.err().message, exit_status::usage);
  for (const auto& n : in->notes) std::fprintf(stderr, "ptxbench: note: %s\n", n.c_str());
  std::string html = metrics::render_html_report(*in, opt);
  auto st = write_file_atomic(a.out, html);
  if (!st) return report_error(st.err().message, exit_status::infra);
  std::fprintf(stderr, "ptxbench: wrote %s (%s, self-contained)\n", a.out.c_str(), human_bytes(html.size()).c_str());
  return exit_status::ok;
}

}  // namespace

void add_report_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("report", "one self-contained HTML report (tables, Fast_p and speedup curves, turn strips)");
  auto a = std::make_shared<report_args>();
  cmd->add_option("run_dirs", a->run_dirs, "run directories (each holds trajectories/*.json)");
  cmd->add_option("--import-upstream", a->upstream, "upstream PTXBench per-turn export (reasoning_tokens_vs_performance.csv)");
  cmd->add_option("--experiments", a->experiments, "upstream experiments.csv (default: the one beside the export, if any)");
  cmd->add_option("--variant-block", a->variant_block,
                  "upstream: consecutive trajectory ids per prompt variant (inferred 4; 0 = no variant key)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--turn-limits", a->turn_limits, "Table-1 turn limits, comma-separated (default 1,4,8)");
  cmd->add_option("--fast-p", a->fast_p, "Fast_p thresholds FROM:TO:STEP (default 0:1.5:0.05)");
  cmd->add_option("--title", a->title, "report title");
  cmd->add_option("--out", a->out, "the HTML file to write")->required();
  cmd->callback([&ctx, a]() { ctx.exit = run_report(*a); });
}

}  // namespace ptxbench::cli

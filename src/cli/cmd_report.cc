// `ptxbench report RUN_DIR... [--import-upstream FILE] --out report.html`: one self-contained HTML file
// (tables, Fast_p and best-speedup curves, turn labels, per-trajectory turn strips). Data warnings and
// CPU-only runs are shown in banners at its top.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/metrics_inputs.h"
#include "cli/output_paths.h"
#include "core/file_io.h"
#include "metrics/html_report.h"

namespace ptxbench::cli {
namespace {

struct report_args {
  metrics_input_args input;
  std::string out, title = "PTXBench report";
};

exit_status run_report(const report_args& a) {
  if (auto st = check_output_file(a.out, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  auto in = load_metrics_inputs(a.input);
  if (!in) return report_error(in.err().message, exit_status::usage);
  metrics::report_options opt;
  opt.title = a.title;
  opt.generated_by = std::string("ptxbench ") + PTXBENCH_VERSION;
  opt.turn_limits = in->turn_limits;
  opt.p_values = in->p_values;
  opt.min_coverage = in->min_coverage;
  opt.ceiling = in->ceiling;
  std::string html = metrics::render_html_report(in->loaded, opt);
  auto st = write_file_atomic(a.out, html);
  if (!st) return report_error(st.err().message, exit_status::infra);
  std::fprintf(stderr, "ptxbench: wrote %s (%s, self-contained)\n", a.out.c_str(), human_bytes(html.size()).c_str());
  if (auto summary = warnings_summary(in->loaded, "the report's banner"); !summary.empty())
    std::fprintf(stderr, "ptxbench: %s\n", summary.c_str());
  return exit_status::ok;
}

}  // namespace

void add_report_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("report", "one self-contained HTML report (tables, Fast_p and speedup curves, turn strips)");
  auto a = std::make_shared<report_args>();
  add_metrics_input_options(cmd, a->input, "Table-1 turn limits, comma-separated (default 1,4,8)");
  cmd->add_option("--title", a->title, "report title");
  cmd->add_option("--out", a->out, "the HTML file to write")->required();
  cmd->callback([&ctx, a]() { ctx.exit = run_report(*a); });
}

}  // namespace ptxbench::cli

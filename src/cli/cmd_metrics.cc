// `ptxbench metrics RUN_DIR... | --import-upstream FILE --out DIR`: per-turn records and the paper's
// aggregates (turn and trajectory correctness rates, best speedups, Fast_p) as CSV files, and the
// Table-1 view as markdown on stdout and in table1.md. Data warnings (unfinished or missing
// trajectories, duplicated rows ...) go to stderr, warnings.csv, table1.md and metrics.json.
// The CUDA-PTX vs Triton comparison goes to language_comparison.csv. docs/metrics.md defines every number.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/metrics_inputs.h"
#include "cli/output_paths.h"
#include "core/file_io.h"
#include "metrics/aggregate.h"
#include "metrics/arms.h"
#include "metrics/ceiling.h"
#include "metrics/metrics_csv.h"
#include "metrics/data_warnings.h"
#include "metrics/table1.h"

namespace ptxbench::cli {
namespace {

struct metrics_args {
  metrics_input_args input;
  std::string out;
};

ordered_json meta_json(const metrics_args& a, const metrics::loaded_inputs& in, const metrics::metrics_options& opt,
                       const std::optional<metrics::reference_set>& ceiling) {
  auto counts = metrics::count_records(in.records);
  return {{"format", "ptxbench.metrics/1"},
          {"ptxbench_version", PTXBENCH_VERSION},
          {"inputs", in.sources},
          {"turn_limits", opt.turn_limits},
          {"min_coverage", opt.min_coverage ? ordered_json(*opt.min_coverage) : ordered_json(nullptr)},
          {"fast_p", a.input.fast_p},
          {"counted_turns", counts.turns},
          {"infra_error_turns_excluded", counts.infra_errors},
          {"warnings", metrics::warnings_json(in.warnings)},
          {"notes", in.notes},
          {"cpu_only_runs", in.cpu_only_runs},
          {"ceiling", ceiling ? ordered_json(ceiling->sources) : ordered_json(nullptr)}};
}

exit_status run_metrics(const metrics_args& a) {
  if (auto st = check_output_dir(a.out, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  auto in = load_metrics_inputs(a.input);
  if (!in) return report_error(in.err().message, exit_status::usage);
  metrics::metrics_options opt;
  opt.turn_limits = in->turn_limits;
  opt.p_values = in->p_values;
  opt.min_coverage = in->min_coverage;
  const auto& loaded = in->loaded;
  auto groups = metrics::group_turns(loaded.records);
  auto tables = metrics::compute_metrics(groups, opt);
  std::string table = metrics::render_table1_markdown(
      metrics::build_table1(tables.turn_rates, opt.turn_limits, opt.min_coverage), opt.turn_limits);
  // The CUDA-PTX vs Triton comparison (Fig. 3) and the ceiling at the largest turn limit.
  const int limit = metrics::largest_turn_limit(opt.turn_limits);
  std::vector<metrics::ceiling_row> ceiling;
  if (in->ceiling) {
    ceiling = metrics::compute_ceiling(loaded.records, limit, *in->ceiling);
    table += "\n" + metrics::render_ceiling_markdown(ceiling, limit);
  }
  auto st = metrics::write_metrics_dir(a.out, loaded.records, tables, loaded.warnings,
                                       metrics::render_table1_file(table, loaded.warnings, loaded.notes),
                                       meta_json(a, loaded, opt, in->ceiling));
  if (!st) return report_error(st.err().message, exit_status::infra);
  if (in->ceiling)
    if (auto w = write_file_atomic(a.out + "/ceiling.csv", metrics::ceiling_csv(ceiling, limit)); !w)
      return report_error(w.err().message, exit_status::infra);
  if (auto lc = metrics::write_language_comparison(a.out, groups, limit, opt.p_values); !lc)
    return report_error(lc.err().message, exit_status::infra);
  // Supervision arms (docs/supervision.md): arms.csv, arms_fast_p.csv, table4.md, and the Table-4 view below Table 1.
  auto arms = metrics::compute_arm_tables(metrics::group_by_arm(loaded.records), opt);
  if (auto w = metrics::write_arm_files(a.out, arms, opt.turn_limits); !w) return report_error(w.err().message, exit_status::infra);
  auto counts = metrics::count_records(loaded.records);
  std::fputs(table.c_str(), stdout);
  if (metrics::has_supervision_arms(loaded.records))
    std::fputs(("\n" + metrics::render_table4_markdown(arms, opt.turn_limits)).c_str(), stdout);
  std::fprintf(stderr, "ptxbench: %s\n",
               fmt::format("{} turns in {} runs ({} infra-error turns excluded); wrote {}/turns.csv, turns.json, "
                           "turn_rates.csv, trajectory_rates.csv, best_speedup.csv, fast_p.csv, language_comparison.csv, "
                           "warnings.csv, table1.md, arms.csv, arms_fast_p.csv, table4.md, metrics.json{}",
                           counts.turns, groups.size(), counts.infra_errors, a.out, in->ceiling ? ", ceiling.csv" : "")
                   .c_str());
  if (auto summary = warnings_summary(loaded, a.out + "/warnings.csv, table1.md and metrics.json"); !summary.empty())
    std::fprintf(stderr, "ptxbench: %s\n", summary.c_str());
  return exit_status::ok;
}

}  // namespace

void add_metrics_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("metrics",
                                 "turn/trajectory correctness rates, best speedups and Fast_p as CSV, Table 1 as markdown");
  auto a = std::make_shared<metrics_args>();
  add_metrics_input_options(cmd, a->input, "turn limits T, comma-separated (default 1,4,8)");
  cmd->add_option("--out", a->out, "output folder for the CSV/JSON files")->required();
  cmd->callback([&ctx, a]() { ctx.exit = run_metrics(*a); });
}

}  // namespace ptxbench::cli

// `ptxbench kernelgen collect | reason`: the direct-solution baseline (docs/adaptation.md, "KernelGen").
#include <fmt/format.h>

#include "adapt/kernelgen.h"
#include "cli/option_checks.h"
#include "cli/commands.h"
#include "cli/fixit_common.h"

namespace ptxbench::cli {
namespace {

struct collect_args {
  std::vector<std::string> runs, variants, tasks;
  std::string out, select = "all", speedup_above = "0";
  bool require_target = true, no_require_target = false, dedupe = false;
  cap_args cap;
};

exit_status collect_command(const collect_args& a, const std::vector<std::string>& argv) {
  adapt::kernelgen_options o;
  for (const auto& r : a.runs) o.run_dirs.emplace_back(r);
  o.require_target = !a.no_require_target;
  o.speedup_above = number_or_off(a.speedup_above);
  auto select = adapt::parse_pair_select(a.select);
  if (!select) return report_error(fmt::format("--select {}: expected all, first or best", a.select), exit_status::usage);
  o.select = *select;
  o.variants = split_list(a.variants);
  o.tasks = split_list(a.tasks);
  o.dedupe = a.dedupe;
  o.cap = to_cap_options(a.cap);
  o.argv = argv;
  auto manifest = adapt::collect_kernels(o, a.out);
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);
  const auto& c = (*manifest)["counts"];
  fmt::print("{} correct kernels from {} correct turns ({} turns read) -> {}\n", c["kernels"].get<int>(),
             c["correct_turns"].get<int>(), c["turns_read"].get<int>(), a.out);
  return exit_status::ok;
}

}  // namespace

void add_kernelgen_command(CLI::App& app, context& ctx) {
  auto* kg = app.add_subcommand("kernelgen", "KernelGen data: a teacher's correct kernels with a second teacher's rationale");
  kg->require_subcommand(1);
  auto a = std::make_shared<collect_args>();
  auto* collect = kg->add_subcommand("collect", "correct kernels of a teacher's runs on the original prompts");
  collect->add_option("runs", a->runs, "run directories of the teacher (`ptxbench run`)")->required();
  collect->add_option("--out", a->out, "output directory (must not exist)")->required();
  auto* require = collect->add_flag("--require-target", a->require_target,
                    "only kernels verified to execute a required instruction family (upstream's; the default)");
  collect->add_flag("--no-require-target", a->no_require_target, "correct kernels whether or not they are target-correct")
      ->excludes(require);
  collect->add_option("--speedup-above", a->speedup_above,
                      "only kernels strictly faster than this against the vendor library (upstream: 0), or off")
      ->check(number_in_or_off(0, 1e6))
      ->capture_default_str();
  collect->add_option("--select", a->select,
                      "all (every correct turn), first (each trajectory's first correct turn) or best (its fastest)")
      ->capture_default_str();
  collect->add_option("--variants", a->variants, "keep only these prompt variants (comma-separated)");
  collect->add_option("--tasks", a->tasks, "keep only these tasks (comma-separated)");
  collect->add_flag("--dedupe", a->dedupe, "one kernel per (task, kernel text)");
  add_cap_options(*collect, a->cap, "at most N kernels per task, stratified by turn (not upstream's)", false);
  collect->callback([&ctx, a, collect]() {
    ctx.exit = collect_command(*a, command_line(*collect, {"ptxbench", "kernelgen", "collect"}));
  });
  add_reason_subcommand(*kg, ctx, "kernelgen", "directory written by `ptxbench kernelgen collect`");
}

}  // namespace ptxbench::cli

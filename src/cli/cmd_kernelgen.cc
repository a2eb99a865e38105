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
  std::string out, select = "all";
  bool require_target = false;
  double min_speedup = -1;
  int cap = -1;
  uint64_t seed = 0;
};

exit_status collect_command(const collect_args& a, const std::vector<std::string>& argv) {
  adapt::kernelgen_options o;
  for (const auto& r : a.runs) o.run_dirs.emplace_back(r);
  o.require_target = a.require_target;
  if (a.min_speedup >= 0) o.min_speedup = a.min_speedup;
  auto select = adapt::parse_pair_select(a.select);
  if (!select) return report_error(fmt::format("--select {}: expected all, first or best", a.select), exit_status::usage);
  o.select = *select;
  o.variants = split_list(a.variants);
  o.tasks = split_list(a.tasks);
  o.cap_per_definition = a.cap;
  o.seed = a.seed;
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
  collect->add_flag("--require-target", a->require_target, "only kernels verified to execute a required instruction family");
  collect->add_option("--min-speedup", a->min_speedup, "only kernels at least this fast against the vendor library")
      ->check(number_in(0, 1e6))
      ->default_str("off");
  collect->add_option("--select", a->select,
                      "all (every correct turn), first (each trajectory's first correct turn) or best (its fastest)")
      ->capture_default_str();
  collect->add_option("--variants", a->variants, "keep only these prompt variants (comma-separated)");
  collect->add_option("--tasks", a->tasks, "keep only these tasks (comma-separated)");
  collect->add_option("--cap-per-definition", a->cap, "at most N kernels per task (seeded, stratified by turn)")
      ->check(whole_number(0, 1'000'000'000))
      ->default_str("off");
  collect->add_option("--seed", a->seed, "seed of the capped selection")->check(seed_value());
  collect->callback([&ctx, a, collect]() {
    ctx.exit = collect_command(*a, command_line(*collect, {"ptxbench", "kernelgen", "collect"}));
  });
  add_reason_subcommand(*kg, ctx, "kernelgen", "directory written by `ptxbench kernelgen collect`");
}

}  // namespace ptxbench::cli

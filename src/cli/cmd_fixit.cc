// `ptxbench fixit mine | repair | pairs | reason`: the Fixit repair-data pipeline (docs/adaptation.md).
#include <unistd.h>

#include <fmt/format.h>

#include "adapt/mine.h"
#include "adapt/pairs.h"
#include "adapt/repair.h"
#include "agent/provider_factory.h"
#include "cli/option_checks.h"
#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "cli/fixit_common.h"

namespace ptxbench::cli {
namespace {

struct mine_args {
  std::vector<std::string> runs, variants, tasks;
  std::string out, turns;
  cap_args cap;
  bool allow_non_fenced = false, include_shape_dtype = false, dedupe = false;
};

exit_status mine_command(const mine_args& a, const std::vector<std::string>& argv, const context& ctx) {
  auto tasks = load_suite(ctx.suite_dir());
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  adapt::mine_options o;
  for (const auto& t : tasks->tasks) o.known_tasks.push_back(t.name);
  for (const auto& r : a.runs) o.run_dirs.emplace_back(r);
  o.cap = to_cap_options(a.cap);
  o.variants = split_list(a.variants);
  o.tasks = split_list(a.tasks);
  o.allow_non_fenced = a.allow_non_fenced;
  o.include_shape_dtype = a.include_shape_dtype;
  o.dedupe_kernels = a.dedupe;
  o.argv = argv;
  if (!a.turns.empty()) {
    auto turns = adapt::parse_turn_list(a.turns);
    if (!turns) return report_error("--turns: " + turns.err().message, exit_status::usage);
    o.turns = *turns;
  }
  auto manifest = adapt::mine_failures(o, a.out);
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);
  const auto& c = (*manifest)["counts"];
  fmt::print("mined {} of {} failed turns ({} turns read in {} trajectories) -> {}\n", c["selected"].get<int>(),
             c["candidates"].get<int>(), c["turns_read"].get<int>(), c["trajectories_read"].get<int>(), a.out);
  print_strata(c["per_stratum"]);
  return exit_status::ok;
}

struct repair_args {
  model_args model;
  evaluator_args eval;
  std::string mined, out, target, history = "full";
  int turns = adapt::k_repair_turns, parallel = 4;
  double target_speedup = adapt::k_repair_target_speedup;
  uint64_t seed = 0;
  bool quiet = false;
};

std::vector<std::string> repair_argv(const repair_args& a) {
  std::vector<std::string> argv = {"ptxbench", "fixit", "repair", a.mined, "--model", a.model.model, "--out", a.out,
                                   "--turns", std::to_string(a.turns), "--target-speedup",
                                   fmt::format("{}", a.target_speedup), "--history", a.history};
  if (!a.target.empty()) argv.insert(argv.end(), {"--target", a.target});
  if (a.seed != 0) argv.insert(argv.end(), {"--seed", std::to_string(a.seed)});
  append_model_argv(a.model, argv);
  append_evaluator_argv(a.eval, argv);
  return argv;
}

exit_status repair_command(const repair_args& a, const context& ctx) {
  auto tasks = load_suite(ctx.suite_dir());
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  auto resolved = resolve_model_choice(a.model.choice(), ctx);
  if (!resolved) return report_error(resolved.err().message, exit_status::usage);
  auto policy = agent::parse_history_policy(a.history);
  if (!policy) return report_error(fmt::format("--history {}: expected full, latest-pair or budget", a.history), exit_status::usage);
  auto plan = adapt::plan_repairs(a.mined, *tasks, a.target, a.seed);
  if (!plan) return report_error(plan.err().message, exit_status::usage);
  agent::sweep_options o;
  o.out_dir = a.out;
  o.turns = a.turns;
  o.target_speedup = a.target_speedup;
  o.policy = *policy;
  o.parallel = a.parallel;
  o.gpus = a.eval.gpus;
  o.run_on_gpu = !a.eval.cpu_only;
  o.eval_retries = a.eval.eval_retries;
  o.seed = a.seed;
  o.evaluator_name = a.eval.evaluator;
  o.argv = repair_argv(a);
  o.quiet = a.quiet;
  o.progress_bar = isatty(STDERR_FILENO) != 0;
  if (auto t = clamp_turns_to_replay(resolved->spec, o.turns); !t) return report_error(t.err().message, exit_status::usage);
  if (auto gpu = check_gpu_for(a.eval.evaluator, o.run_on_gpu, tasks->find_target(plan->target)); !gpu)
    return report_error(gpu.err().message, exit_status::usage);
  auto factory = evaluator_factory_for(a.eval.evaluator, a.eval.fake_delay_ms, ctx);
  if (!factory) return report_error(factory.err().message, exit_status::usage);
  const std::atomic<bool>* interrupted = install_interrupt_handler();
  auto llm = model_provider(*resolved, interrupted);
  if (!llm) return report_error(llm.err().message, exit_status::usage);
  agent::sweep_services s;
  s.tasks = &*tasks;
  s.model = &resolved->spec;
  s.llm = llm->get();
  s.make_evaluator = *factory;
  s.prompts = [](const task&, const target_info&, const std::string&) -> result<agent::prompt_pair> {
    return make_error("internal: a repair trajectory without its prompts");
  };
  s.interrupt = interrupted;
  auto out = adapt::run_repairs(*plan, o, s);
  if (!out) return report_error(out.err().message, exit_status::usage);
  const auto& t = out->summary["totals"];
  if (!a.quiet)
    std::fprintf(stderr, "ptxbench: %d/%d repairs finished | %d correct | %d target-correct | %d reached the target "
                 "speedup | %d turns | %d model calls | %s\n",
                 t["finished"].get<int>(), t["planned"].get<int>(), t["correct_trajectories"].get<int>(),
                 t["target_correct_trajectories"].get<int>(), t["submitted"].get<int>(), t["turns_completed"].get<int>(),
                 t["api_calls"].get<int>(), (o.out_dir / "summary.json").c_str());
  if (out->status != exit_status::ok) return report_error(out->message, out->status);
  return exit_status::ok;
}

struct pairs_args {
  std::vector<std::string> repairs;
  std::string out, mined, select = "all", min_speedup = "0";
  bool require_target = true, no_require_target = false, dedupe = false;
  cap_args cap;
};

exit_status pairs_command(const pairs_args& a, const std::vector<std::string>& argv) {
  adapt::pairs_options o;
  for (const auto& r : a.repairs) o.repair_dirs.emplace_back(r);
  o.mined_dir = a.mined;
  o.require_target = !a.no_require_target;
  o.min_speedup = number_or_off(a.min_speedup);
  auto select = adapt::parse_pair_select(a.select);
  if (!select) return report_error(fmt::format("--select {}: expected all, first or best", a.select), exit_status::usage);
  o.select = *select;
  o.dedupe = a.dedupe;
  o.cap = to_cap_options(a.cap);
  o.argv = argv;
  auto manifest = adapt::collect_pairs(o, a.out);
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);
  const auto& c = (*manifest)["counts"];
  std::string dropped;
  for (const auto& [k, v] : c["dropped"].items()) dropped += fmt::format("{}{} {}", dropped.empty() ? "" : ", ", v.get<int>(), k);
  fmt::print("{} pairs from {} repairs ({} correct repair turns{}) -> {}\n", c["pairs"].get<int>(), c["repairs"].get<int>(),
             c["correct_turns"].get<int>(), dropped.empty() ? "" : "; dropped: " + dropped, a.out);
  return exit_status::ok;
}

}  // namespace

void add_fixit_command(CLI::App& app, context& ctx) {
  auto* fixit = app.add_subcommand("fixit", "Fixit repair data: mine failures, repair them with a teacher, pair, reason");
  fixit->require_subcommand(1);

  auto ma = std::make_shared<mine_args>();
  auto* mine = fixit->add_subcommand("mine", "failed turns of runs (compile, runtime, numerical, timeout), capped per task");
  mine->add_option("runs", ma->runs, "run directories written by `ptxbench run`")->required();
  mine->add_option("--out", ma->out, "output directory (must not exist)")->required();
  add_cap_options(*mine, ma->cap, "at most N rows per task, spread over (error type, turn) strata (upstream: 33)", true);
  mine->add_option("--variants", ma->variants, "keep only these prompt variants (comma-separated)");
  mine->add_option("--turns", ma->turns, "keep only these turns, 0-based (e.g. 0-4; upstream: turns below 5)");
  mine->add_option("--tasks", ma->tasks, "keep only these tasks (comma-separated)");
  mine->add_flag("--allow-non-fenced-turns", ma->allow_non_fenced,
                 "also mine replies that do not end with a closing code fence (text after it, or a cut-off block)");
  mine->add_flag("--include-shape-dtype", ma->include_shape_dtype,
                 "also mine incorrect_shape and incorrect_dtype turns, as numerical (upstream counted them as Other)");
  mine->add_flag("--dedupe-kernels", ma->dedupe, "mine identical kernels of a task and variant once");
  mine->callback([&ctx, ma, mine]() { ctx.exit = mine_command(*ma, command_line(*mine, {"ptxbench", "fixit", "mine"}), ctx); });

  auto ra = std::make_shared<repair_args>();
  auto* repair = fixit->add_subcommand("repair", "one repair trajectory per mined wrong kernel (a teacher, the agent loop, the evaluator)");
  repair->add_option("mined", ra->mined, "directory written by `ptxbench fixit mine`")->required();
  repair->add_option("--out", ra->out, "run directory of the repairs; re-run the same command to resume")->required();
  add_model_options(*repair, ra->model);
  add_evaluator_options(*repair, ra->eval);
  repair->add_option("--target", ra->target, "target GPU (default: the one the mined rows share)");
  repair->add_option("--turns", ra->turns, "turns per repair trajectory")->check(whole_number(1, 1000));
  repair->add_option("--target-speedup", ra->target_speedup, "stop a repair once a target-correct kernel reaches this speedup")
      ->check(positive_number(1e6));
  repair->add_option("--history", ra->history, "full, latest-pair or budget")->capture_default_str();
  repair->add_option("--parallel", ra->parallel, "repairs at once")->check(whole_number(1, 1024));
  repair->add_option("--seed", ra->seed, "base seed of the per-repair seeds")->check(seed_value());
  repair->add_flag("-q,--quiet", ra->quiet, "no progress output");
  repair->callback([&ctx, ra]() { ctx.exit = repair_command(*ra, ctx); });

  auto pa = std::make_shared<pairs_args>();
  auto* pairs = fixit->add_subcommand("pairs", "(wrong kernel, feedback) -> correct kernel pairs from repair runs");
  pairs->add_option("repairs", pa->repairs, "repair run directories (`ptxbench fixit repair --out`)")->required();
  pairs->add_option("--out", pa->out, "output directory (must not exist)")->required();
  pairs->add_option("--mined", pa->mined, "the mined directory (default: the one each repair run names)");
  auto* require = pairs->add_flag("--require-target", pa->require_target,
                  "only repairs verified to execute a required instruction family (upstream's; the default)");
  pairs->add_flag("--no-require-target", pa->no_require_target, "correct repairs whether or not they are target-correct")
      ->excludes(require);
  pairs->add_option("--min-speedup", pa->min_speedup, "only repairs at least this fast against the vendor library, or off")
      ->check(number_in_or_off(0, 1e6))
      ->capture_default_str();
  pairs->add_option("--select", pa->select,
                    "all (every correct repair turn), first (the first per wrong kernel) or best (the fastest)")
      ->capture_default_str();
  pairs->add_flag("--dedupe", pa->dedupe, "one pair per (task, wrong kernel, correct kernel)");
  add_cap_options(*pairs, pa->cap, "at most N pairs per task (post-balancing; not upstream's)", false);
  pairs->callback([&ctx, pa, pairs]() { ctx.exit = pairs_command(*pa, command_line(*pairs, {"ptxbench", "fixit", "pairs"})); });

  add_reason_subcommand(*fixit, ctx, "fixit", "directory written by `ptxbench fixit pairs`");

}

}  // namespace ptxbench::cli

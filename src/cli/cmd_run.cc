// `ptxbench run`: the multi-turn agent over a plan of task × prompt variant × trajectory
// (docs/agent.md). Reads the environment (API keys, base URLs) here and nowhere else.
#include <algorithm>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "agent/model_config.h"
#include "agent/provider_factory.h"
#include "agent/sweep.h"
#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "cli/run_supervision_options.h"
#include "cli/target_choice.h"
#include "eval/harness_job.h"
#include "eval/pipeline.h"
#include "prompts/prompt_renderer.h"
#include "prompts/variant_manifest.h"
#include "cli/option_checks.h"
#include "cli/output_paths.h"
#include "suite/unknown_target.h"

namespace ptxbench::cli {
namespace {

struct run_args {
  std::string model, models_file, base_url, out, target, history = "full", evaluator = "pipeline",
              language = "cuda";
  std::string evaluator_token_file;
  std::vector<std::string> tasks, variants = {"0", "1", "2"};
  int trajectories = 4, turns = 8, parallel = 4, gpus = 1, eval_retries = 1, fake_delay_ms = 0;
  double target_speedup = 1.2;
  int64_t context_budget = 0;
  uint64_t seed = 0;
  bool cpu_only = false, dry_run = false, quiet = false, stream = false;
  supervision_args supervision;
};

// The command that resumes this run, recorded in plan.json.
std::vector<std::string> canonical_argv(const run_args& a) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : split_list(v)) s += (s.empty() ? "" : ",") + x;
    return s;
  };
  std::vector<std::string> argv = {"ptxbench", "run", "--model", a.model, "--tasks", join(a.tasks),
                                   "--variants", join(a.variants), "--target", a.target,
                                   "--trajectories", std::to_string(a.trajectories), "--turns", std::to_string(a.turns),
                                   "--target-speedup", fmt::format("{}", a.target_speedup), "--history", a.history,
                                   "--out", a.out};
  if (a.context_budget > 0) argv.insert(argv.end(), {"--context-budget", std::to_string(a.context_budget)});
  if (a.language != "cuda") argv.insert(argv.end(), {"--language", a.language});
  if (a.cpu_only) argv.push_back("--cpu-only");
  if (a.seed != 0) argv.insert(argv.end(), {"--seed", std::to_string(a.seed)});
  if (!a.base_url.empty()) argv.insert(argv.end(), {"--base-url", a.base_url});
  if (!a.models_file.empty()) argv.insert(argv.end(), {"--models-file", a.models_file});
  if (a.evaluator != "pipeline") argv.insert(argv.end(), {"--evaluator", a.evaluator});
  if (!a.evaluator_token_file.empty()) argv.insert(argv.end(), {"--evaluator-token-file", a.evaluator_token_file});
  if (a.stream) argv.push_back("--stream");
  auto sup = supervision_argv(a.supervision);
  argv.insert(argv.end(), sup.begin(), sup.end());
  return argv;
}

exit_status run_command(run_args a, const context& ctx) {
  if (auto st = check_output_dir(a.out, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  if (auto st = check_output_dir(ctx.cache_dir.string(), ctx.cache_dir_named_by); !st)
    return report_error(st.err().message, exit_status::usage);
  auto tasks = load_suite(ctx.suite_dir());
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  // The target is resolved before the plan records the command, so a resumed run keeps it.
  if (!a.target.empty() && !tasks->find_target(a.target)) {
    return report_error(unknown_target_message(*tasks, a.target), exit_status::usage);
  }
  const eval::pipeline_config probe_config;  // the harness beside this program, as the evaluator uses
  const bool local_gpu = a.evaluator == "pipeline" && !a.cpu_only;
  auto chosen = choose_target(*tasks, {a.target, local_gpu, 0, eval::harness_path(probe_config)});
  if (!chosen) return report_error(chosen.err().message, exit_status::usage);
  a.target = *chosen;
  const std::vector<std::string> argv = canonical_argv(a);
  auto resolved = resolve_model_choice({a.model, a.models_file, a.base_url, a.stream}, ctx);
  if (!resolved) return report_error(resolved.err().message, exit_status::usage);
  auto* model = &resolved->spec;
  auto policy = agent::parse_history_policy(a.history);
  if (!policy) return report_error(fmt::format("--history {}: expected full, latest-pair or budget", a.history), exit_status::usage);
  if (*policy == agent::history_policy::budget && a.context_budget <= 0 && !model->context_window_tokens)
    return report_error("--history budget needs --context-budget TOKENS (the model config has no context window)",
                        exit_status::usage);

  agent::sweep_options o;
  o.out_dir = a.out;
  o.target = a.target;
  o.language = a.language;
  o.variants = split_list(a.variants);
  o.trajectories = a.trajectories;
  o.turns = a.turns;
  o.target_speedup = a.target_speedup;
  o.policy = *policy;
  if (a.context_budget > 0) o.context_budget_tokens = a.context_budget;
  o.parallel = a.parallel;
  o.gpus = a.gpus;
  // A service queues evaluations itself: every trajectory may have one in flight.
  if (is_service_url(a.evaluator)) o.gpus = std::max(a.gpus, a.parallel);
  o.run_on_gpu = !a.cpu_only;
  o.eval_retries = a.eval_retries;
  o.seed = a.seed;
  o.evaluator_name = a.evaluator;
  o.argv = argv;
  o.quiet = a.quiet;
  o.progress_bar = isatty(STDERR_FILENO) != 0;
  for (const auto& t : split_list(a.tasks)) {
    if (t != "all") {
      o.tasks.push_back(t);
      continue;
    }
    for (const auto& tk : tasks->tasks)
      if (tk.status == "ready" && std::find(tk.targets.begin(), tk.targets.end(), a.target) != tk.targets.end())
        o.tasks.push_back(tk.name);
  }
  if (o.tasks.empty()) return report_error("--tasks: no task selected", exit_status::usage);
  if (o.variants.empty()) return report_error("--variants: no variant selected", exit_status::usage);
  agent::sweep_services s;
  s.tasks = &*tasks;
  s.model = &*model;
  auto packs = pack_prompts(ctx, &*tasks, a.language);
  if (!packs) return report_error(packs.err().message, exit_status::usage);
  s.prompts = packs->first;
  s.resolve_variant = packs->second;
  auto sup = load_supervision(a.supervision, *tasks);
  if (!sup) return report_error(sup.err().message, exit_status::usage);
  if (auto st = apply_supervision(std::make_shared<const supervision::run_supervision>(std::move(*sup)), &*tasks, o, s); !st)
    return report_error(st.err().message, exit_status::usage);
  // Every name is checked (tasks, target, variants, the model's label) before anything else is said.
  auto variants = agent::resolve_task_variants(o, s);
  if (!variants) return report_error(variants.err().message, exit_status::usage);
  std::optional<int> replay_clamp;
  if (model->api == agent::api_kind::replay) {
    int replies = agent::replay_reply_count(model->replay_file);
    if (replies == 0) {
      auto check = agent::make_replay_provider(model->replay_file);
      return report_error(check ? "replay file has no replies" : check.err().message, exit_status::usage);
    }
    if (replies < o.turns) replay_clamp = o.turns = replies;
  }
  if (a.dry_run) {
    auto plan = agent::expand_plan(o, *variants);
    for (const auto& item : plan)
      fmt::print("{:>4}  {}  (seed {})\n", item.index, (o.out_dir / item.file).string(), item.seed);
    fmt::print("{} trajectories × {} turns, model {}, evaluator {}{}\n", plan.size(), o.turns, model->name,
               o.evaluator_name, o.run_on_gpu ? "" : " (CPU stages only)");
    return exit_status::ok;
  }
  // Fail now rather than with an infrastructure error on every trajectory's first evaluation.
  if (auto gpu = check_gpu_for(a.evaluator, o.run_on_gpu, tasks->find_target(o.target)); !gpu)
    return report_error(gpu.err().message, exit_status::usage);
  auto factory = evaluator_factory_for(a.evaluator, a.fake_delay_ms, ctx, a.evaluator_token_file);
  if (!factory) return report_error(factory.err().message, exit_status::usage);
  // Said only once the command is accepted, so a refused command is one line.
  if (replay_clamp && !a.quiet)
    std::fprintf(stderr, "ptxbench: replay: %s holds %d replies; running %d turns per trajectory\n",
                 model->replay_file.c_str(), *replay_clamp, *replay_clamp);

  const std::atomic<bool>* interrupted = install_interrupt_handler();
  auto llm = model_provider(*resolved, interrupted);
  if (!llm) return report_error(llm.err().message, exit_status::usage);
  s.llm = llm->get();
  s.make_evaluator = *factory;
  s.interrupt = interrupted;
  auto out = agent::run_sweep(o, s);
  if (!out) return report_error(out.err().message, exit_status::usage);
  const auto& t = out->summary["totals"];
  if (!a.quiet)
    std::fprintf(stderr,
                 "ptxbench: %d/%d trajectories finished (%d reached the target) | correct %d | target-correct %d | "
                 "%d turns | %d model calls, $%.4f%s | %s\n",
                 t["finished"].get<int>(), t["planned"].get<int>(), t["submitted"].get<int>(),
                 t["correct_trajectories"].get<int>(), t["target_correct_trajectories"].get<int>(),
                 t["turns_completed"].get<int>(), t["api_calls"].get<int>(), t["cost_usd"].get<double>(),
                 t["calls_without_cost"].get<int>() > 0 ? " (some calls had no price)" : "",
                 (o.out_dir / "summary.json").c_str());
  if (out->status != exit_status::ok) return report_error(out->message, out->status);
  return exit_status::ok;
}

}  // namespace

void add_run_command(CLI::App& app, context& ctx) {
  auto args = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "run the multi-turn agent over tasks × prompt variants × trajectories");
  cmd->add_option("--model", args->model, "model name from the models file, replay:FILE, openai:ID, anthropic:ID or gemini:ID")
      ->required();
  cmd->add_option("--tasks", args->tasks, "tasks, comma-separated, or 'all' (every ready task of the target)")
      ->required()
      ->default_str("");
  cmd->add_option("--out", args->out, "run directory (plan.json, trajectories/, summary.json); re-run to resume")
      ->required();
  cmd->add_option("--target", args->target,
                  "target GPU (suite/targets.json; default: the local GPU's target, h200 where no GPU decides)");
  cmd->add_option("--language", args->language,
                  "the language the model writes: cuda (CUDA-PTX, kernel.cu) or triton (kernel.py, packs/triton)")
      ->check(CLI::IsMember({"cuda", "triton"}))
      ->capture_default_str();
  cmd->add_option("--variants", args->variants,
                  "prompt variants by name or index in each task's family (packs/variants.json), comma-separated; "
                  "builtin-minimal = the pack-free built-in prompt");
  cmd->add_option("--trajectories", args->trajectories, "trajectories per task and variant")->check(whole_number(1, 10000));
  cmd->add_option("--turns", args->turns, "turns per trajectory")->check(whole_number(1, 1000));
  cmd->add_option("--target-speedup", args->target_speedup, "stop a trajectory when a target-correct kernel reaches this speedup")
      ->check(positive_number(1e6));
  cmd->add_option("--history", args->history, "what the model sees: full, latest-pair or budget");
  cmd->add_option("--context-budget", args->context_budget, "prompt token budget (budget policy; default: the model's context window less its output)")
      ->check(whole_number(1, 1'000'000'000))
      ->default_str("");
  cmd->add_option("--parallel", args->parallel, "trajectories at once (model calls run concurrently)")
      ->check(whole_number(1, 1024));
  cmd->add_option("--gpus", args->gpus, "evaluation slots (GPUs); evaluations queue for a free one")
      ->check(whole_number(1, 256));
  cmd->add_flag("--cpu-only", args->cpu_only, "evaluate only the CPU stages (gates, build, static SASS); the feedback says so");
  cmd->add_option("--eval-retries", args->eval_retries, "extra attempts after an infrastructure failure")->check(whole_number(0, 100));
  cmd->add_option("--models-file", args->models_file, "models file (default: <root>/configs/models.json)");
  cmd->add_option("--base-url", args->base_url, "override the model's API base URL (vLLM, SGLang, llama.cpp servers)");
  cmd->add_flag("--stream", args->stream, "stream replies (server-sent events), as the models file's \"stream\": true");
  cmd->add_option("--seed", args->seed, "base seed; each trajectory's seed derives from it")->check(seed_value());
  cmd->add_flag("--dry-run", args->dry_run, "print the plan and exit");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress output");
  add_supervision_options(cmd, args->supervision);
  // Test-only switches (docs/agent.md, "Testing"): a fake evaluator that makes verdicts up from markers.
  cmd->add_option("--evaluator", args->evaluator,
                  "pipeline (this machine's GPUs), or a PTXBench service URL http://HOST:PORT (`ptxbench serve`)")
      ->capture_default_str();
  cmd->add_option("--evaluator-token-file", args->evaluator_token_file, "the service's bearer token file");
  cmd->add_option("--fake-eval-delay-ms", args->fake_delay_ms, "fake evaluator: milliseconds per evaluation")
      ->check(whole_number(0, 3'600'000))
      ->group("");
  cmd->callback([&ctx, args]() { ctx.exit = run_command(*args, ctx); });
}

}  // namespace ptxbench::cli

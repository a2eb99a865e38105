// `ptxbench mcp [--remote URL] [--target T] [--variant V]`: a Model Context Protocol server on
// stdin/stdout (mcp/server.h) for coding agents (docs/coding-agents.md). It evaluates with the
// evaluator the other commands use (cli/agent_setup.h: this machine's pipeline or a PTXBench
// service), renders prompts by the rule `ptxbench prompt` uses and summarises verdicts as `check`
// and `eval` print them. Standard output carries protocol messages only: fd 1 is pointed at stderr
// before any work, so nothing else (a tool's output, a log line) can break the stream.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>

#include <fmt/format.h>

#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "cli/gpu_presence.h"
#include "cli/option_checks.h"
#include "cli/output_paths.h"
#include "cli/print_verdict.h"
#include "cli/prompt_source.h"
#include "cli/target_choice.h"
#include "eval/harness_job.h"
#include "eval/pipeline.h"
#include "mcp/server.h"
#include "prompts/variant_manifest.h"

namespace ptxbench::cli {
namespace {

struct mcp_options {
  std::string remote, token_file, target, variant = "base", evaluator = "pipeline";
  int device = 0, fake_delay_ms = 0, progress_interval_ms = 2000;
};

exit_status run_mcp(const context& ctx, mcp_options o) {
  if (auto st = check_output_dir(ctx.cache_dir.string(), ctx.cache_dir_named_by); !st)
    return report_error(st.err().message, exit_status::usage);
  if (!o.remote.empty() && !is_service_url(o.remote))
    return report_error(fmt::format("--remote {}: expected a PTXBench service URL http://HOST:PORT", o.remote),
                        exit_status::usage);
  auto s = std::make_shared<suite>();
  if (auto loaded = load_suite(ctx.suite_dir()); !loaded) return report_error(loaded.err().message, exit_status::usage);
  else *s = std::move(*loaded);
  // The target of calls that name none: --target, else this machine's GPU's (the one rule, target_choice.h).
  const eval::pipeline_config probe_config;
  auto chosen = choose_target(*s, {o.target, o.remote.empty() && o.evaluator == "pipeline", o.device,
                                   eval::harness_path(probe_config)});
  if (!chosen) return report_error(chosen.err().message, exit_status::usage);
  o.target = *chosen;
  if (!s->find_target(o.target)) {
    std::vector<std::string> names;
    for (const auto& [name, info] : s->targets) names.push_back(name);
    return report_error(unknown_name_message("target", o.target, names, "suite/targets.json lists them"),
                        exit_status::usage);
  }
  auto manifest = prompts::load_variant_manifest(ctx.packs_dir());
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);
  const std::string evaluator_name = o.remote.empty() ? o.evaluator : o.remote;
  auto factory = evaluator_factory_for(evaluator_name, o.fake_delay_ms, ctx, o.token_file);
  if (!factory) return report_error(factory.err().message, exit_status::usage);
  auto evaluator = (*factory)(o.device);
  if (!evaluator) return report_error(evaluator.err().message, exit_status::infra);

  mcp::services services;
  services.tasks = s.get();
  services.evaluator = std::shared_ptr<ptxbench::evaluator>(std::move(*evaluator));
  services.default_target = o.target;
  services.default_variant = o.variant;
  services.evaluator_description = !o.remote.empty()        ? "the PTXBench service at " + o.remote
                                   : o.evaluator == "fake" ? "the test-only fake evaluator (made-up verdicts)"
                                                           : fmt::format("this machine's GPU {}", o.device);
  auto shared_manifest = std::make_shared<prompts::variant_manifest>(std::move(*manifest));
  const std::filesystem::path packs = ctx.packs_dir();
  services.prompt = [s, shared_manifest, packs](const task& t, const target_info& target,
                                                const std::string& spec) -> result<mcp::task_prompt> {
    auto variant = resolve_variant_name(*shared_manifest, t, target, spec);
    if (!variant) return variant.err();
    auto p = render_task_prompt(*s, t, *variant, target, packs);
    if (!p) return p.err();
    return mcp::task_prompt{p->variant, p->pack, p->system, p->user};
  };
  services.summary = [](const verdict& v, const std::string& name) { return verdict_text(v, name, false); };
  if (o.remote.empty() && o.evaluator == "pipeline")
    services.gpu_ready = [](const target_info& target) -> status {
      if (auto why = missing_gpu())
        return make_error(fmt::format("{} to evaluate {} kernels on; the check tool runs the CPU stages, and `ptxbench "
                                      "mcp --remote URL` evaluates on a PTXBench service",
                                      *why, target.name));
      return ok();
    };

  // The protocol owns the real stdout; everything else that writes to fd 1 lands on stderr.
  const int protocol = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    return report_error("mcp: cannot set up standard output", exit_status::infra);
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away is a failed write, not a killed server
  mcp::server_options options;
  options.progress_interval_s = o.progress_interval_ms / 1000.0;
  mcp::server server(std::move(services), options, protocol);
  return server.run(STDIN_FILENO) == 0 ? exit_status::ok : exit_status::infra;
}

}  // namespace

void add_mcp_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand(
      "mcp", "a Model Context Protocol server on stdio: list, show, check and evaluate tasks from a coding agent");
  auto o = std::make_shared<mcp_options>();
  cmd->add_option("--remote", o->remote,
                  "evaluate on a PTXBench service (http://HOST:PORT) instead of this machine's GPU");
  cmd->add_option("--token-file", o->token_file,
                  "--remote: the service's bearer token file (default: $PTXBENCH_SERVICE_TOKEN, if set)");
  cmd->add_option("--target", o->target, "the target GPU a call gets when it names none (default: this machine's GPU's, else h200)");
  cmd->add_option("--variant", o->variant, "the prompt variant show_task renders when a call names none");
  cmd->add_option("--device", o->device, "CUDA device ordinal of local evaluations")->check(whole_number(0, 1023));
  cmd->add_option("--progress-interval-ms", o->progress_interval_ms,
                  "milliseconds between progress notifications of a call with a progressToken")
      ->check(whole_number(10, 3'600'000));
  // Test-only (docs/coding-agents.md, "Testing"): the fake evaluator that makes verdicts up from markers.
  cmd->add_option("--evaluator", o->evaluator, "pipeline, or fake (tests only)")
      ->check(CLI::IsMember({"pipeline", "fake"}))
      ->group("");
  cmd->add_option("--fake-delay-ms", o->fake_delay_ms, "fake evaluator: milliseconds per evaluation")
      ->check(whole_number(0, 3'600'000))
      ->group("");
  // run_mcp takes a copy: the chosen target fills it in.
  cmd->callback([&ctx, o]() { ctx.exit = run_mcp(ctx, *o); });
}

}  // namespace ptxbench::cli

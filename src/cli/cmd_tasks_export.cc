// `ptxbench tasks export --format harbor --out DIR [--tasks A,B] [--target h200] [--variant base]`:
// one Harbor task folder per task (harbor/task_folder.h), so a coding agent is benchmarked on the
// same tasks through Harbor (docs/coding-agents.md). The prompt is rendered by the rule `ptxbench
// run` uses (cli/prompt_source.h); the folder appears whole or not at all (adapt/staged_dir.h), and
// an existing non-empty --out is refused.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "adapt/staged_dir.h"
#include "cli/agent_setup.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_paths.h"
#include "cli/prompt_source.h"
#include "harbor/task_folder.h"
#include "prompts/variant_manifest.h"
#include "suite/task.h"

namespace ptxbench::cli {
namespace {

struct export_options {
  std::string format, out, target = "h200", variant = "base";
  std::vector<std::string> tasks;
  std::string image = std::string("ptxbench-agent:") + PTXBENCH_VERSION;
  std::string service_url = "http://host.docker.internal:8000";
  double agent_timeout_s = 3600, verifier_timeout_s = 1800;
};

// The tasks to export: those named (each must resolve for a GPU run on the target), else every
// task of the target whose reference exists.
result<std::vector<const task*>> chosen_tasks(const suite& s, const target_info& target, const export_options& o) {
  std::vector<const task*> out;
  const auto names = split_list(o.tasks);
  if (!o.tasks.empty() && names.empty()) return make_error("--tasks: no task named");
  for (const auto& name : names) {
    auto p = resolve_evaluation(s, name, target.name, true);
    if (!p) return make_error(fmt::format("--tasks: {}", p.err().message));
    if (std::find(out.begin(), out.end(), p->t) == out.end()) out.push_back(p->t);
  }
  if (names.empty())
    for (const auto& t : s.tasks)
      if (resolve_evaluation(s, t.name, target.name, true)) out.push_back(&t);
  if (out.empty()) return make_error(fmt::format("no task of the suite can be evaluated on {}", target.name));
  return out;
}

exit_status run_export(const context& ctx, const export_options& o) {
  if (auto st = check_output_dir(o.out, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec) && !std::filesystem::is_empty(o.out, ec))
    return report_error(fmt::format("--out {}: not empty; the export writes a new folder and never overwrites", o.out),
                        exit_status::usage);
  auto s = load_suite(ctx.suite_dir());
  if (!s) return report_error(s.err().message, exit_status::usage);
  const target_info* target = s->find_target(o.target);
  if (!target) {
    std::vector<std::string> names;
    for (const auto& [name, info] : s->targets) names.push_back(name);
    return report_error(unknown_name_message("target", o.target, names, "suite/targets.json lists them"),
                        exit_status::usage);
  }
  auto tasks = chosen_tasks(*s, *target, o);
  if (!tasks) return report_error(tasks.err().message, exit_status::usage);
  auto manifest = prompts::load_variant_manifest(ctx.packs_dir());
  if (!manifest) return report_error(manifest.err().message, exit_status::usage);

  harbor::export_settings settings;
  settings.image = o.image;
  settings.service_url = o.service_url;
  settings.agent_timeout_s = o.agent_timeout_s;
  settings.verifier_timeout_s = o.verifier_timeout_s;
  settings.ptxbench_version = PTXBENCH_VERSION;
  // Every file is rendered before anything is written, so a bad task or variant leaves nothing behind.
  std::vector<std::pair<const task*, std::vector<harbor::folder_file>>> folders;
  ordered_json listed = ordered_json::array();
  for (const task* t : *tasks) {
    auto variant = resolve_variant_name(*manifest, *t, *target, o.variant);
    if (!variant) return report_error(fmt::format("--variant: {}", variant.err().message), exit_status::usage);
    auto prompt = render_task_prompt(*s, *t, *variant, *target, ctx.packs_dir());
    if (!prompt) return report_error(prompt.err().message, exit_status::usage);
    settings.variant = *variant;
    auto files = harbor::task_folder_files(*t, *target, {prompt->system, prompt->user}, settings);
    if (!files) return report_error(files.err().message, exit_status::usage);
    folders.emplace_back(t, std::move(*files));
    listed.push_back({{"task", t->name}, {"variant", *variant}});
  }
  auto out = adapt::staged_dir::create(o.out);
  if (!out) return report_error(out.err().message, exit_status::usage);
  for (const auto& [t, files] : folders)
    for (const auto& f : files)
      if (auto w = out->write(t->name + "/" + f.path, f.content, f.executable); !w)
        return report_error(w.err().message, exit_status::infra);
  ordered_json record = {{"format", "ptxbench.harbor-export/1"}, {"ptxbench_version", PTXBENCH_VERSION},
                         {"target", target->name},               {"image", o.image},
                         {"service_url", o.service_url},         {"tasks", listed}};
  if (auto st = out->commit(std::move(record)); !st) return report_error(st.err().message, exit_status::infra);
  std::printf("exported %zu Harbor task%s for %s (variant %s) to %s; run them with\n"
              "  harbor run -p %s -a <agent> -m <model>\n"
              "with a PTXBench service at $PTXBENCH_SERVICE_URL (docs/coding-agents.md)\n",
              folders.size(), folders.size() == 1 ? "" : "s", target->name.c_str(), o.variant.c_str(), o.out.c_str(),
              o.out.c_str());
  return exit_status::ok;
}

}  // namespace

void add_tasks_export_subcommand(CLI::App& tasks, context& ctx) {
  auto* cmd = tasks.add_subcommand("export", "write tasks as Harbor task folders for coding agents (docs/coding-agents.md)");
  auto o = std::make_shared<export_options>();
  cmd->add_option("--format", o->format, "the task format: harbor")->required()->check(CLI::IsMember({"harbor"}));
  cmd->add_option("--out", o->out, "a new (or empty) folder to write one task folder per task into")->required();
  cmd->add_option("--tasks", o->tasks, "tasks to export, comma-separated (default: every task the target can evaluate)");
  cmd->add_option("--target", o->target, "target GPU from suite/targets.json (one the service's GPUs serve)");
  cmd->add_option("--variant", o->variant,
                  "prompt variant for instruction.md: a name or an index from `ptxbench prompt TASK --list`, or "
                  "builtin-minimal");
  cmd->add_option("--image", o->image, "the environment's base image (docker/agent.Dockerfile builds it)");
  cmd->add_option("--service-url", o->service_url,
                  "the service URL a trial uses when $PTXBENCH_SERVICE_URL is not set on the Harbor host");
  cmd->add_option("--agent-timeout", o->agent_timeout_s, "seconds the agent may work (task.toml [agent])")
      ->check(timeout_seconds());
  cmd->add_option("--verifier-timeout", o->verifier_timeout_s,
                  "seconds the final evaluation may take through the service's queue (task.toml [verifier])")
      ->check(timeout_seconds());
  cmd->callback([&ctx, o]() { ctx.exit = run_export(ctx, *o); });
}

}  // namespace ptxbench::cli

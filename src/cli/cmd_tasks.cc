// `ptxbench tasks [--json]` lists the suite; `ptxbench tasks show NAME` prints one task as the model
// sees it (definition plus the concrete workload axes and shapes); `ptxbench tasks export` is in
// cmd_tasks_export.cc.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.h"
#include "suite/task.h"
#include "suite/task_view.h"

namespace ptxbench::cli {
namespace {

std::string axes_text(const task& t) {
  std::string out;
  for (const auto& a : t.def.axes) {
    if (!out.empty()) out += " ";
    out += fmt::format("{}={}", a.name, resolve_axes(t.wl, t.def)[a.name]);
  }
  return out;
}

void print_table(const suite& s) {
  fmt::print("{:<44} {:<8} {:<15} {:>6}  {:<18}  {}\n", "TASK", "PROBLEM", "BASELINE", "TRIALS", "STATUS", "AXES");
  for (const auto& t : s.tasks) {
    std::string status = t.status + (t.held_out ? "*" : "");
    fmt::print("{:<44} {:<8} {:<15} {:>6}  {:<18}  {}\n", t.name, t.problem, t.baseline.empty() ? "-" : t.baseline,
               t.correctness_trials, status, axes_text(t));
  }
  fmt::print("\n* held out (not in the paper's five headline problems)\n");
  fmt::print("Targets (any task): ");
  bool first = true;
  for (const auto& [name, ti] : s.targets) {
    std::string fams;
    for (const auto& f : ti.required_families) fams += (fams.empty() ? "" : " or ") + f;
    fmt::print("{}{} {} requires {}{}", first ? "" : "; ", name, ti.arch, fams,
               ti.verification == "static_only" ? " (compile + static SASS only: no such GPU here)" : "");
    first = false;
  }
  fmt::print("\n");
}

}  // namespace

void add_tasks_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("tasks", "list the task suite, show one task as the model sees it, or export tasks for coding agents (Harbor)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "machine-readable output");
  auto* show = cmd->add_subcommand("show", "print the task definition JSON the model will see, with concrete axes");
  auto name = std::make_shared<std::string>();
  show->add_option("name", *name, "task name")->required();
  // The model's view is JSON already; --json is accepted here too, as on `tasks` and every other command.
  show->add_flag("--json", *json, "machine-readable output (the same JSON: it is what the model sees)");
  add_tasks_export_subcommand(*cmd, ctx);

  cmd->callback([&ctx, cmd, show, json, name]() {
    if (cmd->get_subcommand("export")->parsed()) return;  // cmd_tasks_export.cc did the work
    auto s = load_suite(ctx.suite_dir());
    if (!s) { ctx.exit = report_error(s.err().message, exit_status::usage); return; }
    if (show->parsed()) {
      const task* t = s->find_task(*name);
      if (!t) {
        std::vector<std::string> names;
        for (const auto& tk : s->tasks) names.push_back(tk.name);
        ctx.exit = report_error(unknown_name_message("task", *name, names, "`ptxbench tasks` lists them"),
                                exit_status::usage);
        return;
      }
      std::puts(dump_pretty(task_view_json(*t)).c_str());
      return;
    }
    if (*json) {
      ordered_json out = ordered_json::array();
      for (const auto& t : s->tasks) out.push_back(task_summary_json(t, *s));
      std::puts(ordered_json{{"suite", s->root.string()}, {"tasks", out}}.dump(2).c_str());
      return;
    }
    print_table(*s);
  });
}

}  // namespace ptxbench::cli

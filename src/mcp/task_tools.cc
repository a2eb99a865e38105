#include "mcp/task_tools.h"

#include <fmt/format.h>

#include "mcp/tool_arguments.h"
#include "mcp/tool_result.h"
#include "suite/task_view.h"

namespace ptxbench::mcp {
namespace {

std::vector<std::string> task_names(const suite& s) {
  std::vector<std::string> names;
  for (const auto& t : s.tasks) names.push_back(t.name);
  return names;
}

std::vector<std::string> target_names(const suite& s) {
  std::vector<std::string> names;
  for (const auto& [name, info] : s.targets) names.push_back(name);
  return names;
}

}  // namespace

result<ordered_json> list_tasks(const services& s, const ordered_json& arguments) {
  if (auto st = read_list_arguments(arguments); !st) return st.err();
  ordered_json tasks = ordered_json::array(), targets = ordered_json::array();
  std::string text = fmt::format("{} tasks (name: problem, baseline, status):\n", s.tasks->tasks.size());
  for (const auto& t : s.tasks->tasks) {
    tasks.push_back(task_summary_json(t, *s.tasks));
    text += fmt::format("  {}: {}, {}, {}{}\n", t.name, t.problem, t.baseline.empty() ? "-" : t.baseline, t.status,
                        t.held_out ? " (held out)" : "");
  }
  text += "targets:\n";
  for (const auto& [name, ti] : s.tasks->targets) {
    targets.push_back({{"name", name},
                       {"gpu", ti.gpu_name},
                       {"arch", ti.arch},
                       {"required_families", ti.required_families},
                       {"verification", ti.verification}});
    text += fmt::format("  {}: {} ({}), requires {}{}\n", name, ti.gpu_name, ti.arch,
                        fmt::join(ti.required_families, " or "),
                        ti.verification == "static_only" ? "; compile and static SASS only (no such GPU here)" : "");
  }
  return structured_result({{"tasks", tasks}, {"targets", targets}}, text, false);
}

result<ordered_json> show_task(const services& s, const ordered_json& arguments) {
  auto a = read_show_arguments(arguments);
  if (!a) return a.err();
  const task* t = s.tasks->find_task(a->task);
  if (!t) return tool_error(unknown_name_message("task", a->task, task_names(*s.tasks), "list_tasks lists them"));
  const std::string target_name = a->target.value_or(s.default_target);
  const target_info* target = s.tasks->find_target(target_name);
  if (!target)
    return tool_error(unknown_name_message("target", target_name, target_names(*s.tasks), "list_tasks lists them"));
  auto p = s.prompt(*t, *target, a->variant.value_or(s.default_variant));
  if (!p) return tool_error(p.err().message);
  ordered_json structured = {{"task", t->name}, {"target", target->name}, {"variant", p->variant},
                             {"pack", p->pack},  {"system", p->system},   {"user", p->user}};
  return structured_result(structured,
                           fmt::format("===== system =====\n{}\n===== user =====\n{}", p->system, p->user), false);
}

}  // namespace ptxbench::mcp

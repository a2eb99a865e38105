#include "adapt/repair.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "adapt/staged_dir.h"
#include "core/sha256.h"
#include "suite/task_view.h"

namespace ptxbench::adapt {

std::string repair_prompt(const task& t, const std::string& wrong_kernel, const std::string& error_log) {
  auto rstrip = [](std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  };
  // Upstream's layout (run_parallel_fix_v2.build_fixit_prompt): plain "Kernel" and "Error Message"
  // headings, the kernel in a cpp fence, both texts with trailing whitespace dropped, no blank line
  // after the fence or the log; the closing request is ours in words, the same request in substance.
  return fmt::format(
      "Task:\n{}\n\nKernel\n\n```cpp\n{}\n```\nError Message\n\n{}\n"
      "Fix the CUDA kernel with the smallest change that makes it correct. The kernel implements the PyTorch "
      "reference given in the task.\n\n",
      dump_pretty(task_view_json(t)), rstrip(wrong_kernel), rstrip(error_log));
}

result<repair_plan> plan_repairs(const std::filesystem::path& mined_dir, const suite& tasks, const std::string& target,
                                 uint64_t seed) {
  auto rows = load_mined(mined_dir);
  if (!rows) return rows.err();
  repair_plan plan;
  plan.target = target;
  if (plan.target.empty()) {
    std::vector<std::string> seen;
    for (const auto& r : *rows)
      if (std::find(seen.begin(), seen.end(), r.target) == seen.end()) seen.push_back(r.target);
    if (seen.size() > 1) {
      std::string list;
      for (const auto& s : seen) list += (list.empty() ? "" : ", ") + s;
      return make_error(fmt::format("the mined rows span targets {}; choose one with --target", list));
    }
    plan.target = seen.front();
  }
  if (!tasks.find_target(plan.target)) return make_error(fmt::format("unknown target '{}'", plan.target));
  auto manifest = read_manifest(mined_dir, k_mined_format, "`ptxbench fixit mine`");
  if (!manifest) return manifest.err();
  for (const auto& r : *rows) {
    if (r.target != plan.target) {
      ++plan.rows_on_other_targets;
      continue;
    }
    const task* t = tasks.find_task(r.task);
    if (!t) return make_error(fmt::format("mined row {}: task '{}' is not in the suite", r.id, r.task));
    auto prompts = std::make_shared<agent::prompt_pair>();
    prompts->system = r.system_prompt;
    prompts->user = repair_prompt(*t, r.kernel, r.error_log);
    agent::plan_item item;
    item.index = static_cast<int>(plan.items.size());
    item.task = r.task;
    item.target = r.target;
    item.variant = r.variant;
    item.trajectory_index = 0;
    item.seed = std::stoull(sha256_hex(fmt::format("{}:{}", seed, r.id)).substr(0, 13), nullptr, 16);
    item.file = "trajectories/" + r.id + ".json";
    item.source = {{"mined_id", r.id},
                   {"error_type", error_type_name(r.type)},
                   {"label", std::string(outcome_name(r.label))},
                   {"kernel_sha256", sha256_hex(r.kernel)},
                   {"prompt_sha256", sha256_hex(prompts->system + "\x1f" + prompts->user)}};
    item.prompts = prompts;
    if (std::find(plan.tasks.begin(), plan.tasks.end(), r.task) == plan.tasks.end()) plan.tasks.push_back(r.task);
    if (std::find(plan.variants.begin(), plan.variants.end(), r.variant) == plan.variants.end())
      plan.variants.push_back(r.variant);
    plan.items.push_back(std::move(item));
  }
  if (plan.items.empty()) return make_error(fmt::format("no mined row targets '{}'", plan.target));
  std::error_code ec;
  auto abs = std::filesystem::weakly_canonical(std::filesystem::absolute(mined_dir, ec), ec);
  plan.fixit = {{"format", k_repair_format},
                {"mined_dir", abs.string()},
                {"mined_sha256", (*manifest)["files"].value("mined.jsonl", "")},
                {"rows_on_other_targets", plan.rows_on_other_targets}};
  return plan;
}

result<agent::sweep_outcome> run_repairs(const repair_plan& plan, agent::sweep_options o, agent::sweep_services& s) {
  o.tasks = plan.tasks;
  o.variants = plan.variants;
  o.target = plan.target;
  o.trajectories = 1;
  const target_info* target = s.tasks->find_target(plan.target);
  ordered_json doc = agent::plan_json(o, plan.items, *s.model, target->arch);
  doc["fixit"] = plan.fixit;
  return agent::run_plan(o, s, plan.items, std::move(doc));
}

}  // namespace ptxbench::adapt

#include "cli/run_supervision_options.h"

#include <fmt/format.h>

namespace ptxbench::cli {

void add_supervision_options(CLI::App* cmd, supervision_args& a) {
  const std::string group = "Prompt-time supervision (docs/supervision.md)";
  cmd->add_option("--guidance", a.guidance,
                  "expert-guidance document (markdown with a front matter naming its tasks) added to the system prompt")
      ->group(group);
  cmd->add_option("--repair-notes", a.notes, "repair notes (NOTES.jsonl from `ptxbench notes collect`) retrieved after failed turns")
      ->group(group);
  a.retrieval_options = {
      cmd->add_option("--retrieval", a.retrieval, "notes, or notes+kernel (also show the best fixed kernel); default notes")
          ->group(group),
      cmd->add_option("--retrieval-k1", a.k1, "BM25 k1")->capture_default_str()->group(group),
      cmd->add_option("--retrieval-b", a.b, "BM25 b")->capture_default_str()->group(group),
      cmd->add_option("--retrieval-top-groups", a.top_groups, "wrong-kernel groups retrieved per failed turn")
          ->capture_default_str()->group(group),
      cmd->add_option("--retrieval-max-notes", a.max_notes, "instruction notes shown per failed turn at most")
          ->capture_default_str()->group(group),
      cmd->add_flag("--allow-same-trajectory-notes", a.allow_same_trajectory,
                    "also retrieve notes whose pair came from the running trajectory (excluded by default: a leak)")
          ->group(group)};
}

std::vector<std::string> supervision_argv(const supervision_args& a) {
  std::vector<std::string> argv;
  if (!a.guidance.empty()) argv.insert(argv.end(), {"--guidance", a.guidance});
  if (a.notes.empty()) return argv;
  argv.insert(argv.end(), {"--repair-notes", a.notes, "--retrieval", a.retrieval.empty() ? "notes" : a.retrieval});
  if (a.k1 != 1.5) argv.insert(argv.end(), {"--retrieval-k1", fmt::format("{}", a.k1)});
  if (a.b != 0.75) argv.insert(argv.end(), {"--retrieval-b", fmt::format("{}", a.b)});
  if (a.top_groups != 3) argv.insert(argv.end(), {"--retrieval-top-groups", std::to_string(a.top_groups)});
  if (a.max_notes != 8) argv.insert(argv.end(), {"--retrieval-max-notes", std::to_string(a.max_notes)});
  if (a.allow_same_trajectory) argv.push_back("--allow-same-trajectory-notes");
  return argv;
}

result<supervision::run_supervision> load_supervision(const supervision_args& a, const suite& s) {
  supervision::run_supervision sup;
  if (!a.guidance.empty()) {
    auto g = supervision::read_guidance(a.guidance, s);
    if (!g) return g.err().with_context("--guidance");
    sup.guidance = std::make_shared<const supervision::guidance_doc>(std::move(*g));
  }
  if (a.notes.empty()) {
    for (const auto* opt : a.retrieval_options)
      if (opt->count() > 0) return make_error(fmt::format("{} needs --repair-notes NOTES.jsonl", opt->get_name()));
    return sup;
  }
  if (!a.retrieval.empty()) {
    auto mode = supervision::parse_retrieval_mode(a.retrieval);
    if (!mode) return mode.err();
    sup.retrieval.mode = *mode;
  }
  sup.retrieval.bm25 = {a.k1, a.b};
  sup.retrieval.top_groups = a.top_groups;
  sup.retrieval.max_notes = a.max_notes;
  if (auto st = supervision::check_retrieval_options(sup.retrieval); !st) return st.err().with_context("--retrieval");
  sup.allow_same_trajectory_notes = a.allow_same_trajectory;
  auto notes = supervision::read_note_set(a.notes);
  if (!notes) return notes.err().with_context("--repair-notes");
  sup.notes = std::make_shared<const supervision::note_corpus>(std::move(*notes));
  return sup;
}

status apply_supervision(std::shared_ptr<const supervision::run_supervision> sup, const suite* tasks,
                         agent::sweep_options& o, agent::sweep_services& s) {
  if (!sup->active()) return ok();
  if (sup->guidance) {
    bool any = false;
    for (const auto& name : o.tasks)
      if (const task* t = tasks->find_task(name)) any = any || sup->guidance->applies_to(*t);
    if (!any)
      return make_error(fmt::format("--guidance {}: the document names none of this run's tasks, so every trajectory "
                                    "would run without it",
                                    sup->guidance->file.string()));
  }
  o.supervision = sup->plan_record();
  s.prompts = sup->wrap_prompts(s.prompts);
  s.supervise = [sup, tasks](const agent::plan_item& item) {
    const task* t = tasks->find_task(item.task);
    if (!t) return agent::turn_supervision{};
    return sup->for_trajectory(*t, std::filesystem::path(item.file).stem().string());
  };
  return ok();
}

}  // namespace ptxbench::cli

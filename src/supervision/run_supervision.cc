#include "supervision/run_supervision.h"

#include <fmt/format.h>

namespace ptxbench::supervision {
namespace {

ordered_json retrieval_settings(const retrieval_options& o) {
  return {{"mode", retrieval_mode_name(o.mode)}, {"k1", o.bm25.k1}, {"b", o.bm25.b},
          {"top_groups", o.top_groups}, {"max_notes", o.max_notes}};
}

}  // namespace

bool same_trajectory(const repair_note& n, const task& t, const std::string& trajectory_id) {
  return n.pair.source.task == t.name && n.pair.source.trajectory == trajectory_id;
}

std::string run_supervision::arm(const task& t) const {
  std::string a;
  if (guidance && guidance->applies_to(t)) a = guidance->arm();
  if (notes) a += (a.empty() ? "" : "+") + retrieval_mode_name(retrieval.mode);
  return a.empty() ? k_base_arm : a;
}

ordered_json run_supervision::plan_record() const {
  if (!active()) return nullptr;
  ordered_json r = ordered_json::object();
  if (guidance)
    r["guidance"] = {{"sha256", guidance->sha256}, {"arm", guidance->arm()}, {"title", guidance->title},
                     {"tasks", guidance->tasks}, {"problems", guidance->problems}};
  else
    r["guidance"] = nullptr;
  if (notes) {
    ordered_json n = {{"sha256", notes->notes().sha256},
                      {"notes", notes->notes().notes.size()},
                      {"wrong_kernel_groups", notes->groups().size()},
                      {"same_trajectory_notes", allow_same_trajectory_notes ? "allowed" : "excluded"}};
    n.update(retrieval_settings(retrieval));
    r["notes"] = n;
  } else {
    r["notes"] = nullptr;
  }
  return r;
}

agent::turn_supervision run_supervision::for_trajectory(const task& t, const std::string& trajectory_id) const {
  agent::turn_supervision s;
  if (!active()) return s;
  std::string a = arm(t);
  bool guided = guidance && guidance->applies_to(t);
  ordered_json record = {{"arm", a}};
  ordered_json turn = {{"arm", a}};
  if (guidance) {
    record["guidance"] = {{"sha256", guidance->sha256}, {"applies", guided}};
    turn["guidance_sha256"] = guided ? ordered_json(guidance->sha256) : ordered_json(nullptr);
  } else {
    record["guidance"] = nullptr;
  }
  if (!notes) {
    record["notes"] = nullptr;
    s.trajectory_record = std::move(record);
    s.turn_record = std::move(turn);
    return s;
  }
  const auto& all = notes->notes().notes;
  std::vector<bool> allowed(all.size(), true);
  ordered_json same = ordered_json::array();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!same_trajectory(all[i], t, trajectory_id)) continue;
    same.push_back(all[i].pair.key);
    if (!allow_same_trajectory_notes) allowed[i] = false;
  }
  auto retriever = std::make_shared<note_retriever>(notes, allowed, retrieval);
  ordered_json n = {{"sha256", notes->notes().sha256},
                    {"same_trajectory_notes", allow_same_trajectory_notes ? "allowed" : "excluded"},
                    {allow_same_trajectory_notes ? "same_trajectory_keys" : "excluded_keys", same},
                    {"corpus", retriever->corpus_record()}};
  n.update(retrieval_settings(retrieval));
  record["notes"] = n;
  turn["notes_sha256"] = notes->notes().sha256;
  retrieval_mode mode = retrieval.mode;
  s.on_failed_turn = [retriever, mode](const agent::failed_turn& f) -> std::optional<agent::feedback_supplement> {
    retrieval_result r = retriever->retrieve(*f.kernel, *f.feedback_text);
    return agent::feedback_supplement{render_retrieval(retriever->corpus(), r, mode),
                                      retrieval_record(retriever->corpus(), r, retriever->options())};
  };
  s.trajectory_record = std::move(record);
  s.turn_record = std::move(turn);
  return s;
}

agent::prompt_builder run_supervision::wrap_prompts(agent::prompt_builder base) const {
  if (!guidance) return base;
  auto g = guidance;
  return [base = std::move(base), g](const task& t, const target_info& target,
                                     const std::string& variant) -> result<agent::prompt_pair> {
    auto p = base(t, target, variant);
    if (!p || !g->applies_to(t)) return p;
    p->system = system_prompt_with_guidance(p->system, *g);
    return p;
  };
}

}  // namespace ptxbench::supervision

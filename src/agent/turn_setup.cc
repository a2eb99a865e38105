#include "agent/turn_setup.h"

#include <fmt/format.h>

namespace ptxbench::agent {

ordered_json agent_config(const trajectory_spec& s) {
  return {{"agent", {{"step_limit", s.turn_limit},
                     {"cost_limit", 0},
                     {"target_speedup", s.target_speedup},
                     {"history_policy", history_policy_name(s.policy)},
                     {"context_budget_tokens", s.budget_tokens ? ordered_json(*s.budget_tokens) : ordered_json(nullptr)},
                     {"output_path", s.file.string()}}},
          {"agent_type", k_agent_type},
          {"model", s.model_json},
          {"environment", s.environment_json}};
}

std::string meta_mismatch(const trajectory_meta& have, const trajectory_spec& want) {
  auto differs = [](const char* what, const std::string& a, const std::string& b) {
    return a == b ? std::string() : fmt::format("{} is '{}' in the file but '{}' now", what, a, b);
  };
  for (auto m : {differs("model", have.model, want.model_name), differs("task", have.task, want.t->name),
                 differs("target", have.target, want.target->name), differs("variant", have.variant, want.variant),
                 differs("language", have.language, want.language),
                 differs("history policy", have.history_policy, history_policy_name(want.policy))})
    if (!m.empty()) return m;
  if (have.trajectory_index != want.index) return "trajectory index differs";
  if (have.target_speedup != want.target_speedup)
    return fmt::format("target speedup is {} in the file but {} now", have.target_speedup, want.target_speedup);
  if (have.turn_limit > want.turn_limit)
    return fmt::format("turn limit is {} in the file but {} now", have.turn_limit, want.turn_limit);
  return "";
}

std::string trajectory_end_name(trajectory_end e) {
  switch (e) {
    case trajectory_end::submitted: return "submitted";
    case trajectory_end::limits_exceeded: return "limits_exceeded";
    case trajectory_end::context_exceeded: return "context_exceeded";
    case trajectory_end::auth_error: return "auth_error";
    case trajectory_end::api_error: return "api_error";
    case trajectory_end::infra_error: return "infra_error";
    case trajectory_end::stopped: return "stopped";
    case trajectory_end::setup_error: return "setup_error";
  }
  return "setup_error";
}

solution make_turn_solution(const trajectory_spec& spec, int turn, const std::string& code) {
  solution s;
  s.name = fmt::format("{}__{}__t{}__turn{}", spec.t->name, spec.variant, spec.index, turn);
  s.definition = spec.t->name;
  s.author = spec.model_name;
  s.spec.target_hardware = {spec.target->name};
  s.spec.destination_passing_style = true;
  if (spec.language == "triton") {
    s.spec.language = "triton";
    s.spec.entry_point = "kernel.py::run";
    s.sources.push_back({"kernel.py", code});
    return s;
  }
  s.spec.language = "cuda";
  s.spec.entry_point = "kernel.cu::run";
  s.spec.binding = "ptxbench";
  s.sources.push_back({"kernel.cu", code});
  return s;
}

}  // namespace ptxbench::agent

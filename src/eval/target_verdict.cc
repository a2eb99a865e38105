#include "eval/target_verdict.h"

#include <fmt/format.h>

namespace ptxbench::eval {

bool required_present(const verdict& v, const std::optional<family_counts>& counts) {
  if (!counts) return false;
  for (const auto& fam : v.targets.required_families) {
    auto it = counts->find(fam);
    if (it != counts->end() && it->second > 0) return true;
  }
  return false;
}

void decide_target_verdict(verdict& v) {
  auto& t = v.targets;
  bool static_known = t.static_counts.has_value();
  bool static_present = required_present(v, t.static_counts);
  std::string families = fmt::format("{}", fmt::join(t.required_families, " or "));
  if (static_known && !static_present) {
    t.verdict = target_verdict::absent_in_sass;
    if (t.reason.empty()) t.reason = fmt::format("no {} instruction in the built SASS", families);
    return;
  }
  if (!v.passed()) {
    t.verdict = target_verdict::deferred;
    t.reason = fmt::format("not established: the runtime check runs only on correct kernels{}",
                           static_known ? fmt::format(" ({} present in SASS)", families) : "");
    return;
  }
  const stage_record* dyn = v.stage(stage_id::dynamic_check);
  if (!dyn || dyn->outcome == stage_outcome::skipped) {
    t.verdict = target_verdict::deferred;
    t.reason = "the runtime check was not run";
    return;
  }
  if (dyn->outcome == stage_outcome::error || !t.dynamic.counts) {
    t.verdict = target_verdict::profile_error;
    t.reason = dyn->summary;
    return;
  }
  std::string ran;
  for (const auto& fam : t.required_families) {
    auto it = t.dynamic.counts->find(fam);
    int64_t n = it == t.dynamic.counts->end() ? 0 : it->second;
    if (n > 0) ran += fmt::format("{}{} ({} predicate-on thread instructions)", ran.empty() ? "" : ", ", fam, n);
  }
  if (!ran.empty()) {
    t.verdict = target_verdict::executed;
    t.reason = "executed on the workload: " + ran;
  } else {
    t.verdict = target_verdict::not_executed;
    t.reason = fmt::format("{} present in SASS{} but never executed on the workload (0 predicate-on thread instructions)",
                           families, static_known ? "" : " (presumably)");
  }
}

}  // namespace ptxbench::eval

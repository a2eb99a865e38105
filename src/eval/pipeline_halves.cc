#include "eval/pipeline_halves.h"

#include <algorithm>

#include <fmt/format.h>

#include "measure/coverage.h"
#include "suite/trace.h"

namespace ptxbench::eval {
namespace {

void finish_check(verdict& v, const target_info& target) {
  std::string targets;
  switch (v.targets.verdict) {
    case target_verdict::absent_in_sass: targets = "no required instruction family in the SASS (not target-correct)"; break;
    case target_verdict::deferred: targets = "target instructions: " + v.targets.reason; break;
    default: targets = "required instruction family present in the SASS; run `ptxbench eval` to verify it executes";
  }
  if (target.verification != "runtime")
    targets += fmt::format("; note: no {} GPU here, so {} is verified statically only", target.name, target.arch);
  v.decided = {eval_outcome::built, std::nullopt, targets, v.decided.log};
}

void attach_trace(verdict& v, const task& t, const solution& s) {
  auto status = v.status();
  if (!status) return;  // a check that built: no FlashInfer status applies yet
  trace tr;
  tr.definition = t.name;
  tr.workload_ = t.wl;
  tr.solution = s.name;
  evaluation e;
  e.status = *status;
  e.timestamp = utc_timestamp();
  e.log = v.decided.log.empty() ? v.decided.message : v.decided.log;
  if (v.environment.is_object()) {
    e.environment.hardware = v.environment.value("gpu", "");
    if (v.environment.contains("libs") && v.environment["libs"].is_object())
      for (const auto& item : v.environment["libs"].items())
        if (item.value().is_string()) e.environment.libs[item.key()] = item.value().get<std::string>();
  }
  if (v.correctness && (e.status == eval_status::PASSED || e.status == eval_status::INCORRECT_NUMERICAL)) {
    correctness_info c;
    c.max_absolute_error = v.correctness->max_absolute_error;
    c.max_relative_error = v.correctness->max_relative_error;
    c.extra = {{"rule", v.correctness->rule}, {"seeds", v.correctness->seeds}};
    e.correctness = c;
  }
  if (v.timing && e.status == eval_status::PASSED)
    e.performance = performance_info{v.timing->candidate.median_ms, v.timing->reference.median_ms, v.timing->speedup};
  tr.eval = e;
  v.flashinfer_trace = tr;
}


// The caller resolved the names; what is left to check is whether this pairing can be evaluated.
status check(const eval_request& request) {
  if (!request.t || !request.target) return make_error("internal error: an evaluation request without a task or target");
  const task& t = *request.t;
  if (std::find(t.targets.begin(), t.targets.end(), request.target->name) == t.targets.end())
    return make_error(fmt::format("task {} does not list target {}", t.name, request.target->name));
  if (request.run_on_gpu && t.status != "ready")
    return make_error(fmt::format("task {} cannot be evaluated on a GPU yet: {}", t.name,
                                  t.note.empty() ? "its reference is pending" : t.note));
  return ok();
}

}  // namespace

void finish_verdict(verdict& v, const eval_request& request, const pipeline_config& config) {
  measure::apply_coverage(v, *request.t, *request.target, config.gpu.min_coverage);
  attach_trace(v, *request.t, request.candidate);
}

result<cpu_half> run_cpu_half(const eval_request& request, const pipeline_config& config) {
  if (auto st = check(request); !st) return st.err();
  cpu_half out;
  verdict& v = out.v;
  v.mode = request.run_on_gpu ? eval_mode::eval : eval_mode::check;
  v.task = request.t->name;
  v.target = request.target->name;
  v.arch = request.target->arch;
  auto built = run_cpu_stages(*request.t, *request.target, request.candidate, config, v);
  if (!built) return built.err();
  if (built->has_value()) {
    if (!request.run_on_gpu) {
      finish_check(v, *request.target);
    } else if (request.target->verification != "runtime") {
      decide(v, stage_id::static_sass, eval_outcome::built,
             fmt::format("no {} GPU is available here, so PTXBench verifies {} statically only "
                         "(compile + SASS); correctness, timing and the runtime check were not run",
                         request.target->name, request.target->arch));
    } else {
      out.built = std::move(**built);
      return out;
    }
  }
  finish_verdict(v, request, config);
  return out;
}

}  // namespace ptxbench::eval

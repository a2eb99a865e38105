// The pipeline behind the evaluator interface: loads the suite once, checks the request, runs the
// CPU stages and, in eval mode, the GPU stages, and fills the FlashInfer Trace.
#include <fmt/format.h>

#include "eval/gpu_stage.h"
#include "eval/pipeline.h"
#include "eval/stage_timer.h"
#include "suite/trace.h"

namespace ptxbench::eval {
namespace {

class pipeline_evaluator final : public evaluator {
 public:
  explicit pipeline_evaluator(pipeline_config config) : m_config(std::move(config)) {}

  result<verdict> evaluate(const eval_request& request) override {
    if (!m_suite) {
      auto s = load_suite(m_config.root / "suite");
      if (!s) return s.err();
      m_suite = std::make_unique<suite>(std::move(*s));
    }
    const task* t = m_suite->find_task(request.task);
    if (!t) return make_error(fmt::format("unknown task '{}'", request.task));
    const target_info* target = m_suite->find_target(request.target);
    if (!target) return make_error(fmt::format("unknown target '{}'", request.target));
    if (std::find(t->targets.begin(), t->targets.end(), request.target) == t->targets.end())
      return make_error(fmt::format("task {} does not list target {}", t->name, request.target));

    verdict v;
    v.mode = request.run_on_gpu ? "eval" : "check";
    v.task = t->name;
    v.target = target->name;
    v.arch = target->arch;
    auto built = run_cpu_stages(*t, *target, request.candidate, m_config, v);
    if (!built) return built.err();
    if (built->has_value()) {
      if (!request.run_on_gpu) {
        finish_check(v, *target);
      } else if (target->verification != "runtime") {
        decide(v, stage_id::static_sass, std::nullopt, "built",
               fmt::format("built; no {} GPU is available, so PTXBench verifies {} statically only "
                           "(compile + SASS); correctness, timing and the runtime check were not run",
                           target->name, target->arch),
               true);
      } else if (auto st = run_gpu_stages(*t, *target, **built, m_config, v); !st) {
        return st.err();
      }
    }
    attach_trace(v, *t, request.candidate);
    return v;
  }

 private:
  static void finish_check(verdict& v, const target_info& target) {
    v.outcome = "built";
    v.deciding_stage.clear();
    std::string targets;
    switch (v.targets.verdict) {
      case target_verdict::absent_in_sass:
        targets = "no required instruction family in the SASS (not target-correct)";
        break;
      case target_verdict::deferred: targets = "target instructions: " + v.targets.reason; break;
      default: targets = "required instruction family present in the SASS; run `ptxbench eval` to verify it executes";
    }
    if (target.verification != "runtime")
      targets += fmt::format("; note: no {} GPU here, so {} is verified statically only", target.name, target.arch);
    v.message = "built; " + targets;
  }

  static void attach_trace(verdict& v, const task& t, const solution& s) {
    if (!v.status) return;  // a check that built: no FlashInfer status applies yet
    trace tr;
    tr.definition = t.name;
    tr.workload_ = t.wl;
    tr.solution = s.name;
    evaluation e;
    e.status = *v.status;
    e.timestamp = utc_timestamp();
    e.log = v.log.empty() ? v.message : v.log;
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

  pipeline_config m_config;
  std::unique_ptr<suite> m_suite;
};

}  // namespace

std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config) {
  return std::make_unique<pipeline_evaluator>(config);
}

}  // namespace ptxbench::eval

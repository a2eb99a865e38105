// The pipeline behind the evaluator interface: loads the suite once, checks each request, runs the
// CPU stages and, in eval mode, the GPU stages (several candidates of one task share one trusted
// harness), and fills the FlashInfer Trace.
#include <fmt/format.h>

#include "eval/coverage.h"
#include "eval/gpu_stage.h"
#include "eval/pipeline.h"
#include "eval/stage_timer.h"
#include "suite/trace.h"

namespace ptxbench::eval {
namespace {

void finish_check(verdict& v, const target_info& target) {
  v.outcome = "built";
  v.deciding_stage.clear();
  std::string targets;
  switch (v.targets.verdict) {
    case target_verdict::absent_in_sass: targets = "no required instruction family in the SASS (not target-correct)"; break;
    case target_verdict::deferred: targets = "target instructions: " + v.targets.reason; break;
    default: targets = "required instruction family present in the SASS; run `ptxbench eval` to verify it executes";
  }
  if (target.verification != "runtime")
    targets += fmt::format("; note: no {} GPU here, so {} is verified statically only", target.name, target.arch);
  v.message = "built; " + targets;
}

void attach_trace(verdict& v, const task& t, const solution& s) {
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

class pipeline_evaluator final : public evaluator {
 public:
  explicit pipeline_evaluator(pipeline_config config) : m_config(std::move(config)) {}

  result<verdict> evaluate(const eval_request& request) override { return std::move(evaluate_batch({request}).front()); }

  std::vector<result<verdict>> evaluate_batch(const std::vector<eval_request>& requests) override {
    std::vector<result<verdict>> out;
    struct pending {
      std::size_t index;
      const task* t;
      const target_info* target;
      build::build_result built;
    };
    std::vector<pending> gpu;
    std::vector<verdict> verdicts(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const auto& request = requests[i];
      auto checked = resolve(request);
      if (!checked) { out.push_back(checked.err()); continue; }
      auto [t, target] = *checked;
      verdict& v = verdicts[i];
      v.mode = request.run_on_gpu ? "eval" : "check";
      v.task = t->name;
      v.target = target->name;
      v.arch = target->arch;
      auto built = run_cpu_stages(*t, *target, request.candidate, m_config, v);
      if (!built) { out.push_back(built.err()); continue; }
      out.push_back(v);  // placeholder; replaced below
      if (!built->has_value()) continue;
      if (!request.run_on_gpu) {
        finish_check(v, *target);
      } else if (target->verification != "runtime") {
        decide(v, stage_id::static_sass, std::nullopt, "built",
               fmt::format("built; no {} GPU is available here, so PTXBench verifies {} statically only "
                           "(compile + SASS); correctness, timing and the runtime check were not run",
                           target->name, target->arch),
               true);
      } else {
        gpu.push_back({i, t, target, std::move(**built)});
      }
    }
    // One harness per task (and target) for the candidates that reached the GPU stages.
    for (std::size_t a = 0; a < gpu.size();) {
      std::size_t b = a;
      std::vector<gpu_candidate> group;
      while (b < gpu.size() && gpu[b].t == gpu[a].t && gpu[b].target == gpu[a].target) {
        group.push_back({&gpu[b].built, requests[gpu[b].index].candidate.entry_symbol(), &verdicts[gpu[b].index]});
        ++b;
      }
      if (auto st = run_gpu_stages(*gpu[a].t, *gpu[a].target, group, m_config); !st)
        for (std::size_t k = a; k < b; ++k) out[gpu[k].index] = st.err().with_context("GPU stages");
      a = b;
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (!out[i].ok()) continue;
      const task* t = m_suite->find_task(verdicts[i].task);
      if (verdicts[i].outcome == "infra_error") {
        out[i] = make_error(verdicts[i].message);
        continue;
      }
      apply_coverage(verdicts[i], *t, *m_suite->find_target(verdicts[i].target), m_config.gpu.min_coverage);
      attach_trace(verdicts[i], *t, requests[i].candidate);
      out[i] = std::move(verdicts[i]);
    }
    return out;
  }

 private:
  result<std::pair<const task*, const target_info*>> resolve(const eval_request& request) {
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
    if (request.run_on_gpu && t->status != "ready")
      return make_error(fmt::format("task {} cannot be evaluated on a GPU yet: {}", t->name,
                                    t->note.empty() ? "its reference is pending" : t->note));
    return std::make_pair(t, target);
  }

  pipeline_config m_config;
  std::unique_ptr<suite> m_suite;
};

}  // namespace

std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config) {
  return std::make_unique<pipeline_evaluator>(config);
}

}  // namespace ptxbench::eval

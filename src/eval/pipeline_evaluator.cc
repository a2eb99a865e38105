// The pipeline behind the evaluator interface: checks each (already resolved) request, runs the
// CPU stages and, in eval mode, the GPU stages (several candidates of one task share one trusted
// harness), and fills the FlashInfer Trace.
#include <fmt/format.h>

#include "eval/coverage.h"
#include "eval/gpu_stage.h"
#include "eval/pipeline.h"
#include "eval/triton_stages.h"
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
  v.decided = {eval_outcome::built, std::nullopt, "built; " + targets, v.decided.log};
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

class pipeline_evaluator final : public evaluator {
 public:
  explicit pipeline_evaluator(pipeline_config config) : m_config(std::move(config)) {}

  result<verdict> evaluate(const eval_request& request) override { return std::move(evaluate_batch({request}).front()); }

  std::vector<result<verdict>> evaluate_batch(const std::vector<eval_request>& requests) override {
    std::vector<result<verdict>> out;
    struct pending {
      std::size_t index;
      build::build_result built;
    };
    std::vector<pending> gpu;
    std::vector<verdict> verdicts(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const auto& request = requests[i];
      if (auto st = check(request); !st) {
        out.push_back(st.err());
        continue;
      }
      verdict& v = verdicts[i];
      v.mode = request.run_on_gpu ? eval_mode::eval : eval_mode::check;
      v.task = request.t->name;
      v.target = request.target->name;
      v.arch = request.target->arch;
      auto built = run_cpu_stages(*request.t, *request.target, request.candidate, m_config, v);
      if (!built) { out.push_back(built.err()); continue; }
      out.push_back(v);  // placeholder; replaced below
      if (!built->has_value()) continue;
      if (!request.run_on_gpu) {
        finish_check(v, *request.target);
      } else if (request.target->verification != "runtime") {
        decide(v, stage_id::static_sass, eval_outcome::built,
               fmt::format("built; no {} GPU is available here, so PTXBench verifies {} statically only "
                           "(compile + SASS); correctness, timing and the runtime check were not run",
                           request.target->name, request.target->arch));
      } else {
        gpu.push_back({i, std::move(**built)});
      }
    }
    // One harness per task (and target) for the candidates that reached the GPU stages.
    for (std::size_t a = 0; a < gpu.size();) {
      const eval_request& first = requests[gpu[a].index];
      std::size_t b = a;
      std::vector<gpu_candidate> group;
      while (b < gpu.size() && requests[gpu[b].index].t == first.t && requests[gpu[b].index].target == first.target) {
        const solution& candidate = requests[gpu[b].index].candidate;
        group.push_back({&gpu[b].built, candidate.entry_symbol(), &verdicts[gpu[b].index],
                         is_triton(candidate) ? "triton" : "cuda"});
        ++b;
      }
      if (auto st = run_gpu_stages(*first.t, *first.target, group, m_config); !st)
        for (std::size_t k = a; k < b; ++k) out[gpu[k].index] = st.err().with_context("GPU stages");
      a = b;
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (!out[i].ok()) continue;
      if (verdicts[i].outcome() == eval_outcome::infra_error) {
        out[i] = make_error(verdicts[i].decided.message);
        continue;
      }
      apply_coverage(verdicts[i], *requests[i].t, *requests[i].target, m_config.gpu.min_coverage);
      attach_trace(verdicts[i], *requests[i].t, requests[i].candidate);
      out[i] = std::move(verdicts[i]);
    }
    return out;
  }

 private:
  // The caller resolved the names; what is left to check is whether this pairing can be evaluated.
  static status check(const eval_request& request) {
    if (!request.t || !request.target) return make_error("internal error: an evaluation request without a task or target");
    const task& t = *request.t;
    if (std::find(t.targets.begin(), t.targets.end(), request.target->name) == t.targets.end())
      return make_error(fmt::format("task {} does not list target {}", t.name, request.target->name));
    if (request.run_on_gpu && t.status != "ready")
      return make_error(fmt::format("task {} cannot be evaluated on a GPU yet: {}", t.name,
                                    t.note.empty() ? "its reference is pending" : t.note));
    return ok();
  }

  pipeline_config m_config;
};

}  // namespace

std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config) {
  return std::make_unique<pipeline_evaluator>(config);
}

}  // namespace ptxbench::eval

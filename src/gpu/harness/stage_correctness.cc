// The correctness stage: for each trial, fresh seeded inputs, the reference on the trusted side,
// NaN-poisoned outputs and armed guards, one candidate call in the runner, then the checks: the call
// itself, the runner's memory map, guards, unchanged inputs, and every output against the reference.
#include <optional>

#include <fmt/format.h>

#include "gpu/common/cuda_check.h"
#include "gpu/harness/harness.h"
#include "measure/launch_tally.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {
namespace {

std::vector<int64_t> unravel(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out(shape.size(), 0);
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0 && index >= 0; --i) {
    out[i] = shape[i] ? index % shape[i] : 0;
    index = shape[i] ? index / shape[i] : 0;
  }
  return out;
}

}  // namespace

bool harness::stage_correctness(const job_candidate&, runner_client& runner, gpu_stage_result& out) {
  stage_timer timer(stage_id::correctness);
  auto& set = m_sets[0];
  correctness_summary cs;
  cs.rule = m_rule == compare_rule::allclose ? "allclose" : "upstream_and";
  cs.atol = m_job.tol.atol;
  cs.rtol = m_job.tol.rtol;
  auto decide = [&](eval_outcome outcome, const std::string& message, const std::string& log) {
    out.decided = {outcome, stage_id::correctness, message, log};
    out.correctness = cs;
    out.stages.push_back(timer.finish(stage_outcome::failed, message));
    return false;
  };
  // The kernel launches of each trial (CUPTI's records within the call): the dynamic check profiles
  // one call's worth when every trial made the same number.
  m_launches_per_call = -1;
  measure::launch_tally launches;
  for (int t = 0; t < m_job.correctness_trials; ++t) {
    uint64_t seed = m_job.seed + static_cast<uint64_t>(t);
    cs.seeds.push_back(seed);
    cs.trials = t + 1;
    m_inputs->generate(set.input_ptrs(), seed, m_stream);
    run_reference(set, false);
    auto sums = prepare_call(set, false);
    auto r = runner.call(set.describe(), m_job.options.call_timeout_s);
    runner.freeze();
    if (r.outcome != call_outcome::ok) {
      auto f = classify_call_failure(r, fmt::format("trial {} (seed {})", t, seed));
      cs.failed_trial = t;
      return decide(f.outcome, f.message, runner.output());
    }
    if (auto tampered = tampering(runner, r); !tampered.empty() && m_job.options.tamper_check) {
      cs.failed_trial = t;
      return decide(eval_outcome::runtime_error, fmt::format("trial {} (seed {}): {}", t, seed, tampered),
                    runner.output());
    }
    if (auto problem = check_call_hygiene(runner, set, sums); !problem.empty()) {
      cs.failed_trial = t;
      return decide(eval_outcome::runtime_error, problem, runner.output());
    }
    if (r.method == "cupti")
      launches.add(r.kernels.size());
    else
      launches.add_uncounted();
    std::vector<output_error> errors;
    bool failed = false;
    auto compared = compare_outputs(set, {}, cs.atol, cs.rtol);
    for (std::size_t i = 0; i < set.outputs.size(); ++i) {
      const auto& o = set.outputs[i];
      const auto& st = compared[i];
      output_error e{o->name(), st.max_absolute_error, st.max_relative_error, st.mismatches, st.nonfinite,
                           unravel(st.worst_index, o->shape()), st.worst_value, st.worst_expected};
      cs.max_absolute_error = std::max(cs.max_absolute_error, st.max_absolute_error);
      cs.max_relative_error = std::max(cs.max_relative_error, st.max_relative_error);
      failed = failed || st.mismatches > 0;
      errors.push_back(std::move(e));
    }
    cs.outputs = errors;
    if (failed) {
      cs.failed_trial = t;
      std::string detail;
      for (const auto& e : errors) {
        if (!e.mismatches) continue;
        std::string idx;
        for (auto v : e.worst_index) idx += (idx.empty() ? "" : ", ") + std::to_string(v);
        detail += fmt::format("{}{}: {} of its elements outside tolerance{}; worst at [{}]: got {:g}, expected {:g}",
                              detail.empty() ? "" : "; ", e.name, e.mismatches,
                              e.nonfinite ? fmt::format(" ({} NaN/Inf)", e.nonfinite) : "", idx, e.worst_value,
                              e.worst_expected);
      }
      return decide(eval_outcome::incorrect_numerical,
                    fmt::format("trial {} (seed {}): {}", t, seed, detail), runner.output());
    }
  }
  out.correctness = cs;
  m_launches_per_call = launches.per_call().value_or(-1);
  out.stages.push_back(timer.finish(
      stage_outcome::passed,
      fmt::format("{} trial(s) within {} atol=rtol={:g}: max_abs_error={:.3g}, max_rel_error={:.3g}", cs.trials,
                  cs.rule, cs.atol, cs.max_absolute_error, cs.max_relative_error)));
  return true;
}

}  // namespace ptxbench::gpu

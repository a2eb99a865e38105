#include "eval/fake_evaluator.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "core/text.h"

namespace ptxbench::eval {
namespace {

int line_of(const std::string& text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

void set_stages(verdict& v, stage_id failed_at, bool gpu) {
  for (int i = 0; i <= static_cast<int>(stage_id::dynamic_check); ++i) {
    auto id = static_cast<stage_id>(i);
    stage_record r;
    r.id = id;
    bool gpu_stage = id >= stage_id::sanitize;
    if (i < static_cast<int>(failed_at)) r.outcome = stage_outcome::passed;
    else if (id == failed_at) r.outcome = stage_outcome::failed;
    else r.outcome = stage_outcome::skipped;
    if (gpu_stage && !gpu && r.outcome == stage_outcome::skipped) {
      r.outcome = stage_outcome::deferred;
      r.summary = "no GPU in this run (fake evaluator)";
    }
    v.stages.push_back(std::move(r));
  }
}

class fake_evaluator final : public evaluator {
 public:
  explicit fake_evaluator(int delay_ms) : m_delay_ms(delay_ms) {}

  result<verdict> evaluate(const eval_request& req) override {
    if (m_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_delay_ms));
    const source_file* src = req.candidate.find_source(req.candidate.entry_file());  // kernel.cu or kernel.py
    std::string code = src ? src->content : "";
    std::string low = lower(code);
    if (code.find("FAKE_INFRA_ERROR") != std::string::npos)
      return make_error("fake evaluator: injected infrastructure failure (GPU lost)");
    verdict v;
    v.mode = req.run_on_gpu ? eval_mode::eval : eval_mode::check;
    v.task = req.t->name;
    v.target = req.target->name;
    v.arch = "sm_90a";
    v.targets.target = v.target;
    v.targets.arch = v.arch;
    v.targets.required_families = {"GMMA", "TMA"};
    v.build.attempted = true;
    bool uses_wgmma = low.find("wgmma") != std::string::npos;
    for (const char* lib : {"cublas", "cudnn"}) {
      if (auto pos = low.find(lib); pos != std::string::npos) {
        v.decided = {eval_outcome::rejected, stage_id::source_gate,
                     fmt::format("kernel.cu:{}: vendor library call", line_of(code, pos)), ""};
        v.gate_findings.push_back({"vendor-library", "kernel.cu", line_of(code, pos), code.substr(pos, 24),
                                   fmt::format("{} is not allowed", lib)});
        v.build.attempted = false;
        set_stages(v, stage_id::source_gate, req.run_on_gpu);
        return v;
      }
    }
    std::size_t err = code.find("#error");
    if (err == std::string::npos) err = code.find("FAKE_COMPILE_ERROR");
    if (err != std::string::npos) {
      v.decided = {eval_outcome::compile_error, stage_id::build, "compile error", ""};
      v.build.log = fmt::format("kernel.cu({}): error: identifier \"undefined_symbol\" is undefined\n\n1 error detected "
                                "in the compilation of \"kernel.cu\".",
                                line_of(code, err));
      v.build.errors = {v.build.log};
      set_stages(v, stage_id::build, req.run_on_gpu);
      return v;
    }
    v.build.succeeded = true;
    v.build.log = "ptxas info    : Used 128 registers, used 1 barriers, 0 bytes smem, 400 bytes cmem[0]";
    v.targets.static_counts = family_counts{{"GMMA", uses_wgmma ? 96 : 0}, {"TMA", uses_wgmma ? 8 : 0}};
    if (!req.run_on_gpu) {
      v.decided = {eval_outcome::built, std::nullopt, "built (fake evaluator)", ""};
      v.targets.verdict = uses_wgmma ? target_verdict::deferred : target_verdict::absent_in_sass;
      v.targets.reason = uses_wgmma ? "in the SASS; runtime check deferred (no GPU)" : "no GMMA/TMA in the SASS";
      set_stages(v, stage_id::sanitize, false);
      v.stages[static_cast<int>(stage_id::sanitize)].outcome = stage_outcome::deferred;
      v.stages[static_cast<int>(stage_id::sanitize)].summary = "no GPU in this run (fake evaluator)";
      return v;
    }
    auto fail_at = [&](eval_outcome outcome, stage_id stage, std::string log) {
      v.decided = {outcome, stage, fmt::format("{} (fake evaluator)", outcome_name(outcome)), std::move(log)};
      set_stages(v, stage, true);
      attach_trace(v, req, nullptr);
      return v;
    };
    if (code.find("FAKE_RUNTIME_ERROR") != std::string::npos)
      return fail_at(eval_outcome::runtime_error, stage_id::sanitize,
                     "========= Invalid __global__ write of size 2 bytes\n=========     at gemm_kernel+0x1a0 in kernel.cu:42");
    if (code.find("FAKE_TIMEOUT") != std::string::npos)
      return fail_at(eval_outcome::timeout, stage_id::correctness, "the kernel ran for more than 30 s");
    if (code.find("FAKE_WRONG_SHAPE") != std::string::npos)
      return fail_at(eval_outcome::incorrect_shape, stage_id::correctness, "output C has shape [8192, 7168], expected [8192, 7169]");
    if (code.find("FAKE_WRONG_DTYPE") != std::string::npos)
      return fail_at(eval_outcome::incorrect_dtype, stage_id::correctness, "output C is float32, expected bfloat16");
    if (code.find("FAKE_WRONG") != std::string::npos) {
      correctness_summary c;
      c.rule = "allclose";
      c.trials = 3;
      c.seeds = {11, 12, 13};
      c.max_absolute_error = 0.5;
      c.max_relative_error = 3.25;
      c.failed_trial = 0;
      c.outputs.push_back({"C", 0.5, 3.25, 1024, 0, {17, 4093}, 1.53, 1.03});
      v.correctness = c;
      return fail_at(eval_outcome::incorrect_numerical, stage_id::correctness, "");
    }
    double speedup = 0.85;
    if (auto pos = code.find("FAKE_SPEEDUP="); pos != std::string::npos) speedup = std::atof(code.c_str() + pos + 13);
    v.decided = {eval_outcome::passed, std::nullopt, fmt::format("correct; speedup {:.3f}x (fake evaluator)", speedup), ""};
    correctness_summary c;
    c.rule = "allclose";
    c.trials = 3;
    c.seeds = {11, 12, 13};
    c.max_absolute_error = 0.0039;
    c.max_relative_error = 0.0078;
    v.correctness = c;
    timing_summary t;
    t.method = "fake";
    t.reference.median_ms = 1.0;
    t.candidate.median_ms = 1.0 / speedup;
    t.speedup = speedup;
    v.timing = t;
    if (uses_wgmma) {
      v.targets.dynamic.counts = family_counts{{"GMMA", 1 << 20}, {"TMA", 1 << 14}};
      v.targets.dynamic.method = "fake";
      v.targets.dynamic.ran = true;
      v.targets.verdict = target_verdict::executed;
    } else {
      v.targets.verdict = target_verdict::absent_in_sass;
      v.targets.reason = "no GMMA/TMA in the SASS";
    }
    set_stages(v, static_cast<stage_id>(static_cast<int>(stage_id::dynamic_check) + 1), true);
    attach_trace(v, req, &t);
    return v;
  }

 private:
  void attach_trace(verdict& v, const eval_request& req, const timing_summary* t) const {
    const task* tk = req.t;
    trace tr;
    tr.definition = tk->name;
    tr.workload_ = tk->wl;
    tr.solution = req.candidate.name;
    evaluation e;
    e.status = *v.status();
    e.environment.hardware = "fake";
    e.timestamp = "1970-01-01T00:00:00Z";
    if (v.correctness && (e.status == eval_status::PASSED || e.status == eval_status::INCORRECT_NUMERICAL))
      e.correctness = correctness_info{v.correctness->max_relative_error, v.correctness->max_absolute_error, nullptr};
    if (t) e.performance = performance_info{t->candidate.median_ms, t->reference.median_ms, t->speedup};
    tr.eval = e;
    v.flashinfer_trace = tr;
  }

  int m_delay_ms;
};

}  // namespace

std::unique_ptr<evaluator> make_fake_evaluator(int delay_ms) {
  return std::make_unique<fake_evaluator>(delay_ms);
}

}  // namespace ptxbench::eval

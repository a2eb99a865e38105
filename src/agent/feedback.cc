#include "agent/feedback.h"

#include <cmath>

#include <fmt/format.h>

#include "verdict/reported_speedup.h"

namespace ptxbench::agent {
namespace {


// Compiler output can run to megabytes when a template explodes; keep both ends.
constexpr std::size_t k_max_log_bytes = 32u << 10;

std::string clip_log(const std::string& log) {
  if (log.size() <= k_max_log_bytes) return log;
  std::size_t half = k_max_log_bytes / 2;
  return log.substr(0, half) + fmt::format("\n[... {} bytes omitted ...]\n", log.size() - 2 * half) +
         log.substr(log.size() - half);
}

std::string axes_text(const verdict& v, const task& t) {
  const auto& axes = v.flashinfer_trace ? v.flashinfer_trace->workload_.axes : t.wl.axes;
  if (axes.empty()) return "workload 0";
  std::string s;
  for (const auto& [name, value] : axes) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", name, value);
  return s;
}

std::string error_value(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return "Inf";
  return fmt::format("{}", x);
}

std::string join_counts(const family_counts& c) {
  std::string s;
  for (const auto& [family, n] : c) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", family, n);
  return s.empty() ? "none" : s;
}

std::string required_text(const verdict& v) {
  std::string s;
  const auto& f = v.targets.required_families;
  for (std::size_t i = 0; i < f.size(); ++i) s += (i == 0 ? "" : (i + 1 == f.size() ? " or " : ", ")) + f[i];
  return s.empty() ? "unspecified" : s;
}

std::string target_verdict_text(target_verdict tv) {
  switch (tv) {
    case target_verdict::executed: return "executed on the workload";
    case target_verdict::not_executed: return "present in the SASS but NOT executed on the workload";
    case target_verdict::absent_in_sass: return "ABSENT from the compiled SASS";
    case target_verdict::profile_error: return "unknown (the runtime count failed)";
    case target_verdict::deferred: return "not verified here";
  }
  return "unknown";
}

// What upstream never told the model: did the required instruction families really run, and how often.
// Left out when nothing is known (the pipeline stopped before the SASS), unless `always`.
std::string target_section(const verdict& v, bool always) {
  const auto& t = v.targets;
  if (!always && !t.static_counts && !t.dynamic.counts && t.verdict == target_verdict::deferred) return "";
  std::string s = fmt::format("\nTarget instructions ({}, {}; required: {}): {}", v.target, v.arch.empty() ? t.arch : v.arch,
                              required_text(v), target_verdict_text(t.verdict));
  if (t.dynamic.counts)
    s += fmt::format("\n  executed (thread instructions{}): {}", t.dynamic.method.empty() ? "" : ", " + t.dynamic.method,
                     join_counts(*t.dynamic.counts));
  if (t.static_counts) s += fmt::format("\n  in the SASS (instructions): {}", join_counts(*t.static_counts));
  if (!t.reason.empty()) s += "\n  " + t.reason;
  return s;
}

std::string correctness_lines(const verdict& v) {
  if (!v.correctness) return "";
  const auto& c = *v.correctness;
  std::string s = fmt::format("\n  max_abs_error={}, max_rel_error={}", error_value(c.max_absolute_error),
                              error_value(c.max_relative_error));
  for (const auto& o : c.outputs) {
    if (o.mismatches == 0 && o.nonfinite == 0) continue;
    std::string where;
    for (std::size_t i = 0; i < o.worst_index.size(); ++i) where += fmt::format("{}{}", i ? ", " : "", o.worst_index[i]);
    s += fmt::format("\n  output {}: {} elements outside tolerance ({} non-finite); worst at [{}]: got {}, expected {}",
                     o.name, o.mismatches, o.nonfinite, where, error_value(o.worst_value), error_value(o.worst_expected));
  }
  if (!c.shape_or_dtype_problem.empty()) s += "\n  " + c.shape_or_dtype_problem;
  if (c.failed_trial >= 0 && static_cast<std::size_t>(c.failed_trial) < c.seeds.size())
    s += fmt::format("\n  (atol={}, rtol={}; failing trial {} of {}, seed {})", c.atol, c.rtol, c.failed_trial + 1, c.trials,
                     c.seeds[c.failed_trial]);
  return s;
}

// The compiler log, then the sanitizer/debug/error text; a pipeline may repeat the build log in
// v.log, which the model should read once.
std::string logs(const verdict& v) {
  const std::string& build = v.build.log;
  const std::string& other = v.decided.log;
  std::string text;
  if (other.empty() || build.find(other) != std::string::npos) text = build;
  else if (build.empty() || other.find(build) != std::string::npos) text = other;
  else text = clip_log(build) + "\n" + clip_log(other);
  if (text.size() > 2 * k_max_log_bytes) text = clip_log(text);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "" : "\n" + text;
}

std::string deferred_stages(const verdict& v) {
  std::string names, why;
  for (const auto& st : v.stages) {
    if (st.outcome != stage_outcome::deferred) continue;
    names += (names.empty() ? "" : ", ") + std::string(stage_name(st.id));
    if (why.empty() && st.summary != v.targets.reason) why = st.summary;
  }
  if (names.empty()) return "";
  return fmt::format("\nNot run here: {}{}", names, why.empty() ? "" : " (" + why + ")");
}

std::string gate_feedback(const verdict& v, const std::string& language) {
  std::string s =
      "ERROR: Your kernel was rejected before it could run: it uses library calls or loading tricks instead of a "
      "hand-written kernel.";
  constexpr std::size_t k_max_findings = 8;
  for (std::size_t i = 0; i < v.gate_findings.size() && i < k_max_findings; ++i) {
    const auto& f = v.gate_findings[i];
    std::string where = f.line > 0 ? fmt::format("{}:{}", f.file, f.line) : f.file;
    s += fmt::format("\n  {}: [{}] {}", where.empty() ? "kernel" : where, f.rule, f.message);
    if (!f.excerpt.empty()) s += fmt::format("\n      {}", f.excerpt);
  }
  if (v.gate_findings.size() > k_max_findings)
    s += fmt::format("\n  (and {} more)", v.gate_findings.size() - k_max_findings);
  if (v.gate_findings.empty() && !v.decided.message.empty()) s += "\n  " + v.decided.message;
  s += language == "triton"
           ? "\nPlease do the computation in your own @triton.jit kernels — host code may only allocate, view, copy "
             "and query tensors; torch compute, vendor libraries and dynamic tricks are not allowed."
           : "\nPlease implement the kernel using CUDA directly — cuBLAS, cuBLASLt, cuDNN, dynamic loading and other "
             "library shortcuts are not allowed.";
  return s;
}

}  // namespace

std::string event_name(turn_event e) {
  switch (e) {
    case turn_event::evaluation: return "evaluation";
    case turn_event::no_code: return "no_code";
    case turn_event::gate_rejected: return "gate_rejected";
    case turn_event::infra_error: return "infra_error";
  }
  return "evaluation";
}

bool is_infra_verdict(const verdict& v) { return v.outcome() == eval_outcome::infra_error; }

turn_assessment assess_verdict(const verdict& v, double target_speedup) {
  turn_assessment a;
  a.label = v.outcome();
  switch (a.label) {
    case eval_outcome::infra_error: a.event = turn_event::infra_error; return a;
    case eval_outcome::rejected: a.event = turn_event::gate_rejected; return a;
    default: break;
  }
  a.all_passed = v.passed();
  a.returncode = a.all_passed || a.label == eval_outcome::built ? 0 : 1;
  if (a.all_passed) a.speedup = reported_speedup(v);
  a.target_correct = v.target_correct();
  a.target_met = a.target_correct && target_speedup > 0 && a.speedup && *a.speedup >= target_speedup;
  return a;
}

std::string verdict_feedback(const verdict& v, const turn_assessment& a, const task& t, double target_speedup,
                             const std::string& language) {
  if (a.event == turn_event::gate_rejected) return gate_feedback(v, language);
  std::string axes = axes_text(v, t);
  if (a.label == eval_outcome::built) {
    std::string s = "Build results (the GPU stages did not run):\n";
    s += fmt::format("[{}] BUILT — compiled and passed the source and link gates; not run on a GPU", axes);
    s += logs(v) + target_section(v, true) + deferred_stages(v);
    const std::string& note = v.decided.message;  // the outcome says "built"; the message says what else is known
    bool repeats = s.find(note) != std::string::npos ||
                   (!v.targets.reason.empty() && note.find(v.targets.reason) != std::string::npos);
    if (!note.empty() && !repeats) s += "\n" + note;
    s += "\n\nThe kernel compiled, but its correctness and speed are unknown because it was not run. Check it "
         "carefully and provide your best kernel.";
    return s;
  }
  std::string s = a.all_passed ? "Evaluation results:\n" : "Evaluation FAILED:\n";
  auto trace_status = v.status();
  std::string status = trace_status ? std::string(status_name(*trace_status)) : "COMPILE_ERROR";
  if (a.all_passed) {
    double kernel_ms = 0, ref_ms = 0;
    if (v.timing) {
      kernel_ms = v.timing->candidate.median_ms;
      ref_ms = v.timing->reference.median_ms;
    } else if (v.flashinfer_trace && v.flashinfer_trace->eval && v.flashinfer_trace->eval->performance) {
      kernel_ms = v.flashinfer_trace->eval->performance->latency_ms;
      ref_ms = v.flashinfer_trace->eval->performance->reference_latency_ms;
    }
    s += fmt::format("[{}] PASSED — speedup: {:.3f}x (kernel: {:.4f}ms, ref: {:.4f}ms)", axes, a.speedup.value_or(0),
                     kernel_ms, ref_ms);
  } else {
    s += fmt::format("[{}] {}", axes, status);
    // The link gate's reason (no exported entry, an export for other tensors) is in no compiler
    // log: without it the model would read a clean ptxas log and "Failed to compile kernel".
    if (v.decided.stage == stage_id::link_gate && !v.decided.message.empty()) s += "\n" + v.decided.message;
    s += correctness_lines(v);
  }
  s += logs(v);
  if (a.label == eval_outcome::compile_error) s += "\nFailed to compile kernel";
  s += target_section(v, false);
  if (a.all_passed) {
    double sp = a.speedup.value_or(0);
    if (a.target_met) {
      s += fmt::format("\n\nTarget speedup {:.3f}x achieved! Min speedup: {:.3f}x.", target_speedup, sp);
    } else if (target_speedup > 0 && sp >= target_speedup && !a.target_correct) {
      s += fmt::format(
          "\n\nKernel is correct. Min speedup: {:.3f}x (target: {:.3f}x), but the required instructions ({}) were not "
          "verified as executed, so the target is not met. Keep optimizing.",
          sp, target_speedup, required_text(v));
    } else {
      s += fmt::format("\n\nKernel is correct. Min speedup: {:.3f}x", sp) +
           (target_speedup > 0 ? fmt::format(" (target: {:.3f}x). Keep optimizing.", target_speedup) : std::string("."));
    }
  } else {
    s += "\n\nPlease fix the issues and provide an updated kernel.";
  }
  return s;
}

std::string no_code_feedback(const std::string& problem, const std::string& language) {
  if (language == "triton")
    return fmt::format(
        "Could not extract a kernel from your response: {}. Please provide your complete kernel.py (the @triton.jit "
        "kernels and the host `run` function) in a single ```python code block.",
        problem);
  return fmt::format(
      "Could not extract a kernel from your response: {}. Please provide your complete CUDA source (the kernels and "
      "the host `run` function exported with PTXBENCH_EXPORT) in a single ```cuda code block.",
      problem);
}

std::string observation_message(int returncode, const std::string& text) {
  std::string body = text;
  while (!body.empty() && (body.back() == '\n' || body.back() == ' ')) body.pop_back();
  return fmt::format("<returncode>{}</returncode>\n<output>\n{}</output>", returncode, body);
}

}  // namespace ptxbench::agent

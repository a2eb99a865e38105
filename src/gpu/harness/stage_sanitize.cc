// The memory-safety stage: the candidate runs in its own runner under compute-sanitizer, on
// exact-size private copies of one input set (so --padding catches an overflow by even one element),
// for one warm-up call and one measured call. Its report is parsed; any real finding decides.
#include <fmt/format.h>

#include "core/process.h"
#include "measure/sanitizer_report.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/runner_sandbox.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {

namespace {

std::vector<std::string> split_tools(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

bool harness::stage_sanitize(const job_candidate& c, gpu_stage_result& out) {
  stage_timer timer(stage_id::sanitize);
  auto finish = [&](stage_outcome o, std::string summary, ordered_json details = nullptr) {
    out.stages.push_back(timer.finish(o, std::move(summary), std::move(details)));
  };
  if (!m_job.options.sanitize) {
    finish(stage_outcome::skipped, "not requested (--no-sanitize)");
    return true;
  }
  auto tool = find_executable("compute-sanitizer", {m_job.cuda_root / "bin"});
  if (!tool) {
    finish(stage_outcome::deferred, "compute-sanitizer not found; memory safety not checked");
    return true;
  }
  auto shared = lease("sanitize", false, out.measurement);  // memory safety does not depend on having the GPU alone
  auto& set = m_sets[0];
  uint64_t seed = m_job.seed + 500;
  m_inputs->generate(set.input_ptrs(), seed, m_stream);
  prepare_outputs(set);
  ordered_json details = ordered_json::array();
  for (const auto& t : split_tools(m_job.options.sanitizer_tools)) {
    runner_launch l = launch_for(c, "private", false);
    l.work_dir = work_dir_for("sanitize-" + t);
    l.wrapper = {tool->string(), "--tool", t, "--print-limit", "20", "--target-processes", "all"};
    if (t == "memcheck") l.wrapper.insert(l.wrapper.end(), {"--padding", "1024"});
    l.startup_timeout_s = 180;
    runner_client runner;
    auto started = runner.start(l);
    if (!started) throw std::runtime_error("starting the runner under compute-sanitizer: " + started.err().message);
    out.sandbox["sanitize-" + t] = sandbox_record(*started, m_job.options.sandbox);
    call_result last = *started;
    for (int call = 0; call < 2 && last.outcome == call_outcome::ok; ++call)
      last = runner.call(set.describe(), m_job.options.sanitize_timeout_s);
    std::string how = runner.stop(60);  // the sanitizer writes its summary while exiting
    auto report = measure::parse_sanitizer_output(runner.output(4u << 20));
    details.push_back({{"tool", t}, {"report", measure::to_json(report)}, {"runner", how}});
    if (!last.sandbox_violation.empty()) {
      // The sandbox ended the runner; the sanitizer only saw a process that died (a "process"
      // finding at most), so the sandbox's message is the one that says what happened.
      auto failure = classify_call_failure(last, "the call under " + t);
      out.decided = {failure.outcome, stage_id::sanitize, failure.message, runner.output(64u << 10)};
      finish(stage_outcome::failed, failure.message, details);
      return false;
    }
    if (report.state == measure::sanitizer_state::findings) {
      const auto& f = report.findings.front();
      std::string where = f.source_file.empty() ? f.kernel : fmt::format("{} at {}:{}", f.kernel, f.source_file, f.source_line);
      std::string message =
          f.category == measure::finding_category::process
              ? fmt::format("the candidate process crashed under {} ({}): {}", t, f.kind,
                            last.outcome == call_outcome::ok ? "after its calls" : last.message)
              : (where.empty() ? fmt::format("{}: {}", t, f.kind) : fmt::format("{}: {} in {}", t, f.kind, where));
      out.decided = {eval_outcome::runtime_error, stage_id::sanitize, message, report.first_fault_text()};
      finish(stage_outcome::failed, message, details);
      return false;
    }
    if (last.outcome != call_outcome::ok) {
      auto failure = classify_call_failure(last, "the call under " + t);
      out.decided = {failure.outcome, stage_id::sanitize, failure.message, runner.output(64u << 10)};
      finish(stage_outcome::failed, failure.message, details);
      return false;
    }
    if (report.state == measure::sanitizer_state::tool_error) {
      // Nothing is known about the candidate; say so and let the later stages decide.
      finish(stage_outcome::error,
             fmt::format("{} could not check the candidate: {}", t,
                         report.tool_errors.empty() ? std::string("no report") : report.tool_errors.front()),
             details);
      return true;
    }
  }
  finish(stage_outcome::passed,
         fmt::format("{}: no errors (warm-up + 1 call, exact-size buffers, --padding 1024)", m_job.options.sanitizer_tools),
         details);
  return true;
}

}  // namespace ptxbench::gpu

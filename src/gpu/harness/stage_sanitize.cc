// The memory-safety stage: the candidate runs in its own runner under compute-sanitizer, on
// exact-size private copies of one input set (so --padding catches an overflow by even one element),
// for one warm-up call and one measured call. Its report is parsed; any real finding decides.
#include <future>

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

void sanitize_run::cancel_correctness() {
  // Dekker-style with correctness_part: either it sees the flag after forking its runner, or this
  // sees the runner (whose process group is set before the flag is read there).
  stop_correctness.store(true);
  if (auto* r = correctness_runner.load()) r->abort();
}

sanitize_run::~sanitize_run() {
  // An evaluation that ends early (an exception) must not wait for a sanitizer run to finish.
  if (first.valid()) {
    if (runner) runner->abort();
    first.wait();
  }
}

runner_launch harness::sanitize_launch(const job_candidate& c, const std::string& t,
                                       const std::filesystem::path& tool) const {
  runner_launch l = launch_for(c, "private", false);
  l.work_dir = work_dir_for("sanitize-" + t);
  l.wrapper = {tool.string(), "--tool", t, "--print-limit", "20", "--target-processes", "all"};
  if (t == "memcheck") l.wrapper.insert(l.wrapper.end(), {"--padding", "1024"});
  l.startup_timeout_s = 180;
  return l;
}

// Runs on the thread that awaits the tool (the first tool's: not the harness's); touches no CUDA
// state of the harness. Everything it writes is in `s`, read by the harness's thread only after it.
bool harness::sanitize_tool(const std::string& t, runner_client& runner, const runner_launch& l, sanitize_run& s) {
  auto& out = s.part.result;
  auto finish = [&](stage_outcome o, std::string summary) {
    out.stages.push_back(s.timer->finish(o, std::move(summary), s.details));
    s.ended = true;
    s.shared.reset();  // the stage's lease: released when it ends
  };
  auto started = runner.finish_start(l);
  if (!started) throw std::runtime_error("starting the runner under compute-sanitizer: " + started.err().message);
  out.sandbox["sanitize-" + t] = sandbox_record(*started, m_job.options.sandbox);
  call_result last = *started;
  for (int call = 0; call < 2 && last.outcome == call_outcome::ok; ++call)
    last = runner.call(s.tensors, m_job.options.sanitize_timeout_s);
  std::string how = runner.stop(60);  // the sanitizer writes its summary while exiting
  auto report = measure::parse_sanitizer_output(runner.output(4u << 20));
  s.details.push_back({{"tool", t}, {"report", measure::to_json(report)}, {"runner", how}});
  auto decide = [&](eval_outcome outcome, const std::string& message, std::string log) {
    out.decided = {outcome, stage_id::sanitize, message, std::move(log)};
    s.part.go_on = false;
    finish(stage_outcome::failed, message);
    return false;
  };
  if (!last.sandbox_violation.empty()) {
    // The sandbox ended the runner; the sanitizer only saw a process that died (a "process"
    // finding at most), so the sandbox's message is the one that says what happened.
    auto failure = classify_call_failure(last, "the call under " + t);
    return decide(failure.outcome, failure.message, runner.output(64u << 10));
  }
  if (report.state == measure::sanitizer_state::findings) {
    const auto& f = report.findings.front();
    std::string where = f.source_file.empty() ? f.kernel : fmt::format("{} at {}:{}", f.kernel, f.source_file, f.source_line);
    std::string message =
        f.category == measure::finding_category::process
            ? fmt::format("the candidate process crashed under {} ({}): {}", t, f.kind,
                          last.outcome == call_outcome::ok ? "after its calls" : last.message)
            : (where.empty() ? fmt::format("{}: {}", t, f.kind) : fmt::format("{}: {} in {}", t, f.kind, where));
    return decide(eval_outcome::runtime_error, message, report.first_fault_text());
  }
  if (last.outcome != call_outcome::ok) {
    auto failure = classify_call_failure(last, "the call under " + t);
    return decide(failure.outcome, failure.message, runner.output(64u << 10));
  }
  if (report.state == measure::sanitizer_state::tool_error) {
    // Nothing is known about the candidate; say so and let the later stages decide.
    finish(stage_outcome::error,
           fmt::format("{} could not check the candidate: {}", t,
                       report.tool_errors.empty() ? std::string("no report") : report.tool_errors.front()));
    return false;
  }
  return true;
}

void harness::sanitize_begin(const job_candidate& c, sanitize_run& s) {
  s.timer.emplace(stage_id::sanitize);
  auto& out = s.part.result;
  auto settle = [&](stage_outcome o, std::string summary) {
    out.stages.push_back(s.timer->finish(o, std::move(summary)));
    s.ended = true;
  };
  if (!m_job.options.sanitize) return settle(stage_outcome::skipped, "not requested (--no-sanitize)");
  auto tool = find_executable("compute-sanitizer", {m_job.cuda_root / "bin"});
  if (!tool) return settle(stage_outcome::deferred, "compute-sanitizer not found; memory safety not checked");
  s.tool = *tool;
  s.tools = split_tools(m_job.options.sanitizer_tools);
  // Memory safety does not depend on having the GPU alone: shared, beside correctness's.
  s.shared.emplace(lease("sanitize", false, out.measurement));
  // Its own input set (set 1; timing allocates it anyway), so correctness can use set 0 meanwhile.
  // All CUDA work here, on the harness's thread; the other thread only talks to the runner.
  ensure_sets(2);
  auto& set = m_sets[1];
  uint64_t seed = m_job.seed + 500;
  m_inputs->generate(set.input_ptrs(), seed, m_stream);
  prepare_outputs(set);
  s.tensors = set.describe();
  if (s.tools.empty()) return;  // sanitize_end records the pass
  std::string first = s.tools.front();
  s.tools.erase(s.tools.begin());
  runner_launch l = sanitize_launch(c, first, s.tool);
  s.runner = std::make_unique<runner_client>();
  // Forked here, on the harness's thread: the runner dies with the thread that forked it
  // (PR_SET_PDEATHSIG); the thread below only talks to it, then ends.
  if (auto spawned = s.runner->spawn(l); !spawned)
    throw std::runtime_error("starting the runner under compute-sanitizer: " + spawned.err().message);
  s.first = std::async(std::launch::async, [this, &s, first, l] {
    try {
      if (!sanitize_tool(first, *s.runner, l, s) && !s.part.go_on) s.cancel_correctness();
    } catch (...) {
      s.cancel_correctness();
      throw;
    }
  });
}

stage_part harness::sanitize_end(const job_candidate& c, sanitize_run& s) {
  if (s.first.valid()) s.first.get();  // rethrows the thread's infrastructure error
  while (!s.ended && !s.tools.empty()) {
    std::string t = s.tools.front();
    s.tools.erase(s.tools.begin());
    runner_launch l = sanitize_launch(c, t, s.tool);
    runner_client runner;
    if (auto spawned = runner.spawn(l); !spawned)
      throw std::runtime_error("starting the runner under compute-sanitizer: " + spawned.err().message);
    (void)sanitize_tool(t, runner, l, s);
  }
  if (!s.ended) {
    s.part.result.stages.push_back(s.timer->finish(
        stage_outcome::passed,
        fmt::format("{}: no errors (warm-up + 1 call, exact-size buffers, --padding 1024)", m_job.options.sanitizer_tools),
        s.details));
    s.ended = true;
    s.shared.reset();
  }
  return std::move(s.part);
}

}  // namespace ptxbench::gpu

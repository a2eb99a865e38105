// The runtime target-instruction check: calls of the candidate in its own runner under Nsight
// Compute, on private copies of fresh inputs, counting predicate-on thread instructions per SASS
// opcode (sass__thread_inst_executed_true_per_opcode). A family counts as executed only with a count
// > 0, so wgmma in dead code, in a kernel never launched, or under a false predicate does not count.
// Only the candidate's own kernels count (the functions of its built object, or of its Triton plan),
// never another kernel that ran in the process. The runner makes k_profile_calls calls and ncu
// profiles the launches of one of them, chosen at random by the harness and given only to ncu
// (--launch-skip/--launch-count), so no call can know it is the one being counted.
// The report is written by ncu to a file and read back with `ncu --import`, never from the
// candidate's stdout (which it could fill with forged CSV lines). The stage runs in two halves
// around the timing stage (harness.cc): the profiled calls before it, one call's worth of launches
// as the correctness calls made them, until the runner process has ended; ncu's writing of the
// report and its import while timing runs; the judgement after it, which also requires the timed
// calls to have launched as many kernels as the profiled one.
#include <chrono>
#include <future>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "gpu/harness/coverage_profile.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/profiled_launches.h"
#include "gpu/harness/runner_sandbox.h"
#include "gpu/common/launch_audit.h"
#include "sass/ncu_report.h"
#include "sass/static_check.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {

namespace {
constexpr int k_profile_calls = 3;  // the runner's calls under ncu; one of them is counted
}  // namespace

bool harness::candidate_kernel(const job_candidate& c, const std::string& profiled_name) {
  if (is_marker_kernel_name(profiled_name)) return false;  // the runner's own, for the launch audit
  if (c.kernels.empty()) return true;
  return std::any_of(c.kernels.begin(), c.kernels.end(),
                     [&](const std::string& k) { return k == profiled_name || sass::same_kernel(k, profiled_name); });
}

dynamic_profile::~dynamic_profile() {
  // An evaluation that ends early (an exception) must not wait for a runner's start-up to finish.
  if (starting.valid()) {
    if (runner) runner->abort();
    starting.wait();
  }
}

bool harness::dynamic_will_profile(const job_candidate& c) const {
  return m_job.options.dynamic_check && !(c.static_known && !c.static_present);
}

void harness::dynamic_choose(dynamic_profile& p, int per_call) {
  // Which call is counted: known here, and to ncu; the runner only sees k_profile_calls calls.
  p.per_call = per_call;
  p.profiled = p.per_call > 0 ? static_cast<int>(std::random_device{}() % k_profile_calls) : -1;
  p.details["profiled_call"] = {{"call", p.profiled}, {"of", k_profile_calls}, {"launches", p.per_call}};
}

runner_launch harness::dynamic_launch(const job_candidate& c, const dynamic_profile& p, bool with_coverage) const {
  runner_launch l = launch_for(c, "private", false);
  l.work_dir = work_dir_for(with_coverage ? "profile" : "profile-plain");
  auto report = std::filesystem::path(l.work_dir) / "profile";
  // Work coverage (eval/coverage.h) needs per-instruction counts and the TMA byte counters from
  // the same profiled call. Should this ncu not know one of those metrics, the call is profiled
  // again with the paper's two metrics only, and coverage is recorded as unknown with ncu's words.
  std::string metrics = "sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode";
  if (with_coverage) metrics += "," + coverage_profile_metrics();
  // --cache-control none: ncu need not flush the caches before each replay pass — instruction and
  // byte counts do not depend on what the caches hold, and the flushes are exclusive GPU time.
  l.wrapper = {p.ncu.string(), "--metrics", metrics, "--clock-control", "none", "--cache-control", "none",
               "--target-processes", "all", "-f", "-o", report.string()};
  if (p.per_call > 0)  // the launches of call `profiled` only; unknown per-call counts: every call
    l.wrapper.insert(l.wrapper.end(), {"--launch-skip", std::to_string(p.profiled * p.per_call), "--launch-count",
                                       std::to_string(p.per_call)});
  l.startup_timeout_s = 300;
  return l;
}

int harness::dynamic_early_guess(const job_candidate& c) const {
  // One kernel function: almost always one launch per call. Anything else waits for the count.
  return c.kernels.size() == 1 ? 1 : 0;
}

void harness::dynamic_prestart(const job_candidate& c, dynamic_profile& p, int per_call) {
  if (!dynamic_will_profile(c)) return;  // stage_dynamic_profile settles it
  auto ncu = find_executable("ncu", {m_job.cuda_root / "bin", "/opt/nvidia/nsight-compute"});
  if (!ncu) return;
  p.ncu = *ncu;
  dynamic_choose(p, per_call);
  p.launch = dynamic_launch(c, p, true);
  p.runner = std::make_unique<runner_client>();
  auto t0 = std::chrono::steady_clock::now();
  // Forked here, on the harness's thread: the runner dies with the thread that forked it
  // (PR_SET_PDEATHSIG). The thread below only awaits its start-up (no CUDA state of the harness).
  if (auto spawned = p.runner->spawn(p.launch); !spawned) {
    std::promise<result<call_result>> failed;
    failed.set_value(spawned.err());
    p.starting = failed.get_future();
    return;
  }
  // The thread gets the runner itself, not p.runner: the profiled stage takes p.runner over (only
  // after this thread has ended: stage_dynamic_profile gets `starting` first).
  p.starting = std::async(std::launch::async, [this, &p, runner = p.runner.get(), t0]() -> result<call_result> {
    // Starting the runner under ncu measures nothing: shared (recorded apart until it is judged).
    auto shared = lease("dynamic_check_start", false, p.start_holds);
    auto started = runner->finish_start(p.launch);
    if (started && started->outcome == call_outcome::ok) runner->freeze();
    p.start_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return started;
  });
}

void harness::dynamic_abandon(gpu_stage_result& out, dynamic_profile& p) {
  if (!p.runner) return;
  p.runner->abort();
  if (p.starting.valid()) p.starting.wait();
  p.runner->stop(2);
  p.runner.reset();
  // Nothing of it reaches the verdict but its hold: the GPU was held (stage_order.h).
  for (auto& h : p.start_holds.holds) out.measurement.holds.push_back(std::move(h));
  p.start_holds.holds.clear();
}

bool harness::stage_dynamic_profile(const job_candidate& c, gpu_stage_result& out, dynamic_profile& p) {
  stage_timer timer(stage_id::dynamic_check);
  // The stage ends here without a report to read: its record waits for stage_dynamic_finish.
  auto settle = [&](stage_outcome o, const std::string& summary, ordered_json details = nullptr) {
    p.settled = timer.finish(o, summary, std::move(details));
    return true;
  };
  if (!m_job.options.dynamic_check) return settle(stage_outcome::skipped, "not requested (--no-dynamic-check)");
  if (c.static_known && !c.static_present)
    return settle(stage_outcome::skipped,
                  "no required instruction family in the SASS; nothing to look for at run time");
  out.dynamic.method = "ncu";
  // A profile that could not be taken leaves the target verdict at profile_error; it decides nothing.
  auto profile_error = [&](const std::string& why, ordered_json details = nullptr) {
    out.dynamic.ran = true;
    out.dynamic.error = why;
    return settle(stage_outcome::error, "profile_error: " + why, std::move(details));
  };
  auto ncu = find_executable("ncu", {m_job.cuda_root / "bin", "/opt/nvidia/nsight-compute"});
  if (!ncu) return profile_error("Nsight Compute (ncu) not found");
  p.ncu = *ncu;

  auto& set = m_sets[0];
  ordered_json& details = p.details;
  const bool prestarted = p.runner != nullptr;
  if (!prestarted) dynamic_choose(p, m_launches_per_call);
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  ordered_json seconds = ordered_json::object();
  for (bool with_coverage : {true, false}) {
    auto t_start = clock::now();
    std::unique_ptr<runner_client> owned;
    runner_launch l;
    result<call_result> started = make_error("not started");
    if (with_coverage && prestarted) {
      // Started after correctness, beside sanitize (dynamic_prestart): only what is left of its start-up waits.
      // The start-up's end first: until then its thread uses the runner (a fast candidate's sanitize
      // ends before Nsight Compute has started, so this may wait).
      started = p.starting.get();
      owned = std::move(p.runner);
      l = p.launch;
      for (auto& h : p.start_holds.holds) out.measurement.holds.push_back(std::move(h));
      p.start_holds.holds.clear();
      seconds["runner_start_overlapped"] = p.start_seconds;
      seconds["runner_start_waited"] = since(t_start);
    } else {
      owned = std::make_unique<runner_client>();
      l = dynamic_launch(c, p, with_coverage);
      // Starting the runner under ncu measures nothing: shared; the profiled call: exclusive, so no
      // other harness's work (or Nsight Compute session) is on the GPU while the counters run.
      auto shared = lease("dynamic_check_start", false, out.measurement);
      started = owned->start(l);
      if (started && started->outcome == call_outcome::ok) owned->freeze();
    }
    p.report = std::filesystem::path(l.work_dir) / "profile";
    runner_client& runner = *owned;
    if (!(with_coverage && prestarted)) seconds["runner_start"] = since(t_start);
    auto t_calls = clock::now();
    call_result r;
    if (started) {
      r = *started;
      out.sandbox["profile"] = sandbox_record(*started, m_job.options.sandbox);
    }
    if (started && r.outcome == call_outcome::ok) {
      auto exclusive = lease("dynamic_check", true, out.measurement);
      for (int call = 0; call < k_profile_calls && r.outcome == call_outcome::ok; ++call) {
        // Private mode: the runner copies the inputs at "prepare", so each call's are written first.
        m_inputs->generate(set.input_ptrs(), m_job.seed + 700 + static_cast<uint64_t>(call), m_stream);
        prepare_outputs(set);
        r = runner.call(set.describe(), m_job.options.profile_timeout_s);
      }
    }
    seconds["calls"] = since(t_calls);
    const bool profiled = started && r.outcome == call_outcome::ok;
    details["ncu"] = ncu->string();
    auto t_stop = clock::now();
    // ncu writes the report after the runner exits. Timing may start as soon as nothing of the
    // candidate's runs any more: once the runner process itself has ended (with the sandbox on, the
    // candidate has no other process: it may not fork). What is left is ncu's own work, CPU only,
    // awaited on another thread while timing measures (only waiting there: ncu was forked on this
    // thread, PR_SET_PDEATHSIG). Without the sandbox, or when the runner's end cannot be followed,
    // the whole tree is awaited here, as before.
    if (profiled && m_job.options.sandbox && runner.release(120)) {
      seconds["runner_exit"] = since(t_stop);
      details["seconds"] = seconds;
      p.ncu_done = std::async(std::launch::async, [profiled_runner = std::move(owned)]() mutable {
                     auto t_released = clock::now();
                     dynamic_profile::ncu_end end;
                     end.how = profiled_runner->stop(120);
                     end.seconds = std::chrono::duration<double>(clock::now() - t_released).count();
                     end.log = profiled_runner->output(8u << 10);
                     end.overlapped = true;
                     profiled_runner.reset();
                     return end;
                   }).share();
      break;
    }
    std::string how = runner.stop(120);
    seconds["report"] = since(t_stop);
    details["runner"] = how;
    details["seconds"] = seconds;
    std::string log = runner.output(8u << 10);
    if (started && !r.sandbox_violation.empty()) {
      // Not a profiling problem: the candidate attempted something the sandbox forbids while it was
      // being profiled (perhaps only there), and that decides its verdict like in any other stage.
      auto failure = classify_call_failure(r, "the profiled call");
      out.decided = {failure.outcome, stage_id::dynamic_check, failure.message, runner.output(64u << 10)};
      details["log"] = log;
      out.stages.push_back(timer.finish(stage_outcome::failed, failure.message, details));
      return false;
    }
    if (profiled) {
      std::promise<dynamic_profile::ncu_end> ended;
      ended.set_value({how, log, seconds["report"].get<double>(), false});
      p.ncu_done = ended.get_future().share();
      break;
    }
    if (with_coverage) {
      if (auto rejected = ncu_metric_complaint(log); !rejected.empty()) {
        p.coverage_missing = "ncu rejected a coverage metric: " + rejected;
        continue;
      }
    }
    details["log"] = log;
    if (!started) return profile_error("could not start the runner under ncu: " + started.err().message, details);
    return profile_error("the profiled call did not complete: " + r.message, details);
  }
  // The two pages are read by two ncu processes at once (the source page, for coverage, is the
  // slower), each once ncu has written the report; none of it needs the GPU, so it runs while the
  // timing stage measures. On a host with few cores it would compete with the timing loop for the
  // CPU: there it finishes first. A report ncu failed to write fails its import (profile_error).
  auto import = [written = p.ncu_done](process_spec spec) {
    return std::async(std::launch::async, [written, spec] {
      written.wait();
      return run_process(spec);  // forked and awaited on this thread, which outlives the process
    });
  };
  p.details_page = import({.argv = details_page_command(*ncu, p.report), .timeout_s = 120});
  if (p.coverage_missing.empty())
    p.source_page =
        import({.argv = source_page_command(*ncu, p.report), .timeout_s = 120, .max_output_bytes = 64u << 20});
  if (std::thread::hardware_concurrency() < 4) {
    p.details_page.wait();
    if (p.source_page.valid()) p.source_page.wait();
  }
  // The stage's own time: a speculative start-up counts whole, not just the part it was waited for.
  p.seconds = timer.seconds();
  if (seconds.contains("runner_start_overlapped"))
    p.seconds += p.start_seconds - seconds["runner_start_waited"].get<double>();
  return true;
}

void harness::stage_dynamic_finish(const job_candidate& c, gpu_stage_result& out, dynamic_profile& p) {
  if (p.settled) {
    out.stages.push_back(std::move(*p.settled));
    return;
  }
  stage_timer timer(stage_id::dynamic_check);
  ordered_json& details = p.details;
  // The stage's time: its profiled run before timing, and what reading the report still took after.
  auto record = [&](stage_outcome o, std::string summary) {
    out.stages.push_back({stage_id::dynamic_check, o, p.seconds + timer.seconds(), std::move(summary), details});
  };
  auto profile_error = [&](const std::string& why) {
    out.dynamic.ran = true;
    out.dynamic.error = why;
    record(stage_outcome::error, "profile_error: " + why);
  };
  // ncu's end: awaited here only if it was left to run beside timing (else it is already known).
  const dynamic_profile::ncu_end& ncu_end = p.ncu_done.get();
  const double report_wait = timer.seconds();
  details["runner"] = ncu_end.how;
  p.runner_log = ncu_end.log;
  if (ncu_end.overlapped) {
    details["seconds"]["report_overlapped"] = ncu_end.seconds;
    details["seconds"]["report_wait_after_timing"] = report_wait;
  }
  auto imported = p.details_page.get();
  process_result source_page = p.source_page.valid() ? p.source_page.get() : process_result{};
  details["seconds"]["import_wait_after_timing"] = timer.seconds() - report_wait;
  details["seconds"]["import"] = imported.wall_s;
  if (!imported.succeeded()) {
    details["log"] = p.runner_log;
    return profile_error(fmt::format("ncu --import {}: {}", describe_exit(imported, 120), imported.err.substr(0, 400)));
  }
  auto profile = sass::parse_ncu_csv(imported.out);
  if (!profile) {
    details["import_head"] = imported.out.substr(0, 2000);
    return profile_error(profile.err().message);
  }
  if (auto mismatch = profiled_launch_mismatch(p.per_call, profile->kernels.size(), m_timed_launches_per_call);
      !mismatch.empty()) {
    details["kernels"] = profile->kernels.size();
    return profile_error(mismatch);
  }
  family_counts total;
  ordered_json not_counted = ordered_json::array();
  for (const auto& [kernel, counts] : sass::family_pred_on_by_kernel(*profile)) {
    if (!candidate_kernel(c, kernel)) {
      not_counted.push_back(kernel);
      continue;
    }
    out.dynamic.per_kernel[kernel] = counts;
    for (const auto& [fam, n] : counts) total[fam] += n;
  }
  if (!not_counted.empty()) details["not_counted"] = not_counted;
  for (const auto& fam : c.required_families) total.emplace(fam, 0);
  out.dynamic.counts = total;
  out.dynamic.ran = true;
  std::string ran;
  for (const auto& fam : c.required_families)
    ran += fmt::format("{}{}={}", ran.empty() ? "" : " ", fam, total[fam]);
  details["kernels"] = profile->kernels.size();
  out.dynamic.evidence = coverage_evidence_from(source_page, imported.out, p.coverage_missing);
  record(stage_outcome::passed,
         fmt::format("{} kernel launch(es) profiled; predicate-on thread instructions: {}", profile->kernels.size(),
                     ran));
}

}  // namespace ptxbench::gpu

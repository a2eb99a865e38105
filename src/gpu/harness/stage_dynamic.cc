// The runtime target-instruction check: one call of the candidate in its own runner under Nsight
// Compute, on private copies of one input set, counting predicate-on thread instructions per SASS
// opcode (sass__thread_inst_executed_true_per_opcode). A family counts as executed only with a count
// > 0, so wgmma in dead code, in a kernel never launched, or under a false predicate does not count.
// The report is written by ncu to a file and read back with `ncu --import`, never from the
// candidate's stdout (which it could fill with forged CSV lines).
#include <fmt/format.h>

#include "core/file_io.h"
#include "core/process.h"
#include "gpu/harness/coverage_profile.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/runner_sandbox.h"
#include "sass/ncu_report.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {

bool harness::stage_dynamic(const job_candidate& c, gpu_stage_result& out) {
  stage_timer timer(stage_id::dynamic_check);
  auto finish = [&](stage_outcome o, const std::string& summary, ordered_json details = nullptr) {
    out.stages.push_back(timer.finish(o, summary, std::move(details)));
  };
  if (!m_job.options.dynamic_check) {
    finish(stage_outcome::skipped, "not requested (--no-dynamic-check)");
    return true;
  }
  if (c.static_known && !c.static_present) {
    finish(stage_outcome::skipped, "no required instruction family in the SASS; nothing to look for at run time");
    return true;
  }
  out.dynamic.method = "ncu";
  // A profile that could not be taken leaves the target verdict at profile_error; it decides nothing.
  auto profile_error = [&](const std::string& why, ordered_json details = nullptr) {
    out.dynamic.ran = true;
    out.dynamic.error = why;
    finish(stage_outcome::error, "profile_error: " + why, std::move(details));
    return true;
  };
  auto ncu = find_executable("ncu", {m_job.cuda_root / "bin", "/opt/nvidia/nsight-compute"});
  if (!ncu) return profile_error("Nsight Compute (ncu) not found");

  auto& set = m_sets[0];
  std::filesystem::path report;
  ordered_json details;
  // Work coverage (eval/coverage.h) needs per-instruction counts and the TMA byte counters from
  // the same profiled call. Should this ncu not know one of those metrics, the call is profiled
  // again with the paper's two metrics only, and coverage is recorded as unknown with ncu's words.
  std::string coverage_missing, runner_log;
  for (bool with_coverage : {true, false}) {
    m_inputs->generate(set.input_ptrs(), m_job.seed + 700, m_stream);
    prepare_outputs(set);
    runner_launch l = launch_for(c, "private", false);
    l.work_dir = work_dir_for(with_coverage ? "profile" : "profile-plain");
    report = std::filesystem::path(l.work_dir) / "profile";
    std::string metrics = "sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode";
    if (with_coverage) metrics += "," + coverage_profile_metrics();
    l.wrapper = {ncu->string(), "--metrics", metrics, "--clock-control", "none", "--target-processes", "all",
                 "-f", "-o", report.string()};
    if (c.language == "triton") {
      // The Triton runner compiles (and may autotune) in its warm-up; only the measured call is
      // profiled: it brackets that call with cudaProfilerStart/Stop.
      l.wrapper.insert(l.wrapper.begin() + 1, {"--profile-from-start", "off"});
      l.setup_extra["profile_window"] = true;
    }
    l.startup_timeout_s = 300;
    runner_client runner;
    auto started = runner.start(l);
    call_result r;
    if (started) {
      r = *started;
      out.sandbox["profile"] = sandbox_record(*started, m_job.options.sandbox);
    }
    if (started && r.outcome == call_outcome::ok) r = runner.call(set.describe(), m_job.options.profile_timeout_s);
    std::string how = runner.stop(120);  // ncu writes the report after the application exits
    details = {{"runner", how}, {"ncu", ncu->string()}};
    std::string log = runner.output(8u << 10);
    if (started && !r.sandbox_violation.empty()) {
      // Not a profiling problem: the candidate attempted something the sandbox forbids while it was
      // being profiled (perhaps only there), and that decides its verdict like in any other stage.
      auto failure = classify_call_failure(r, "the profiled call");
      out.decided = {failure.outcome, stage_id::dynamic_check, failure.message, runner.output(64u << 10)};
      details["log"] = log;
      finish(stage_outcome::failed, failure.message, details);
      return false;
    }
    if (started && r.outcome == call_outcome::ok) {
      runner_log = log;
      break;
    }
    if (with_coverage) {
      if (auto rejected = ncu_metric_complaint(log); !rejected.empty()) {
        coverage_missing = "ncu rejected a coverage metric: " + rejected;
        continue;
      }
    }
    details["log"] = log;
    if (!started) return profile_error("could not start the runner under ncu: " + started.err().message, details);
    return profile_error("the profiled call did not complete: " + r.message, details);
  }
  auto imported = run_process({.argv = {ncu->string(), "-i", report.string() + ".ncu-rep", "--csv", "--page", "details",
                                        "--print-metric-instances", "details"},
                               .timeout_s = 120});
  if (!imported.succeeded()) {
    details["log"] = runner_log;
    return profile_error(fmt::format("ncu --import {}: {}", describe_exit(imported, 120), imported.err.substr(0, 400)),
                         details);
  }
  auto profile = sass::parse_ncu_csv(imported.out);
  if (!profile) {
    details["import_head"] = imported.out.substr(0, 2000);
    return profile_error(profile.err().message, details);
  }
  family_counts total;
  for (const auto& [kernel, counts] : sass::family_pred_on_by_kernel(*profile)) {
    out.dynamic.per_kernel[kernel] = counts;
    for (const auto& [fam, n] : counts) total[fam] += n;
  }
  for (const auto& fam : c.required_families) total.emplace(fam, 0);
  out.dynamic.counts = total;
  out.dynamic.ran = true;
  std::string ran;
  for (const auto& fam : c.required_families)
    ran += fmt::format("{}{}={}", ran.empty() ? "" : " ", fam, total[fam]);
  details["kernels"] = profile->kernels.size();
  out.dynamic.evidence = coverage_evidence_for(*ncu, report, imported.out, coverage_missing);
  finish(stage_outcome::passed,
         fmt::format("{} kernel launch(es) profiled; predicate-on thread instructions: {}", profile->kernels.size(), ran),
         details);
  return true;
}

}  // namespace ptxbench::gpu

// The timing stage. Reference (trusted, in this process) and candidate (runner process) calls
// alternate A B A B and never overlap; before each, L2 is flushed (2x its size) and persisting lines
// are reset; every call gets fresh input values in a rotating set of buffers (fresh pointers too),
// and every timed candidate output is compared with the reference's output on the same inputs, so a
// kernel that caches or replays results, or skips work, fails here even if it passed the correctness
// trials (the rule: eval/timed_output_check.h). The harness's own clock bounds every call: go/done on
// a shared page, then a snapshot of the outputs on the harness's stream before the clock stops, and
// the timed outputs are compared from that snapshot; each call's launch audit must be intact
// (docs/trusted-timing.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "measure/launch_tally.h"
#include "measure/measurement_audit.h"
#include "measure/physical_floor.h"
#include "verdict/stage_timer.h"
#include "measure/timed_output_check.h"
#include "measure/timing_stats.h"
#include "gpu/common/cuda_check.h"
#include "gpu/harness/environment.h"
#include "gpu/harness/harness.h"
#include "gpu/harness/input_set_count.h"

namespace ptxbench::gpu {

bool harness::stage_timing(runner_client& runner, gpu_stage_result& out) {
  stage_timer timer(stage_id::timing);
  const auto& opt = m_job.options;
  auto fail = [&](eval_outcome outcome, const std::string& message) {
    out.decided = {outcome, stage_id::timing, message, runner.output()};
    out.stages.push_back(timer.finish(stage_outcome::failed, message));
    return false;
  };

  // The rotating sets (input_set_count.h: beyond twice the L2, 8 where an eighth of the GPU's memory
  // holds them, at least 3).
  const std::size_t sets = rotating_input_sets(m_sets[0].bytes(), m_flusher->bytes(),
                                               m_environment.value("memory_bytes", std::size_t{0}), opt.input_sets);
  ensure_sets(sets);

  // What the harness does between the runner's "prepared" and "go", for timed and no-op calls alike:
  // the call's fresh inputs, poisoned outputs and armed guards, input checksums, an L2 flush. The
  // inputs exist in the buffers the runner can see only from here on, so a thread of the
  // candidate's, running again since the runner was resumed, cannot have started the work before
  // "go" (docs/trusted-timing.md). The reference runs after the call on the same inputs (checked
  // unchanged), with the runner frozen.
  std::vector<uint64_t> sums;
  // Where a timed pair's time goes on the harness's clock, per phase (recorded as medians: the pair
  // rate is what the adaptive stopping rule's time cap buys).
  using clock = std::chrono::steady_clock;
  std::map<std::string, std::vector<double>> phase_ms;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  double last_prepare_ms = 0;
  auto write_inputs = [&](tensor_set& set, uint64_t seed) {
    auto t0 = clock::now();
    m_inputs->generate(set.input_ptrs(), seed, m_stream);
    sums = prepare_call(set, true);
    last_prepare_ms = since(t0);
  };

  // Calibrate the trusted wall-clock bound with calls that do nothing, through the path of a timed
  // call from "prepared" to "done" (its inputs written, the same rotating buffer sets mapped,
  // markers, go/done, the output snapshot), so that what the no-op calls measure is what a timed
  // call adds to its work. The reference runs after each, as after a timed call (runner frozen):
  // a call that follows an idle GPU and one that follows the reference do not cost the same, and
  // without it the overhead came out low on an H100 and an honest GEMM's bound crossed the
  // allowance on some pairs. The first few are slower (first IPC mappings, CUPTI buffers) and are
  // dropped.
  constexpr int k_noop_warmup = 5, k_noop_calls = 64;
  bool shared_memory = runner.channel() == "shared_memory";
  std::vector<double> noop;
  for (int i = 0; i < k_noop_warmup + k_noop_calls; ++i) {
    auto& set = m_sets[static_cast<std::size_t>(i) % sets];
    uint64_t seed = m_job.seed + 500000 + static_cast<uint64_t>(i);
    auto r = runner.call(set.describe(), opt.call_timeout_s, true, [&] { snapshot_outputs(set); },
                         [&] { write_inputs(set, seed); });
    runner.freeze();
    run_reference(set, true);
    // A no-op call launches nothing of the candidate's; a finding here is a background thread's.
    if (auto tampered = tampering(runner, r); !tampered.empty() && r.outcome == call_outcome::ok && opt.tamper_check)
      return fail(eval_outcome::runtime_error, fmt::format("calibration call {}: {}", i, tampered));
    if (r.outcome == call_outcome::ok && i >= k_noop_warmup) {
      noop.push_back(r.wall_ms);
    }
  }
  // The prepare interval (each call's lead_ms) is recorded, never part of the bound: with the inputs
  // written after "prepared", work before "go" has nothing to work on.
  auto cal = measure::calibrate(noop, shared_memory ? measure::k_shared_memory_min_allowance_ms : measure::k_socket_min_allowance_ms);

  timing_summary ts;
  ts.method = m_tracer ? "cupti" : "events";
  ts.warmup = opt.warmup;
  ts.iterations = opt.iterations;
  // How many pairs: until the median speedup's 95% interval is within ±timing_ci (at least
  // min_pairs; at most timing_cap_s of sampling), or exactly --iterations (measure/timing_stats.h).
  const measure::stopping_rule rule{opt.min_pairs, 5000, opt.timing_ci, opt.timing_cap_s, opt.iterations};
  std::vector<double> ratios;
  std::optional<measure::stop_reason> stopped;
  auto sampling_start = std::chrono::steady_clock::now();
  ts.input_sets = static_cast<int>(sets);
  ts.l2_flush_bytes = static_cast<double>(m_flusher->bytes());
  ts.reference_name = baseline_description();
  auto clocks_before = read_clocks(m_device);

  std::vector<measure::timed_pair> pairs;
  std::vector<double> ref_ms;
  std::string method = "cupti";
  // What the launch audit found where it does not decide (--no-tamper-check), per call.
  ordered_json tamper_findings = ordered_json::array();
  std::vector<double> signal_ms, confirm_ms, lead_ms;
  std::vector<double> reference_records, reference_busy_ms;  // per pair: launches and GPU-busy time
  // How the runner matched launches to records, per call (gpu/common/launch_audit.h).
  std::map<std::string, int> audit_matching;
  // Isolated out-of-tolerance elements on timed calls (see eval/timed_output_check.h).
  int outlier_calls = 0;
  int64_t outlier_elements = 0;
  double outlier_max_abs = 0;
  std::vector<uint64_t> outlier_seeds;
  // The kernel launches of each timed call (CUPTI's records within the call, the marker outside it):
  // the dynamic check requires its profiled call to have made as many.
  m_timed_launches_per_call = -1;
  measure::launch_tally launches;  // its histogram says which call differed
  for (int i = 0; !stopped; ++i) {
    if (i == opt.warmup) sampling_start = std::chrono::steady_clock::now();
    auto& set = m_sets[static_cast<std::size_t>(i) % sets];
    uint64_t seed = m_job.seed + 1000 + static_cast<uint64_t>(i);
    auto pair_start = clock::now();
    auto r = runner.call(set.describe(), opt.call_timeout_s, false, [&] { snapshot_outputs(set); },
                         [&] { write_inputs(set, seed); });  // A
    runner.freeze();
    double call_ms = since(pair_start);
    auto checks_start = clock::now();
    if (r.outcome != call_outcome::ok) {
      auto f = classify_call_failure(r, fmt::format("timed call {} (seed {})", i, seed));
      return fail(f.outcome, f.message);
    }
    if (r.audit.is_object()) ++audit_matching[r.audit.value("matching", std::string("?"))];
    if (auto tampered = tampering(runner, r); !tampered.empty()) {
      if (opt.tamper_check) return fail(eval_outcome::runtime_error, fmt::format("timed call {} (seed {}): {}", i, seed, tampered));
      if (tamper_findings.size() < 10) tamper_findings.push_back({{"call", i}, {"finding", tampered}, {"audit", r.audit}});
    }
    if (auto problem = check_call_hygiene(runner, set, sums); !problem.empty())
      return fail(eval_outcome::runtime_error, fmt::format("timed call {}: {}", i, problem));
    double checks_ms = since(checks_start);
    auto reference_start = clock::now();
    double ref = run_reference(set, true);  // B: the same inputs, the runner frozen meanwhile
    double reference_host_ms = since(reference_start);
    if (i >= opt.warmup) {
      reference_records.push_back(m_reference_records);
      reference_busy_ms.push_back(m_reference_busy_ms);
    }
    auto compare_start = clock::now();
    bool call_had_outliers = false;
    // The snapshot taken when the runner said done: what the clock's end vouches for.
    std::vector<const void*> snapshot;
    for (const auto& s : m_snapshot) snapshot.push_back(s->data);
    auto compared = compare_outputs(set, snapshot, m_job.tol.atol, m_job.tol.rtol);
    for (std::size_t o = 0; o < set.outputs.size(); ++o) {
      const auto& b = set.outputs[o];
      const auto& st = compared[o];
      switch (measure::judge_timed_output(b->numel(), st.mismatches, st.nonfinite)) {
        case measure::timed_output_judgement::ok:
          break;
        case measure::timed_output_judgement::outliers:
          call_had_outliers = true;
          outlier_elements += st.mismatches;
          outlier_max_abs = std::max(outlier_max_abs, st.max_absolute_error);
          break;
        case measure::timed_output_judgement::not_computed:
          return fail(eval_outcome::incorrect_numerical,
                      fmt::format("timed call {} (seed {}): output {} wrong in {} of {} element(s){} (max_abs_error {:g}) "
                                  "when the runner said done, although the correctness trials passed — results must "
                                  "be computed on every call, before done",
                                  i, seed, b->name(), st.mismatches, b->numel(),
                                  st.nonfinite ? fmt::format(", {} NaN/Inf", st.nonfinite) : "",
                                  st.max_absolute_error));
      }
    }
    if (i >= opt.warmup) {
      phase_ms["call_with_prepare"].push_back(call_ms);
      phase_ms["prepare"].push_back(last_prepare_ms);
      phase_ms["audit_and_hygiene"].push_back(checks_ms);
      phase_ms["reference"].push_back(reference_host_ms);
      phase_ms["compare"].push_back(since(compare_start));
      phase_ms["pair"].push_back(since(pair_start));
    }
    if (call_had_outliers) {
      ++outlier_calls;
      outlier_seeds.push_back(seed);  // replay a call with this seed to see its outliers
    }
    if (r.method == "cupti")
      launches.add(r.kernels.size());
    else
      method = "events";
    if (i < opt.warmup) continue;
    pairs.push_back({ref, r.method == "cupti" ? r.span_ms : 0.0, r.wall_ms, r.lead_ms});
    signal_ms.push_back(r.signal_ms);
    confirm_ms.push_back(r.wall_ms - r.signal_ms);
    lead_ms.push_back(r.lead_ms);
    ref_ms.push_back(ref);
    ratios.push_back(measure::pair_speedup(pairs.back(), cal));
    stopped = measure::should_stop(
        rule, ratios, std::chrono::duration<double>(std::chrono::steady_clock::now() - sampling_start).count());
  }
  const int total = opt.warmup + static_cast<int>(pairs.size());
  m_timed_launches_per_call = launches.per_call().value_or(-1);
  auto decided = measure::decide_candidate_latency(pairs, cal);
  // The physical floor (eval/physical_floor.h): a call that no GPU could finish this fast fails,
  // whatever its span says.
  std::optional<physical_floor> floor;
  if (m_job.physical_floor) {
    int l2_bytes = 0;
    PTXB_CUDA_CALL(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, m_device));
    floor = measure::physical_floor_for(*m_job.physical_floor, l2_bytes);
  }
  if (floor)
    if (auto below = measure::find_below_floor(pairs, cal, floor->floor_ms)) {
      int call = opt.warmup + below->pair;
      return fail(eval_outcome::runtime_error,
                  measure::floor_violation_message(*below, *floor, cal.allowance_ms, call,
                                                m_job.seed + 1000 + static_cast<uint64_t>(call)));
    }
  std::vector<double> spans;
  for (const auto& p : pairs) spans.push_back(p.candidate_span_ms);
  std::vector<double> wall, bound;
  for (const auto& p : pairs) {
    wall.push_back(p.candidate_wall_ms - cal.overhead_ms);
    bound.push_back(measure::trusted_bound_ms(p, cal));
  }
  ts.method = m_tracer && method == "cupti" ? "cupti" : "wallclock";
  ts.candidate = measure::summarize(decided.used_ms);
  ts.reference = measure::summarize(ref_ms);
  const auto ci = measure::median_confidence_interval(decided.ratios);
  ts.speedup = ci.median;
  ts.speedup_ci_low = ci.low;
  ts.speedup_ci_high = ci.high;
  ts.speedup_ci_half_width = ci.half_width;
  ts.ci_target_half_width = opt.iterations > 0 ? 0 : opt.timing_ci;
  ts.pairs = static_cast<int>(pairs.size());
  ts.stopped = std::string(measure::stop_reason_name(*stopped));
  ts.speedup_p10 = measure::quantile(decided.ratios, 0.1);
  ts.speedup_p90 = measure::quantile(decided.ratios, 0.9);
  ts.candidate_wall_median_ms = measure::quantile(wall, 0.5);
  ts.wallclock_disagreed = decided.disagreements > 0;
  auto clocks_after = read_clocks(m_device);
  for (const auto* c : {&clocks_before, &clocks_after})
    if (c->contains("sm_mhz") && (*c)["sm_mhz"].is_number()) ts.sm_clock_mhz.push_back((*c)["sm_mhz"].get<double>());
  ts.floor = floor;
  out.timing = ts;
  ordered_json details = {{"timing_channel", runner.channel()},
                          {"calibration_overhead_ms", cal.overhead_ms},
                          {"calibration_allowance_ms", cal.allowance_ms},
                          {"tamper_check", !runner.audits() ? ordered_json("unavailable: " + runner.audit_unavailable())
                                                             : ordered_json(opt.tamper_check ? "on" : "recorded only")},
                          {"tamper_findings", tamper_findings},
                          {"audit_matching", audit_matching},
                          {"kernels_per_call", [&] {
                             ordered_json j = ordered_json::object();
                             for (const auto& [kernels, calls] : launches.histogram()) j[std::to_string(kernels)] = calls;
                             return j;
                           }()},
                          {"wallclock_disagreements", decided.disagreements},
                          {"clocks_before", clocks_before},
                          {"clocks_after", clocks_after},
                          {"noop_wall_ms", noop},
                          {"candidate_ms", decided.used_ms},
                          {"candidate_span_ms", spans},
                          {"candidate_wall_ms", wall},
                          {"candidate_bound_ms", bound},
                          {"candidate_signal_ms", signal_ms},
                          {"candidate_confirm_ms", confirm_ms},
                          {"candidate_lead_ms", lead_ms},
                          {"reference_ms", ref_ms},
                          {"reference_busy_ms", reference_busy_ms},
                          {"reference_records", reference_records},
                          {"pair_phase_median_ms", [&] {
                             ordered_json j = ordered_json::object();
                             for (const auto& [phase, v] : phase_ms) j[phase] = measure::quantile(v, 0.5);
                             return j;
                           }()},
                          {"timed_call_outliers",
                           {{"calls", outlier_calls},
                            {"elements", outlier_elements},
                            {"max_abs_error", outlier_max_abs},
                            {"seeds", outlier_seeds},
                            {"max_mismatch_fraction_per_output", measure::k_timed_call_max_mismatch_fraction}}}};
  std::string note = runner.audits() ? "" : "; the launch audit was unavailable (" + runner.audit_unavailable() + ")";
  if (decided.disagreements)
    note += fmt::format("; the trusted wall clock exceeded the reported span in {} of {} calls and was used",
                        decided.disagreements, pairs.size());
  if (!tamper_findings.empty())
    note += fmt::format("; the launch audit found tampering that was not enforced (--no-tamper-check): {}",
                        tamper_findings[0]["finding"].get<std::string>());
  if (outlier_calls > 0)
    note += fmt::format("; {} of {} calls had isolated elements outside tolerance ({} in all, max_abs_error {:g}; "
                        "correctness is judged by the trials)",
                        outlier_calls, total, outlier_elements, outlier_max_abs);
  out.stages.push_back(timer.finish(
      stage_outcome::passed,
      fmt::format("candidate {:.4f} ms, reference {:.4f} ms (medians of {} pairs), speedup {:.3f}x (median of per-pair "
                  "ratios, 95% interval {:.3f}-{:.3f}, ±{:.2f}%{}){}",
                  ts.candidate.median_ms, ts.reference.median_ms, pairs.size(), ts.speedup, ts.speedup_ci_low,
                  ts.speedup_ci_high, 100 * ts.speedup_ci_half_width,
                  ts.stopped == "time_cap"   ? fmt::format("; the {:g} s cap stopped sampling before ±{:g}%",
                                                           opt.timing_cap_s, 100 * opt.timing_ci)
                  : ts.stopped == "max_pairs" ? "; the pair limit stopped sampling"
                                              : "",
                  note),
      details));
  return true;
}

}  // namespace ptxbench::gpu

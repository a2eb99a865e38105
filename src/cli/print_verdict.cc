#include "cli/print_verdict.h"

#include <fmt/format.h>

namespace ptxbench::cli {
namespace {

std::string counts_text(const std::optional<family_counts>& c, const std::vector<std::string>& required) {
  if (!c) return "n/a";
  std::string out;
  for (const auto& fam : required) {
    auto it = c->find(fam);
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", fam, it == c->end() ? 0 : it->second);
  }
  return out;
}

std::string indent(const std::string& text, std::size_t max_lines) {
  std::string out;
  std::size_t start = 0, lines = 0;
  while (start < text.size() && lines < max_lines) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
    ++lines;
  }
  if (start < text.size()) out += "    ... (truncated; --json has the full text)\n";
  return out;
}

}  // namespace

std::string verdict_text(const verdict& v, const std::string& candidate_name, bool verbose) {
  std::string out =
      fmt::format("ptxbench {}: {} on {} ({}, {})\n", mode_name(v.mode), candidate_name, v.task, v.target, v.arch);
  for (const auto& s : v.stages)
    out += fmt::format("  {:<14} {:<9} {:>7.2f}s  {}\n", stage_name(s.id), stage_outcome_name(s.outcome), s.seconds,
                       s.summary);
  const auto& d = v.decided;
  bool failed = d.stage && d.outcome != eval_outcome::built && d.outcome != eval_outcome::passed;
  if (failed && !d.log.empty()) out += "\n" + indent(d.log, verbose ? 400 : 40);
  if (verbose && !v.build.log.empty() && d.log != v.build.log) out += "\ncompiler log:\n" + indent(v.build.log, 200);
  const auto& t = v.targets;
  out += fmt::format("\ntarget instructions ({} on {}): {} — {}\n", fmt::join(t.required_families, " or "), t.arch,
                     target_verdict_name(t.verdict), t.reason.empty() ? "-" : t.reason);
  if (t.static_counts || t.dynamic.counts)
    out += fmt::format("  static SASS: {}   executed (thread instr.): {}\n", counts_text(t.static_counts, t.required_families),
                       counts_text(t.dynamic.counts, t.required_families));
  if (t.verdict == target_verdict::executed && !t.coverage.empty()) {
    std::string shares;
    for (const auto& [fam, c] : t.coverage)
      shares += fmt::format("{}{} {}", shares.empty() ? "" : ", ", fam,
                            c.fraction ? fmt::format("{:.1f}%", *c.fraction * 100) : std::string("unknown"));
    out += fmt::format("  work coverage: {}{}\n", shares,
                       t.min_coverage ? fmt::format(" (--min-coverage {:g}%)", *t.min_coverage * 100) : "");
  }
  if (v.correctness)
    out += fmt::format("correctness: max_abs_error={:.4g} max_rel_error={:.4g} ({} trial(s), {} atol=rtol={:g})\n",
                       v.correctness->max_absolute_error, v.correctness->max_relative_error, v.correctness->trials,
                       v.correctness->rule, v.correctness->atol);
  if (v.timing) {
    const auto& tm = *v.timing;
    std::string interval;
    if (tm.pairs > 0 && tm.speedup_ci_high > 0) {
      interval = fmt::format(", 95% interval {:.3f}-{:.3f} (±{:.2f}%)", tm.speedup_ci_low, tm.speedup_ci_high,
                             100 * tm.speedup_ci_half_width);
      if (tm.stopped == "time_cap")
        interval += fmt::format(", wider than the ±{:g}% asked: the time cap stopped sampling", 100 * tm.ci_target_half_width);
    }
    out += fmt::format("timing: candidate {:.4f} ms, {} {:.4f} ms (medians), speedup {:.3f}x (median of {} per-pair "
                       "ratios{})\n",
                       tm.candidate.median_ms, tm.reference_name, tm.reference.median_ms, tm.speedup,
                       tm.pairs > 0 ? tm.pairs : tm.iterations, interval);
  }
  if (v.measurement && v.measurement->exclusive())
    out += fmt::format("measured with the GPU to itself: {:.2f} s held exclusively, {:.2f} s waited for it\n",
                       v.measurement->exclusive_held_ms() / 1000, v.measurement->exclusive_waited_ms() / 1000);
  // The FlashInfer status is shown only where one applies (not for "built": nothing ran).
  auto status = v.status();
  out += fmt::format("verdict: {}{} — {}\n", outcome_name(d.outcome),
                     status ? fmt::format(" (FlashInfer status {})", status_name(*status)) : std::string(), d.message);
  return out;
}

exit_status verdict_exit_status(const verdict& v) {
  if (v.outcome() == eval_outcome::infra_error) return exit_status::infra;
  if (v.mode == eval_mode::check) {
    if (v.outcome() != eval_outcome::built) return exit_status::candidate_failed;
    return v.targets.verdict == target_verdict::absent_in_sass ? exit_status::not_target_correct : exit_status::ok;
  }
  if (v.outcome() == eval_outcome::built) return exit_status::not_target_correct;  // static-only target: nothing ran
  if (!v.passed()) return exit_status::candidate_failed;
  return v.target_correct() ? exit_status::ok : exit_status::not_target_correct;
}

}  // namespace ptxbench::cli

#include "measure/coverage.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "sass/opcode_family.h"
#include "sass/tensor_instruction_work.h"

namespace ptxbench::measure {
namespace {

// Families whose executed instructions the evidence keeps: the target families and the non-tensor
// bulk copies that share TMA's byte counters.
const std::set<std::string, std::less<>>& evidence_families() {
  static const std::set<std::string, std::less<>> f = {"GMMA", "TMA", "TCGEN05", "UBLKCP", "UBLKRED"};
  return f;
}

std::string percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

family_coverage unknown(const std::string& unit, double required, std::string reason) {
  family_coverage c;
  c.unit = unit;
  c.required = required;
  c.reason = std::move(reason);
  return c;
}

family_coverage gmma_coverage(const task_work& work, const coverage_evidence& ev, std::optional<int64_t> total_threads) {
  if (!ev.instructions_missing.empty())
    return unknown("flop", work.flops, "unknown: no per-instruction counts (" + ev.instructions_missing + ")");
  // Sum per mnemonic first, so the reason can name the shapes.
  std::map<std::string, int64_t> threads_by_mnemonic;
  for (const auto& i : ev.instructions)
    if (i.family == "GMMA") threads_by_mnemonic[i.mnemonic] += i.thread_pred_on;
  family_coverage c;
  c.unit = "flop";
  c.required = work.flops;
  int64_t page_threads = 0;
  for (const auto& [mnemonic, threads] : threads_by_mnemonic) page_threads += threads;
  // Scale to the per-opcode metric's total when the source page saw fewer (a dropped identical
  // repeat block) or more; the shape mix stays the page's.
  double scale = 1;
  std::string scaled;
  if (total_threads && *total_threads != page_threads) {
    if (page_threads == 0)
      return unknown("flop", work.flops,
                     fmt::format("unknown: the per-opcode count saw {} predicate-on GMMA thread instructions but the "
                                 "source page none",
                                 *total_threads));
    scale = static_cast<double>(*total_threads) / static_cast<double>(page_threads);
    scaled = fmt::format("; scaled by {:.6g} to the per-opcode count ({} predicate-on thread instructions, the "
                         "source page showed {})",
                         scale, *total_threads, page_threads);
  }
  std::string parts;
  for (const auto& [mnemonic, threads] : threads_by_mnemonic) {
    auto shape = sass::gmma_shape(mnemonic);
    if (!shape) return unknown("flop", work.flops, fmt::format("unknown: no MxNxK shape in the mnemonic {}", mnemonic));
    double executions = static_cast<double>(threads) * scale / sass::k_threads_per_warpgroup;
    c.done += executions * shape->flops();
    parts += fmt::format("{}{:.6g} warpgroup executions of {} ({} FLOP each)", parts.empty() ? "" : ", ", executions,
                         mnemonic, shape->flops());
  }
  c.fraction = work.flops > 0 ? c.done / work.flops : 0.0;
  if (parts.empty())
    c.reason = "no GMMA instruction executed with an active predicate";
  else
    c.reason = fmt::format("{} = {:.4g} FLOP of the task's {:.4g} ({}){}", parts, c.done, work.flops,
                           percent(*c.fraction), scaled);
  return c;
}

family_coverage tma_coverage(const task_work& work, const coverage_evidence& ev) {
  const double required = work.bytes();
  if (!ev.instructions_missing.empty())
    return unknown("byte", required,
                   "unknown: no per-instruction counts to tell TMA kernels from non-tensor bulk copies (" +
                       ev.instructions_missing + ")");
  std::set<std::string> tma_kernels, bulk_kernels;
  for (const auto& i : ev.instructions) {
    if (i.thread_pred_on <= 0) continue;
    if (i.family == "TMA") tma_kernels.insert(i.kernel);
    if (i.family == "UBLKCP" || i.family == "UBLKRED") bulk_kernels.insert(i.kernel);
  }
  family_coverage c;
  c.unit = "byte";
  c.required = required;
  if (tma_kernels.empty()) {
    c.fraction = 0.0;
    c.reason = "no TMA instruction executed with an active predicate";
    return c;
  }
  if (!ev.counters_missing.empty())
    return unknown("byte", required, "unknown: no TMA byte counters (" + ev.counters_missing + ")");
  for (const auto& k : tma_kernels) {
    if (bulk_kernels.count(k))
      return unknown("byte", required,
                     fmt::format("unknown: kernel {} also ran non-tensor bulk copies (UBLKCP/UBLKRED), whose bytes "
                                 "the TMA counters include",
                                 k));
    auto it = ev.counters.find(k);
    if (it == ev.counters.end())
      return unknown("byte", required, fmt::format("unknown: no TMA byte counters for kernel {}", k));
    for (const auto& metric : tma_byte_metrics()) {
      auto m = it->second.find(metric);
      if (m == it->second.end())
        return unknown("byte", required, fmt::format("unknown: {} missing for kernel {}", metric, k));
      c.done += m->second;
    }
  }
  c.fraction = required > 0 ? c.done / required : 0.0;
  c.reason = fmt::format("TMA moved {:.4g} bytes in {} kernel(s) against the task's minimum {:.4g} ({}; re-reads "
                         "through L2 count again)",
                         c.done, tma_kernels.size(), required, percent(*c.fraction));
  return c;
}

// Coverage when the runtime check did not produce evidence: 0 where it is known that nothing ran,
// otherwise unknown with the target verdict's own reason.
family_coverage without_evidence(const std::string& family, const target_instructions& t,
                                 const std::optional<task_work>& work) {
  const std::string unit = family == "TMA" ? "byte" : "flop";
  const double required = !work ? 0 : unit == "byte" ? work->bytes() : work->flops;
  bool nothing_ran = t.verdict == target_verdict::absent_in_sass || t.verdict == target_verdict::not_executed;
  if (!nothing_ran && t.dynamic.counts) {
    auto it = t.dynamic.counts->find(family);
    nothing_ran = it == t.dynamic.counts->end() || it->second == 0;
  }
  if (nothing_ran && work) {
    family_coverage c = unknown(unit, required,
                                t.verdict == target_verdict::absent_in_sass
                                    ? fmt::format("no required instruction family in the SASS")
                                    : fmt::format("{} never executed on the workload", family));
    c.fraction = 0.0;
    return c;
  }
  return unknown(unit, required, "not established: " + t.reason);
}

}  // namespace

coverage_evidence evidence_from_ncu(const std::optional<sass::ncu_profile>& source_page,
                                    const std::optional<std::vector<sass::ncu_metric_value>>& counters,
                                    const std::string& source_page_missing, const std::string& counters_missing) {
  coverage_evidence ev;
  ev.instructions_missing = source_page ? "" : source_page_missing;
  ev.counters_missing = counters ? "" : counters_missing;
  if (source_page) {
    std::map<std::pair<std::string, std::string>, executed_instruction> sums;
    for (const auto& k : source_page->kernels)
      for (const auto& row : k.rows) {
        if (row.inst_executed <= 0 && row.thread_inst_pred_on <= 0) continue;
        for (const auto& fam : sass::classify(row.opcode)) {
          if (!evidence_families().count(fam)) continue;
          auto& e = sums[{k.name, row.mnemonic}];
          e.kernel = k.name;
          e.mnemonic = row.mnemonic;
          e.family = fam;
          e.inst_executed += row.inst_executed;
          e.thread_pred_on += row.thread_inst_pred_on;
        }
      }
    for (auto& [key, e] : sums) ev.instructions.push_back(std::move(e));
  }
  if (counters)
    for (const auto& v : *counters) ev.counters[v.kernel][v.metric] += v.value;
  return ev;
}

coverage_evidence evidence_from_ncu_output(const std::optional<std::string>& source_page_csv,
                                           const std::string& source_page_missing, const std::string& details_csv) {
  std::optional<sass::ncu_profile> page;
  std::string page_missing = source_page_missing;
  if (source_page_csv) {
    auto parsed = sass::parse_ncu_csv(*source_page_csv);
    if (!parsed) page_missing = "source page: " + parsed.err().message;
    else if (parsed->format != sass::ncu_format::source_page) page_missing = "ncu printed no source page";
    else page = std::move(*parsed);
  }
  std::optional<std::vector<sass::ncu_metric_value>> counters;
  std::string counters_missing;
  auto values = sass::read_ncu_metric_values(details_csv, tma_byte_metrics());
  if (!values) counters_missing = values.err().message;
  else if (values->empty()) counters_missing = "ncu reported none of the TMA byte counters";
  else counters = std::move(*values);
  return evidence_from_ncu(page, counters, page_missing, counters_missing);
}

std::map<std::string, family_coverage> compute_coverage(const std::vector<std::string>& required_families,
                                                        const std::optional<task_work>& work,
                                                        const coverage_evidence& evidence,
                                                        const std::optional<family_counts>& pred_on_totals) {
  std::map<std::string, family_coverage> out;
  for (const auto& fam : required_families) {
    if (!work) {
      out[fam] = unknown(fam == "TMA" ? "byte" : "flop", 0, "unknown: the task states no work (suite/tasks.json)");
    } else if (fam == "GMMA") {
      std::optional<int64_t> total;
      if (pred_on_totals) {
        auto it = pred_on_totals->find("GMMA");
        total = it == pred_on_totals->end() ? 0 : it->second;
      }
      out[fam] = gmma_coverage(*work, evidence, total);
    } else if (fam == "TMA") {
      out[fam] = tma_coverage(*work, evidence);
    } else if (fam == "TCGEN05") {
      out[fam] = unknown("flop", work->flops,
                         "unknown: a tcgen05 MMA's shape is in its instruction descriptor, not in the SASS mnemonic");
    } else {
      out[fam] = unknown("", 0, fmt::format("unknown: no coverage rule for family {}", fam));
    }
  }
  return out;
}

void apply_coverage(verdict& v, const task& t, const target_info& target, std::optional<double> min_coverage) {
  auto& ti = v.targets;
  ti.min_coverage = min_coverage;
  ti.coverage.clear();
  if (target.verification != "runtime") {
    for (const auto& fam : ti.required_families)
      ti.coverage[fam] = unknown(fam == "TMA" ? "byte" : "flop", 0,
                                 fmt::format("unknown: no {} GPU here; {} is verified statically only", target.name,
                                             target.arch));
    return;
  }
  const auto& evidence = ti.dynamic.evidence;
  std::string evidence_problem;
  if (!evidence && ti.dynamic.counts && ti.dynamic.error.empty())
    evidence_problem = "the runtime check recorded no coverage evidence";
  if (ti.verdict == target_verdict::executed && evidence) {
    ti.coverage = compute_coverage(ti.required_families, t.work, *evidence, ti.dynamic.counts);
  } else {
    for (const auto& fam : ti.required_families) {
      ti.coverage[fam] = without_evidence(fam, ti, t.work);
      if (ti.verdict == target_verdict::executed && !ti.coverage[fam].fraction)
        ti.coverage[fam].reason = "unknown: " + (evidence_problem.empty() ? ti.reason : evidence_problem);
    }
  }
  if (min_coverage && ti.verdict == target_verdict::executed && !ti.coverage_at_least(*min_coverage)) {
    std::string shares;
    for (const auto& fam : ti.required_families) {
      const auto& c = ti.coverage[fam];
      shares += fmt::format("{}{} {}", shares.empty() ? "" : ", ", fam, c.fraction ? percent(*c.fraction) : "unknown");
    }
    ti.reason += fmt::format("; but no required family did {} of the task's work (--min-coverage): {}",
                             percent(*min_coverage), shares);
  }
}

}  // namespace ptxbench::measure

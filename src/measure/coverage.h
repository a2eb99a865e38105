#pragma once
// Work coverage: beyond the paper's rule (a required family ran with a predicate-on count > 0),
// how much of the task's work the family's executed instructions did. A correct kernel that
// computes with FMA and launches one token wgmma on the side is "executed" by the paper's rule but
// covers ~0 % of the FLOPs here.
//
//   GMMA: Σ over executed GMMA instructions of (predicate-on thread executions / 128) × 2·M·N·K of
//         the instruction's shape (sass/tensor_instruction_work.h explains the unit), over the
//         task's FLOPs.
//   TMA:  bytes Nsight Compute's TMA counters saw (global→shared loads, shared→global stores and
//         reductions; see k_tma_byte_metrics) in kernels that executed TMA instructions, over the
//         task's minimum bytes (read + written). Unknown when a kernel also ran non-tensor bulk
//         copies (UBLKCP/UBLKRED), whose bytes the same counters include. Loads that re-read tiles
//         through L2 make this exceed 100 %; a token copy stays near 0 %.
//   TCGEN05: unknown — a tcgen05 MMA's shape lives in its instruction descriptor (a register), not
//         in the SASS mnemonic, and no Blackwell GPU runs here.
//
// The harness collects the evidence (per-instruction executed counts from ncu's source page, the
// TMA byte counters from its details page) into the runtime counts it returns
// (runtime_counts::evidence, verdict/verdict.h); apply_coverage computes the coverage on the CPU side
// from it and the task's work, into target_instructions::coverage. Everything here is a pure
// function of parsed data.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "sass/ncu_metric_values.h"
#include "sass/ncu_report.h"
#include "suite/task.h"
#include "verdict/verdict.h"

namespace ptxbench::measure {

/// Nsight Compute metrics whose sum is the bytes TMA instructions moved (kernel-level counters).
inline const std::vector<std::string>& tma_byte_metrics() {
  static const std::vector<std::string> names = {
      "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
      "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum",
      "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_red.sum",
  };
  return names;
}

/// Builds the evidence from ncu's parsed source page (per-instruction counts) and the metric values
/// of its details page. Either may be missing; say why in `*_missing`.
coverage_evidence evidence_from_ncu(const std::optional<sass::ncu_profile>& source_page,
                                    const std::optional<std::vector<sass::ncu_metric_value>>& counters,
                                    const std::string& source_page_missing, const std::string& counters_missing);

/// The same from the texts ncu printed on import: the source page (`--page source --print-source
/// sass --csv`; nullopt when it could not be printed, with the reason) and the details page (the
/// one the dynamic check already reads). A text that does not parse leaves that part missing, with
/// the parser's message as the reason.
coverage_evidence evidence_from_ncu_output(const std::optional<std::string>& source_page_csv,
                                           const std::string& source_page_missing, const std::string& details_csv);

/// Coverage of each required family from the evidence and the task's work. `work` nullopt: the task
/// states no work (unknown). Families with no executed instruction get 0. `pred_on_totals`, when
/// given, are the per-opcode metric's predicate-on counts per family for the same call (the
/// dynamic check's counts): the source page drops an immediate identical repeat of a kernel's block
/// (see ncu_source_page.cc), which would also drop a real second launch with identical counts, so
/// GMMA work is scaled to the authoritative total when the two disagree, keeping the shape mix the
/// source page shows, and the reason says so.
std::map<std::string, family_coverage> compute_coverage(const std::vector<std::string>& required_families,
                                                        const std::optional<task_work>& work,
                                                        const coverage_evidence& evidence,
                                                        const std::optional<family_counts>& pred_on_totals = std::nullopt);

/// Fills v.targets.coverage (every required family, known or with the reason it is not) and
/// v.targets.min_coverage, and notes an unmet minimum in v.targets.reason. Reads the evidence from
/// the runtime counts (v.targets.dynamic.evidence); a target verified statically only gets "unknown".
void apply_coverage(verdict& v, const task& t, const target_info& target, std::optional<double> min_coverage);

}  // namespace ptxbench::measure

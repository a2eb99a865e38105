#pragma once
// Reading Nsight Compute CSV output into executed instruction counts per kernel, per base opcode and
// per family. Two ncu command lines are understood (docs/sass-and-profiling.md has them in full):
//   per-opcode: --metrics sass__inst_executed_per_opcode,sass__thread_inst_executed_true_per_opcode
//               --print-metric-instances details --csv
//   source:     --page source --print-source sass --csv --metrics inst_executed,thread_inst_executed_true
// ncu's own lines (==PROF==, ==WARNING==) and the profiled program's stdout may be mixed in; they
// are skipped. A family counts as executed only when its predicate-on thread count is > 0.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sass/opcode_family.h"

namespace ptxbench::sass {

enum class ncu_format {
  per_opcode_details,  ///< one row per (launch, metric), value "384 (IMAD: 56; ...)"
  source_page,         ///< one block per kernel, one row per SASS instruction
};

/// Returns "per_opcode_details" or "source_page".
std::string_view ncu_format_name(ncu_format f);

/// One SASS instruction of the source page.
struct ncu_source_row {
  uint64_t address = 0;  ///< absolute, as printed
  uint64_t offset = 0;   ///< from the first instruction of the block (joins with cuobjdump offsets)
  std::string guard, mnemonic, opcode, operands;
  int64_t inst_executed = 0;
  int64_t thread_inst_pred_on = 0;
};

struct ncu_kernel {
  std::string id;    ///< ncu's launch "ID" (per-opcode format); the block ordinal on the source page
  std::string name;  ///< as ncu prints it, demangled: "wgmma_probe(float *)"
  std::string block_size, grid_size;  ///< "(128, 1, 1)"; per-opcode format only
  opcode_executions per_opcode;
  family_counts family_pred_on;        ///< predicate-on thread instructions per family
  family_counts family_inst_executed;  ///< warp-level instructions per family
  int64_t total_inst_executed = 0;
  int64_t total_thread_pred_on = 0;
  std::vector<ncu_source_row> rows;    ///< source page only

  /// True when the family ran with at least one predicate-on thread instruction.
  [[nodiscard]] bool executed(std::string_view family) const;
};

struct ncu_profile {
  ncu_format format = ncu_format::per_opcode_details;
  std::vector<ncu_kernel> kernels;  ///< in the order ncu printed them
  int duplicate_blocks_dropped = 0; ///< source page: identical repeats of a kernel's block (see the .cc)
  std::vector<std::string> tool_messages;  ///< ==ERROR== / ==WARNING== lines, verbatim
};

/// Parses either CSV format (detected from its header). Fails, naming the line, on: no CSV header
/// (the error quotes ncu's first ==ERROR== line when there is one); per-opcode values without
/// opcode names (`--print-metric-instances values` or `none`: use `details`); a missing
/// predicate-on thread metric or column; unreadable numbers; instance values that do not sum to
/// the printed total; no kernel at all.
result<ncu_profile> parse_ncu_csv(std::string_view text);

/// Sums family predicate-on counts over all launches of each kernel, keyed by ncu's kernel name.
std::map<std::string, family_counts> family_pred_on_by_kernel(const ncu_profile& profile);

namespace detail {
// The two format readers, after the common line filter; exposed for ncu_report.cc only.
result<ncu_profile> parse_ncu_per_opcode(const std::vector<std::pair<int, std::string_view>>& csv_lines);
result<ncu_profile> parse_ncu_source_page(const std::vector<std::pair<int, std::string_view>>& csv_lines);
/// Fills per-family sums and totals from per_opcode.
void finish_kernel(ncu_kernel& k);
}  // namespace detail

}  // namespace ptxbench::sass

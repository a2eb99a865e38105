#pragma once
// Instruction families: which SASS base opcodes stand for an architecture feature (wgmma → GMMA,
// TMA tensor copies → TMA, tcgen05 → TCGEN05, ...). One table serves the static SASS check, the
// Nsight Compute report and the CUPTI records, so the three can never disagree about a name.
// Sources of the opcode names: reference/peers-and-anticheat.md §4.4 (compiled and disassembled
// with nvcc 13.0 for sm_90a and sm_100a) and the upstream verified-SASS rules (upstream-ptxbench §5.3).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::sass {

struct sass_instruction;

/// Instructions (or predicate-on thread instructions) per family name. Same type as
/// family_counts, so results can be stored in a verdict without conversion.
using family_counts = std::map<std::string, int64_t>;

/// One row of the family table.
struct family_rule {
  std::string_view family;                ///< "GMMA", "TMA", ...
  std::vector<std::string_view> opcodes;  ///< exact base opcodes
  std::string_view opcode_prefix;         ///< every base opcode starting with this (empty: none)
  bool target_family = false;             ///< a target may require it (GMMA, TMA, TCGEN05); the rest is evidence only
  std::string_view description;
};

/// The family table, in a stable order (target families first).
const std::vector<family_rule>& family_table();

/// Returns the names of all families, in table order.
std::vector<std::string> family_names();

/// True when name is a family of the table (exact, case-sensitive).
bool is_known_family(std::string_view name);

/// Returns the families a base opcode ("HGMMA", not "HGMMA.64x8x16.F32.BF16") belongs to; usually
/// zero or one. Unknown or empty opcodes give an empty list.
std::vector<std::string> classify(std::string_view base_opcode);

/// Counts instructions per family. Only families with at least one instruction appear.
family_counts count_families(const std::vector<sass_instruction>& instructions);

/// Executed counts for one base opcode, as the profilers report them.
struct opcode_execution {
  int64_t inst_executed = 0;        ///< warp-level executions (one per warp that issued it)
  int64_t thread_inst_pred_on = 0;  ///< thread-level executions whose guard predicate was true

  bool operator==(const opcode_execution&) const = default;
};

/// Per base opcode ("HGMMA") executed counts.
using opcode_executions = std::map<std::string, opcode_execution>;

/// Sums predicate-on thread counts per family. A family appears when any of its opcodes appears in
/// the input, even with a count of 0 (present but never executed with an active predicate).
family_counts family_pred_on_counts(const opcode_executions& per_opcode);

/// Sums warp-level executed counts per family (same key rule as family_pred_on_counts).
family_counts family_inst_executed_counts(const opcode_executions& per_opcode);

/// Returns the families whose count is > 0, in map order.
std::vector<std::string> nonzero_families(const family_counts& counts);

}  // namespace ptxbench::sass

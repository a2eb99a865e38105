#pragma once
// Reading per-PC CUPTI SASS Metrics records joined with the disassembly (the tab-separated layout of
// tests/fixtures/cupti/sassm_joined_h200.tsv, header
// `kernel function pc inst_executed thread_inst thread_inst_pred_on sass`), and summing them per
// function and base opcode with the same family table as the static check and Nsight Compute.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sass/opcode_family.h"
#include "sass/sass_parser.h"

namespace ptxbench::sass {

/// One PC of one function.
struct cupti_pc_record {
  std::string kernel;                ///< short name the collector used
  std::string function;              ///< mangled
  uint64_t pc_offset = 0;            ///< function-relative, bytes
  int64_t inst_executed = 0;         ///< smsp__sass_inst_executed (warp level)
  int64_t thread_inst = 0;           ///< smsp__sass_thread_inst_executed
  int64_t thread_inst_pred_on = 0;   ///< smsp__sass_thread_inst_executed_pred_on
  sass_instruction instruction;      ///< the joined SASS text, split (offset = pc_offset)
};

/// Parses the joined TSV. Fails, naming the line, on a wrong header, a wrong column count, or an
/// unreadable number or instruction.
result<std::vector<cupti_pc_record>> parse_cupti_joined_tsv(std::string_view text);

/// Sums the records per mangled function name and base opcode.
std::map<std::string, opcode_executions> cupti_per_opcode(const std::vector<cupti_pc_record>& records);

}  // namespace ptxbench::sass

#pragma once
// The source gate: before anything is compiled, reject candidates that use a vendor library
// (cuBLAS, cuBLASLt, cuDNN), load code dynamically, or start processes, and sources over the size
// limit. Rules look only at code (see source_scan.h), so "cuDNN" in a comment or string is fine.

#include <cstddef>
#include <vector>

#include "verdict/verdict.h"
#include "suite/solution.h"

namespace ptxbench::build {

struct source_gate_config {
  /// Total bytes over all source files. Upstream prompts made models paste 40–80 KB of wrapper
  /// code; 512 KiB leaves room for that while keeping a runaway reply out of the compiler.
  std::size_t max_total_bytes = 512u << 10;
};

/// Checks every source of a solution. Returns the findings; empty means the gate passed. Each
/// finding names the rule, the file and line, and quotes the offending line.
std::vector<gate_finding> check_sources(const std::vector<source_file>& sources,
                                              const source_gate_config& config = {});

}  // namespace ptxbench::build

#pragma once
// The tools that evaluate a kernel: check (the CPU stages: gate, build, link gate, static SASS) and
// evaluate (every stage, GPU included), both through the injected evaluator — the same one `ptxbench
// check`, `eval` and `run` use — one evaluation at a time. They return the verdict's JSON as
// structured content with the text `ptxbench check`/`eval` print.

#include <mutex>

#include "core/json_check.h"
#include "core/result.h"
#include "mcp/services.h"

namespace ptxbench::mcp {

/// The most a kernel may hold, as `ptxbench eval` reads a kernel file.
inline constexpr std::size_t k_max_kernel_bytes = std::size_t{16} << 20;

class kernel_tools {
 public:
  explicit kernel_tools(const services& s) : m_services(s) {}

  /// check (run_on_gpu false) or evaluate (true). Returns the CallToolResult — a tool error for an
  /// unknown task or target, a kernel that cannot be read or is not text, no GPU, or an evaluation
  /// that failed for infrastructure reasons — or an error for arguments that do not fit the schema.
  result<ordered_json> call(const ordered_json& arguments, bool run_on_gpu);

 private:
  const services& m_services;
  std::mutex m_one_at_a_time;  ///< evaluations share one evaluator (and a GPU)
};

}  // namespace ptxbench::mcp

#pragma once
// What the MCP server uses but does not own, injected by the CLI (cmd_mcp.cc): the suite loaded once,
// the prompt rule `ptxbench prompt` and `run` share, the evaluator the CLI's factory makes (the local
// pipeline, a PTXBench service, or the test-only fake: one evaluation path for every front end), the
// verdict summary the CLI prints, and the check that a local GPU exists.

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"
#include "suite/task.h"
#include "verdict/evaluator.h"
#include "verdict/verdict.h"

namespace ptxbench::mcp {

struct task_prompt {
  std::string variant, pack, system, user;
};

struct services {
  const suite* tasks = nullptr;
  /// Renders the prompt of (task, target, variant), the variant given by name or index.
  std::function<result<task_prompt>(const task&, const target_info&, const std::string& variant)> prompt;
  /// Evaluates check and evaluate calls, one at a time.
  std::shared_ptr<ptxbench::evaluator> evaluator;
  /// The terminal summary of a verdict, as `ptxbench check`/`eval` print it.
  std::function<std::string(const verdict&, const std::string& candidate)> summary;
  /// Before an evaluate: fails, saying why, when its GPU stages cannot run (no local GPU). Unset: no check.
  std::function<status(const target_info&)> gpu_ready;
  std::string evaluator_description;  ///< "the local GPU", "the PTXBench service at http://..."
  std::string default_target = "h200";
  std::string default_variant = "base";
};

}  // namespace ptxbench::mcp

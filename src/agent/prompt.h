#pragma once
// The prompts a trajectory starts with. The knowledge-pack prompt builder (src/prompts/) produces
// them per task, target and variant; until it is wired in, a minimal built-in prompt stands in,
// written from the kernel ABI's contract (include/ptxbench/abi.h). Switching is one line where the
// CLI picks the builder.

#include <functional>
#include <string>

#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::agent {

struct prompt_pair {
  std::string system;
  std::string user;
};

/// Builds the system and first user message for a task, target and prompt variant; fails for an
/// unknown variant.
using prompt_builder = std::function<result<prompt_pair>(const task&, const target_info&, const std::string& variant)>;

/// The only variant the built-in prompt knows.
inline constexpr const char* k_builtin_variant = "minimal";

/// The built-in prompt: no knowledge pack, just the ABI contract, the target and the task JSON
/// (task_view_json). Fails for any variant but "minimal", so a sweep never mislabels variants.
result<prompt_pair> builtin_prompt(const task& t, const target_info& target, const std::string& variant);

}  // namespace ptxbench::agent

#pragma once
// The prompts a trajectory starts with. `ptxbench run` renders them from the knowledge packs
// (src/prompts/, packs/variants.json) per task, target and variant; the minimal built-in prompt,
// written from the kernel ABI's contract (include/ptxbench/abi.h), is the pack-free control arm
// ("builtin-minimal") and what the unit tests use.

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
inline constexpr const char* k_builtin_variant = "builtin-minimal";

/// The built-in prompt: no knowledge pack, just the ABI contract, the target and the task JSON
/// (task_view_json). Fails for any variant but "builtin-minimal", so a sweep never mislabels variants.
result<prompt_pair> builtin_prompt(const task& t, const target_info& target, const std::string& variant);

}  // namespace ptxbench::agent

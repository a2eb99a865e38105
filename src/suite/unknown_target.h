#pragma once

#include <string>

#include "suite/task.h"

namespace ptxbench {

/// unknown_name_message for a target of `s`, the one wording every command uses:
/// "unknown target 'x' (did you mean 'h100'?)" or "unknown target 'x'; expected one of b200, h100,
/// h200 (suite/targets.json)".
std::string unknown_target_message(const suite& s, const std::string& name);

}  // namespace ptxbench

#pragma once
// The tools that read the suite: list_tasks (the tasks and targets, as `ptxbench tasks --json`) and
// show_task (the prompt a model receives, as `ptxbench prompt`).

#include "core/json_check.h"
#include "core/result.h"
#include "mcp/services.h"

namespace ptxbench::mcp {

/// Each returns the CallToolResult, or an error for arguments that do not fit the tool's input
/// schema (answered as -32602).
result<ordered_json> list_tasks(const services& s, const ordered_json& arguments);
result<ordered_json> show_task(const services& s, const ordered_json& arguments);

}  // namespace ptxbench::mcp

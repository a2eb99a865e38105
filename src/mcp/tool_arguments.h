#pragma once
// Reading a tools/call's arguments against the tool's input schema (tool_catalog.h). Arguments that
// do not fit the schema (an unknown name, a wrong type, a missing task, source and path together)
// are a protocol error (-32602 Invalid params, as MCP 2025-06-18 says); what the arguments name but
// cannot be used (an unknown task, a file that cannot be read, a binary source) is the tool's own
// error (an isError result the model can read and correct).

#include <optional>
#include <string>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::mcp {

struct show_arguments {
  std::string task;
  std::optional<std::string> target, variant;
};

struct kernel_arguments {
  std::string task;
  std::optional<std::string> source, path, target, language;
};

/// list_tasks takes no arguments.
status read_list_arguments(const ordered_json& arguments);
result<show_arguments> read_show_arguments(const ordered_json& arguments);
result<kernel_arguments> read_kernel_arguments(const ordered_json& arguments);

}  // namespace ptxbench::mcp

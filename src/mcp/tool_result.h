#pragma once
// CallToolResult objects (MCP tools/call): a success carries the structured content and its text
// summary; a tool error is a result with isError, so the model reads what went wrong.

#include <string>

#include "core/json_check.h"

namespace ptxbench::mcp {

/// `json_text`: also the structured content serialized as a second text block, as the specification
/// recommends for clients that predate structured content. The verdict tools do this, which also
/// puts the verdict's JSON into an agent's ATIF trajectory, where `ptxbench metrics` finds it; the
/// task tools do not (their text already says everything, and a prompt is long).
ordered_json structured_result(const ordered_json& structured, const std::string& summary, bool json_text);
ordered_json tool_error(const std::string& message);

}  // namespace ptxbench::mcp

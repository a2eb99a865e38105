#pragma once
// The tools `ptxbench mcp` offers (tools/list): their names, descriptions, input schemas and output
// schemas. The verdict tools' output schema describes the verdict JSON ("ptxbench.verdict/1",
// verdict/verdict_json.h) that they return as structuredContent.

#include <string>

#include "core/json_check.h"

namespace ptxbench::mcp {

inline constexpr const char* k_list_tasks = "list_tasks";
inline constexpr const char* k_show_task = "show_task";
inline constexpr const char* k_check = "check";
inline constexpr const char* k_evaluate = "evaluate";

/// The tools/list result: {"tools": [...]} with every tool's definition. `evaluator` says where
/// evaluate runs ("the local GPU", "the PTXBench service at URL"), for its description.
ordered_json tool_list(const std::string& evaluator);

/// True for a name tool_list() lists.
bool is_tool(const std::string& name);

}  // namespace ptxbench::mcp

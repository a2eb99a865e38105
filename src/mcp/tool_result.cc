#include "mcp/tool_result.h"

#include "mcp/jsonrpc.h"

namespace ptxbench::mcp {

ordered_json structured_result(const ordered_json& structured, const std::string& summary, bool json_text) {
  ordered_json content = ordered_json::array();
  content.push_back({{"type", "text"}, {"text", summary}});
  if (json_text) content.push_back({{"type", "text"}, {"text", serialize(structured)}});
  return {{"content", content}, {"structuredContent", structured}, {"isError", false}};
}

ordered_json tool_error(const std::string& message) {
  return {{"content", ordered_json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
}

}  // namespace ptxbench::mcp

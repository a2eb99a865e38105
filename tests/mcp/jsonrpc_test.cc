// Classifying what an MCP client sends, message by message (mcp/jsonrpc.h).
#include <gtest/gtest.h>

#include "mcp/jsonrpc.h"

namespace ptxbench::mcp {
namespace {

TEST(JsonRpc, ClassifiesRequestsNotificationsAndResponses) {
  auto r = classify(R"({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "check"}})");
  EXPECT_EQ(r.what, incoming::kind::request);
  EXPECT_EQ(r.id, "a");
  EXPECT_EQ(r.method, "tools/call");
  EXPECT_EQ(r.params["name"], "check");
  auto n = classify(R"({"jsonrpc": "2.0", "method": "notifications/initialized"})");
  EXPECT_EQ(n.what, incoming::kind::notification);
  EXPECT_TRUE(n.params.is_object());
  EXPECT_EQ(classify(R"({"jsonrpc": "2.0", "id": 3, "result": {}})").what, incoming::kind::response);
  EXPECT_EQ(classify(R"({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}})").what, incoming::kind::response);
}

TEST(JsonRpc, InvalidMessagesCarryTheirErrorAndAUsableId) {
  auto bad = [](const std::string& line) { return classify(line); };
  EXPECT_EQ(bad("{").error_code, -32700);
  EXPECT_EQ(bad("").error_code, -32700);
  EXPECT_EQ(bad("[]").error_code, -32600);
  EXPECT_EQ(bad("7").error_code, -32600);
  auto v1 = bad(R"({"jsonrpc": "1.0", "id": 4, "method": "ping"})");
  EXPECT_EQ(v1.what, incoming::kind::invalid);
  EXPECT_EQ(v1.id, 4);
  EXPECT_TRUE(bad(R"({"jsonrpc": "2.0", "id": null, "method": "ping"})").id.is_null());
  EXPECT_EQ(bad(R"({"jsonrpc": "2.0", "id": null, "method": "ping"})").error_code, -32600);
  EXPECT_EQ(bad(R"({"jsonrpc": "2.0", "id": true, "method": "ping"})").error_code, -32600);
  EXPECT_EQ(bad(R"({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3})").error_code, -32600);
}

TEST(JsonRpc, SerializesOneLineAndReplacesInvalidUtf8) {
  ordered_json m = result_message(1, {{"text", "line one\nline two"}});
  EXPECT_EQ(serialize(m).find('\n'), std::string::npos);
  ordered_json binary = {{"log", std::string("a\xff\xfe" "b")}};
  std::string line;
  EXPECT_NO_THROW(line = serialize(binary));
  EXPECT_FALSE(ordered_json::parse(line, nullptr, false).is_discarded());
  EXPECT_EQ(error_message(nullptr, rpc_error::method_not_found, "x")["error"]["code"], -32601);
}

}  // namespace
}  // namespace ptxbench::mcp

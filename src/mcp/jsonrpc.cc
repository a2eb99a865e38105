#include "mcp/jsonrpc.h"

#include <fmt/format.h>

namespace ptxbench::mcp {
namespace {

bool usable_id(const ordered_json& id) { return id.is_string() || id.is_number_integer(); }

incoming invalid(int code, std::string problem, ordered_json id = nullptr) {
  incoming m;
  m.error_code = code;
  m.problem = std::move(problem);
  m.id = usable_id(id) ? std::move(id) : ordered_json(nullptr);
  return m;
}

}  // namespace

incoming classify(const std::string& line) {
  auto j = ordered_json::parse(line, nullptr, false);
  if (j.is_discarded()) return invalid(static_cast<int>(rpc_error::parse_error), "parse error: the line is not JSON");
  if (j.is_array())
    return invalid(static_cast<int>(rpc_error::invalid_request), "batches are not supported: send one message per line");
  if (!j.is_object()) return invalid(static_cast<int>(rpc_error::invalid_request), "a message must be a JSON object");
  const ordered_json id = j.contains("id") ? j["id"] : ordered_json();
  const auto bad = [&](std::string why) { return invalid(static_cast<int>(rpc_error::invalid_request), std::move(why), id); };
  if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0") return bad("\"jsonrpc\" must be \"2.0\"");
  if (!j.contains("method")) {
    // A response to a request of ours: the server sends none, so it answers nothing.
    if (j.contains("result") || j.contains("error")) {
      incoming m;
      m.what = incoming::kind::response;
      m.id = id;
      return m;
    }
    return bad("a request needs a \"method\"");
  }
  if (!j["method"].is_string()) return bad("\"method\" must be a string");
  incoming m;
  m.method = j["method"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object()) return bad("\"params\" must be an object");
    m.params = j["params"];
  } else {
    m.params = ordered_json::object();
  }
  if (!j.contains("id")) {
    m.what = incoming::kind::notification;
    return m;
  }
  if (!usable_id(id)) return bad("\"id\" must be a string or an integer");
  m.what = incoming::kind::request;
  m.id = id;
  return m;
}

ordered_json result_message(const ordered_json& id, ordered_json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

ordered_json error_message(const ordered_json& id, rpc_error code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", static_cast<int>(code)}, {"message", message}}}};
}

ordered_json notification(const std::string& method, ordered_json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string serialize(const ordered_json& message) {
  return message.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace ptxbench::mcp

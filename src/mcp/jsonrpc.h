#pragma once
// JSON-RPC 2.0 as MCP's stdio transport uses it: one message per line, UTF-8, no embedded newline.
// Classifying what a client sent (request, notification, response, or something invalid) and
// building the server's replies with the specification's error codes.

#include <string>

#include "core/json_check.h"

namespace ptxbench::mcp {

/// JSON-RPC 2.0's error codes (and MCP's use of them).
enum class rpc_error : int {
  parse_error = -32700,       ///< not JSON
  invalid_request = -32600,   ///< JSON, but not a request (no method, a bad id, a batch, before initialize)
  method_not_found = -32601,  ///< an unknown method
  invalid_params = -32602,    ///< bad params: an unknown tool, arguments that do not fit its input schema
  internal_error = -32603,    ///< the server failed (an exception); the process carries on
};

struct incoming {
  enum class kind { request, notification, response, invalid };
  kind what = kind::invalid;
  ordered_json id;             ///< requests (string or integer); for an invalid message, its id if usable, else null
  std::string method;
  ordered_json params;         ///< an object (empty when absent)
  int error_code = 0;          ///< invalid: parse_error or invalid_request
  std::string problem;         ///< invalid: one line
};

/// Classifies one line from the client. Never throws: malformed input is kind::invalid with the
/// error to answer (batches, which MCP 2025-06-18 removed, are invalid requests).
incoming classify(const std::string& line);

ordered_json result_message(const ordered_json& id, ordered_json result);
ordered_json error_message(const ordered_json& id, rpc_error code, const std::string& message);
ordered_json notification(const std::string& method, ordered_json params);

/// One line of JSON (no newline): compact, and text that is not valid UTF-8 (a compiler log quoting
/// a binary candidate) replaced rather than thrown about.
std::string serialize(const ordered_json& message);

}  // namespace ptxbench::mcp

#pragma once
// One HTTP POST to a model API, behind an interface so the providers' retry and parsing logic can be
// tested without a network. The real transport is a thin RAII wrapper over a libcurl easy handle.

#include <atomic>
#include <functional>
#include <string_view>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ptxbench::agent {

struct http_request {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  ///< name, value
  std::string body;                                          ///< JSON, sent with POST
  double timeout_s = 1800;        ///< whole request, 0 = none; long generations take many minutes
  double connect_timeout_s = 30;
  double idle_timeout_s = 0;      ///< give up (a timeout) when no byte moved for this long (0 = off); set when streaming
};

enum class transport_error {
  none,
  connection,  ///< could not connect, connection reset or dropped mid-response
  timeout,     ///< timeout_s or connect_timeout_s passed
  cancelled,   ///< the cancel flag was raised (Ctrl-C)
  other,       ///< TLS, bad URL, out of memory ...
};

struct http_response {
  transport_error error = transport_error::none;
  std::string error_message;                  ///< libcurl's text when error != none
  long status = 0;                            ///< HTTP status when error == none
  std::map<std::string, std::string> headers; ///< names lowercased; the last value wins
  std::string body;
  double elapsed_s = 0;
};

/// Receives a streamed 2xx body piece by piece; returning false aborts the transfer.
using body_sink = std::function<bool(std::string_view piece)>;

/// Sends requests. Implementations must be safe to call from several threads at once.
class http_transport {
 public:
  virtual ~http_transport() = default;
  /// POSTs the request and returns the response or the transport failure; never throws.
  virtual http_response post(const http_request& request) = 0;
  /// POSTs and hands a 2xx body to `sink` as it arrives (server-sent events); the returned response
  /// has no body then. A non-2xx body is returned whole, as post() does. The default posts and
  /// feeds the whole body at once (transports that cannot stream, and test doubles).
  virtual http_response post_stream(const http_request& request, const body_sink& sink) {
    http_response r = post(request);
    if (r.error == transport_error::none && r.status >= 200 && r.status < 300) {
      std::string body = std::move(r.body);
      r.body.clear();
      if (!sink(body)) {
        r.error = transport_error::other;
        r.error_message = "the stream was aborted by its reader";
      }
    }
    return r;
  }
};

/// Returns a libcurl transport. `cancel` (may be null) aborts transfers in flight when it turns true.
std::unique_ptr<http_transport> make_curl_transport(const std::atomic<bool>* cancel = nullptr);

/// Returns "connection", "timeout", "cancelled", "other" or "none".
std::string transport_error_name(transport_error e);

}  // namespace ptxbench::agent

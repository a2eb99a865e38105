#include "agent/http_client.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <mutex>

#include <curl/curl.h>

#include "core/text.h"

namespace ptxbench::agent {
namespace {

void global_init_once() {
  static std::once_flag flag;
  std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct easy_handle {
  CURL* h = curl_easy_init();
  ~easy_handle() {
    if (h) curl_easy_cleanup(h);
  }
  easy_handle() = default;
  easy_handle(const easy_handle&) = delete;
  easy_handle& operator=(const easy_handle&) = delete;
};

struct header_list {
  curl_slist* list = nullptr;
  ~header_list() { curl_slist_free_all(list); }
  void add(const std::string& line) { list = curl_slist_append(list, line.c_str()); }
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// Streaming: a 2xx body goes to the sink piece by piece; any other status's body is kept whole.
struct stream_target {
  CURL* curl = nullptr;
  const body_sink* sink = nullptr;
  std::string* body = nullptr;
  bool aborted = false;
};

size_t on_stream(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<stream_target*>(user);
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) {
    if (!(*t->sink)(std::string_view(data, size * n))) {
      t->aborted = true;
      return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
    }
  } else {
    t->body->append(data, size * n);
  }
  return size * n;
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * n);
  // A new status line starts a new response (after a 100 Continue or a redirect): forget the old headers.
  if (line.rfind("HTTP/", 0) == 0) {
    headers->clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = lower(trim(line.substr(0, colon)));
  (*headers)[name] = trim(line.substr(colon + 1));
  return size * n;
}

// Cancellation and the stream idle limit, checked from libcurl's progress callback (called at least
// about once a second, also while nothing arrives). The idle limit is ours, not CURLOPT_LOW_SPEED_*:
// libcurl averages the speed over a window of several seconds, so after a burst a silent stream was
// noticed only seconds after the limit (a test caught it).
struct transfer_watch {
  const std::atomic<bool>* cancel = nullptr;
  double idle_s = 0;  ///< 0: no idle limit
  curl_off_t bytes = 0;
  std::chrono::steady_clock::time_point last_byte = std::chrono::steady_clock::now();
  bool idle_expired = false;
};

int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  auto* w = static_cast<transfer_watch*>(user);
  if (w->cancel && w->cancel->load()) return 1;
  if (w->idle_s <= 0) return 0;
  auto now = std::chrono::steady_clock::now();
  if (dlnow + ulnow != w->bytes) {
    w->bytes = dlnow + ulnow;
    w->last_byte = now;
    return 0;
  }
  if (std::chrono::duration<double>(now - w->last_byte).count() > w->idle_s) {
    w->idle_expired = true;
    return 1;
  }
  return 0;
}

transport_error classify(CURLcode code) {
  switch (code) {
    case CURLE_OK: return transport_error::none;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return transport_error::connection;
    case CURLE_OPERATION_TIMEDOUT: return transport_error::timeout;
    case CURLE_ABORTED_BY_CALLBACK: return transport_error::cancelled;
    default: return transport_error::other;
  }
}

class curl_transport final : public http_transport {
 public:
  explicit curl_transport(const std::atomic<bool>* cancel) : m_cancel(cancel) { global_init_once(); }

  http_response post(const http_request& request) override { return perform(request, nullptr); }

  http_response post_stream(const http_request& request, const body_sink& sink) override {
    return perform(request, &sink);
  }

 private:
  http_response perform(const http_request& request, const body_sink* sink) {
    http_response out;
    easy_handle curl;
    if (!curl.h) {
      out.error = transport_error::other;
      out.error_message = "curl_easy_init failed";
      return out;
    }
    header_list headers;
    for (const auto& [name, value] : request.headers) headers.add(name + ": " + value);
    headers.add("Expect:");  // no 100-continue round trip for large prompts
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl.h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl.h, CURLOPT_HTTPHEADER, headers.list);
    curl_easy_setopt(curl.h, CURLOPT_POST, 1L);
    curl_easy_setopt(curl.h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl.h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    stream_target target{curl.h, sink, &out.body};
    if (sink) {
      curl_easy_setopt(curl.h, CURLOPT_WRITEFUNCTION, on_stream);
      curl_easy_setopt(curl.h, CURLOPT_WRITEDATA, &target);
    } else {
      curl_easy_setopt(curl.h, CURLOPT_WRITEFUNCTION, on_body);
      curl_easy_setopt(curl.h, CURLOPT_WRITEDATA, &out.body);
    }
    curl_easy_setopt(curl.h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl.h, CURLOPT_HEADERDATA, &out.headers);
    curl_easy_setopt(curl.h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl.h, CURLOPT_NOSIGNAL, 1L);  // required when several threads use libcurl
    curl_easy_setopt(curl.h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl.h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout_s * 1000));
    if (request.timeout_s > 0) curl_easy_setopt(curl.h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_s * 1000));
    curl_easy_setopt(curl.h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl.h, CURLOPT_XFERINFOFUNCTION, on_progress);
    transfer_watch watch;
    watch.cancel = m_cancel;
    watch.idle_s = request.idle_timeout_s;
    curl_easy_setopt(curl.h, CURLOPT_XFERINFODATA, &watch);
    auto start = std::chrono::steady_clock::now();
    CURLcode code = curl_easy_perform(curl.h);
    out.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.error = target.aborted ? transport_error::other : classify(code);
    if (target.aborted) {
      out.error_message = "the stream was aborted by its reader";
      return out;
    }
    if (watch.idle_expired) {  // a silent server: retried like any other timeout
      out.error = transport_error::timeout;
      out.error_message = "no data for " + std::to_string(static_cast<long>(request.idle_timeout_s)) +
                          " s (stream idle timeout)";
      return out;
    }
    if (out.error != transport_error::none) {
      out.error_message = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(code));
      return out;
    }
    curl_easy_getinfo(curl.h, CURLINFO_RESPONSE_CODE, &out.status);
    return out;
  }

  const std::atomic<bool>* m_cancel;
};

}  // namespace

std::unique_ptr<http_transport> make_curl_transport(const std::atomic<bool>* cancel) {
  return std::make_unique<curl_transport>(cancel);
}

std::string transport_error_name(transport_error e) {
  switch (e) {
    case transport_error::none: return "none";
    case transport_error::connection: return "connection";
    case transport_error::timeout: return "timeout";
    case transport_error::cancelled: return "cancelled";
    case transport_error::other: return "other";
  }
  return "other";
}

}  // namespace ptxbench::agent

#include "service/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <regex>

#include <fmt/format.h>
#include <httplib.h>

#include "service/unserved_jobs.h"

namespace ptxbench::service {
namespace {

void send(httplib::Response& res, const api_response& r) {
  res.status = r.status;
  if (r.content_type == "application/json") res.set_content(r.body.dump() + "\n", "application/json");
  else res.set_content(r.text, r.content_type.c_str());
}

/// The body of a POST, read by the handler itself rather than by cpp-httplib before routing: the
/// library's own reading applies an 8 KiB limit to bodies labelled form-urlencoded (curl's default
/// for -d), reported as 413 "larger than N bytes", and waits for the client to close a request that
/// has neither Content-Length nor chunked framing. The body limit (set_payload_max_length) still
/// applies. False when reading failed: the response's status says why (413 too large, 400 bad
/// framing), set by the library.
bool read_body(const httplib::Request& req, const httplib::ContentReader& reader, std::string& body) {
  const bool chunked = req.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  if (!req.has_header("Content-Length") && !chunked) return true;  // no body (RFC 9112 section 6.3)
  auto append = [&body](const char* data, std::size_t n) {
    body.append(data, n);
    return true;
  };
  if (req.is_multipart_form_data()) {
    // Read (so the connection stays usable) and keep the raw parts: the endpoint then says what it
    // expected, a JSON object.
    return reader([](const httplib::MultipartFormData&) { return true; }, append);
  }
  return reader(append);
}

}  // namespace

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return (ntohl(a.s_addr) >> 24) == 127;
  return false;
}

bool same_secret(const std::string& a, const std::string& b) {
  // Every byte of the longer string is looked at whatever the contents, so the time taken says
  // nothing about where the first difference is.
  std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

result<std::unique_ptr<http_server>> http_server::create(server_settings settings, const suite& tasks,
                                                         std::unique_ptr<store_pool> stores,
                                                         std::unique_ptr<queue::job_store> reaper_store) {
  if (!is_loopback(settings.host) && settings.token.empty())
    return make_error(fmt::format("--listen {}: an address other than loopback needs --token-file (a bearer token every "
                                  "request must carry)",
                                  settings.host));
  std::unique_ptr<http_server> s(new http_server());
  s->m_settings = std::move(settings);
  s->m_tasks = &tasks;
  s->m_stores = std::move(stores);
  s->m_reaper_store = std::move(reaper_store);
  s->m_api = std::make_unique<service_api>(tasks, *s->m_stores, s->m_settings.api);
  s->m_server = std::make_unique<httplib::Server>();
  int threads = s->m_settings.threads;
  s->m_server->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  s->m_server->set_payload_max_length(s->m_settings.max_body_bytes);
  // cpp-httplib 0.11 (a compiled library on Debian, so its CPPHTTPLIB_LISTEN_BACKLOG cannot be
  // changed from here) listens with a backlog of 5: a sixth client connecting at once has its SYN
  // dropped and retries a second later, so ten concurrent submissions took a second instead of
  // milliseconds. The listening socket is remembered here and its backlog raised after binding
  // (calling listen() again on a listening socket sets the new backlog).
  // The socket takes SO_REUSEADDR, not the library's default SO_REUSEPORT: with SO_REUSEPORT a
  // second server on the same port bound beside the first and the kernel split connections between
  // two queues. SO_REUSEADDR still lets a restarted server bind at once beside the previous one's
  // connections in TIME_WAIT, and a port another process listens on fails as "address in use".
  auto listening_fd = std::make_shared<int>(-1);
  s->m_server->set_socket_options([listening_fd](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening_fd = sock;
  });
  s->routes();
  const std::string host = s->m_settings.host == "localhost" ? "127.0.0.1" : s->m_settings.host;
  if (s->m_settings.port == 0) {
    s->m_port = s->m_server->bind_to_any_port(host);
    if (s->m_port <= 0) return make_error(fmt::format("cannot listen on {} (any port)", host));
  } else {
    if (!s->m_server->bind_to_port(host, s->m_settings.port)) {
      // Ask the kernel why, with the same socket options, so the message says which.
      int fd = ::socket(host.find(':') != std::string::npos ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
      int yes = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      int why = 0;
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(s->m_settings.port));
      if (fd >= 0 && ::inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1 &&
          ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        why = errno;
      if (fd >= 0) ::close(fd);
      if (why == EADDRINUSE)
        return make_error(fmt::format("cannot listen on {}:{}: address in use (another server is listening there)", host,
                                      s->m_settings.port));
      return make_error(fmt::format("cannot listen on {}:{}: {}", host, s->m_settings.port,
                                    why ? std::strerror(why) : "not an address of this host"));
    }
    s->m_port = s->m_settings.port;
  }
  if (*listening_fd >= 0) (void)::listen(*listening_fd, SOMAXCONN);  // best effort: 5 still works, slowly
  return s;
}

http_server::~http_server() {
  stop();
  if (m_reaper.joinable()) m_reaper.join();
}

void http_server::routes() {
  auto& svr = *m_server;
  const std::string token = m_settings.token;
  svr.set_pre_routing_handler([token](const httplib::Request& req, httplib::Response& res) {
    if (token.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    bool ok = auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0 &&
              same_secret(auth.substr(prefix.size()), token);
    if (ok) return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send(res, error_response(401, "missing or wrong bearer token"));
    return httplib::Server::HandlerResponse::Handled;
  });
  const std::size_t max_body = m_settings.max_body_bytes;
  // Every route with its method, so a known path asked with another method is 405 (as upstream's).
  auto routes = std::make_shared<std::vector<std::pair<std::string, std::regex>>>();
  svr.set_error_handler([max_body, routes](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler already wrote its JSON error
    if (res.status == 404) {
      std::string allowed;
      for (const auto& [method, pattern] : *routes)
        if (method != req.method && std::regex_match(req.path, pattern) && allowed.find(method) == std::string::npos)
          allowed += (allowed.empty() ? "" : ", ") + method;
      if (!allowed.empty()) {
        res.set_header("Allow", allowed);
        res.status = 405;
      }
    }
    if (res.status == 413) send(res, error_response(413, fmt::format("the request body is larger than {} bytes", max_body)));
    else if (res.status == 404) send(res, error_response(404, "Not Found"));
    else if (res.status == 405) send(res, error_response(405, "Method Not Allowed"));
    else if (res.status == 400)  // cpp-httplib could not parse the request line, headers or body framing
      send(res, error_response(400, "malformed HTTP request (request line, headers or body framing)"));
    else send(res, error_response(res.status, fmt::format("HTTP {}", res.status)));
  });
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    send(res, error_response(500, what));
  });

  service_api& api = *m_api;
  auto get = [&svr, routes](const std::string& pattern, std::function<api_response(const httplib::Request&)> answer) {
    routes->emplace_back("GET", std::regex(pattern));
    svr.Get(pattern, [answer](const httplib::Request& req, httplib::Response& res) { send(res, answer(req)); });
  };
  auto post = [&svr, routes](const std::string& pattern,
                             std::function<api_response(const httplib::Request&, const std::string& body)> answer) {
    routes->emplace_back("POST", std::regex(pattern));
    svr.Post(pattern, [answer](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
      std::string body;
      if (!read_body(req, reader, body)) return;  // res.status says why; the error handler writes it
      send(res, answer(req, body));
    });
  };
  get("/", [&api](const httplib::Request&) { return api.root(); });
  get("/docs", [&api](const httplib::Request&) { return api.docs(); });
  get("/health", [&api](const httplib::Request&) { return api.health(); });
  get("/metrics", [&api](const httplib::Request&) { return api.metrics(); });
  get("/definitions", [&api](const httplib::Request&) { return api.definitions(); });
  get(R"(/definitions/([^/]+))", [&api](const httplib::Request& req) { return api.definition(req.matches[1]); });
  get(R"(/definitions/([^/]+)/workloads)", [&api](const httplib::Request& req) { return api.workloads(req.matches[1]); });
  get(R"(/workloads/([^/]+))", [&api](const httplib::Request& req) { return api.workload(req.matches[1]); });
  for (auto [path, kind] : {std::pair{"/evaluate", queue::job_kind::evaluate}, std::pair{"/sanitize", queue::job_kind::sanitize},
                            std::pair{"/profile", queue::job_kind::profile}, std::pair{"/debug", queue::job_kind::debug}})
    post(path, [&api, kind = kind](const httplib::Request&, const std::string& body) { return api.submit(kind, body); });
  post("/tasks/batch", [&api](const httplib::Request&, const std::string& body) { return api.batch(body); });
  get(R"(/tasks/([^/]+))", [&api](const httplib::Request& req) {
    return api.task(req.matches[1], req.has_param("timeout") ? req.get_param_value("timeout") : std::string());
  });
  post("/shutdown", [this](const httplib::Request&, const std::string&) {
    stop();  // closes the listening socket; requests in flight (this one included) still finish
    return api_response{200, {{"status", "shutting_down"}}, "", "application/json"};
  });
}

void http_server::reap_loop() {
  const auto started = std::chrono::steady_clock::now();
  while (!m_stop) {
    (void)m_reaper_store->requeue_expired();  // an error: the database is down; try again next round
    // Unserved jobs only once this server has been up for the grace itself: its local workers (or
    // remote ones after a restart of the whole service) need that long to register.
    const auto up = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (m_settings.unserved_after_ms > 0 && up.count() >= m_settings.unserved_after_ms)
      (void)fail_unserved(*m_reaper_store, m_settings.unserved_after_ms);
    for (int64_t waited = 0; waited < m_settings.reap_interval_ms && !m_stop; waited += 20)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void http_server::run() {
  m_reaper = std::thread([this] { reap_loop(); });
  m_server->listen_after_bind();
  m_stop = true;
  if (m_reaper.joinable()) m_reaper.join();
}

void http_server::stop() {
  m_stop = true;
  if (m_server) m_server->stop();
}

}  // namespace ptxbench::service

#include "service/service_client.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

namespace ptxbench::service {
namespace {

// cpp-httplib names its errors in one word ("Connection"); say what it means for a person.
std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "connection refused or no route";
    case httplib::Error::ConnectionTimeout: return "the connection timed out";
    case httplib::Error::Read: return "the connection broke while reading the answer";
    case httplib::Error::Write: return "the connection broke while sending the request";
    default: return httplib::to_string(e);
  }
}

}  // namespace

std::string reply_detail(const http_reply& r) {
  if (r.body.is_object() && r.body.contains("detail") && r.body["detail"].is_string())
    return fmt::format("HTTP {}: {}", r.status, r.body["detail"].get<std::string>());
  // A 422's detail is a list of field problems: the first says enough for one line.
  if (r.body.is_object() && r.body.contains("detail") && r.body["detail"].is_array() && !r.body["detail"].empty()) {
    const auto& first = r.body["detail"][0];
    std::string where;
    for (const auto& part : first.value("loc", ordered_json::array()))
      where += (where.empty() ? "" : ".") + (part.is_string() ? part.get<std::string>() : part.dump());
    return fmt::format("HTTP {}: {}: {}", r.status, where, first.value("msg", std::string("invalid")));
  }
  return fmt::format("HTTP {}", r.status);
}

result<std::unique_ptr<service_client>> service_client::create(client_settings settings) {
  const std::string& url = settings.url;
  if (url.rfind("http://", 0) != 0)
    return make_error(fmt::format("service URL '{}': expected http://HOST:PORT (put TLS in front with a proxy)", url));
  std::unique_ptr<service_client> c(new service_client());
  auto slash = url.find('/', 7);
  c->m_origin = slash == std::string::npos ? url : url.substr(0, slash);
  c->m_prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!c->m_prefix.empty() && c->m_prefix.back() == '/') c->m_prefix.pop_back();
  if (c->m_origin.size() <= 7) return make_error(fmt::format("service URL '{}': no host", url));
  c->m_settings = std::move(settings);
  return c;
}

service_client::~service_client() = default;

result<http_reply> service_client::get(const std::string& path, double read_timeout_s) {
  return request(false, path, "", read_timeout_s);
}

result<http_reply> service_client::post(const std::string& path, const ordered_json& body, double read_timeout_s) {
  return request(true, path, body.dump(), read_timeout_s);
}

result<http_reply> service_client::request(bool post, const std::string& path, const std::string& body,
                                           double read_timeout_s) {
  using clock = std::chrono::steady_clock;
  auto give_up = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(m_settings.retry_for_s));
  int pause_ms = 100;
  const auto first_try = clock::now();
  auto next_notice = first_try;
  for (;;) {
    // A fresh connection per attempt: after a server restart the old keep-alive socket is dead.
    httplib::Client cli(m_origin);
    cli.set_connection_timeout(5);
    cli.set_read_timeout(std::chrono::milliseconds(static_cast<int64_t>(read_timeout_s * 1000)));
    cli.set_write_timeout(30);
    if (!m_settings.token.empty()) cli.set_bearer_token_auth(m_settings.token);
    auto res = post ? cli.Post((m_prefix + path).c_str(), body, "application/json") : cli.Get((m_prefix + path).c_str());
    std::string problem;
    if (!res) {
      problem = fmt::format("cannot reach {}: {}", m_origin, describe(res.error()));
    } else if (res->status != 503) {
      http_reply r;
      r.status = res->status;
      r.body = ordered_json::parse(res->body, nullptr, false);
      if (r.body.is_discarded()) r.body = nullptr;
      return r;
    } else {
      problem = fmt::format("{} answered 503: {}", m_origin, res->body.substr(0, 300));
    }
    if ((m_settings.cancel && *m_settings.cancel) || clock::now() >= give_up) return make_error(problem);
    if (m_settings.on_retry && clock::now() >= next_notice) {
      double waited = std::chrono::duration<double>(clock::now() - first_try).count();
      m_settings.on_retry(fmt::format("{}; retrying for up to {:.0f} s more{}", problem, m_settings.retry_for_s - waited,
                                      waited >= 1 ? fmt::format(" (waiting {:.0f} s so far)", waited) : ""));
      next_notice = clock::now() + std::chrono::seconds(30);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    pause_ms = std::min(pause_ms * 2, 2000);
  }
}

}  // namespace ptxbench::service

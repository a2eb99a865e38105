#include "agent/retry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

namespace ptxbench::agent {

bool is_retryable_status(long status) {
  switch (status) {
    case 408: case 409: case 425: case 429: return true;
    case 501: case 505: return false;
    default: return status >= 500 && status <= 599;
  }
}

std::optional<double> parse_retry_after(const std::string& value, std::time_t now) {
  std::string v = value;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  double seconds = std::strtod(v.c_str(), &end);
  if (end && *end == '\0' && std::isfinite(seconds)) return std::max(0.0, seconds);
  std::tm tm{};
  // IMF-fixdate, the only form RFC 9110 asks senders to use: "Sun, 06 Nov 1994 08:49:37 GMT".
  const char* rest = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!rest || *rest != '\0') return std::nullopt;
  std::time_t when = timegm(&tm);
  return std::max(0.0, std::difftime(when, now));
}

double backoff_delay_s(const retry_policy& policy, int failures, double jitter01) {
  double delay = policy.base_delay_s * std::pow(2.0, std::max(0, failures - 1));
  delay = std::min(delay, policy.max_delay_s);
  return delay * (0.5 + 0.5 * std::clamp(jitter01, 0.0, 1.0));
}

double random_jitter() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

}  // namespace ptxbench::agent

#pragma once
// When to try a model call again and how long to wait first: exponential back-off with jitter on
// rate limits, server errors and dropped connections, honouring the server's Retry-After.

#include <ctime>
#include <optional>
#include <string>

namespace ptxbench::agent {

struct retry_policy {
  int max_attempts = 6;            ///< including the first; 1 = never retry
  double base_delay_s = 2;         ///< wait after the first failure, doubled after each further one
  double max_delay_s = 120;        ///< cap on the computed back-off
  double max_retry_after_s = 900;  ///< a Retry-After beyond this is clamped (and recorded as asked)
};

/// True for statuses worth retrying: 408, 409, 425, 429, 5xx except 501/505, and the 52x/529
/// "overloaded" codes some providers use.
bool is_retryable_status(long status);

/// Parses a Retry-After header: delta-seconds ("7", "1.5") or an HTTP-date, relative to `now`.
/// Returns nullopt when the value is neither; a date in the past gives 0.
std::optional<double> parse_retry_after(const std::string& value, std::time_t now);

/// Returns the wait before retry number `failures` (1 after the first failed attempt):
/// min(max_delay, base * 2^(failures-1)) scaled into [50%, 100%] by `jitter01` in [0, 1).
double backoff_delay_s(const retry_policy& policy, int failures, double jitter01);

/// Returns a jitter value in [0, 1) from a thread-local generator.
double random_jitter();

}  // namespace ptxbench::agent

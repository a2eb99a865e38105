#include "cli/service_options.h"

#include <cstdlib>

#include <fmt/format.h>

#include "cli/option_checks.h"
#include "core/file_io.h"

namespace ptxbench::cli {

void add_queue_timing(CLI::App& cmd, queue_timing& t) {
  cmd.add_option("--lease-ms", t.lease_ms, "lease length; a worker that stops heartbeating loses its job after this")
      ->capture_default_str()
      ->check(whole_number(100, 86'400'000));
  cmd.add_option("--max-infra-failures", t.max_infra_failures, "infrastructure failures before a job fails")
      ->capture_default_str()
      ->check(whole_number(1, 1000));
  cmd.add_option("--max-lost-leases", t.max_lost_leases, "workers a job may take down before it fails as a poison pill")
      ->capture_default_str()
      ->check(whole_number(1, 1000));
  cmd.add_option("--backoff-ms", t.backoff_ms, "back-off before the first retry (doubles, capped at 60x)")
      ->capture_default_str()
      ->check(whole_number(0, 3'600'000));
  cmd.add_option("--poll-ms", t.poll_ms, "how often waits re-check the database")
      ->capture_default_str()
      ->check(whole_number(1, 60'000))
      ->group("");
  cmd.add_option("--reap-ms", t.reap_ms, "how often expired leases are requeued")
      ->capture_default_str()
      ->check(whole_number(1, 600'000))
      ->group("");
}

void add_fake_evaluator_options(CLI::App& cmd, service::fake_options& f) {
  cmd.add_option("--fake-delay-ms", f.delay_ms, "fake evaluator: milliseconds per GPU half")
      ->check(whole_number(0, 3'600'000))
      ->group("");
  cmd.add_option("--fake-cpu-delay-ms", f.cpu_delay_ms, "fake evaluator: milliseconds per CPU half")
      ->check(whole_number(0, 3'600'000))
      ->group("");
  cmd.add_option("--fake-gpu-name", f.gpu_name, "fake evaluator: the GPU name the fake GPU reports")->group("");
}

result<std::vector<int>> parse_devices(const std::string& text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, end - start);
    bool digits = !part.empty() && part.size() <= 4 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(part) > 1023)
      return make_error(fmt::format("--devices: expected comma-separated GPU ordinals such as 0,1, got '{}'", text));
    out.push_back(std::stoi(part));
    start = end + 1;
  }
  return out;
}

queue::store_options store_options_for(const queue_timing& t) {
  queue::store_options o;
  o.policy.max_infra_failures = t.max_infra_failures;
  o.policy.max_lost_leases = t.max_lost_leases;
  o.policy.backoff_base_ms = t.backoff_ms;
  o.policy.backoff_max_ms = std::max<int64_t>(t.backoff_ms * 60, t.backoff_ms);
  o.poll_interval_ms = t.poll_ms;
  o.reap_interval_ms = t.reap_ms;
  o.outage_grace_ms = t.lease_ms;  // after a database outage: one lease for the live workers to heartbeat
  return o;
}

std::vector<std::string> queue_timing_args(const queue_timing& t) {
  return {"--lease-ms", std::to_string(t.lease_ms), "--max-infra-failures", std::to_string(t.max_infra_failures),
          "--max-lost-leases", std::to_string(t.max_lost_leases), "--backoff-ms", std::to_string(t.backoff_ms),
          "--poll-ms", std::to_string(t.poll_ms), "--reap-ms", std::to_string(t.reap_ms)};
}

namespace {

result<std::string> checked_token(std::string token, const std::string& source) {
  auto a = token.find_first_not_of(" \t\r\n"), b = token.find_last_not_of(" \t\r\n");
  token = a == std::string::npos ? "" : token.substr(a, b - a + 1);
  if (token.size() < 16 || token.find_first_of(" \t\r\n") != std::string::npos)
    return make_error(fmt::format("{}: the token must be one word of at least 16 characters", source));
  return token;
}

}  // namespace

result<std::string> read_token_file(const std::string& path) {
  auto text = read_text_file(path, 4096);
  if (!text) return text.err();
  return checked_token(*text, path);
}

result<std::string> client_token(const std::string& token_file) {
  if (!token_file.empty()) return read_token_file(token_file);
  const char* env = std::getenv("PTXBENCH_SERVICE_TOKEN");
  if (!env || !*env) return std::string();
  return checked_token(env, "PTXBENCH_SERVICE_TOKEN");
}

}  // namespace ptxbench::cli

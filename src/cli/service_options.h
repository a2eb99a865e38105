#pragma once
// Options `serve` and `worker` share: the job store's retry policy and timings (the same in every
// process of one service, or the processes would disagree about when a lease expired), and the
// test-only fake evaluator.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/result.h"
#include "queue/job_store.h"
#include "service/job_runner.h"

namespace ptxbench::cli {

struct queue_timing {
  int64_t lease_ms = 30000;
  int max_infra_failures = 3;
  int max_lost_leases = 3;
  int64_t backoff_ms = 1000;
  int poll_ms = 50;
  int reap_ms = 1000;
};

/// Adds --lease-ms, --max-infra-failures, --max-lost-leases, --backoff-ms, --poll-ms, --reap-ms.
void add_queue_timing(CLI::App& cmd, queue_timing& t);
queue::store_options store_options_for(const queue_timing& t);
/// The same options as command-line arguments (for the workers `serve` starts).
std::vector<std::string> queue_timing_args(const queue_timing& t);

/// Adds the test-only fake evaluator's options, hidden from --help (docs/service.md, "Testing"):
/// --fake-delay-ms, --fake-cpu-delay-ms (the milliseconds each half takes) and --fake-gpu-name (the
/// GPU name the fake GPU reports, hence its suite target), into the workers' own fake_options.
void add_fake_evaluator_options(CLI::App& cmd, service::fake_options& f);

/// --devices: comma-separated CUDA ordinals ("0,1"); anything else is a one-line error.
result<std::vector<int>> parse_devices(const std::string& text);

/// Reads a bearer token file: one line, at least 16 characters, surrounding whitespace removed.
result<std::string> read_token_file(const std::string& path);

/// The token a client of the service sends: the --token-file when one is given, else
/// $PTXBENCH_SERVICE_TOKEN when set (a container gets it from its environment, docs/coding-agents.md),
/// else none (""). Either must be one word of at least 16 characters.
result<std::string> client_token(const std::string& token_file);

}  // namespace ptxbench::cli

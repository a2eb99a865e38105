// ptxbench-fake-worker: a worker process that runs the real worker loop (service/worker_loop.h) on
// the real store with the fake evaluator (fake_work.h). The fault-tolerance test and the queue
// benchmark start several of these and SIGKILL them at random moments. TEST-ONLY.
//
//   ptxbench-fake-worker --queue URL --role cpu|gpu --id NAME [--targets h200,b200] [--lease-ms N]
//       [--heartbeat-ms N] [--idle-ms N] [--poll-ms N] [--reap-ms N] [--cpu-ms N] [--gpu-ms N]
//       [--max-lost N] [--max-infra N] [--backoff-ms N] [--max-jobs N] [--allow-kill-self] [--no-infra]
//       [--quiet]
// SIGTERM/SIGINT stop it gracefully (the current job is given back). It prints a one-line JSON
// summary on exit.

#include <csignal>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <map>
#include <string>

#include <fmt/format.h>

#include "fake_work.h"
#include "queue/open_store.h"
#include "queue/worker_loop.h"

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "ptxbench-fake-worker: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ptxbench;
  std::map<std::string, std::string> opt;
  const std::map<std::string, bool> known{{"--queue", true},   {"--role", true},       {"--id", true},
                                          {"--targets", true}, {"--lease-ms", true},   {"--heartbeat-ms", true},
                                          {"--idle-ms", true}, {"--poll-ms", true},    {"--reap-ms", true},
                                          {"--cpu-ms", true},  {"--gpu-ms", true},     {"--max-lost", true},
                                          {"--max-infra", true}, {"--backoff-ms", true}, {"--max-jobs", true},
                                          {"--allow-kill-self", false}, {"--no-infra", false}, {"--quiet", false}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto k = known.find(a);
    if (k == known.end()) return fail("unknown option " + a);
    if (k->second) {
      if (i + 1 >= argc) return fail(a + " needs a value");
      opt[a] = argv[++i];
    } else {
      opt[a] = "1";
    }
  }
  auto num = [&](const char* key, long fallback) { return opt.count(key) ? std::atol(opt[key].c_str()) : fallback; };
  if (!opt.count("--queue") || !opt.count("--role") || !opt.count("--id")) return fail("--queue, --role and --id are required");
  auto role = queue::parse_worker_role(opt["--role"]);
  if (!role) return fail(role.err().message);

  queue::store_options so;
  so.poll_interval_ms = static_cast<int>(num("--poll-ms", 20));
  so.reap_interval_ms = static_cast<int>(num("--reap-ms", 100));
  so.policy.max_lost_leases = static_cast<int>(num("--max-lost", 3));
  so.policy.max_infra_failures = static_cast<int>(num("--max-infra", 3));
  so.policy.backoff_base_ms = num("--backoff-ms", 50);
  so.policy.backoff_max_ms = so.policy.backoff_base_ms * 8;
  so.connect_timeout_s = 2;
  so.outage_grace_ms = num("--lease-ms", 1000);  // after a database outage: one lease before reaping
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  // The store may be unreachable when the worker starts (a PostgreSQL restart): keep trying.
  std::unique_ptr<queue::job_store> store;
  while (!g_stop) {
    auto opened = queue::open_job_store(opt["--queue"], so);
    if (opened) {
      store = std::move(*opened);
      break;
    }
    if (!opt.count("--quiet")) std::fprintf(stderr, "open: %s\n", opened.err().message.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!store) return 1;

  queue::worker_config wc;
  wc.id = opt["--id"];
  wc.role = *role;
  wc.targets = split(opt.count("--targets") ? opt["--targets"] : "h200");
  wc.host = "localhost";
  wc.lease_ms = num("--lease-ms", 1000);
  wc.heartbeat_ms = num("--heartbeat-ms", 0);
  wc.idle_wait_ms = num("--idle-ms", 200);
  wc.max_error_pause_ms = 200;
  wc.max_jobs = static_cast<int>(num("--max-jobs", 0));
  testing::fake_work_options fo;
  fo.cpu_ms = static_cast<int>(num("--cpu-ms", 0));
  fo.gpu_ms = static_cast<int>(num("--gpu-ms", 0));
  fo.allow_kill_self = opt.count("--allow-kill-self") > 0;
  fo.inject_infra = opt.count("--no-infra") == 0;
  auto callbacks = testing::fake_callbacks(fo);
  if (!opt.count("--quiet")) callbacks.log = [&](const std::string& line) { std::fprintf(stderr, "%s: %s\n", wc.id.c_str(), line.c_str()); };

  auto summary = queue::run_worker(*store, wc, callbacks, g_stop);
  if (!summary) return fail(summary.err().message);
  std::printf("{\"id\":\"%s\",\"leased\":%d,\"compiled\":%d,\"completed\":%d,\"infra_failures\":%d,"
              "\"stale_reports\":%d,\"released\":%d,\"store_errors\":%d}\n",
              wc.id.c_str(), summary->leased, summary->compiled, summary->completed, summary->infra_failures,
              summary->stale_reports, summary->released, summary->store_errors);
  return 0;
}

// ptxbench-queue-bench: how much the durable queue costs (bench/service/queue_bench.sh runs it).
//  1. Throughput with 1, 2 and 4 fake GPU worker processes whose "GPU work" is a fixed sleep, so
//     the scaling measures the queue's overhead (lease, heartbeats, artifact fetch, completion), not
//     this machine's cores. Measured on the store's clock: first GPU lease to last completion.
//  2. Enqueue-to-lease latency: one idle worker, jobs enqueued one at a time at random intervals;
//     from just before enqueue() to the moment lease() returns the job. PostgreSQL with
//     LISTEN/NOTIFY and with polling only; SQLite (polling only) for comparison.
// Not a test: it asserts nothing and prints numbers.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "fake_work.h"
#include "pg_test_server.h"
#include "queue_backend.h"
#include "queue/open_store.h"
#include "worker_fleet.h"

namespace {

using namespace ptxbench;
using namespace ptxbench::queue;
using namespace ptxbench::testing;
using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct throughput_row {
  int workers;
  int gpu_jobs;
  double seconds;
  double jobs_per_s;
};

std::unique_ptr<job_store> must_open(const std::string& where, store_options o = test_store_options()) {
  auto s = open_job_store(where, o);
  if (!s) {
    std::fprintf(stderr, "cannot open %s: %s\n", where.c_str(), s.err().message.c_str());
    std::exit(1);
  }
  return std::move(*s);
}

/// Waits until no job is in the given states.
void drain(job_store& store, std::initializer_list<job_state> states) {
  for (;;) {
    auto s = store.stats();
    int64_t left = 0;
    if (s)
      for (auto st : states) left += s->depth[st];
    if (s && left == 0) return;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

throughput_row measure_throughput(const std::string& where, const std::filesystem::path& logs, int workers, int jobs,
                                  int gpu_ms) {
  auto store = must_open(where);
  std::vector<std::string> ids;
  for (int i = 0; i < jobs; ++i) ids.push_back(store->enqueue({fake_spec(i), "", true})->queued.id);
  fleet_options fo;
  fo.queue = where;
  fo.log_dir = logs;
  fo.lease_ms = 5000;
  fo.cpu_ms = 0;
  fo.gpu_ms = gpu_ms;
  fo.extra_args = {"--no-infra", "--quiet", "--poll-ms", "20", "--reap-ms", "1000"};
  {
    worker_fleet cpu(fo);  // compile everything first, so only the GPU stage is timed
    cpu.add(worker_role::cpu, 2);
    drain(*store, {job_state::queued, job_state::compiling});
    cpu.stop_all();
  }
  worker_fleet gpu(fo);
  gpu.add(worker_role::gpu, workers);
  drain(*store, {job_state::compiled, job_state::running});
  gpu.stop_all();
  int64_t first = INT64_MAX, last = 0;
  int gpu_jobs = 0;
  for (const auto& id : ids) {
    auto j = store->get(id);
    if (!j || !*j || (*j)->running_ms == 0) continue;
    ++gpu_jobs;
    first = std::min(first, (*j)->running_ms);
    last = std::max(last, (*j)->finished_ms);
  }
  double seconds = (last - first) / 1000.0;
  return {workers, gpu_jobs, seconds, gpu_jobs / seconds};
}

struct latency_row {
  std::string mode;
  double median_ms, p99_ms, max_ms;
};

latency_row measure_latency(const std::string& mode, const std::string& where, store_options worker_options,
                            int samples) {
  std::mutex mu;
  std::map<std::string, clock_type::time_point> leased_at;
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    auto store = must_open(where, worker_options);
    lease_request req{"latency-worker", worker_role::cpu, {}, 5000};
    while (!stop) {
      auto l = store->lease(req);
      if (l && *l) {
        auto now = clock_type::now();
        {
          std::lock_guard lock(mu);
          leased_at[(*l)->id] = now;
        }
        (void)store->complete(ref_of(**l), R"({"status":"COMPILE_ERROR"})", std::nullopt);
        continue;
      }
      (void)store->wait_for_work(req, 200);
    }
  });
  auto client = must_open(where);
  std::this_thread::sleep_for(milliseconds(300));  // the worker is idle and waiting
  std::mt19937 rng(7);
  std::vector<std::pair<std::string, clock_type::time_point>> sent;
  for (int i = 0; i < samples; ++i) {
    auto t = clock_type::now();
    auto r = client->enqueue({fake_spec(100000 + i), "", true});
    if (r) sent.emplace_back(r->queued.id, t);
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(5, 60)(rng)));
  }
  std::this_thread::sleep_for(milliseconds(500));
  stop = true;
  worker.join();
  std::vector<double> ms;
  for (const auto& [id, t] : sent) {
    std::lock_guard lock(mu);
    if (auto it = leased_at.find(id); it != leased_at.end())
      ms.push_back(std::chrono::duration<double, std::milli>(it->second - t).count());
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) { return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<std::size_t>(p * ms.size()))]; };
  return {fmt::format("{} ({} of {} leased)", mode, ms.size(), samples), pct(0.5), pct(0.99), ms.empty() ? 0 : ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  int gpu_ms = argc > 2 ? std::atoi(argv[2]) : 50;
  int samples = argc > 3 ? std::atoi(argv[3]) : 200;
  auto dir = make_service_temp_dir("bench");
  std::unique_ptr<pg_test_server> server;
  if (auto reason = pg_unavailable_reason()) {
    std::printf("PostgreSQL: not measured (%s)\n", reason->c_str());
  } else if (auto s = pg_test_server::start(); s) {
    server = std::move(*s);
  } else {
    std::printf("PostgreSQL: not measured (%s)\n", s.err().message.c_str());
  }
  std::printf("Queue benchmark: %d jobs, fake GPU work %d ms per job, %u CPU cores on this machine\n\n", jobs, gpu_ms,
              std::thread::hardware_concurrency());

  std::printf("## Throughput (GPU stage; first GPU lease to last completion, on the store's clock)\n\n");
  std::printf("| backend | GPU workers | GPU jobs | seconds | jobs/s | speed-up vs 1 | ideal jobs/s |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int db = 0;
  for (const char* backend : {"sqlite", "postgresql"}) {
    if (std::string(backend) == "postgresql" && !server) continue;
    double base = 0;
    for (int workers : {1, 2, 4}) {
      std::string where = std::string(backend) == "sqlite" ? (dir / fmt::format("tp{}", workers)).string() + "/"
                                                            : *server->create_database(fmt::format("tp{}", db++));
      auto row = measure_throughput(where, dir, workers, jobs, gpu_ms);
      if (workers == 1) base = row.jobs_per_s;
      std::printf("| %s | %d | %d | %.2f | %.1f | %.2fx | %.1f |\n", backend, workers, row.gpu_jobs, row.seconds,
                  row.jobs_per_s, row.jobs_per_s / base, workers * 1000.0 / gpu_ms);
      std::fflush(stdout);
    }
  }

  std::printf("\n## Enqueue-to-lease latency (one idle CPU worker, %d jobs at random 5-60 ms intervals)\n\n", samples);
  std::printf("| store and wake-up | median ms | p99 ms | max ms |\n|---|---|---|---|\n");
  auto row = [](const latency_row& r) {
    std::printf("| %s | %.2f | %.2f | %.2f |\n", r.mode.c_str(), r.median_ms, r.p99_ms, r.max_ms);
    std::fflush(stdout);
  };
  if (server) {
    store_options notify = test_store_options();
    notify.use_notify = true;
    notify.poll_interval_ms = 1000;  // wake-ups come from NOTIFY; polling is only the fallback
    notify.reap_interval_ms = 1000;
    row(measure_latency("postgresql, LISTEN/NOTIFY (poll fallback 1 s)", *server->create_database("lat_notify"),
                        notify, samples));
    for (int poll : {50, 10}) {
      store_options polling = notify;
      polling.use_notify = false;
      polling.poll_interval_ms = poll;
      row(measure_latency(fmt::format("postgresql, polling every {} ms", poll),
                          *server->create_database(fmt::format("lat_poll{}", poll)), polling, samples));
    }
  }
  for (int poll : {50, 10}) {
    store_options polling = test_store_options();
    polling.poll_interval_ms = poll;
    polling.reap_interval_ms = 1000;
    row(measure_latency(fmt::format("sqlite, polling every {} ms", poll),
                        (dir / fmt::format("lat{}", poll)).string() + "/", polling, samples));
  }
  server.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
